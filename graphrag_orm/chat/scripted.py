"""A chat client that answers from a script: for tests and offline examples, never a model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping

from graphrag_orm.chat.base import DEFAULT_KEPT_CALLS, CallLog, ChatChunk, ChatReply, ChatRequest
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ScriptMissing

__all__ = ["STREAM_PIECE", "ScriptMissing", "ScriptedChat"]

STREAM_PIECE = 7
"""Characters per streamed delta: small, so code reading streams meets split words and JSON."""


class ScriptedChat:
    """Replies with ``responder(request)``; the latest requests are kept in :attr:`calls`, in order.

    A stand-in, not a model: replies report no usage, ``finish_reason`` ``"stop"``
    and model ``"scripted"``. :meth:`stream` yields the same reply in pieces of
    seven characters, then a last chunk with the whole reply, handing control to the
    event loop before each piece as a network stream would (so a task reading it can be
    cancelled between pieces). An exception the responder raises reaches the caller unchanged.
    """

    is_stand_in = True
    label = "ScriptedChat: scripted replies, not a model"
    model = "scripted"

    def __init__(self, responder: Callable[[ChatRequest], str], *, keep_calls: int = DEFAULT_KEPT_CALLS) -> None:
        self._responder = responder
        self._log = CallLog(keep_calls)

    @property
    def calls(self) -> list[ChatRequest]:
        """The latest ``keep_calls`` requests (100 by default, at most 10,000), oldest first."""
        return self._log.recent()

    @property
    def call_count(self) -> int:
        """How many requests this client has received in all."""
        return self._log.count

    @classmethod
    def from_replies(cls, mapping: Mapping[str, str], default: str | None = None) -> ScriptedChat:
        """Replies keyed by :meth:`ChatRequest.fingerprint`; ``default`` for any other request.

        A request with no reply and no default raises :class:`ScriptMissing`
        (``no-scripted-reply``) naming its fingerprint, so a test can add it.
        """
        replies = dict(mapping)

        def respond(request: ChatRequest) -> str:
            fingerprint = request.fingerprint()
            reply = replies.get(fingerprint, default)
            if reply is None:
                raise ScriptMissing(ErrorCode.NO_SCRIPTED_REPLY, f"no scripted reply for request {fingerprint}")
            return reply

        return cls(respond)

    def _reply(self, request: ChatRequest) -> ChatReply:
        self._log.add(request)
        return ChatReply(text=self._responder(request), usage=None, finish_reason="stop", model=self.model)

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The scripted reply to ``request``."""
        return self._reply(request)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        """The scripted reply in pieces of :data:`STREAM_PIECE` characters, then the whole reply;
        control goes to the event loop before each chunk."""
        reply = self._reply(request)
        for start in range(0, len(reply.text), STREAM_PIECE):
            await asyncio.sleep(0)
            yield ChatChunk(delta=reply.text[start : start + STREAM_PIECE])
        await asyncio.sleep(0)
        yield ChatChunk(reply=reply)
