"""What an embedder is: texts in, one vector per text out, in order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Embedder", "EmbeddingVectors"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors: one per text, in input order.

    Callers validate the result against their embedding set
    (:func:`~graphrag_orm.embeddings.validate_vectors`) before anything is written,
    so an embedder need not check counts or dimensions itself. Built-in
    embedders return :class:`EmbeddingVectors`, which also carries token usage.
    """

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text, in the order of ``texts``."""
        ...


class EmbeddingVectors(list[list[float]]):
    """Vectors as a plain list, plus ``input_tokens``: what the provider billed, if it said.

    ``input_tokens`` is ``None`` when the provider reported no usage.
    """

    input_tokens: int | None

    def __init__(self, vectors: Iterable[list[float]] = (), *, input_tokens: int | None = None) -> None:
        super().__init__(vectors)
        self.input_tokens = input_tokens

    def __repr__(self) -> str:
        return f"EmbeddingVectors({len(self)} vectors, input_tokens={self.input_tokens})"
