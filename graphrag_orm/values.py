"""Base of the public value types: frozen pydantic models with camelCase JSON."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError

__all__ = ["DEFAULT_QUESTION_CHARS", "Limit", "Options", "Value", "integral", "strings_in"]

#: The characters a question may have by default, the same on every surface that takes one
#: (answers and retrieval, graph questions, HTTP, MCP, the agent tools, the adapters).
DEFAULT_QUESTION_CHARS: Final = 4_000


class Value(BaseModel):
    """Immutable, validated at the boundary; JSON in camelCase (``by_alias=True``)."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        use_enum_values=False,
    )

    def to_json(self) -> str:
        """This value as JSON with camelCase names and enum values as written."""
        return self.model_dump_json(by_alias=True)


class Limit(Value):
    """A bound that was reached: its name and the value it was held to."""

    name: LimitName
    value: int


class Options(Value):
    """Settings with declared bounds; a value outside them is a :class:`ConfigurationError`.

    Bounds are declared with ``Field(ge=..., le=...)`` so they show in the JSON schema;
    a violation is re-raised as ``ConfigurationError("invalid-option", ...)`` naming
    the field and the bound, so callers get one stable code for every option type.
    """

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or type(self).__name__}: {item['msg']}"
                for item in error.errors()
            )
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{type(self).__name__}: {problems}") from None


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a plain value (a string, or maps and sequences of them) at any depth, map keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from strings_in(item)


def integral(value: Any) -> Any:
    """An integral float (``2.0``) as the integer it is, as JSON Schema's ``integer`` counts it; any other value as given.

    For a strict integer field (``BeforeValidator(integral)``) or a hand-written check:
    ``2.5``, ``True`` and ``"2"`` come back unchanged, to be refused there.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
