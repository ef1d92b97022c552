"""How to speak to the chat endpoint and how much to ask of it, read from the environment.

A hosted model answers a 2,048-token reply in seconds; a local model on two cores writes
10 to 30 tokens a second, one request at a time, and the time a request waits in the
server's queue counts against the client's timeout. So the settings below default by
provider: ``openai`` keeps the options' own figures, ``openai-compatible`` (a local or
self-hosted server) gets figures that fit a one-slot local server.

=============================== ======================================= =================
variable                        openai                                  openai-compatible
=============================== ======================================= =================
GRAPHRAG_STRUCTURED_OUTPUT      json_schema                             json_schema
GRAPHRAG_TOKEN_LIMIT            max_completion_tokens                   both
GRAPHRAG_CHAT_TIMEOUT           120 (seconds, 1 to 3,600)               600
GRAPHRAG_STREAM_USAGE           1                                       1
GRAPHRAG_LANES                  the option's (2; 1 to 8)                1
GRAPHRAG_ANSWER_MAX_TOKENS      the option's (2,048; 1 to 32,768)       512
GRAPHRAG_EXTRACTION_MAX_TOKENS  the option's (4,096; 256 to 65,536)     1,024
GRAPHRAG_TEXT2CYPHER_MAX_TOKENS the option's (2,048; 1 to 32,768)       512
=============================== ======================================= =================

``GRAPHRAG_STRUCTURED_OUTPUT=json_object`` is for llama-cpp-python's server, which refuses
``json_schema``. A variable set wins over the provider's default, and an option the caller
set (``GraphRagOptions(...)``) wins over both. A value that is not allowed is
``ConfigurationError("invalid-option")`` naming the variable, never echoing the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, TypeVar

from graphrag_orm.chat.endpoint import (
    DEFAULT_CHAT_TIMEOUT_SECONDS,
    MAX_CHAT_TIMEOUT_SECONDS,
    ChatEndpoint,
    StructuredOutput,
    TokenLimit,
)
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.values import Options

__all__ = [
    "LOCAL_ANSWER_TOKENS",
    "LOCAL_EXTRACTION_TOKENS",
    "LOCAL_TEXT2CYPHER_TOKENS",
    "LOCAL_TIMEOUT_SECONDS",
    "ModelLoad",
    "model_load",
]

LOCAL_TIMEOUT_SECONDS: Final = 600.0
"""An openai-compatible endpoint's chat timeout unless GRAPHRAG_CHAT_TIMEOUT says otherwise."""
LOCAL_ANSWER_TOKENS: Final = 512
"""An openai-compatible endpoint's answer output limit unless GRAPHRAG_ANSWER_MAX_TOKENS says otherwise."""
LOCAL_EXTRACTION_TOKENS: Final = 1_024
"""An openai-compatible endpoint's extraction output limit unless GRAPHRAG_EXTRACTION_MAX_TOKENS says otherwise."""
LOCAL_TEXT2CYPHER_TOKENS: Final = 512
"""An openai-compatible endpoint's graph-question output limit unless GRAPHRAG_TEXT2CYPHER_MAX_TOKENS says otherwise."""

E = TypeVar("E", bound=StrEnum)

#: The options each variable sets: (variable, section of GraphRagOptions, field); the section
#: ``text2cypher`` is the Text2CypherOptions a caller builds (:meth:`ModelLoad.text2cypher`).
_OPTION_VARIABLES: Final = (
    ("GRAPHRAG_LANES", "ingestion", "lanes"),
    ("GRAPHRAG_ANSWER_MAX_TOKENS", "answers", "max_output_tokens"),
    ("GRAPHRAG_EXTRACTION_MAX_TOKENS", "extraction", "max_output_tokens"),
    ("GRAPHRAG_TEXT2CYPHER_MAX_TOKENS", "text2cypher", "max_output_tokens"),
)
_LOCAL_OPTIONS: Final = {
    "GRAPHRAG_LANES": 1,
    "GRAPHRAG_ANSWER_MAX_TOKENS": LOCAL_ANSWER_TOKENS,
    "GRAPHRAG_EXTRACTION_MAX_TOKENS": LOCAL_EXTRACTION_TOKENS,
    "GRAPHRAG_TEXT2CYPHER_MAX_TOKENS": LOCAL_TEXT2CYPHER_TOKENS,
}
S = TypeVar("S", bound=Options)


