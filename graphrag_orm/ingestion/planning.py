"""A document's chunks before any model call: planned or placed, bounded, measured against the embedder.

A document is chunked before its lease is taken: one of more than
``max_chunks_per_document`` chunks fails with ``document-too-large`` before any model
call. An embedder that declares a window (``max_input_tokens``) reads only the start of a
longer chunk, so by default (``IngestionOptions.fit_chunks_to_embedder``) the chunker sizes
chunks to the window, measured with the embedder's ``count_tokens`` (else estimated at four
UTF-8 bytes a token). With fitting off, chunks over the window are counted instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from graphrag_orm.chunking import Chunker, ChunkPlan, within_window
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.embeddings.base import count_input_tokens, input_window, token_count_function
from graphrag_orm.errors import DocumentFailure
from graphrag_orm.ingestion.chunked import plan_placed
from graphrag_orm.ingestion.options import MAX_VECTOR_COORDINATES_PER_DOCUMENT, IngestionOptions, chunk_bound
from graphrag_orm.ingestion.runs import RunCounters
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.placement import ChunkText, PlacementCounts

__all__ = ["DocumentPlanner"]

_log = logging.getLogger(__name__)


class DocumentPlanner:
    """Plans (or places) one document's chunks within the bounds of the options and the embedding set."""

    def __init__(
        self, chunker: Chunker, embedder: Embedder, embedding_set: EmbeddingSet, options: IngestionOptions
    ) -> None:
        self.chunker = within_window(chunker, embedder) if options.fit_chunks_to_embedder else chunker
        self.embedder = embedder
        self.embedding_set = embedding_set
        #: The most tokens the embedder reads of one text (None: no known bound).
        self.embedder_window = input_window(embedder)
        self.max_chunks_per_document = options.max_chunks_per_document

    @property
    def chunk_bound(self) -> int:
        """Chunks a document may have: ``max_chunks_per_document``, and at most
        :data:`MAX_VECTOR_COORDINATES_PER_DOCUMENT` vector coordinates (3,906 chunks at 1,536 dimensions)."""
        return chunk_bound(self.max_chunks_per_document, self.embedding_set.dimensions)

    def plan(self, loaded: LoadedDocument, counters: RunCounters | None = None) -> ChunkPlan:
        """The document's chunks; more than :attr:`chunk_bound` is ``document-too-large``."""
        plan = self.chunker.plan(loaded)
        bound = self.chunk_bound
        if len(plan.chunks) > bound:
            if counters is not None:
                counters.too_many_chunks = True
            raise DocumentFailure(
                DocumentErrorCode.DOCUMENT_TOO_LARGE,
                f"{len(plan.chunks):,} chunks, over the bound of {bound:,} "
                f"(max_chunks_per_document, and {MAX_VECTOR_COORDINATES_PER_DOCUMENT:,} vector coordinates "
                f"at {self.embedding_set.dimensions} dimensions)",
            )
        return plan

    async def place(
        self, chunks: tuple[ChunkText, ...], loaded: LoadedDocument, counters: RunCounters, fingerprint: str
    ) -> tuple[ChunkPlan, PlacementCounts]:
        """The plan of the caller's chunks placed in ``loaded``; over :attr:`chunk_bound` is
        ``document-too-large``, an unplaceable chunk ``position-not-recovered``."""
        bound = self.chunk_bound
        if len(chunks) > bound:
            counters.too_many_chunks = True
            raise DocumentFailure(
                DocumentErrorCode.DOCUMENT_TOO_LARGE,
                f"{len(chunks):,} chunks, over the bound of {bound:,} (max_chunks_per_document)",
            )
        # Off the event loop: 13 MiB of chunks needing normalisation take about a second (docs/ingest.md).
        return await asyncio.to_thread(plan_placed, loaded, chunks, fingerprint, max_chunks=bound)

    async def over_window(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` exceed the embedder's window (0 when it declares none)."""
        window = self.embedder_window
        if window is None or not texts:
            return 0
        counts: list[int] | None = None
        if token_count_function(self.embedder) is not None:  # a tokenizer: off the event loop
            try:
                counts = await asyncio.to_thread(count_input_tokens, self.embedder, texts)
            except Exception as error:  # an embedder's own counter must not fail the document
                _log.warning("count_tokens of the embedder failed (%s); estimating tokens", type(error).__name__)
        if counts is None:  # four bytes a token: cheap, on the loop
            counts = count_input_tokens(None, texts)
        return sum(1 for count in counts if count > window)
