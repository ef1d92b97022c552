"""The tools' input schemas, and the one check of a call's arguments against them.

Each tool's parameters are a closed JSON object (``additionalProperties: false``). MCP
lists the full schemas (:func:`input_schema`; MCP clients validate against them); the
function tools offered to a model carry a copy without string length bounds
(:func:`~graphrag_orm.chat.endpoint.model_schema`): grammar converters (llama-cpp-python's)
expand a ``maxLength`` into one nested rule per character and fail on a long one, so the
bound is stated in the description instead and enforced here, on every call's arguments.
:func:`read_arguments` accepts a JSON text or a mapping and returns the arguments, defaults
filled in, or raises :class:`BadArguments` with the ``invalid-arguments`` message: one line
naming the first problem, never echoing the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from graphrag_orm.chat.endpoint import nullable
from graphrag_orm.tools.values import ToolName
from graphrag_orm.values import integral

__all__ = [
    "MAX_ID_CHARS",
    "MAX_NAME_CHARS",
    "MAX_SEARCH_LIMIT",
    "BadArguments",
    "Parameter",
    "input_schema",
    "parameters_of",
    "read_arguments",
]

MAX_SEARCH_LIMIT: Final = 20
#: A thing id is a SHA-256 in hex; anything much longer is not one.
MAX_ID_CHARS: Final = 128
MAX_NAME_CHARS: Final = 200


class BadArguments(Exception):
    """Arguments that do not match a tool's schema (internal: becomes an ``invalid-arguments`` result)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Parameter:
    """One parameter: its JSON schema, whether it is required, and its default."""

    def __init__(self, schema: dict[str, Any], *, required: bool = True, default: Any = None) -> None:
        self.schema = schema
        self.required = required
        self.default = default


def _text(description: str, max_length: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


def parameters_of(
    tool: ToolName, *, max_question_chars: int, search_default: int, kinds: tuple[str, ...]
) -> dict[str, Parameter]:
    """The parameters of ``tool``, with the bounds this object enforces."""
    if tool in (ToolName.ANSWER_FROM_DOCUMENTS, ToolName.ANSWER_ABOUT_CORPUS):
        return {"question": Parameter(_text("The question, standing alone.", max_question_chars))}
    if tool == ToolName.SEARCH_DOCUMENTS:
        return {
            "query": Parameter(_text("What to look for, in words.", max_question_chars)),
            "limit": Parameter(
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SEARCH_LIMIT,
                    "default": search_default,
                    "description": f"How many passages, 1 to {MAX_SEARCH_LIMIT} (default {search_default}).",
                },
                required=False,
                default=search_default,
            ),
        }
    if tool == ToolName.FIND_THINGS:
        return {
            "name": Parameter(_text("A name or alias, or part of one.", MAX_NAME_CHARS)),
            "kind": Parameter(
                {
                    # anyOf, never a type list: llama.cpp's grammar converter drops a list's keywords.
                    **nullable({"type": "string", "enum": [*kinds]}),
                    "description": "Only things of this kind (optional).",
                },
                required=False,
                default=None,
            ),
        }
    return {"thing_id": Parameter(_text("A thingId that find_things returned.", MAX_ID_CHARS))}


def input_schema(parameters: Mapping[str, Parameter]) -> dict[str, Any]:
    """The closed JSON schema of an object with ``parameters``."""
    return {
        "type": "object",
        "properties": {name: dict(parameter.schema) for name, parameter in parameters.items()},
        "required": [name for name, parameter in parameters.items() if parameter.required],
        "additionalProperties": False,
    }


def read_arguments(raw: str | Mapping[str, Any] | None, parameters: Mapping[str, Parameter]) -> dict[str, Any]:
    """The arguments of a call, checked against ``parameters`` and with defaults filled in.

    Raises :class:`BadArguments` for a text that is not a JSON object, an unknown or
    missing parameter, or a value of the wrong type or outside its bounds. A string
    must be valid Unicode and is trimmed before its length is checked, so whitespace
    alone is refused.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        found: Any = {}
    elif isinstance(raw, str):
        try:
            found = json.loads(raw)
        except (ValueError, RecursionError):
            raise BadArguments("the arguments are not valid JSON") from None
    else:
        found = raw
    if not isinstance(found, Mapping):
        raise BadArguments("the arguments must be a JSON object")
    arguments = dict(found)
    unknown = sorted(str(name) for name in arguments if name not in parameters)
    if unknown:
        raise BadArguments(f"unknown argument {unknown[0]!r}; expected {_names(parameters)}")
    checked: dict[str, Any] = {}
    for name, parameter in parameters.items():
        if name not in arguments:
            if parameter.required:
                raise BadArguments(f"missing argument {name!r}")
            checked[name] = parameter.default
            continue
        checked[name] = _check(name, arguments[name], parameter.schema)
    return checked


def _check(name: str, value: Any, schema: Mapping[str, Any]) -> Any:
    if "anyOf" in schema:  # a nullable parameter: null, or the one other branch
        branches = schema["anyOf"]
        if value is None and any(branch.get("type") == "null" for branch in branches):
            return None
        return _check(name, value, next(branch for branch in branches if branch.get("type") != "null"))
    allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if value is None:
        if "null" in allowed:
            return None
        raise BadArguments(f"{name} must not be null")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(choice) for choice in schema["enum"] if choice is not None)
        raise BadArguments(f"{name} must be one of: {choices}")
    if "string" in allowed:
        if not isinstance(value, str):
            raise BadArguments(f"{name} must be a string")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, which JSON's \u escapes can carry
            raise BadArguments(f"{name} must be valid Unicode text") from None
        trimmed = value.strip()
        if len(trimmed) < schema.get("minLength", 0):
            raise BadArguments(f"{name} must not be empty")
        if len(trimmed) > schema.get("maxLength", len(trimmed)):
            raise BadArguments(f"{name} is longer than {schema['maxLength']} characters")
        return trimmed
    # An integer (2.0 is one, as JSON Schema counts it): a bool or another float is refused.
    value = integral(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadArguments(f"{name} must be an integer")
    if not schema["minimum"] <= value <= schema["maximum"]:
        raise BadArguments(f"{name} must be {schema['minimum']} to {schema['maximum']}")
    return value


def _names(parameters: Mapping[str, Parameter]) -> str:
    return ", ".join(parameters) or "none"
