"""An earlier turn of a conversation, as answers take it for a follow-up's rewrite."""

from __future__ import annotations

from graphrag_orm.values import Value

__all__ = ["Turn"]


class Turn(Value):
    """An earlier turn of a conversation: the question and, optionally, its answer."""

    question: str
    answer: str | None = None
