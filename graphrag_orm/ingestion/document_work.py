"""One document's work inside an ingestion run: load, compare, plan, lease, embed (and extract), write.

:class:`DocumentWork` is what :class:`~graphrag_orm.ingestion.service.IngestionService` runs
for each scheduled document, with the run's lanes and counters: the document is loaded and
compared with what is stored (``Unchanged`` ends it there), planned into chunks before its
lease is taken (a document over the chunk bound fails before any model call), then, under
the lease and checked again there, embedded in batches through the shared lanes (and
extracted beside, when an extractor is set) and written in one transaction
(:class:`~graphrag_orm.ingestion.writer.DocumentWriter`). Failures become the document's
outcome with a stable code; a cancel during the write lets the transaction end first, so the
run knows whether the document was stored.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.chunking import ChunkPlan, plan_ids
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet, validate_vectors
from graphrag_orm.embeddings.validation import validate_usage
from graphrag_orm.errors import DocumentFailure, GraphRagError
from graphrag_orm.extraction.grounding import DocumentKnowledge, ExtractionChunk
from graphrag_orm.extraction.service import Extractor
from graphrag_orm.extraction.summary import ExtractionSummary
from graphrag_orm.ingestion.chunked import document_fingerprint
from graphrag_orm.ingestion.leases import LeaseKeeper, Leases, settle
from graphrag_orm.ingestion.options import IngestionOptions
from graphrag_orm.ingestion.planning import DocumentPlanner
from graphrag_orm.ingestion.receipts import DocumentOutcome, DocumentStatus
from graphrag_orm.ingestion.runs import RunCounters
from graphrag_orm.ingestion.scheduling import DocumentJob
from graphrag_orm.ingestion.states import compare
from graphrag_orm.ingestion.writer import DocumentWriter, PreparedDocument
from graphrag_orm.loaders import LoadedDocument, LoaderRegistry
from graphrag_orm.placement import PlacementCounts
from graphrag_orm.retry import RetryPolicy
from graphrag_orm.sources import Source
from graphrag_orm.tracing import SpanName, span

__all__ = ["DocumentWork", "RunSettings"]

_KNOWN_CODES = frozenset(code.value for code in DocumentErrorCode)
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSettings:
    """What one call stores: its settings fingerprint and, for chunked documents, the plan's."""

    fingerprint: str
    #: None: the service's own chunker plans the chunks.
    plan_fingerprint: str | None = None


