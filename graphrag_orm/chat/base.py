"""What a chat client is: a request of messages and an optional JSON schema, a reply of text.

Requests and replies are small frozen values so that stand-ins, recordings and
real clients are interchangeable: :meth:`ChatRequest.fingerprint` is the key of
recordings and scripted replies.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final, Literal, Protocol, runtime_checkable

from pydantic import Field

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.values import Value

__all__ = [
    "DEFAULT_KEPT_CALLS",
    "MAX_KEPT_CALLS",
    "CallLog",
    "ChatChunk",
    "ChatClient",
    "ChatMessage",
    "ChatReply",
    "ChatRequest",
    "ChatUsage",
]

#: How many of its latest requests a stand-in keeps for tests to read (``keep_calls``).
DEFAULT_KEPT_CALLS: Final = 100
MAX_KEPT_CALLS: Final = 10_000

Role = Literal["system", "user", "assistant"]


class ChatMessage(Value):
    """One message of a conversation: ``system``, ``user`` or ``assistant``, and its text."""

    role: Role
    content: str


class ChatRequest(Value):
    """What is asked of a chat model.

    ``response_schema`` (a JSON schema) asks for structured output named
    ``schema_name`` (1..64 letters, digits, ``_`` or ``-``, as OpenAI requires);
    ``strict`` asks the provider to hold the reply to the schema.
    ``max_output_tokens`` (>= 1) bounds the reply; ``temperature`` is 0..2, or
    ``None`` to leave it to the provider.
    """

    messages: tuple[ChatMessage, ...] = Field(min_length=1)
    response_schema: dict[str, Any] | None = None
    schema_name: str = Field(default="reply", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    strict: bool = True
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=0.0, ge=0.0, le=2.0)

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the canonical JSON of the messages, schema, schema name and strict flag.

        Canonical: sorted keys, no whitespace, ASCII escapes. Temperature and the
        output bound are not part of it: they change how a reply is sampled,
        not what is asked. This is the request hash of recordings and scripted replies.
        """
        canonical = json.dumps(
            {
                "messages": [{"role": m.role, "content": m.content} for m in self.messages],
                "responseSchema": self.response_schema,
                "schemaName": self.schema_name,
                "strict": self.strict,
            },
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
        )
        return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def json_request(
    instructions: str,
    user: str,
    *,
    schema: dict[str, Any],
    name: str,
    max_output_tokens: int | None,
    strict: bool = True,
    then: Sequence[ChatMessage] = (),
) -> ChatRequest:
    """The one shape of a structured request: system instructions, one user message (then
    ``then``, e.g. a repair ask), a JSON schema named ``name``, temperature 0.

    Answers, follow-up rewrites, Text2Cypher and extraction ask through it, so a change to
    how the toolkit asks for JSON is made once.
    """
    return ChatRequest(
        messages=(ChatMessage(role="system", content=instructions), ChatMessage(role="user", content=user), *then),
        response_schema=schema,
        schema_name=name,
        strict=strict,
        max_output_tokens=max_output_tokens,
        temperature=0.0,
    )


class ChatUsage(Value):
    """Tokens the provider reported; ``None`` where it reported nothing.

    A reasoning model's ``output_tokens`` include its ``reasoning_tokens``.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None


class ChatReply(Value):
    """The model's whole reply: its text, usage, why it stopped, and which model answered."""

    text: str
    usage: ChatUsage | None = None
    finish_reason: str | None = None
    model: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether the reply was cut off at the output limit (``finish_reason == "length"``)."""
        return self.finish_reason == "length"


class ChatChunk(Value):
    """One piece of a streamed reply; the last chunk has an empty delta and the whole ``reply``.

    The deltas of a stream, joined, are the reply's text.
    """

    delta: str = ""
    reply: ChatReply | None = None


@runtime_checkable
class ChatClient(Protocol):
    """A chat model: :meth:`complete` for a whole reply, :meth:`stream` for pieces as they come.

    ``stream`` is an async generator; closing it (``aclose()``, leaving an
    ``async with contextlib.aclosing(...)`` block, or cancelling the task reading
    it) stops the underlying call.
    """

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The whole reply to ``request``."""
        ...

    def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        """The reply in pieces; the last chunk carries the whole :class:`ChatReply`."""
        ...


class CallLog:
    """The requests a stand-in received: the latest ``keep`` of them, oldest first, and how many in all.

    Bounded, so a long-running server on a stand-in (``graphrag-orm serve`` offline) holds
    constant memory however many questions it answers.
    """

    def __init__(self, keep: int = DEFAULT_KEPT_CALLS) -> None:
        if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= MAX_KEPT_CALLS:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"keep_calls must be 0 to {MAX_KEPT_CALLS:,}")
        self._recent: deque[ChatRequest] = deque(maxlen=keep)
        self.count = 0

    def add(self, request: ChatRequest) -> None:
        self._recent.append(request)
        self.count += 1

    def recent(self) -> list[ChatRequest]:
        return list(self._recent)
