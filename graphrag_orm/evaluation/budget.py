"""Required phrases the evidence budget dropped, told apart from those the ranking missed.

When a case's evidence reached ``MaxUtf8Bytes`` and a required phrase is in none of its
items, :func:`budget_dropped` retrieves the question again with the largest byte budget
(:data:`~graphrag_orm.retrieval.options.MAX_EVIDENCE_UTF8_BYTES`) and the same
``max_items``: a phrase found there was ranked among the first ``max_items`` and cut
by the budget. One more retrieval, only for such cases; nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphrag_orm.codes import LimitName
from graphrag_orm.evaluation.metrics import holds
from graphrag_orm.evidence import Evidence
from graphrag_orm.retrieval.options import MAX_EVIDENCE_UTF8_BYTES, RetrievalOptions

__all__ = ["EvidenceRetriever", "budget_dropped"]


class EvidenceRetriever(Protocol):
    """What the evaluator retrieves through (``Retriever``, ``InMemoryRetriever``)."""

    @property
    def options(self) -> RetrievalOptions: ...

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence: ...


async def budget_dropped(
    retriever: EvidenceRetriever,
    question: str,
    evidence: Evidence,
    phrases: Sequence[str],
    retrieval: RetrievalOptions,
) -> tuple[int, ...]:
    """The indexes of ``phrases`` the budget, not the ranking, left out of ``evidence``."""
    if not any(limit.name == LimitName.MAX_UTF8_BYTES for limit in evidence.limits_reached):
        return ()
    missing = [i for i, phrase in enumerate(phrases) if not any(holds(item.text, phrase) for item in evidence.items)]
    if not missing:
        return ()
    unbounded = await retriever.retrieve(
        question, retrieval.model_copy(update={"max_utf8_bytes": MAX_EVIDENCE_UTF8_BYTES})
    )
    return tuple(i for i in missing if any(holds(item.text, phrases[i]) for item in unbounded.items))
