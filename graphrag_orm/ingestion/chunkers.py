"""Fingerprints of another library's splitter, for :meth:`IngestionService.ingest_chunked`.

A chunked document is unchanged only when it was chunked the same way, so the
fingerprint must change whenever the splitter would cut differently. :func:`fingerprint_of`
reads what a splitter object says about itself, never calls it and never imports its
library:

- its type (module and qualified name), and the ``__version__`` of its top-level
  package when that package is already imported;
- its settings: the object's attributes (``vars()``, private ones included, since
  LangChain keeps its settings as ``_chunk_size`` and the like, and pydantic's private
  attributes), as plain values. Strings, numbers, booleans and None are kept as they
  are; lists, tuples, sets (sorted) and dicts are followed to :data:`MAX_DEPTH` levels;
  enums give their value; a function or method gives its module and qualified name,
  a ``functools.partial`` its function and arguments; any other object only its type.

What it cannot see (a tokenizer's vocabulary inside a closure, a model name inside an
object) should be passed as ``extra`` strings. Attributes whose names start and end
with two underscores are left out. The result is the SHA-256 (lower-case hex) of a
canonical JSON document, so the same splitter gives the same fingerprint in every
process.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Mapping
from enum import Enum
from types import ModuleType
from typing import Any, Final

__all__ = ["MAX_DEPTH", "fingerprint_of"]

#: How deep containers and partials are followed; deeper values count by their type only.
MAX_DEPTH: Final = 6
#: Items of one container that are read; the rest count by their number only.
_MAX_ITEMS: Final = 10_000


def _name(kind: type | Any) -> str:
    module = getattr(kind, "__module__", None) or "?"
    qualname = getattr(kind, "__qualname__", None) or getattr(kind, "__name__", None) or type(kind).__qualname__
    return f"{module}.{qualname}"


def _plain(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return repr(value)  # inf and nan are not JSON
    if isinstance(value, Enum):
        return {"enum": _name(type(value)), "value": _plain(value.value, depth)}
    if isinstance(value, bytes):
        return {"bytes": hashlib.sha256(value).hexdigest()}
    if depth >= MAX_DEPTH:
        return {"type": _name(type(value))}
    if isinstance(value, functools.partial):
        return {
            "partial": _plain(value.func, depth + 1),
            "args": _plain(value.args, depth + 1),
            "keywords": _plain(value.keywords, depth + 1),
        }
    if isinstance(value, list | tuple):
        items = [_plain(item, depth + 1) for item in value[:_MAX_ITEMS]]
        return {"items": items, "length": len(value)}
    if isinstance(value, set | frozenset):
        members = sorted(json.dumps(_plain(item, depth + 1), sort_keys=True) for item in value)
        return {"set": members[:_MAX_ITEMS], "length": len(members)}
    if isinstance(value, Mapping):
        pairs = sorted(
            (
                (json.dumps(_plain(key, depth + 1), sort_keys=True), _plain(item, depth + 1))
                for key, item in list(value.items())[:_MAX_ITEMS]
            ),
            key=lambda pair: pair[0],
        )
        return {"map": pairs, "length": len(value)}
    if isinstance(value, type):
        return {"class": _name(value)}
    if callable(value) and hasattr(value, "__qualname__"):
        owner = getattr(value, "__self__", None)
        function = {"function": _name(value)}
        if owner is not None and not isinstance(owner, type | ModuleType):
            function["of"] = _name(type(owner))
        return function
    return {"type": _name(type(value))}


def _settings(splitter: object) -> dict[str, Any]:
    state: dict[str, Any] = {}
    try:
        attributes = dict(vars(splitter))
    except TypeError:  # no __dict__ (slots, builtins): the type alone speaks for it
        attributes = {}
    private = getattr(splitter, "__pydantic_private__", None)
    if isinstance(private, Mapping):
        attributes.update(private)
    for name, value in attributes.items():
        if isinstance(name, str) and not (name.startswith("__") and name.endswith("__")):
            state[name] = _plain(value, 1)
    return state


def _version(kind: type) -> str | None:
    top = (getattr(kind, "__module__", "") or "").split(".")[0]
    module = sys.modules.get(top)
    version = getattr(module, "__version__", None) if module is not None else None
    return version if isinstance(version, str) else None


def fingerprint_of(splitter: object, *extra: str) -> str:
    """A stable fingerprint of ``splitter``'s type, its library's version and its settings.

    ``extra`` strings (an adapter's version, a tokenizer's name) join it. Two splitters
    of one type and settings give one fingerprint; changing any setting it can read
    changes it. Never calls or imports anything of the splitter's library.
    """
    kind = type(splitter)
    document = {
        "type": _name(kind),
        "version": _version(kind),
        "settings": _settings(splitter),
        "extra": [str(part) for part in extra],
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
