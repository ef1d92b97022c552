"""A budget of model calls, for record mode: the call over it raises and is not sent.

``CallBudget`` counts the calls a process sends; ``BudgetedChat`` and
``BudgetedEmbedder`` wrap a client so each ``complete``, ``stream`` or ``embed`` spends
one call first. Chat and embeddings share one budget when given the same object.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from graphrag_orm.chat import ChatClient
from graphrag_orm.chat.base import ChatChunk, ChatReply, ChatRequest
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import Embedder
from graphrag_orm.embeddings.base import embed_questions
from graphrag_orm.errors import CallBudgetExceeded

__all__ = ["BudgetedChat", "BudgetedEmbedder", "CallBudget"]


class CallBudget:
    """At most ``limit`` calls: :meth:`spend` before each, and the one over raises ``CallBudgetExceeded``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.spent = 0

    def spend(self) -> None:
        if self.spent >= self.limit:
            raise CallBudgetExceeded(
                ErrorCode.CALL_BUDGET_EXCEEDED,
                f"record mode sent its {self.limit} calls (GRAPHRAG_MAX_CALLS, {LimitName.MAX_CALLS.value}); "
                "this call was not sent",
            )
        self.spent += 1


class BudgetedChat:
    """A chat client that sends nothing once its :class:`CallBudget` is spent."""

    def __init__(self, inner: ChatClient, budget: CallBudget) -> None:
        self.inner = inner
        self.budget = budget
        # The inner client's model, so a recorder around this one names it (not "an unnamed model").
        self.model = getattr(inner, "model", None)

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.budget.spend()
        return await self.inner.complete(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        self.budget.spend()
        chunks = self.inner.stream(request)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            close = getattr(chunks, "aclose", None)
            if close is not None:  # closing this stream ends the inner one's HTTP call
                await close()


class BudgetedEmbedder:
    """An embedder that sends nothing once its :class:`CallBudget` is spent (one call per ``embed``)."""

    def __init__(self, inner: Embedder, budget: CallBudget) -> None:
        self.inner = inner
        self.budget = budget
        self.model = getattr(inner, "model", None)
        self.max_input_tokens = getattr(inner, "max_input_tokens", None)

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        self.budget.spend()
        return await self.inner.embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """Questions through the inner embedder's ``embed_query`` (its query prefix), one call of the budget."""
        self.budget.spend()
        return await embed_questions(self.inner, texts)
