"""The maintenance service: re-ingest what changed, remove documents, clean up, check health.

Every delete is explicit and bounded (see :mod:`graphrag_orm.maintenance.removal`):
by key, never ``DETACH DELETE``, links before nodes, in pages; documents in batches
of at most ``batch_documents`` and ``batch_bytes``, one transaction each, each
document whole or not at all. Only what the toolkit wrote is removed (see
:mod:`graphrag_orm.maintenance.ownership`): anything else under its labels makes the
call refused with ``GraphRefused("foreign-graph")``.

What is never done: the schema is never changed, an unexpired lease is never
deleted, a running run's node is never deleted, and a relationship the toolkit does
not own is never detached. A run left ``Running`` by a process that died is found by
``check()`` (``stale-runs``) and marked Failed by :meth:`MaintenanceService.fail_stale_runs`;
then a reset removes it like any finished run.

In a tenanted graph (docs/tenancy.md) the service is its store's tenant's: every statement of
every call finds, counts and deletes that tenant's documents, sections, chunks, leases and runs
only, in the statement itself, so a reset of everything is a reset of the tenant's everything.
:meth:`MaintenanceService.remove_tenant` removes the tenant whole. With the knowledge extension
(:class:`~graphrag_orm.maintenance.knowledge_graph.KnowledgeGraphMaintenance` rendered for the
tenanted layout) the tenant's mentions, quotes, facts and things are removed and counted the same
way; any other extension is refused when built (``tenant-refused``). A removal retracts the
tenant's community findings its documents supported, and a reset of everything and
:meth:`MaintenanceService.remove_tenant` remove the tenant's communities and reports, as an
untenanted reset of everything removes every one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import ConfigurationError, RemovalConflict
from graphrag_orm.ingestion import IngestionOptions, IngestionReceipt, IngestionService
from graphrag_orm.ingestion.receipts import RunStatus
from graphrag_orm.maintenance.health import HealthChecks
from graphrag_orm.maintenance.housekeeping import Housekeeping
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance, ThingsRemoval
from graphrag_orm.maintenance.options import DEFAULT_TENANT_BATCH_DOCUMENTS, MaintenanceOptions, check_tenant_batch
from graphrag_orm.maintenance.ownership import Ownership, counted, merge_stamps
from graphrag_orm.maintenance.removal import BatchRemover, RemovalTotals
from graphrag_orm.maintenance.reports import (
    MAX_FACT_UPDATES,
    HealthReport,
    RemovalPreview,
    RemovalProgress,
    RemovalReport,
    ResetScope,
    StaleRunsReport,
    TenantCounts,
    TenantRemovalReport,
)
from graphrag_orm.maintenance.scope import DocumentSize, ScopeReader
from graphrag_orm.maintenance.stale_runs import StaleRuns
from graphrag_orm.maintenance.tenant_statements import TenantStatements
from graphrag_orm.models import LexicalModel
from graphrag_orm.schema import Schema, SchemaDefinition
from graphrag_orm.sources import Source
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.tenancy import check_fenced, refuse_in_tenanted_graph, require_tenant
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["MaintenanceService"]


class MaintenanceService:
    """Maintenance of one layout and embedding set, through ``store``.

    ``options`` bound batches, pages and fact updates (:class:`MaintenanceOptions`;
    its defaults when None). ``ingestion`` is needed only by :meth:`reingest_changed`;
    ``expected_schema`` defaults to ``Schema.definitions(model.layout, embedding_set)``;
    ``knowledge`` is the extraction's :class:`KnowledgeMaintenance` (without it, a
    relationship the layout does not own on a document, section or chunk refuses its
    batch). A run is stale after ``options.stale_run_seconds``, by default the lease
    duration of ``ingestion`` (else of ``IngestionOptions()``). The service holds no session: every call reads and writes through ``store``.

    In a tenanted layout every call is the tenant's that ``store`` is bound to (docs/tenancy.md);
    refused when built: a tenanted store with an untenanted layout (``tenant-refused``: its
    statements would filter by no tenant), the reverse (``tenant-required``), and a ``knowledge``
    extension not rendered for the tenanted layout (``tenant-refused``).
    """

    def __init__(
        self,
        store: Store,
        model: LexicalModel,
        embedding_set: EmbeddingSet,
        *,
        options: MaintenanceOptions | None = None,
        ingestion: IngestionService | None = None,
        expected_schema: Sequence[SchemaDefinition] | None = None,
        knowledge: KnowledgeMaintenance | None = None,
    ) -> None:
        tenanted = model.layout.tenanted
        check_fenced(tenanted, store.tenanted, "maintenance")
        # A tenanted graph's things and facts are the tenant's, and the toolkit's extension
        # renders its statements for the tenanted layout; any other extension filters by no tenant.
        refuse_in_tenanted_graph(
            tenanted and knowledge is not None and not getattr(knowledge, "tenanted", False),
            "maintenance of the knowledge graph by an extension not rendered for the tenanted layout",
        )
        self.store = store
        self.options = options or MaintenanceOptions()
        self.model = model
        self.embedding_set = embedding_set
        self.ingestion = ingestion
        self.knowledge = knowledge
        self.expected_schema = (
            list(expected_schema) if expected_schema is not None else Schema.definitions(model.layout, embedding_set)
        )
        names = model.names
        self._ownership = Ownership(names)
        self._remover = BatchRemover(
            store,
            names,
            ownership=self._ownership,
            knowledge=knowledge,
            page_size=self.options.page_size,
            max_fact_updates=self.options.max_fact_updates,
        )
        self._housekeeping = Housekeeping(self._remover)
        self._scope = ScopeReader(store, names, self._remover.allowed_types)
        stale_seconds = self.options.stale_run_seconds
        if stale_seconds is None:
            lease = (ingestion.options if ingestion is not None else IngestionOptions()).lease_duration_seconds
            stale_seconds = lease
        self._stale = StaleRuns(store, names, stale_seconds)
        self._health = HealthChecks(
            store, model, embedding_set, self.expected_schema, knowledge=knowledge, stale_runs=self._stale
        )
        self._tenant_statements: TenantStatements | None = None

    async def reingest_changed(self, sources: Iterable[Source]) -> IngestionReceipt:
        """Ingest ``sources`` again: documents whose content and settings are unchanged are skipped.

        A changed document is replaced in its own transaction by the ingestion
        service (its previous chunks deleted by key). Raises
        ``ConfigurationError("invalid-option")`` when the service was built without an
        ingestion service.
        """
        if self.ingestion is None:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, "MaintenanceService needs an IngestionService (ingestion=...) to re-ingest"
            )
        return await self.ingestion.ingest(sources)

    async def remove_source(self, document_id: str) -> RemovalReport:
        """Remove one document whole: its sections, chunks, links, expired lease, and (with the
        extension) its mentions and quotes, taking it off its facts. One transaction.

        Raises ``GraphRefused("foreign-graph")`` (nothing changed) when anything it
        would remove was not written by the toolkit. An id with nothing stored is
        reported in ``not_found`` (with the extension, it is still taken off the facts
        that list it).
        """
        if not document_id:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "remove_source needs a document id")
        return await self.reset(ResetScope(document_ids=(document_id,)))

    async def reset(
        self, scope: ResetScope | None = None, *, progress: Callable[[RemovalProgress], None] | None = None
    ) -> RemovalReport:
        """Remove the documents of ``scope`` in batches; ``ResetScope()`` (the default) removes every one.

        Every document is removed whole with its sections, chunks, links and expired
        lease. By ids, sections and chunks left under an id whose document is gone go
        too; a reset of everything also removes every such orphan group and (with the
        knowledge extension) every thing, with its facts, that no mention points to. A reset by
        run or of everything then removes the ``IngestionRun`` nodes of those runs (of
        all runs) that have finished and that nothing names any more; a reset of everything
        also removes every community and community report (``graphrag_orm.communities``). The schema stays.

        Refusals, ``GraphRefused("foreign-graph")``: a reset of everything checks the
        whole lexical graph first and is refused untouched if anything under the
        layout's labels and types lacks a known run id, or carries a relationship the
        toolkit does not own. A scoped reset checks its documents first, then each
        batch before writing it; a refused batch stops the call, earlier batches stay
        removed (each whole, as the message says).

        ``progress``, when given, is called after each committed batch with the totals so
        far (:meth:`preview` tells the whole beforehand).
        """
        scope = scope or ResetScope()
        self._ownership.forget()
        began = time.monotonic()
        totals = RemovalTotals(listener=_progress_of(progress, began))
        not_found: tuple[str, ...] = ()
        with span(SpanName.REMOVE, scope="everything" if scope.is_everything else "scoped") as traced:
            if scope.is_everything:
                await self._reset_everything(totals)
            else:
                not_found = await self._reset_scoped(scope, totals)
            traced.set("documents", totals.documents)
            traced.set("chunks", totals.chunks)
            traced.set("batches", totals.batches)
        return self._report(totals, began, not_found)

    async def remove_orphans(self) -> RemovalReport:
        """Remove sections and chunks whose document is gone, expired leases, and (with the
        extension) things no mention points to, with their facts first.

        Everything it would remove is checked first and the call is refused untouched
        (``GraphRefused("foreign-graph")``) if anything lacks a known run id. Orphan
        groups go in document batches; leases and things in pages, one transaction
        each. An unexpired lease is never touched.
        """
        self._ownership.forget()
        began = time.monotonic()
        totals = RemovalTotals()
        with span(SpanName.REMOVE, scope="orphans") as traced:
            stamps = await self._scope.orphan_stamps()
            stamps.update(await self._housekeeping.expired_lease_stamps())
            if self.knowledge is not None:
                stamps["things and facts"] = merge_stamps({}, await self.knowledge.orphan_run_stamps(self.store.reader))
            await self._ownership.require_owned(self.store.reader, stamps, what="orphans")
            async for page in self._scope.orphan_groups():
                await self._remove(page, totals)
            totals.leases += await self._housekeeping.remove_expired_leases()
            if self.knowledge is not None:
                await self._remove_orphan_things(totals)
            traced.set("removed", totals.sections + totals.chunks + totals.leases + totals.things)
            traced.set("batches", totals.batches)
        return self._report(totals, began, ())

    async def preview(self, scope: ResetScope | None = None) -> RemovalPreview:
        """How many documents, sections and chunks ``reset(scope)`` would remove; reads only."""
        return await self._scope.preview(scope or ResetScope())

    async def fail_stale_runs(self) -> StaleRunsReport:
        """Mark stale runs Failed, with a reason: ``Running``, no live lease, no progress for
        longer than the stale time (see :mod:`graphrag_orm.maintenance.stale_runs`).

        At most ``page_size`` runs in one write transaction; ``limits_reached`` names
        ``StaleRuns`` when more may remain. Each run is checked again under its lock,
        so a run whose heartbeat lands meanwhile stays Running. Nothing else changes:
        its documents, leases and node stay (``reset()`` removes the node later).
        """
        began = time.monotonic()
        runs, more = await self._stale.fail(self.options.page_size)
        limits = (Limit(name=LimitName.STALE_RUNS, value=self.options.page_size),) if more else ()
        return StaleRunsReport(
            runs=tuple(runs),
            reason=self._stale.reason,
            limits_reached=limits,
            elapsed_seconds=round(time.monotonic() - began, 3),
        )

    async def preview_tenant(self) -> TenantCounts:
        """What the bound tenant holds, which :meth:`remove_tenant` removes: counts only, of that
        tenant only (the dry run); reads only. Refused as :meth:`remove_tenant` is."""
        self._require_tenant("preview_tenant")
        row = (await self.store.read(self._tenant.counts, name="maintenance.tenant.counts")).records[0]
        return TenantCounts(**{kind: int(row[kind]) for kind in TenantCounts.model_fields})

    async def remove_tenant(
        self,
        *,
        batch_documents: int = DEFAULT_TENANT_BATCH_DOCUMENTS,
        progress: Callable[[RemovalProgress], None] | None = None,
    ) -> TenantRemovalReport:
        """Remove the bound tenant whole: its documents, sections, chunks, leases, runs, and its
        communities with their reports (with the knowledge extension, its things and facts too).

        Documents go as :meth:`reset` removes them, in batches of at most ``batch_documents``
        (1 to ``MAX_TENANT_BATCH_DOCUMENTS``; else ``invalid-option``) and ``batch_bytes``,
        one transaction each, each document whole; then the sections and chunks left under
        a document that is gone, the expired leases, and the run records (runs left
        ``Running`` by a process that died are marked Failed first). A call stopped midway
        leaves whole documents only, and calling it again finishes the job. ``progress``
        is called after each committed batch; :meth:`preview_tenant` counts beforehand.

        Refused before anything is removed: an untenanted graph (``invalid-option``: there
        is no tenant; :meth:`reset` removes every document), a store bound to no tenant
        (``tenant-required``), a tenant being written (an unexpired lease, or a ``Running``
        run that is not stale: ``RemovalConflict("concurrent-write")``), and anything of the
        tenant's lexical graph the toolkit did not write (``GraphRefused("foreign-graph")``).
        Another tenant's nodes are never read, counted or touched.
        """
        self._require_tenant("remove_tenant")
        check_tenant_batch(batch_documents)
        self._ownership.forget()
        began = time.monotonic()
        totals = RemovalTotals(listener=_progress_of(progress, began))
        failed = 0
        with span(SpanName.REMOVE, scope="tenant") as traced:
            await self._refuse_busy_tenant()
            await self._check_whole_graph()
            for pages in (self._scope.all_documents(), self._scope.orphan_groups()):
                async for page in pages:
                    await self._remover.remove(
                        page, totals, batch_documents=batch_documents, batch_bytes=self.options.batch_bytes
                    )
            if self.knowledge is not None:
                await self._remove_orphan_things(totals)  # the tenant's things, none left mentioned
            communities, reports = await self._housekeeping.remove_communities()  # the tenant's
            totals.communities, totals.reports = communities, totals.reports + reports
            totals.leases += await self._housekeeping.remove_expired_leases()
            while True:  # a run a dead process left Running is failed, then removed like any other
                runs, more = await self._stale.fail(self.options.page_size)
                failed += len(runs)
                if not (more and runs):
                    break
            totals.runs += await self._housekeeping.remove_runs(await self._housekeeping.finished_runs())
            left = await self.preview_tenant()
            traced.set("documents", totals.documents)
            traced.set("chunks", totals.chunks)
            traced.set("batches", totals.batches)
            traced.set("removed", totals.documents + totals.sections + totals.chunks + totals.leases + totals.runs)
        return TenantRemovalReport(
            documents=totals.documents,
            sections=totals.sections,
            chunks=totals.chunks,
            links=totals.links,
            leases=totals.leases,
            runs=totals.runs,
            things=totals.things,
            communities=totals.communities,
            reports=totals.reports,  # those its batches' retraction left without a finding, and the rest
            stale_runs_failed=failed,
            batches=totals.batches,
            left=left,
            elapsed_seconds=round(time.monotonic() - began, 3),
        )

    def _require_tenant(self, what: str) -> None:
        """Refuse a tenant's removal or preview in an untenanted graph, or without a tenant."""
        if not self.model.layout.tenanted:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                f"{what} is for a tenanted graph (Layout(tenancy='required')); this graph has no tenants: "
                "reset() removes every document",
            )
        require_tenant(True, self.store.tenant, what)

    @property
    def _tenant(self) -> TenantStatements:
        if self._tenant_statements is None:
            self._tenant_statements = TenantStatements.render(self.model.names)
        return self._tenant_statements

    async def _refuse_busy_tenant(self) -> None:
        """``concurrent-write`` when an ingestion is writing the tenant (nothing removed yet)."""
        parameters = {"running": RunStatus.RUNNING.value, "ms": int(self._stale.seconds * 1000)}
        row = (await self.store.read(self._tenant.busy, parameters, name="maintenance.tenant.busy")).records[0]
        leases, runs = int(row["leases"]), int(row["runs"])
        if leases or runs:
            raise RemovalConflict(
                ErrorCode.CONCURRENT_WRITE,
                f"the tenant is being written ({leases} unexpired lease{'' if leases == 1 else 's'}, "
                f"{runs} running ingestion run{'' if runs == 1 else 's'}); nothing was removed. Let them finish, or once a "
                f"dead run is stale ({self._stale.seconds:g} s without progress) run the removal again",
            )

    async def check(self) -> HealthReport:
        """The health report (see :mod:`graphrag_orm.maintenance.health`); reads only."""
        return await self._health.check()

    async def _remove(self, documents: Sequence[DocumentSize], totals: RemovalTotals) -> None:
        await self._remover.remove(
            documents,
            totals,
            batch_documents=self.options.batch_documents,
            batch_bytes=self.options.batch_bytes,
        )

    async def _reset_everything(self, totals: RemovalTotals) -> None:
        await self._check_whole_graph()
        async for page in self._scope.all_documents():
            await self._remove(page, totals)
        async for page in self._scope.orphan_groups():
            await self._remove(page, totals)
        if self.knowledge is not None:
            # With every document gone, every thing is an orphan: a reset leaves none.
            stamps = merge_stamps({}, await self.knowledge.orphan_run_stamps(self.store.reader))
            await self._ownership.require_owned(self.store.reader, {"things and facts": stamps}, what="things")
            await self._remove_orphan_things(totals)
        totals.runs += await self._housekeeping.remove_runs(await self._housekeeping.finished_runs())
        # With no thing left, no community stands (graphrag_orm.communities builds them again);
        # in a tenanted graph, the tenant's communities and reports (its statements filter by $tenant).
        communities, reports = await self._housekeeping.remove_communities()
        totals.communities += communities
        totals.reports += reports

    async def _reset_scoped(self, scope: ResetScope, totals: RemovalTotals) -> tuple[str, ...]:
        """Check every chosen document and run first, then remove them; returns the ids with nothing stored."""
        reader = self.store.reader
        not_found: tuple[str, ...] = ()
        chosen: list[DocumentSize] = []
        if scope.document_ids is not None:
            named = await self._scope.named_documents(scope.document_ids)
            what = counted(len(named.found), "documents")
            await self._ownership.require_owned(reader, {"documents": named.stamps}, what=what, known=named.known_runs)
            not_found = named.not_found
            chosen = list(named.found)
            if self.knowledge is not None:
                # Facts may still list an id with nothing else stored: take it off them.
                chosen += [DocumentSize(document_id, 0) for document_id in not_found]
        if scope.run_ids is not None:
            strangers = await self._scope.unknown_runs_in_use(scope.run_ids)
            what = f"the documents of {counted(len(scope.run_ids), 'runs')}"
            await self._ownership.require_owned(reader, {"documents": strangers}, what=what)
        if scope.document_ids is not None:
            await self._remove(chosen, totals)
        if scope.run_ids is not None:
            async for page in self._scope.documents_of_runs(scope.run_ids):
                await self._remove(page, totals)
            totals.runs += await self._housekeeping.remove_runs(scope.run_ids)
        return not_found

    async def _check_whole_graph(self) -> None:
        """Before a reset of everything: refuse untouched unless the whole lexical graph is the toolkit's."""
        stamps, unowned = await self._scope.graph_stamps()
        await self._ownership.require_owned(self.store.reader, stamps, what="every document")
        if unowned:
            listed = ", ".join(f"{kind}: {count}" for kind, count in unowned)
            raise Ownership.refuse(
                "every document", f"relationships the toolkit does not own are attached to its nodes ({listed})"
            )

    async def _remove_orphan_things(self, totals: RemovalTotals) -> None:
        """Orphan things in pages, a write transaction each, until a page comes back short."""
        knowledge = self.knowledge
        assert knowledge is not None
        page = self.options.page_size

        async def work(tx: StoreTransaction) -> ThingsRemoval:
            return await knowledge.remove_orphan_things(tx, page)

        while True:
            removed = await self.store.write(work)
            totals.things += removed.things
            totals.facts += removed.facts
            if removed.things < page:
                return

    def _report(self, totals: RemovalTotals, began: float, not_found: tuple[str, ...]) -> RemovalReport:
        limits = (Limit(name=MAX_FACT_UPDATES, value=self.options.max_fact_updates),) if totals.refused else ()
        return RemovalReport(
            documents=totals.documents,
            sections=totals.sections,
            chunks=totals.chunks,
            links=totals.links,
            leases=totals.leases,
            things=totals.things,
            facts=totals.facts,
            facts_updated=totals.facts_updated,
            runs=totals.runs,
            communities=totals.communities,
            reports=totals.reports,
            findings_retracted=totals.findings_retracted,
            findings_trimmed=totals.findings_trimmed,
            batches=totals.batches,
            refused=tuple(totals.refused),
            not_found=not_found,
            limits_reached=limits,
            elapsed_seconds=round(time.monotonic() - began, 3),
        )


def _progress_of(
    progress: Callable[[RemovalProgress], None] | None, began: float
) -> Callable[[RemovalTotals], None] | None:
    """The batch listener that reports ``progress`` (None when there is none)."""
    if progress is None:
        return None

    def report(totals: RemovalTotals) -> None:
        progress(
            RemovalProgress(
                documents=totals.documents,
                sections=totals.sections,
                chunks=totals.chunks,
                batches=totals.batches,
                elapsed_seconds=round(time.monotonic() - began, 3),
            )
        )

    return report