@dataclass(frozen=True)
class ModelLoad:
    """The chat endpoint's settings and the option figures to use, by variable name."""

    endpoint: ChatEndpoint
    figures: Mapping[str, int]

    def apply(self, options: GraphRagOptions | None) -> GraphRagOptions:
        """``options`` with these figures in every field the caller did not set."""
        options = options or GraphRagOptions()
        sections: dict[str, Options] = {}
        for _variable, section_name, _field in _OPTION_VARIABLES:
            if section_name in GraphRagOptions.model_fields and section_name not in sections:
                filled = self._fill(section_name, getattr(options, section_name))
                if filled is not getattr(options, section_name):
                    sections[section_name] = filled
        return options.model_copy(update=sections) if sections else options

    def text2cypher(self, options: S) -> S:
        """Graph-question ``options`` (``Text2CypherOptions``) with GRAPHRAG_TEXT2CYPHER_MAX_TOKENS's figure
        (or the openai-compatible default) unless the caller set the field."""
        return self._fill("text2cypher", options)

    def _fill(self, section_name: str, section: S) -> S:
        for variable, name, field in _OPTION_VARIABLES:
            if name != section_name or variable not in self.figures or field in section.model_fields_set:
                continue
            try:
                type(section)(**{field: self.figures[variable]})
            except ConfigurationError:
                raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{variable} is out of its bounds") from None
            section = section.model_copy(update={field: self.figures[variable]})
        return section


def _whole(environ: Mapping[str, str], name: str) -> int | None:
    configured = (environ.get(name) or "").strip()
    if not configured:
        return None
    if not configured.isdigit():
        raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{name} must be a whole number")
    return int(configured)


def _timeout(environ: Mapping[str, str], default: float) -> float:
    configured = (environ.get("GRAPHRAG_CHAT_TIMEOUT") or "").strip()
    if not configured:
        return default
    try:
        return float(configured)
    except ValueError:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, "GRAPHRAG_CHAT_TIMEOUT must be a number of seconds"
        ) from None


def _named(environ: Mapping[str, str], name: str, default: str) -> str:
    return (environ.get(name) or "").strip().lower() or default


def _member(environ: Mapping[str, str], variable: str, kind: type[E], default: E) -> E:
    value = _named(environ, variable, default.value)
    for member in kind:
        if member.value == value:
            return member
    raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{variable} must be one of: {', '.join(kind)}")


def _endpoint(environ: Mapping[str, str], local: bool) -> ChatEndpoint:
    usage = _named(environ, "GRAPHRAG_STREAM_USAGE", "1")
    if usage not in ("0", "1"):
        raise ConfigurationError(ErrorCode.INVALID_OPTION, "GRAPHRAG_STREAM_USAGE must be 0 or 1")
    limit = TokenLimit.BOTH if local else TokenLimit.MAX_COMPLETION_TOKENS
    structured = _member(environ, "GRAPHRAG_STRUCTURED_OUTPUT", StructuredOutput, StructuredOutput.JSON_SCHEMA)
    token_limit = _member(environ, "GRAPHRAG_TOKEN_LIMIT", TokenLimit, limit)
    timeout = _timeout(environ, LOCAL_TIMEOUT_SECONDS if local else DEFAULT_CHAT_TIMEOUT_SECONDS)
    if not 1 <= timeout <= MAX_CHAT_TIMEOUT_SECONDS:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, f"GRAPHRAG_CHAT_TIMEOUT must be from 1 to {MAX_CHAT_TIMEOUT_SECONDS:g} seconds"
        )
    return ChatEndpoint(structured, token_limit, timeout, stream_usage=usage == "1")


def model_load(environ: Mapping[str, str], *, local: bool) -> ModelLoad:
    """The settings ``environ`` names; ``local`` for an openai-compatible endpoint's defaults."""
    figures: dict[str, int] = dict(_LOCAL_OPTIONS) if local else {}
    for variable, _section, _field in _OPTION_VARIABLES:
        configured = _whole(environ, variable)
        if configured is not None:
            figures[variable] = configured
    return ModelLoad(_endpoint(environ, local), figures)
