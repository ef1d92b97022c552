"""What an embedder is: texts in, one vector per text out, in order; and how much of a text it reads."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

__all__ = [
    "ESTIMATE_BYTES_PER_TOKEN",
    "Embedder",
    "EmbeddingVectors",
    "count_input_tokens",
    "embed_questions",
    "input_window",
    "token_count_function",
]

ESTIMATE_BYTES_PER_TOKEN = 4
"""Without the embedder's own tokenizer, a text's tokens are estimated at four UTF-8 bytes each."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors: one per text, in input order.

    Callers validate the result against their embedding set
    (:func:`~graphrag_orm.embeddings.validate_vectors`) before anything is written,
    so an embedder need not check counts or dimensions itself. Built-in
    embedders return :class:`EmbeddingVectors`, which also carries token usage.

    Two optional attributes, read with ``getattr`` so an embedder without them keeps
    working (they are not members of the protocol):

    - ``max_input_tokens: int | None``: the most tokens the model reads of one text (its
      window); the rest of a longer text is not embedded. ``None`` (or absent) means no
      known bound. Ingestion keeps chunks within it by default
      (``IngestionOptions.fit_chunks_to_embedder``); with that off, it reports chunks
      over it in the receipt (``EmbedderWindow``).
    - ``embed_query(texts)``: vectors for questions rather than passages (models trained with
      a query prefix or instruction, such as e5 and bge); without it questions go
      through ``embed`` as any text (:func:`embed_questions`).
    - ``count_tokens(text) -> int``: the tokens the model's own tokenizer makes of
      ``text``, special tokens included, as compared with ``max_input_tokens``. Without
      it, tokens are estimated at four UTF-8 bytes each.
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


def input_window(embedder: object) -> int | None:
    """The embedder's ``max_input_tokens`` when it declares a whole number of at least 1, else None."""
    window = getattr(embedder, "max_input_tokens", None)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        return None
    return window


def token_count_function(embedder: object) -> Callable[[str], int] | None:
    """The embedder's own ``count_tokens`` when it has one (a callable), else None."""
    count = getattr(embedder, "count_tokens", None)
    return count if callable(count) else None


def count_input_tokens(embedder: object, texts: Sequence[str]) -> list[int]:
    """Each text's tokens as the embedder counts them (``count_tokens``), else estimated at
    four UTF-8 bytes a token, rounded up."""
    count = token_count_function(embedder)
    if count is not None:
        return [int(count(text)) for text in texts]
    return [math.ceil(len(text.encode("utf-8")) / ESTIMATE_BYTES_PER_TOKEN) for text in texts]


async def embed_questions(embedder: Embedder, texts: Sequence[str]) -> Sequence[Sequence[float]]:
    """Vectors for questions: the embedder's ``embed_query`` when it has one, else its ``embed``."""
    query = getattr(embedder, "embed_query", None)
    if callable(query):
        result: Sequence[Sequence[float]] = await query(texts)
        return result
    return await embedder.embed(texts)
