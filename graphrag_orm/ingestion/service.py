"""The ingestion service: sources to loaders to chunker to embeddings to one transaction per document.

Each call is a run (an ``IngestionRun`` node: Running, then Completed when every
document has an outcome, or Failed when the call was cancelled or threw). Documents
are worked on concurrently (``documents_in_flight``) while model calls share
``lanes``. A document whose content hash and settings fingerprint are already stored
is ``Unchanged`` and not rewritten, so a resumed run skips what is done. Failures
become per-document outcomes with stable codes; only cancellation ends the call
with an exception, and it leaves no lease behind (see
:mod:`graphrag_orm.ingestion.leases`).

A document is chunked before its lease is taken: one of more than
``max_chunks_per_document`` chunks fails with ``document-too-large`` before any
model call (and ``MaxChunksPerDocument`` is in the receipt's ``limits_reached``).
While the run works, a heartbeat stamps its node's ``progressAt`` every third of the
lease duration (at most every :data:`HEARTBEAT_MAX_SECONDS`); a run killed or cut
off from the database stops stamping, which is how maintenance tells a stale run.

An embedder that declares a window (``max_input_tokens``) reads only the start of a longer
chunk: such chunks are counted (with the embedder's ``count_tokens``, else estimated at four
UTF-8 bytes a token) into ``chunks_over_window`` of the document's outcome and the receipt,
with ``EmbedderWindow`` in ``limits_reached``; ``IngestionOptions(fit_chunks_to_embedder=True)``
cuts chunks to the window instead.

:meth:`IngestionService.ingest_chunked` runs the same steps on chunks another library
made (:mod:`graphrag_orm.ingestion.chunked`): the caller's chunks, placed in the loaded
bytes by the text locator (:mod:`graphrag_orm.placement`) before the lease is taken,
replace the toolkit's chunker, and the caller's chunker fingerprint replaces the
chunker's in the settings fingerprint. A chunk the locator cannot place fails its
document with ``position-not-recovered`` before any model call, and nothing of that
document is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.chunking import Chunker, ChunkPlan, chunk_id, within_window
from graphrag_orm.codes import DocumentErrorCode, ErrorCode, LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet, validate_vectors
from graphrag_orm.embeddings.base import count_input_tokens, input_window, token_count_function
from graphrag_orm.embeddings.validation import validate_usage
from graphrag_orm.errors import ConfigurationError, DocumentFailure, GraphRagError
from graphrag_orm.extraction.grounding import DocumentKnowledge, ExtractionChunk
from graphrag_orm.extraction.service import Extractor
from graphrag_orm.extraction.summary import ExtractionSummary
from graphrag_orm.extraction.writer import KnowledgeWriter
from graphrag_orm.ingestion.chunked import (
    ChunkedDocument,
    check_fingerprint,
    document_fingerprint,
    plan_fingerprint,
    plan_placed,
)
from graphrag_orm.ingestion.leases import LeaseKeeper, Leases, settle
from graphrag_orm.ingestion.options import MAX_VECTOR_COORDINATES_PER_DOCUMENT, IngestionOptions, chunk_bound
from graphrag_orm.ingestion.receipts import (
    DocumentOutcome,
    DocumentPreview,
    DocumentStatus,
    IngestionPreview,
    IngestionReceipt,
    PreviewStatus,
    RunStatus,
)
from graphrag_orm.ingestion.statements import STATE_FIELDS, DocumentStatements, RunStatements
from graphrag_orm.ingestion.waiting import Fresh, FreshStates, is_held, pass_order, wait_for_held
from graphrag_orm.ingestion.writer import DocumentWriter, PreparedDocument
from graphrag_orm.loaders import LoadedDocument, LoaderRegistry
from graphrag_orm.models import LexicalModel
from graphrag_orm.placement import ChunkText, PlacementCounts
from graphrag_orm.retry import RetryPolicy, RetryTally
from graphrag_orm.sources import Source
from graphrag_orm.store import Store
from graphrag_orm.tokens import ByteEstimateCounter, TokenCounter
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["HEARTBEAT_MAX_SECONDS", "IngestionService", "describe", "settings_fingerprint"]

#: The longest wait between two stamps of a running run's ``progressAt``.
HEARTBEAT_MAX_SECONDS = 60.0

_Item = TypeVar("_Item")
_KNOWN_CODES = frozenset(code.value for code in DocumentErrorCode)
_log = logging.getLogger(__name__)


class _RunCounters:
    """Per-run tallies shared by the documents of one call (asyncio: no locks needed)."""

    def __init__(self) -> None:
        self.embedding_calls = 0
        self.input_tokens = 0
        self.tokens_reported = True
        self.retries = RetryTally()
        self.extraction = ExtractionSummary()
        self.too_many_chunks = False
        self.lease_wait: Limit | None = None
        #: Documents written by this run, by id, as soon as their transaction committed.
        self.committed: dict[str, DocumentOutcome] = {}


def settings_fingerprint(chunker: Chunker | str, embedding_set: EmbeddingSet, *extra: str) -> str:
    """Hash of everything that changes what is stored: the chunker (a :class:`Chunker`, or the
    fingerprint of the plan another library's chunks make), the embedding set, and extraction."""
    chunks = chunker if isinstance(chunker, str) else chunker.fingerprint
    body = json.dumps({"chunker": chunks, "embedding": embedding_set.id, "extra": list(extra)})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Job:
    """One document of a call: its source and, for ``ingest_chunked``, the caller's chunks."""

    source: Source
    chunks: tuple[ChunkText, ...] | None = None


@dataclass(frozen=True)
class _Settings:
    """What one call stores: its settings fingerprint and, for chunked documents, the plan's."""

    fingerprint: str
    #: None: the service's own chunker plans the chunks.
    plan_fingerprint: str | None = None


class IngestionService:
    """Ingests sources into the graph of one layout and embedding set.

    Everything it needs is passed in; the facade wires it (one ``retry`` policy shared
    with the extractor, the ``knowledge`` writer of the extractor's ontology). Built
    alone, it retries model calls with ``RetryPolicy()`` and, given an ``extractor``
    but no ``knowledge`` writer, writes the knowledge of the extractor's ontology. It
    never creates schema: the constraints and indexes come from reviewed migrations.
    Every statement goes through ``store``.
    """

    def __init__(
        self,
        store: Store,
        model: LexicalModel,
        embedding_set: EmbeddingSet,
        embedder: Embedder,
        *,
        chunker: Chunker | None = None,
        loaders: LoaderRegistry | None = None,
        options: IngestionOptions | None = None,
        retry: RetryPolicy | None = None,
        token_counter: TokenCounter | None = None,
        extractor: Extractor | None = None,
        knowledge: KnowledgeWriter | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.embedding_set = embedding_set
        self.embedder = embedder
        self.options = options or IngestionOptions()
        self.chunker = chunker or Chunker()
        if self.options.fit_chunks_to_embedder:
            self.chunker = within_window(self.chunker, embedder)
        #: The most tokens the embedder reads of one text (None: no known bound).
        self.embedder_window = input_window(embedder)
        self.loaders = loaders or LoaderRegistry.default(max_document_bytes=self.options.max_document_bytes)
        self.retry = retry or RetryPolicy()
        self.token_counter = token_counter
        self.extractor = extractor
        if knowledge is None and extractor is not None:
            knowledge = KnowledgeWriter(model, extractor.ontology)
        self._documents = DocumentStatements.render(model.names)
        self._runs = RunStatements.render(model.names)
        self.leases = Leases(store, model, self.options.lease_duration_seconds, then=self._documents.state_under_lease)
        self.writer = DocumentWriter(store, model, self.leases, knowledge, attempts=self.options.write_attempts)
        extra = (extractor.fingerprint,) if extractor is not None else ()
        self.fingerprint = settings_fingerprint(self.chunker, embedding_set, *extra)

    async def ingest(
        self, sources: Iterable[Source], *, progress: Callable[[DocumentOutcome], None] | None = None
    ) -> IngestionReceipt:
        """Ingest ``sources`` (at most ``max_documents``; more is reported in ``limits_reached``).

        ``progress``, when given, is called with each document's outcome as it is known.
        """
        chosen, limits = self._bounded(sources)
        return await self._run([_Job(source) for source in chosen], limits, progress, _Settings(self.fingerprint))

    async def ingest_chunked(
        self,
        documents: Iterable[ChunkedDocument],
        chunker_fingerprint: str,
        *,
        progress: Callable[[DocumentOutcome], None] | None = None,
    ) -> IngestionReceipt:
        """Ingest documents another library chunked, their chunks placed in the stored text.

        The same steps as :meth:`ingest` (load, lease, unchanged check, the service's own
        embedder, extraction with an ontology, one transaction per document, the same
        receipt and run records, retries and bounds), but the chunks are the caller's,
        each placed in the loaded bytes by :func:`graphrag_orm.placement.place` and stored
        as the bytes of its span. ``chunker_fingerprint`` names the splitter
        (:func:`graphrag_orm.ingestion.chunkers.fingerprint_of`) and joins the settings
        fingerprint, with a digest of the document's chunks: a document ingested again
        with the same fingerprint, bytes and chunks is ``Unchanged``; with another
        fingerprint (or other chunks) it is written again. Each outcome of an ingested
        document carries its ``placement`` counts, and the receipt their sum.

        A chunk that cannot be placed fails its document with ``position-not-recovered``
        (nothing of it is written); more chunks than the per-document bound fail it with
        ``document-too-large`` (``MaxChunksPerDocument`` in ``limits_reached``); at most
        ``max_documents`` documents are read (``MaxDocuments``). Raises
        ``ConfigurationError`` (``invalid-option``) for a blank or over-long fingerprint
        and (``invalid-source``) for an item that is not a ``ChunkedDocument``, before
        anything is written.
        """
        fingerprint = plan_fingerprint(check_fingerprint(chunker_fingerprint))
        chosen, limits = self._bounded(documents, chunked=True)
        jobs = [_Job(document.source, document.chunks) for document in chosen]
        extra = (self.extractor.fingerprint,) if self.extractor is not None else ()
        settings = _Settings(settings_fingerprint(fingerprint, self.embedding_set, *extra), fingerprint)
        return await self._run(jobs, limits, progress, settings)

    async def _run(
        self,
        jobs: list[_Job],
        limits: list[Limit],
        progress: Callable[[DocumentOutcome], None] | None,
        settings: _Settings,
    ) -> IngestionReceipt:
        run_id = f"run-{uuid.uuid4().hex}"
        began = time.monotonic()
        counters = _RunCounters()
        outcomes: list[DocumentOutcome] = []
        # What a cancelled run had settled, so its record counts them rather than 0/0/0.
        settled: dict[str, DocumentOutcome] = {}

        def reached(outcome: DocumentOutcome) -> None:
            settled[outcome.document_id] = outcome
            if progress is not None:
                progress(outcome)

        status = RunStatus.FAILED
        with span(SpanName.INGEST, run_id=run_id, documents=len(jobs)) as traced:
            beat: asyncio.Task[None] | None = None
            try:
                # A cancel landing while the run node is written still finishes it below.
                await self._start_run(run_id, settings.fingerprint)
                beat = asyncio.create_task(self._heartbeat(run_id), name=f"heartbeat-{run_id}")
                outcomes = await self._ingest_all(jobs, run_id, counters, reached, settings)
                # A run none of whose documents could be ingested is not Completed.
                if not outcomes or any(o.status != DocumentStatus.FAILED for o in outcomes):
                    status = RunStatus.COMPLETED
                # A killed run leaves leases on documents it committed; this run found them
                # unchanged, so it clears those that expired.
                with contextlib.suppress(Neo4jError, DriverError, OSError):
                    await self.leases.sweep_expired(
                        [o.document_id for o in outcomes if o.status == DocumentStatus.UNCHANGED]
                    )
            finally:
                # Not awaited: a second cancel there would skip the finish. A stamp still
                # in flight changes nothing once the run is no longer Running.
                if beat is not None:
                    beat.cancel()
                late_cancel = await self._finish_run(run_id, status, outcomes or list(settled.values()))
                traced.set("status", status.value)
                traced.set("chunks", sum(o.chunks for o in outcomes))
                traced.set("calls", counters.embedding_calls)
                traced.set("retries", counters.retries.summary().retries)
        if late_cancel:
            raise asyncio.CancelledError
        if counters.lease_wait is not None:
            limits.append(counters.lease_wait)
        if counters.too_many_chunks:
            limits.append(Limit(name=LimitName.MAX_CHUNKS_PER_DOCUMENT, value=self.chunk_bound))
        over_window = sum(o.chunks_over_window for o in outcomes if o.status == DocumentStatus.INGESTED)
        if over_window and self.embedder_window is not None:
            limits.append(Limit(name=LimitName.EMBEDDER_WINDOW, value=self.embedder_window))
        return IngestionReceipt(
            run_id=run_id,
            status=status,
            documents=tuple(outcomes),
            chunks_written=sum(o.chunks for o in outcomes if o.status == DocumentStatus.INGESTED),
            embedding_calls=counters.embedding_calls,
            input_tokens=counters.input_tokens if counters.tokens_reported and counters.embedding_calls else None,
            elapsed_seconds=round(time.monotonic() - began, 3),
            limits_reached=tuple(limits),
            retries=counters.retries.summary(),
            chunks_over_window=over_window,
            extraction=counters.extraction if self.extractor is not None else None,
            placement=_placement_total(outcomes) if settings.plan_fingerprint is not None else None,
        )

    def _bounded(self, items: Iterable[_Item], *, chunked: bool = False) -> tuple[list[_Item], list[Limit]]:
        chosen: list[_Item] = []
        limit = self.options.max_documents
        for item in items:
            if len(chosen) == limit:
                return chosen, [Limit(name=LimitName.MAX_DOCUMENTS, value=limit)]
            if chunked and not isinstance(item, ChunkedDocument):
                raise ConfigurationError(
                    ErrorCode.INVALID_SOURCE,
                    f"document {len(chosen)} is a {type(item).__name__}, not a ChunkedDocument "
                    "(ChunkedDocument.create(source, chunks))",
                )
            chosen.append(item)
        return chosen, []

    async def _ingest_all(
        self,
        jobs: list[_Job],
        run_id: str,
        counters: _RunCounters,
        progress: Callable[[DocumentOutcome], None] | None,
        settings: _Settings,
    ) -> list[DocumentOutcome]:
        documents = asyncio.Semaphore(self.options.documents_in_flight)
        lanes = asyncio.Semaphore(self.options.lanes)
        waits = self.options.wait_for_leases_seconds > 0

        # ``final``: every outcome is reported; else a lease-held one waits for its last try.
        async def one(job: _Job, final: bool, fresh: FreshStates | None, position: int) -> DocumentOutcome:
            async with documents:
                held = False
                if fresh is None:
                    stored = states.get(job.source.document_id)
                else:
                    found = await fresh.get(position)
                    stored, held = found.state, found.held
                try:
                    outcome = await self._ingest_document(job, run_id, lanes, counters, stored, settings, held=held)
                except asyncio.CancelledError:
                    # A cancel landing while a written document let go of its lease: it is still reported.
                    committed = counters.committed.get(job.source.document_id)
                    if committed is not None and progress is not None:
                        progress(committed)
                    raise
            if progress is not None and (final or not is_held(outcome)):
                progress(outcome)
            return outcome

        async def all_of(
            chosen: Sequence[_Job], final: bool, fresh: FreshStates | None = None
        ) -> list[DocumentOutcome]:
            tasks = [asyncio.create_task(one(job, final, fresh, i)) for i, job in enumerate(chosen)]
            try:
                return list(await asyncio.gather(*tasks))
            except BaseException:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise

        async def again(positions: list[int]) -> list[DocumentOutcome]:
            # Read afresh, then through the lease, never around it: a document another run
            # finished and released is Unchanged, one still held (unexpired) waits for the
            # next try, and a dead holder's expired lease is taken over and released.
            chosen = [jobs[i] for i in positions]
            return await all_of(chosen, final=False, fresh=self._fresh(chosen))

        states: dict[str, dict[str, Any]] = {}
        if not waits:
            states = await self._prefetch_states([job.source for job in jobs])
            return await all_of(jobs, final=True)
        # Many workers given one manifest each visit it in an order of their own, so they
        # rarely reach for the same document at once (outcomes stay in source order),
        # and read stored states and leases as they go, so what another wrote is
        # Unchanged at once and what another holds waits without being loaded.
        order = pass_order(run_id, len(jobs))
        visiting = [jobs[i] for i in order]
        visited = await all_of(visiting, final=False, fresh=self._fresh(visiting))
        outcomes = list(visited)
        for outcome, position in zip(visited, order, strict=True):
            outcomes[position] = outcome
        outcomes, limit = await wait_for_held(outcomes, again, self.options.wait_for_leases_seconds)
        if limit is not None:
            if progress is not None:
                for outcome in outcomes:
                    if is_held(outcome):
                        progress(outcome)
            counters.lease_wait = limit
        return outcomes

    def _fresh(self, jobs: Sequence[_Job]) -> FreshStates:
        """States and leases of ``jobs``' documents, read window by window as a pass reaches them."""
        return FreshStates(self._window_states, [job.source for job in jobs])

    async def _ingest_document(
        self,
        job: _Job,
        run_id: str,
        lanes: asyncio.Semaphore,
        counters: _RunCounters,
        stored: Mapping[str, Any] | None,
        settings: _Settings,
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
                if self._compare(stored, source, loaded, fingerprint) == "unchanged":
                    traced.set("status", DocumentStatus.UNCHANGED.value)
                    return DocumentOutcome(
                        document_id=document_id, source_uri=source.source_uri, status=DocumentStatus.UNCHANGED
                    )
                placed: PlacementCounts | None = None
                if job.chunks is None or settings.plan_fingerprint is None:
                    plan = self._plan(loaded, counters)
                else:
                    plan, placed = await self._place(job.chunks, loaded, counters, settings.plan_fingerprint)
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
        counters: _RunCounters,
        keeper: LeaseKeeper,
        fingerprint: str,
    ) -> DocumentOutcome:
        document_id = source.document_id
        # Checked again under the lease (read when it was taken): another worker may have
        # just written it.
        state = self._compare(keeper.read, source, loaded, fingerprint)
        if state == "unchanged":
            return DocumentOutcome(
                document_id=document_id, source_uri=source.source_uri, status=DocumentStatus.UNCHANGED
            )
        texts = plan.texts(loaded.utf8)
        over_window = await self._over_window(texts)
        knowledge: DocumentKnowledge | None = None
        summary: ExtractionSummary | None = None
        if self.extractor is None:
            vectors = await self._embed(texts, lanes, counters, run_id, document_id)
        else:
            chunk_texts = [
                ExtractionChunk(
                    chunk_id=chunk_id(document_id, loaded.content_hash, plan.fingerprint, c.start_byte, c.end_byte),
                    document_id=document_id,
                    text=text,
                    start_byte=c.start_byte,
                )
                for c, text in zip(plan.chunks, texts, strict=True)
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
        self, texts: Sequence[str], lanes: asyncio.Semaphore, counters: _RunCounters, run_id: str, document_id: str
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

    async def _over_window(self, texts: Sequence[str]) -> int:
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

    def _plan(self, loaded: LoadedDocument, counters: _RunCounters | None = None) -> ChunkPlan:
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

    async def _place(
        self, chunks: tuple[ChunkText, ...], loaded: LoadedDocument, counters: _RunCounters, fingerprint: str
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

    @property
    def chunk_bound(self) -> int:
        """Chunks a document may have: ``max_chunks_per_document``, and at most
        :data:`MAX_VECTOR_COORDINATES_PER_DOCUMENT` vector coordinates (3,906 chunks at 1,536 dimensions)."""
        return chunk_bound(self.options.max_chunks_per_document, self.embedding_set.dimensions)

    def _compare(
        self, stored: Mapping[str, Any] | None, source: Source, loaded: LoadedDocument, fingerprint: str | None = None
    ) -> str:
        """``absent``, ``changed`` or ``unchanged``: same bytes, same settings and same metadata."""
        if not stored or stored.get("content_hash") is None:
            return "absent"
        metadata = source.metadata
        wanted = {
            "content_hash": loaded.content_hash,
            "settings_fingerprint": fingerprint or self.fingerprint,
            "title": metadata.title or loaded.title,
            "published": metadata.published,
            "publisher": metadata.publisher,
            "url": metadata.url,
            "text_origin": metadata.text_origin,
        }
        return "unchanged" if all(stored.get(field) == wanted[field] for field in STATE_FIELDS) else "changed"

    async def _prefetch_states(self, sources: Sequence[Source]) -> dict[str, dict[str, Any]]:
        """What is stored for every source's document, in one read per thousand documents."""
        statement = self._documents.prefetch_states
        found: dict[str, dict[str, Any]] = {}
        ids = [source.document_id for source in sources]
        for start in range(0, len(ids), 1000):
            result = await self.store.read(statement.cypher, {"ids": ids[start : start + 1000]}, name=statement.name)
            found.update({row["document"]: row for row in result})
        return found

    async def _window_states(self, sources: Sequence[Source]) -> dict[str, Fresh]:
        """What is stored and leased of ``sources``' documents, in one read (see :class:`FreshStates`)."""
        statement = self._documents.window_states
        ids = [source.document_id for source in sources]
        result = await self.store.read(statement.cypher, {"ids": ids}, name=statement.name)
        return {
            str(row["document"]): Fresh(state=None if row["leased"] else row, held=bool(row["live"])) for row in result
        }

    async def _stored_state(self, source: Source, loaded: LoadedDocument) -> str:
        statement = self._documents.state
        result = await self.store.read(statement.cypher, {"id": source.document_id}, name=statement.name)
        return self._compare(result.single(), source, loaded)

    async def _start_run(self, run_id: str, fingerprint: str) -> None:
        row = self.model.names.run.row(
            {
                "uid": run_id,
                "started_at": datetime.now(UTC),
                "status": RunStatus.RUNNING.value,
                "progress_at": datetime.now(UTC),
                "settings_fingerprint": fingerprint,
                "documents_ingested": 0,
                "documents_unchanged": 0,
                "documents_failed": 0,
                "chunks_written": 0,
            }
        )
        start = self._runs.start
        await self.store.execute(start.cypher, {"rows": [row]}, name=start.name)

    async def _heartbeat(self, run_id: str) -> None:
        """Stamp the run's progress every third of the lease duration (at most every minute) until cancelled."""
        interval = min(self.options.lease_duration_seconds / 3, HEARTBEAT_MAX_SECONDS)
        beat = self._runs.heartbeat
        parameters = {"id": run_id, "running": RunStatus.RUNNING.value}
        while True:
            await asyncio.sleep(interval)
            try:
                result = await self.store.execute(beat.cypher, parameters, name=beat.name)
            except (Neo4jError, DriverError, OSError) as error:
                _log.info("run heartbeat failed (%s); trying again at the next beat", type(error).__name__)
                continue
            if result.value("beat", 0) != 1:
                # Marked Failed by maintenance while still working (paused past the stale time).
                _log.warning("run %s is no longer Running in the graph; its final status will be written", run_id)
                return

    async def _finish_run(self, run_id: str, status: RunStatus, outcomes: list[DocumentOutcome]) -> bool:
        """Write the run's final status and counts, to the end; True when a cancel arrived meanwhile."""
        runs = self.model.names.run
        counts = {
            runs.stored("documents_ingested"): sum(1 for o in outcomes if o.status == DocumentStatus.INGESTED),
            runs.stored("documents_unchanged"): sum(1 for o in outcomes if o.status == DocumentStatus.UNCHANGED),
            runs.stored("documents_failed"): sum(1 for o in outcomes if o.status == DocumentStatus.FAILED),
            runs.stored("chunks_written"): sum(o.chunks for o in outcomes if o.status == DocumentStatus.INGESTED),
            runs.stored("status"): status.value,
            # A run maintenance marked stale while it was only paused: its own end wins.
            runs.stored("failure_reason"): None,
        }
        finish = self._runs.finish
        # If the database is gone the receipt still reports every outcome; the run node
        # stays Running and goes stale, which the health report shows (``stale-runs``).
        try:
            _, cancelled = await settle(
                self.store.execute(finish.cypher, {"id": run_id, "counts": counts}, name=finish.name)
            )
        except (Neo4jError, DriverError, OSError, RuntimeError, TimeoutError):
            return False
        return cancelled

    async def preview(self, sources: Iterable[Source]) -> IngestionPreview:
        """What ``ingest`` would do: load, check unchanged (a read), chunk, count calls and tokens.

        Writes nothing. Tokens are counted with the token counter when one is set,
        else estimated at four UTF-8 bytes per token (``tokens_counted`` says which).
        """
        chosen, limits = self._bounded(sources)
        counter: TokenCounter = self.token_counter or ByteEstimateCounter()
        previews: list[DocumentPreview] = []
        tally = _RunCounters()
        for source in chosen:
            previews.append(await self._preview_document(source, counter, tally))
        if tally.too_many_chunks:
            limits.append(Limit(name=LimitName.MAX_CHUNKS_PER_DOCUMENT, value=self.chunk_bound))
        over_window = sum(p.chunks_over_window for p in previews)
        if over_window and self.embedder_window is not None:
            limits.append(Limit(name=LimitName.EMBEDDER_WINDOW, value=self.embedder_window))
        return IngestionPreview(
            documents=tuple(previews),
            chunks=sum(p.chunks for p in previews),
            embedding_calls=sum(p.embedding_calls for p in previews),
            extraction_calls=sum(p.extraction_calls for p in previews),
            input_tokens=sum(p.input_tokens for p in previews),
            tokens_counted=self.token_counter is not None,
            limits_reached=tuple(limits),
            chunks_over_window=over_window,
        )

    async def _preview_document(self, source: Source, counter: TokenCounter, tally: _RunCounters) -> DocumentPreview:
        document_id = source.document_id
        try:
            loaded = await self.loaders.load(source)
        except GraphRagError as error:
            return DocumentPreview(
                document_id=document_id,
                source_uri=source.source_uri,
                status=PreviewStatus.FAILED,
                error_code=error.code,
            )
        state = await self._stored_state(source, loaded)
        if state == "unchanged":
            return DocumentPreview(
                document_id=document_id, source_uri=source.source_uri, status=PreviewStatus.UNCHANGED
            )
        try:
            plan = self._plan(loaded, tally)
        except DocumentFailure as error:
            return DocumentPreview(
                document_id=document_id,
                source_uri=source.source_uri,
                status=PreviewStatus.FAILED,
                error_code=error.code,
            )
        texts = plan.texts(loaded.utf8)
        tokens = sum(counter.count(text) for text in texts)
        extraction_calls = 0
        if self.extractor is not None:
            # One call per chunk; the chat format adds 4 tokens per message and 3 per
            # request (the schema and any repair ask are not counted).
            extraction_calls = len(texts)
            instructions = counter.count(self.extractor.request("").messages[0].content)
            tokens += sum(instructions + counter.count(f"Passage:\n{text}") + 2 * 4 + 3 for text in texts)
        return DocumentPreview(
            document_id=document_id,
            source_uri=source.source_uri,
            status=PreviewStatus.CHANGED if state == "changed" else PreviewStatus.NEW,
            chunks=len(texts),
            embedding_calls=math.ceil(len(texts) / self.options.embedding_batch_size),
            extraction_calls=extraction_calls,
            input_tokens=tokens,
            chunks_over_window=await self._over_window(texts),
        )


def _placement_total(outcomes: Sequence[DocumentOutcome]) -> PlacementCounts:
    total = PlacementCounts()
    for outcome in outcomes:
        if outcome.placement is not None:
            total = total + outcome.placement
    return total


def describe(receipt: IngestionReceipt) -> dict[str, Any]:
    """A compact summary for logs: counts only."""
    return {
        "run": receipt.run_id,
        "ingested": receipt.ingested,
        "unchanged": receipt.unchanged,
        "failed": receipt.failed,
        "chunks": receipt.chunks_written,
    }
