"""A re-embedding plan: its steps, its progress, and the calls that move a graph from one set to another.

The stages, in order (see docs/reembedding.md):

1. ``prepare_steps()``: the new set's vector index on the *staging* property, as migration
   steps for the application's own chain. The live index and property are untouched.
2. ``backfill(embedder)``: every chunk whose staging vector is not from the new set gets
   one, with the marker ``stagedEmbeddingSetId`` (:mod:`~graphrag_orm.reembedding.backfill`).
   The application keeps answering from the old set meanwhile; chunks it ingests then
   are picked up by the next backfill call.
3. Cut-over: the application deploys ``GraphRag(layout=plan.new_layout,
   embedding_set=to_set, embedder=<the new set's>)``. ``new_layout`` is the old layout
   whose ``chunk_embedding_property`` is the staging property (and whose vector index is
   the new set's), so retrieval searches the new index and ingestion writes the new
   property from then on.
4. ``complete()``: records the new set id in ``embeddingSetId`` of every staged chunk and
   removes the marker, in pages; the health report's ``mixed-embedding-sets`` is clean
   from then on.
5. ``cleanup()`` removes the old vectors in pages (only from completed chunks), and
   ``cleanup_steps()`` drops the old index through the application's chain.

The next re-embedding swaps the properties back: plan it from ``new_layout`` with the old
property as the staging one. ``preview()`` reads only; every other call writes only
the properties named here, a page per transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.errors import ReembeddingError
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import check_vector_index
from graphrag_orm.models import for_layout
from graphrag_orm.reembedding.backfill import BackfillProgress, run_backfill
from graphrag_orm.reembedding.options import BackfillOptions, PageOptions
from graphrag_orm.reembedding.receipts import (
    BackfillReceipt,
    CleanupReceipt,
    CompleteReceipt,
    ReembeddingPreview,
    ReembeddingStage,
)
from graphrag_orm.reembedding.statements import ReembeddingStatements
from graphrag_orm.schema import CreateStep, DropStep, MigrationStep, Schema, VectorIndex
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.store.introspection import read_index_states
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = ["ReembeddingPlan"]


class ReembeddingPlan:
    """From ``from_set`` under ``layout`` to ``to_set`` under :attr:`new_layout`; built by
    :meth:`Reembedding.plan <graphrag_orm.reembedding.Reembedding.plan>`, which checks the names."""

    def __init__(
        self, store: Store, layout: Layout, from_set: EmbeddingSet, to_set: EmbeddingSet, new_layout: Layout
    ) -> None:
        self.store = store
        self.layout = layout
        self.from_set = from_set
        self.to_set = to_set
        #: The layout to deploy at cut-over: the staging property is its embedding property.
        self.new_layout = new_layout
        self.live_property = layout.chunk_embedding_property
        self.staging_property = new_layout.chunk_embedding_property
        #: The index retrieval searches before cut-over, and the one it searches after.
        self.old_index: VectorIndex = Schema.vector_index(layout, from_set)
        self.new_index: VectorIndex = Schema.vector_index(new_layout, to_set)
        self.statements = ReembeddingStatements.render(
            for_layout(layout).names, self.live_property, self.staging_property
        )

    def __repr__(self) -> str:
        return (
            f"ReembeddingPlan({self.from_set.id} -> {self.to_set.id}, {self.live_property} -> {self.staging_property})"
        )

    def prepare_steps(self) -> list[MigrationStep]:
        """The new set's vector index on the staging property: one creation step (reads nothing)."""
        return [CreateStep(definition=self.new_index)]

    def cleanup_steps(self) -> list[MigrationStep]:
        """The old set's vector index dropped: one step (reads nothing); its inverse recreates it."""
        return [DropStep(definition=self.old_index)]

    async def preview(self) -> ReembeddingPreview:
        """The steps, the stage and the counts (chunks backfilled, to do, completed, old vectors); reads only."""
        to = {"to": self.to_set.id}

        async def work(tx: StoreTransaction) -> tuple[dict[str, int], int]:
            row = (await tx.run(self.statements.progress, to, name="reembedding.preview")).records[0]
            to_do = (await tx.run(self.statements.to_do, to, name="reembedding.to_do")).value("to_do", 0)
            return {name: int(row[name]) for name in ("chunks", "backfilled", "completed", "old_vectors")}, int(to_do)

        counts, to_do = await self.store.read_work(work)
        states = await read_index_states(self.store, [self.old_index.name, self.new_index.name])
        old_state, new_state = states.get(self.old_index.name), states.get(self.new_index.name)
        return ReembeddingPreview(
            from_set_id=self.from_set.id,
            to_set_id=self.to_set.id,
            live_property=self.live_property,
            staging_property=self.staging_property,
            old_index=self.old_index.name,
            new_index=self.new_index.name,
            old_index_state=old_state.state if old_state else None,
            new_index_state=new_state.state if new_state else None,
            stage=_stage(counts, to_do, new_state is not None, old_state is not None),
            to_do=to_do,
            prepare_cypher=tuple(step.cypher() for step in self.prepare_steps()),
            cleanup_cypher=tuple(step.cypher() for step in self.cleanup_steps()),
            **counts,
        )

    async def backfill(
        self,
        embedder: Embedder,
        options: BackfillOptions | None = None,
        *,
        progress: Callable[[BackfillProgress], None] | None = None,
    ) -> BackfillReceipt:
        """Embed every chunk still to do with ``embedder`` (the new set's), in pages; resumable.

        Refused before any model call: ``ReembeddingError("embedding-dimensions")`` when the
        embedder declares other ``dimensions`` than the new set, ``SchemaMismatch("schema-missing")`` when the new
        index is not there (apply ``prepare_steps`` first), ``SchemaMismatch("embedding-dimensions")``
        when it holds other dimensions. Vectors not of the new set's dimensions raise
        ``EmbeddingRejected("embedding-dimensions")`` and their page is not written; a model
        call that still fails after its retries raises ``ModelCallFailed``. Pages written
        before stay written, and the next call resumes after them.
        """
        options = options or BackfillOptions()
        declared = getattr(embedder, "dimensions", None)
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != self.to_set.dimensions:
            raise ReembeddingError(
                ErrorCode.EMBEDDING_DIMENSIONS,
                f"the embedder makes {declared}-dimensional vectors but the set {self.to_set.id} "
                f"has {self.to_set.dimensions}; pass the new set's embedder",
            )
        await check_vector_index(self.store, self.new_layout, self.to_set)
        return await run_backfill(self.store, self.statements, self.from_set, self.to_set, embedder, options, progress)

    async def complete(self, options: PageOptions | None = None) -> CompleteReceipt:
        """After cut-over: ``embeddingSetId`` of every staged chunk becomes the new set's, a page at a time."""
        options = options or PageOptions()
        began = time.perf_counter()
        done, pages, limited = await self._pages("complete", self.statements.complete, "completed", options)
        left = await self.store.read(self.statements.to_do, {"to": self.to_set.id}, name="reembedding.to_do")
        return CompleteReceipt(
            to_set_id=self.to_set.id,
            chunks_completed=done,
            pages=pages,
            chunks_not_backfilled=int(left.value("to_do", 0)),
            seconds=time.perf_counter() - began,
            limits_reached=_limit(limited, options),
        )

    async def cleanup(self, options: PageOptions | None = None) -> CleanupReceipt:
        """Remove the old vectors of completed chunks, a page at a time; the old index goes with ``cleanup_steps``.

        A chunk not completed keeps its old vector (it may be the only one it has) and
        is counted in ``chunks_not_completed``.
        """
        options = options or PageOptions()
        began = time.perf_counter()
        done, pages, limited = await self._pages("cleanup", self.statements.cleanup, "removed", options)
        kept = await self.store.read(
            self.statements.not_completed, {"to": self.to_set.id}, name="reembedding.not_completed"
        )
        return CleanupReceipt(
            from_set_id=self.from_set.id,
            old_vectors_removed=done,
            pages=pages,
            chunks_not_completed=int(kept.value("kept", 0)),
            seconds=time.perf_counter() - began,
            limits_reached=_limit(limited, options),
        )

    async def _pages(self, phase: str, cypher: str, column: str, options: PageOptions) -> tuple[int, int, bool]:
        """Run ``cypher`` a page per transaction until a page is short; ``(changed, pages, limited)``."""
        changed = pages = 0
        parameters = {"to": self.to_set.id, "page": options.page_size}

        async def work(tx: StoreTransaction) -> int:
            return int((await tx.run(cypher, parameters, name=f"reembedding.{phase}")).value(column, 0))

        with span(SpanName.REEMBED, phase=phase) as traced:
            while pages < options.max_pages:
                count = await self.store.write(work)
                if count:
                    pages += 1
                    changed += count
                if count < options.page_size:
                    traced.set("chunks", changed)
                    traced.set("pages", pages)
                    return changed, pages, False
            traced.set("chunks", changed)
            traced.set("pages", pages)
        return changed, pages, True


def _limit(limited: bool, options: PageOptions) -> tuple[Limit, ...]:
    return (Limit(name=LimitName.MAX_PAGES, value=options.max_pages),) if limited else ()


def _stage(counts: dict[str, int], to_do: int, new_index: bool, old_index: bool) -> ReembeddingStage:
    chunks, backfilled, completed = counts["chunks"], counts["backfilled"], counts["completed"]
    if not new_index:
        return ReembeddingStage.PLANNED
    if to_do:
        return ReembeddingStage.BACKFILLING if backfilled else ReembeddingStage.PREPARED
    if chunks == 0 and old_index:
        return ReembeddingStage.PREPARED
    if completed < chunks:
        return ReembeddingStage.COMPLETING if completed else ReembeddingStage.BACKFILLED
    if counts["old_vectors"] or old_index:
        return ReembeddingStage.COMPLETED
    return ReembeddingStage.CLEANED_UP