class DocumentWork:
    """The per-document steps of a run, on the service's parts (the service builds it)."""

    def __init__(
        self,
        *,
        loaders: LoaderRegistry,
        planner: DocumentPlanner,
        leases: Leases,
        writer: DocumentWriter,
        embedder: Embedder,
        embedding_set: EmbeddingSet,
        retry: RetryPolicy,
        options: IngestionOptions,
        extractor: Extractor | None,
    ) -> None:
        self.loaders = loaders
        self.planner = planner
        self.leases = leases
        self.writer = writer
        self.embedder = embedder
        self.embedding_set = embedding_set
        self.retry = retry
        self.options = options
        self.extractor = extractor

    async def ingest(
        self,
        job: DocumentJob,
        run_id: str,
        lanes: asyncio.Semaphore,
        counters: RunCounters,
        stored: Mapping[str, Any] | None,
        settings: RunSettings,
        *,
        held: bool = False,
    ) -> DocumentOutcome:
        source = job.source
        document_id = source.document_id
        with span(SpanName.DOCUMENT, run_id=run_id, document_id=document_id) as traced:
            try:
                if held:  # another run held it when its window was read: tried again after the pass
                    raise DocumentFailure(DocumentErrorCode.LEASE_HELD, "another run holds this document's lease")
                loaded = await self.loaders.load(source)
                # Read for the whole run up front; checked again under the lease below.
                # A chunked document's fingerprint also covers its chunks (see chunked.document_fingerprint).
                fingerprint = (
                    settings.fingerprint
                    if job.chunks is None
                    else document_fingerprint(settings.fingerprint, job.chunks)
                )
                if compare(stored, source, loaded, fingerprint) == "unchanged":
                    traced.set("status", DocumentStatus.UNCHANGED.value)
                    return DocumentOutcome(
                        document_id=document_id, source_uri=source.source_uri, status=DocumentStatus.UNCHANGED
                    )
                placed: PlacementCounts | None = None
                if job.chunks is None or settings.plan_fingerprint is None:
                    plan = self.planner.plan(loaded, counters)
                else:
                    plan, placed = await self.planner.place(job.chunks, loaded, counters, settings.plan_fingerprint)
                async with self.leases.held(document_id, run_id) as keeper:
                    outcome = await keeper.guard(
                        self._work(source, loaded, plan, run_id, lanes, counters, keeper, fingerprint)
                    )
                if placed is not None and outcome.status == DocumentStatus.INGESTED:
                    outcome = outcome.model_copy(update={"placement": placed})
                traced.set("status", outcome.status.value)
                traced.set("chunks", outcome.chunks)
                return outcome
            except GraphRagError as error:
                code = error.code if error.code in _KNOWN_CODES else DocumentErrorCode.WRITE_FAILED.value
                traced.fail(code)
                return DocumentOutcome(
                    document_id=document_id, source_uri=source.source_uri, status=DocumentStatus.FAILED, error_code=code
                )
            except (Neo4jError, DriverError, OSError, RuntimeError, ValueError) as error:
                # The database went away or refused the write; the transaction rolled back.
                # Logged by type and server code only: messages can quote document data.
                _log.warning("document write failed: %s %s", type(error).__name__, getattr(error, "code", "") or "")
                traced.fail(DocumentErrorCode.WRITE_FAILED.value)
                return DocumentOutcome(
                    document_id=document_id,
                    source_uri=source.source_uri,
                    status=DocumentStatus.FAILED,
                    error_code=DocumentErrorCode.WRITE_FAILED.value,
                )

    async def _work(
        self,
        source: Source,
        loaded: LoadedDocument,
        plan: ChunkPlan,
        run_id: str,
        lanes: asyncio.Semaphore,
        counters: RunCounters,
        keeper: LeaseKeeper,
        fingerprint: str,
    ) -> DocumentOutcome:
        document_id = source.document_id
        # Checked again under the lease (read when it was taken): another worker may have
        # just written it.
        state = compare(keeper.read, source, loaded, fingerprint)
        if state == "unchanged":
            return DocumentOutcome(
                document_id=document_id, source_uri=source.source_uri, status=DocumentStatus.UNCHANGED
            )
        texts = plan.texts(loaded.utf8)
        ids = plan_ids(plan, document_id, loaded.content_hash)
        over_window = await self.planner.over_window(texts)
        knowledge: DocumentKnowledge | None = None
        summary: ExtractionSummary | None = None
        if self.extractor is None:
            vectors = await self._embed(texts, lanes, counters, run_id, document_id)
        else:
            chunk_texts = [
                ExtractionChunk(chunk_id=identity, document_id=document_id, text=text, start_byte=c.start_byte)
                for c, text, identity in zip(plan.chunks, texts, ids.chunks, strict=True)
            ]
            # Embedding and extraction are both model calls: they share the lanes.
            vectors, (knowledge, summary) = await asyncio.gather(
                self._embed(texts, lanes, counters, run_id, document_id),
                self.extractor.extract(chunk_texts, lanes, counters.retries, run_id=run_id),
            )
        prepared = PreparedDocument(
            source=source,
            loaded=loaded,
            plan=plan,
            vectors=vectors,
            embedding_set_id=self.embedding_set.id,
            settings_fingerprint=fingerprint,
            knowledge=knowledge,
            existed=state != "absent",
            ids=ids,
        )
        with span(SpanName.WRITE, run_id=run_id, document_id=document_id, chunks=len(plan.chunks)):
            write = asyncio.ensure_future(self.writer.write(prepared, run_id))
            try:
                chunks, cancelled = await asyncio.shield(write), False
            except asyncio.CancelledError:
                # Cancelled mid-write: the transaction ends first (as a release does), so the
                # run knows whether this document was stored.
                chunks, cancelled = (await settle(write))[0], True
        if summary is not None:
            # Counted once written, so a failed write and its rerun are not counted twice.
            counters.extraction = counters.extraction + summary
        outcome = DocumentOutcome(
            document_id=document_id,
            source_uri=source.source_uri,
            status=DocumentStatus.INGESTED,
            chunks=chunks,
            embedding_calls=math.ceil(len(texts) / self.options.embedding_batch_size),
            chunks_over_window=over_window,
        )
        counters.committed[document_id] = outcome
        if cancelled:
            raise asyncio.CancelledError
        return outcome

    async def _embed(
        self, texts: Sequence[str], lanes: asyncio.Semaphore, counters: RunCounters, run_id: str, document_id: str
    ) -> list[list[float]]:
        size = self.options.embedding_batch_size
        batches = [list(texts[i : i + size]) for i in range(0, len(texts), size)]

        async def one(batch: list[str]) -> list[list[float]]:
            async with lanes:
                with span(SpanName.EMBED, run_id=run_id, document_id=document_id, texts=len(batch)) as traced:
                    result = await self.retry.run(
                        lambda: self.embedder.embed(batch),
                        code=DocumentErrorCode.EMBEDDING_FAILED.value,
                        tally=counters.retries,
                    )
                    counters.embedding_calls += 1
                    tokens = validate_usage(getattr(result, "input_tokens", None))
                    if tokens is None:
                        counters.tokens_reported = False
                    else:
                        counters.input_tokens += tokens
                        traced.set("input_tokens", tokens)
                    return validate_vectors(result, len(batch), self.embedding_set)

        results = await asyncio.gather(*(one(batch) for batch in batches))
        return [vector for batch in results for vector in batch]
