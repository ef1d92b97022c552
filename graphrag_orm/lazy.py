"""Names a package offers without importing their modules until first use (PEP 562).

A package's ``__init__`` hands on its light names directly and its services through
:func:`lazy_exports`, so importing the package, or a leaf module under it (its options,
its values), never loads the services: a process loads only the services it uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each of ``names`` imported from its module
    on first access, then kept on the package."""
    namespace = importlib.import_module(package).__dict__
    listed = sorted(set(public))

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__
