"""The ingestion service: sources to loaders to chunker to embeddings to one transaction per document.

Each call is a run (:mod:`graphrag_orm.ingestion.runs`: Running, then Completed when
every document has an outcome, or Failed when the call was cancelled or threw).
Documents are worked on concurrently (:mod:`graphrag_orm.ingestion.scheduling`) while
model calls share ``lanes``. A document whose content hash and settings fingerprint are
already stored is ``Unchanged`` and not rewritten (:mod:`graphrag_orm.ingestion.states`).
Failures become per-document outcomes with stable codes; only cancellation ends the call
with an exception, and it leaves no lease behind (see :mod:`graphrag_orm.ingestion.leases`).

A document is chunked before its lease is taken (:mod:`graphrag_orm.ingestion.planning`):
one of more than ``max_chunks_per_document`` chunks fails with ``document-too-large``
before any model call (and ``MaxChunksPerDocument`` is in the receipt's
``limits_reached``); chunks longer than the embedder's window are counted into
``chunks_over_window`` of the document's outcome and the receipt, with
``EmbedderWindow`` in ``limits_reached``. :meth:`IngestionService.preview` says what a
call would do without writing (:mod:`graphrag_orm.ingestion.preview`).

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
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.chunking import Chunker, EmbedderTokenCounter
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.embeddings.base import token_count_function
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.extraction.service import Extractor
from graphrag_orm.extraction.writer import KnowledgeWriter
from graphrag_orm.ingestion.chunked import (
    ChunkedDocument,
    check_fingerprint,
    plan_fingerprint,
)
from graphrag_orm.ingestion.document_work import DocumentWork, RunSettings
from graphrag_orm.ingestion.leases import Leases
from graphrag_orm.ingestion.options import IngestionOptions
from graphrag_orm.ingestion.planning import DocumentPlanner
from graphrag_orm.ingestion.preview import Previewer
from graphrag_orm.ingestion.receipts import (
    DocumentOutcome,
    DocumentStatus,
    IngestionPreview,
    IngestionReceipt,
    RunStatus,
)
from graphrag_orm.ingestion.runs import HEARTBEAT_MAX_SECONDS, RunCounters, RunRecords
from graphrag_orm.ingestion.scheduling import DocumentJob, schedule
from graphrag_orm.ingestion.statements import DocumentStatements
from graphrag_orm.ingestion.states import DocumentStates
from graphrag_orm.ingestion.writer import DocumentWriter
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.models import LexicalModel
from graphrag_orm.placement import PlacementCounts
from graphrag_orm.retry import RetryPolicy
from graphrag_orm.sources import Source
from graphrag_orm.store import Store
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.tokens import TokenCounter
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["HEARTBEAT_MAX_SECONDS", "IngestionService", "settings_fingerprint"]

_Item = TypeVar("_Item")


def settings_fingerprint(chunker: Chunker | str, embedding_set: EmbeddingSet, *extra: str) -> str:
    """Hash of everything that changes what is stored: the chunker (a :class:`Chunker`, or the
    fingerprint of the plan another library's chunks make), the embedding set, and extraction."""
    chunks = chunker if isinstance(chunker, str) else chunker.fingerprint
    body = json.dumps({"chunker": chunks, "embedding": embedding_set.id, "extra": list(extra)})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


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
        self.options = options or IngestionOptions()
        self.planner = DocumentPlanner(chunker or Chunker(), embedder, embedding_set, self.options)
        self.chunker = self.planner.chunker
        #: The most tokens the embedder reads of one text (None: no known bound).
        self.embedder_window = self.planner.embedder_window
        self.loaders = loaders or LoaderRegistry.default(max_document_bytes=self.options.max_document_bytes)
        self.retry = retry or RetryPolicy()
        self.token_counter = token_counter
        self.extractor = extractor
        if knowledge is None and extractor is not None:
            knowledge = KnowledgeWriter(model, extractor.ontology)
        if knowledge is not None:
            # In a tenanted graph things and facts are the tenant's (docs/tenancy.md): the
            # writer's statements must be rendered for the layout the store is fenced by.
            check_fenced(knowledge.model.layout.tenanted, store.tenanted, "knowledge extraction")
        documents = DocumentStatements.render(model.names)
        self.states = DocumentStates(store, documents)
        self.runs = RunRecords(store, model, self.options.lease_duration_seconds)
        self.leases = Leases(store, model, self.options.lease_duration_seconds, then=documents.state_under_lease)
        self.writer = DocumentWriter(store, model, self.leases, knowledge, attempts=self.options.write_attempts)
        #: One document's work inside a run (load, compare, plan, lease, embed and extract, write).
        self.documents = DocumentWork(
            loaders=self.loaders,
            planner=self.planner,
            leases=self.leases,
            writer=self.writer,
            embedder=embedder,
            embedding_set=embedding_set,
            retry=self.retry,
            options=self.options,
            extractor=extractor,
        )
        extra = (extractor.fingerprint,) if extractor is not None else ()
        self.fingerprint = settings_fingerprint(self.chunker, embedding_set, *extra)
        self._previewer = Previewer(
            self.loaders,
            self.planner,
            self.states,
            fingerprint=self.fingerprint,
            embedding_batch_size=self.options.embedding_batch_size,
            extractor=extractor,
        )

    async def ingest(
        self, sources: Iterable[Source], *, progress: Callable[[DocumentOutcome], None] | None = None
    ) -> IngestionReceipt:
        """Ingest ``sources`` (at most ``max_documents``; more is reported in ``limits_reached``).

        ``progress``, when given, is called with each document's outcome as it is known.
        """
        chosen, limits = self._bounded(sources)
        return await self._run(
            [DocumentJob(source) for source in chosen], limits, progress, RunSettings(self.fingerprint)
        )

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
        jobs = [DocumentJob(document.source, document.chunks) for document in chosen]
        extra = (self.extractor.fingerprint,) if self.extractor is not None else ()
        settings = RunSettings(settings_fingerprint(fingerprint, self.embedding_set, *extra), fingerprint)
        return await self._run(jobs, limits, progress, settings)

    async def _run(
        self,
        jobs: list[DocumentJob],
        limits: list[Limit],
        progress: Callable[[DocumentOutcome], None] | None,
        settings: RunSettings,
    ) -> IngestionReceipt:
        run_id = f"run-{uuid.uuid4().hex}"
        began = time.monotonic()
        counters = RunCounters()
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
                await self.runs.start(run_id, settings.fingerprint)
                beat = asyncio.create_task(self.runs.heartbeat(run_id), name=f"heartbeat-{run_id}")
                lanes = asyncio.Semaphore(self.options.lanes)

                async def work(job: DocumentJob, stored: Mapping[str, Any] | None, held: bool) -> DocumentOutcome:
                    try:
                        return await self.documents.ingest(job, run_id, lanes, counters, stored, settings, held=held)
                    except asyncio.CancelledError:
                        # A cancel landing while a written document let go of its lease: it is still reported.
                        committed = counters.committed.get(job.source.document_id)
                        if committed is not None:
                            reached(committed)
                        raise

                outcomes, counters.lease_wait = await schedule(
                    jobs,
                    work,
                    self.states,
                    run_id=run_id,
                    in_flight=self.options.documents_in_flight,
                    wait_seconds=self.options.wait_for_leases_seconds,
                    progress=reached,
                )
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
                late_cancel = await self.runs.finish(run_id, status, outcomes or list(settled.values()))
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
            chosen.append(self._owned(item))
        return chosen, []

    def _owned(self, item: _Item) -> _Item:
        """``item`` as the bound tenant's document in a tenanted graph (its id qualified by the
        tenant, docs/tenancy.md); as it is otherwise, or without a tenant (the store refuses then)."""
        tenant = self.store.tenant
        if not self.model.layout.tenanted or tenant is None:
            return item
        if isinstance(item, ChunkedDocument):
            return item.model_copy(update={"source": item.source.in_tenant(tenant.value)})
        if isinstance(item, Source):
            return item.in_tenant(tenant.value)  # type: ignore[return-value]
        return item

    async def preview(self, sources: Iterable[Source]) -> IngestionPreview:
        """What ``ingest`` would do: load, check unchanged (a read), chunk, count calls and tokens.

        Writes nothing. Tokens are counted with the token counter when one is set, else
        with the embedder's own tokenizer when it has one (``count_tokens``), else
        estimated at four UTF-8 bytes per token (``tokens_counted`` says which).
        """
        chosen, limits = self._bounded(sources)
        counter = self.token_counter
        if counter is None and token_count_function(self.embedder) is not None:
            counter = EmbedderTokenCounter(self.embedder)
        return await self._previewer.preview(chosen, limits, counter)

    @property
    def embedder(self) -> Embedder:
        """The embedder each document's chunks go to (set it to swap the embedder of later calls)."""
        return self.documents.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        self.documents.embedder = embedder

    @property
    def chunk_bound(self) -> int:
        """Chunks a document may have (see :attr:`DocumentPlanner.chunk_bound`)."""
        return self.planner.chunk_bound


def _placement_total(outcomes: Sequence[DocumentOutcome]) -> PlacementCounts:
    total = PlacementCounts()
    for outcome in outcomes:
        if outcome.placement is not None:
            total = total + outcome.placement
    return total
