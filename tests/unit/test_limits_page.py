"""docs/limits.md lists every bounded option and every limit name, with the code's figures."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic.fields import FieldInfo, PydanticUndefined

import graphrag_orm
from graphrag_orm.codes import LimitName
from graphrag_orm.values import Options

PAGE = Path(__file__).resolve().parents[2] / "docs" / "limits.md"
_ROW = re.compile(r"^\|\s*`(?P<name>[A-Za-z_][\w.]*)`\s*\|(?P<rest>.*)\|\s*$")
# Generated twins and thin front ends hold no bounds of their own.
_SKIPPED = (".sync", ".cli", ".adapters")
# Module constants that bound work: MAX_*, DEFAULT_* and *_BOUNDS, numbers or (low, high).
_CONSTANT = re.compile(r"^(?:MAX|DEFAULT)_[A-Z0-9_]+$|^[A-Z0-9_]+_BOUNDS$")
# Numeric constants with those names that bound nothing.
_NOT_BOUNDS = frozenset({"localdb.settings.DEFAULT_PORT"})


def package_modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(graphrag_orm.__path__, "graphrag_orm.")]
    return [importlib.import_module(name) for name in names if not any(part in name for part in _SKIPPED)]


def option_classes() -> list[type[Options]]:
    """Every Options subclass defined in the package."""
    found: dict[str, type[Options]] = {}
    for loaded in package_modules():
        for value in vars(loaded).values():
            if inspect.isclass(value) and issubclass(value, Options) and value is not Options:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return sorted(found.values(), key=lambda c: c.__name__)


def _numeric(value: Any) -> bool:
    if isinstance(value, tuple):
        return len(value) == 2 and all(_numeric(part) for part in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def bound_constants() -> dict[str, Any]:
    """Every bounding constant, by its path under the package (``retrieval.scope.MAX_SCOPE_ROWS``)."""
    found: dict[str, Any] = {}
    for loaded in package_modules():
        source = inspect.getsource(loaded)
        for name, value in vars(loaded).items():
            # Defined in this module, not imported into it.
            if _CONSTANT.match(name) and _numeric(value) and re.search(rf"^{name}\b", source, re.MULTILINE):
                path = f"{loaded.__name__.removeprefix('graphrag_orm.')}.{name}"
                if path not in _NOT_BOUNDS:
                    found[path] = value
    return found


def numeric_bounds(field: FieldInfo) -> tuple[Any, Any] | None:
    low = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
    high = next((m.le for m in field.metadata if hasattr(m, "le")), None)
    return None if low is None and high is None else (low, high)


def bounded_fields() -> list[tuple[str, FieldInfo]]:
    return [
        (f"{cls.__name__}.{name}", field)
        for cls in option_classes()
        for name, field in cls.model_fields.items()
        if numeric_bounds(field) is not None
    ]


def page_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            rows[match["name"]] = [cell.strip() for cell in match["rest"].split("|")]
    return rows


def figure(cell: str) -> Any:
    """A table cell as the code's value: ``16,777,216`` -> 16777216, ``None`` -> None."""
    if cell in ("None", "required"):
        return cell
    return float(cell.replace(",", ""))


def constant_figure(cell: str) -> Any:
    """``64 to 16,384`` -> (64.0, 16384.0); ``10,000`` -> 10000.0."""
    low, separator, high = cell.partition(" to ")
    return (figure(low), figure(high)) if separator else figure(cell)


def code_figure(value: Any) -> Any:
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, tuple):
        return tuple(float(part) for part in value)
    return "None" if value is None else float(value)


def test_the_page_finds_the_options_it_is_about() -> None:
    names = {name for name, _ in bounded_fields()}
    assert {"RetrievalOptions.max_items", "IngestionOptions.max_documents", "SandboxLimits.max_rows"} <= names
    assert {"retrieval.scope.MAX_SCOPE_ROWS", "chunking.options.MAX_UTF8_BYTES_BOUNDS"} <= set(bound_constants())


@pytest.mark.parametrize("name, field", bounded_fields(), ids=lambda value: value if isinstance(value, str) else "")
def test_every_bounded_option_is_listed_with_the_codes_default_and_bounds(name: str, field: FieldInfo) -> None:
    rows = page_rows()
    assert name in rows, f"docs/limits.md does not list {name}"
    default, low, high = rows[name][:3]
    bounds = numeric_bounds(field)
    assert bounds is not None
    assert figure(default) == code_figure(field.default), f"{name}: default"
    assert figure(low) == code_figure(bounds[0]), f"{name}: minimum"
    assert figure(high) == code_figure(bounds[1]), f"{name}: maximum"
    assert rows[name][3], f"{name}: say what happens when it is reached"


@pytest.mark.parametrize("limit", list(LimitName), ids=lambda limit: limit.value)
def test_every_limit_name_is_listed_with_what_reports_it(limit: LimitName) -> None:
    rows = page_rows()
    assert limit.value in rows, f"docs/limits.md does not list the limit name {limit.value}"
    assert rows[limit.value][0], f"{limit.value}: say what reports it"


@pytest.mark.parametrize("path, value", sorted(bound_constants().items()), ids=str)
def test_every_bounding_constant_is_listed_with_its_value(path: str, value: Any) -> None:
    rows = page_rows()
    assert path in rows, f"docs/limits.md does not list the constant {path}"
    assert constant_figure(rows[path][0]) == code_figure(value), f"{path}: value"
    assert rows[path][1], f"{path}: say what happens when it is reached"


def test_every_constant_the_page_lists_is_in_the_code() -> None:
    listed = {name for name in page_rows() if "." in name and name.rsplit(".", 1)[1].isupper()}
    assert listed - set(bound_constants()) == set()
