"""What an OpenAI-compatible chat server understands: how it takes a schema, an output limit, and how long to wait.

Servers differ where the OpenAI API leaves room. OpenAI, vLLM, Ollama's ``/v1`` and
llama.cpp's ``llama-server`` take ``response_format`` ``{"type": "json_schema", ...}``;
llama-cpp-python's server (``llama_cpp.server``) answers that with HTTP 500 and takes
``{"type": "json_object", "schema": {...}}`` instead. OpenAI's reasoning models take only
``max_completion_tokens``; llama-cpp-python ignores it and reads ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError

__all__ = [
    "DEFAULT_CHAT_TIMEOUT_SECONDS",
    "MAX_CHAT_TIMEOUT_SECONDS",
    "ChatEndpoint",
    "StructuredOutput",
    "TokenLimit",
    "model_schema",
    "nullable",
]

DEFAULT_CHAT_TIMEOUT_SECONDS: Final = 120.0
"""How long one chat call may take, queueing at the server included, unless set."""
MAX_CHAT_TIMEOUT_SECONDS: Final = 3_600.0
"""The longest chat timeout: an hour, enough for a long reply from a slow local model."""


class StructuredOutput(StrEnum):
    """How a request's JSON schema is sent."""

    #: ``response_format: {"type": "json_schema", "json_schema": {name, schema, strict}}`` (OpenAI, vLLM, Ollama).
    JSON_SCHEMA = "json_schema"
    #: ``response_format: {"type": "json_object", "schema": {...}}`` (llama-cpp-python's server).
    JSON_OBJECT = "json_object"
    #: No ``response_format``: the instructions alone ask for JSON, and the reply is read as strictly.
    NONE = "none"


class TokenLimit(StrEnum):
    """Which field carries a request's output limit."""

    MAX_COMPLETION_TOKENS = "max_completion_tokens"
    MAX_TOKENS = "max_tokens"
    #: Both fields, the same figure: for servers that read only the older one.
    BOTH = "both"


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null, written as ``anyOf``.

    Never as a type list (``{"type": ["array", "null"], "items": ...}``): llama.cpp's
    grammar converter drops ``items`` from those, so an array's items go unchecked.
    Strict structured output (OpenAI) takes ``anyOf`` as well.
    """
    return {"anyOf": [schema, {"type": "null"}]}


def model_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as offered to a model: no ``minLength``/``maxLength`` anywhere, a bound in words.

    Grammar converters of local servers (llama-cpp-python 0.3.36's) expand a string's
    ``maxLength`` into one nested rule per character and fail on a long one ("number of rules
    that are going to be repeated ... exceeds sane defaults"), after which the server drops
    the connection. Every schema the toolkit offers a model goes through here: tool
    definitions and ``response_format``. A ``maxLength`` becomes "(at most N characters)" in
    the description; whoever reads the reply enforces the bound. Other keywords are kept.
    """
    shown: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _LENGTH_KEYWORDS:
            continue
        if isinstance(value, Mapping):
            shown[key] = model_schema(value)
        elif isinstance(value, list):
            shown[key] = [model_schema(item) if isinstance(item, Mapping) else item for item in value]
        else:
            shown[key] = value
    if "maxLength" in schema:
        bound = f"(at most {schema['maxLength']} characters)"
        description = shown.get("description")
        shown["description"] = f"{description} {bound}" if description else bound
    return shown


_LENGTH_KEYWORDS: Final = frozenset({"minLength", "maxLength"})


def _member(kind: type[StrEnum], value: object, name: str) -> Any:
    allowed = {member.value: member for member in kind}
    if not isinstance(value, str) or value not in allowed:
        raise ConfigurationError(ErrorCode.INVALID_OPTION, f"ChatEndpoint.{name} must be one of: {', '.join(allowed)}")
    return allowed[value]


@dataclass(frozen=True)
class ChatEndpoint:
    """How to speak to one server; every field is checked when built.

    ``timeout_seconds`` is 1 to 3,600 (120 by default), a value outside is
    ``ConfigurationError("invalid-option")``. ``stream_usage`` asks a stream for its
    usage (``stream_options.include_usage``); a server that sends none leaves the
    usage ``None``.
    """

    structured_output: StructuredOutput = StructuredOutput.JSON_SCHEMA
    token_limit: TokenLimit = TokenLimit.MAX_COMPLETION_TOKENS
    timeout_seconds: float = DEFAULT_CHAT_TIMEOUT_SECONDS
    stream_usage: bool = True

    def __post_init__(self) -> None:
        timeout = self.timeout_seconds
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 1 <= timeout <= MAX_CHAT_TIMEOUT_SECONDS
        ):
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                f"ChatEndpoint.timeout_seconds must be from 1 to {MAX_CHAT_TIMEOUT_SECONDS:g} seconds",
            )
        object.__setattr__(
            self, "structured_output", _member(StructuredOutput, self.structured_output, "structured_output")
        )
        object.__setattr__(self, "token_limit", _member(TokenLimit, self.token_limit, "token_limit"))

    def response_format(self, name: str, schema: dict[str, Any], strict: bool) -> dict[str, Any] | None:
        """The ``response_format`` for a schema (:func:`model_schema`'s), or ``None`` when this endpoint takes none."""
        schema = model_schema(schema)
        if self.structured_output == StructuredOutput.JSON_OBJECT:
            return {"type": "json_object", "schema": schema}
        if self.structured_output == StructuredOutput.NONE:
            return None
        json_schema: dict[str, Any] = {"name": name, "schema": schema}
        if strict:
            json_schema["strict"] = True
        return {"type": "json_schema", "json_schema": json_schema}

    def output_limit(self, tokens: int) -> dict[str, int]:
        """The request fields that carry an output limit of ``tokens``."""
        if self.token_limit == TokenLimit.BOTH:
            return {"max_completion_tokens": tokens, "max_tokens": tokens}
        return {self.token_limit.value: tokens}
