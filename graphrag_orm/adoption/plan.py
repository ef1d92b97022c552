"""Adopt mode: :class:`Adoption` plans, an :class:`AdoptionPlan` prepares, previews, applies and undoes.

``plan.prepare_steps()`` gives the schema adoption needs as migration steps for the
application's own chain: every key constraint and index of the layout's lexical schema
(:meth:`Schema.create_steps <graphrag_orm.schema.Schema.create_steps>`) except the
indexes the layout names, which are the other tool's and are adopted as they are (the
dry run checks them). ``await plan.preview()`` only reads. ``await plan.apply()``
refuses a plan with blockers (``AdoptionError("adoption-blocked")``, nothing written),
else writes one run (:mod:`~graphrag_orm.adoption.apply`). ``await plan.undo(run_id)``
takes back what that run added (:mod:`~graphrag_orm.adoption.undo`). Apply and undo
run in a ``GraphRag.Adopt`` span (run id and counts only).

A tenanted graph (docs/tenancy.md) refuses adoption (``tenant-refused``) when the plan is
built: the graph another library wrote carries no tenant, and its documents cannot be
fenced to one.
"""

from __future__ import annotations

import uuid

from graphrag_orm.adoption.apply import Applier
from graphrag_orm.adoption.preview import preview
from graphrag_orm.adoption.statements import AdoptionStatements
from graphrag_orm.adoption.undo import undo
from graphrag_orm.adoption.values import AdoptionOptions, AdoptionPreview, AdoptionReceipt, UndoReceipt
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import AdoptionError, ConfigurationError
from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.models import for_layout
from graphrag_orm.schema import CreateStep, MigrationStep, Schema
from graphrag_orm.store import Store
from graphrag_orm.tenancy import refuse_in_tenanted_graph
from graphrag_orm.tracing import SpanName, span

__all__ = ["Adoption", "AdoptionPlan"]


class Adoption:
    """Plans adoptions of the graph behind ``store`` (``rag.store`` works); ``loaders`` read source files."""

    def __init__(self, store: Store, *, loaders: LoaderRegistry | None = None) -> None:
        self.store = store
        self.loaders = loaders or LoaderRegistry.default()

    def plan(self, layout: Layout, embedding_set: EmbeddingSet, options: AdoptionOptions | None = None) -> AdoptionPlan:
        """A plan for the graph in ``layout``'s names (``Layout.NEO4J_GRAPHRAG``, with the index names
        the graph has); reads nothing. A layout naming a chunk property ``grounding`` is refused
        (``invalid-layout``)."""
        return AdoptionPlan(self.store, layout, embedding_set, options or AdoptionOptions(), self.loaders)


class AdoptionPlan:
    """One adoption: see the module's docstring for what each call promises."""

    def __init__(
        self,
        store: Store,
        layout: Layout,
        embedding_set: EmbeddingSet,
        options: AdoptionOptions,
        loaders: LoaderRegistry,
    ) -> None:
        chunk_names = (
            layout.chunk_id_property,
            layout.chunk_order_property,
            layout.chunk_text_property,
            layout.chunk_embedding_property,
        )
        # The other library's nodes carry no tenant: adopting them in a tenanted graph would
        # read and stamp every tenant's documents (docs/tenancy.md).
        refuse_in_tenanted_graph(layout.tenanted or store.tenanted, "adoption of another library's graph")
        if GROUNDING_PROPERTY in chunk_names:
            raise ConfigurationError(
                ErrorCode.INVALID_LAYOUT, f"adoption stores {GROUNDING_PROPERTY!r} on chunks; rename that property"
            )
        self.store = store
        self.layout = layout
        self.embedding_set = embedding_set
        self.options = options
        self.loaders = loaders
        self.model = for_layout(layout)
        self.statements = AdoptionStatements.render(self.model)

    def prepare_steps(self) -> list[MigrationStep]:
        """The key constraints and the indexes the layout does not name, as creation steps."""
        named = {self.layout.vector_index, self.layout.fulltext_index} - {None}
        return [
            step
            for step in Schema.create_steps(self.layout, self.embedding_set)
            if not (isinstance(step, CreateStep) and step.definition.name in named)
        ]

    async def preview(self) -> AdoptionPreview:
        """The dry run: it only reads."""
        return await preview(
            self.store,
            self.statements,
            self.layout,
            self.embedding_set,
            self.options,
            self.prepare_steps(),
            self.loaders,
        )

    async def apply(self) -> AdoptionReceipt:
        """One run that only adds; ``adoption-blocked`` (nothing written) when the dry run finds blockers."""
        found = await self.preview()
        if found.blocked:
            codes = ", ".join(sorted({blocker.code.value for blocker in found.blockers}))
            raise AdoptionError(
                ErrorCode.ADOPTION_BLOCKED,
                f"the graph cannot be adopted as it is ({codes}); preview() lists them. Nothing was written",
            )
        run_id = f"run-{uuid.uuid4().hex}"
        applier = Applier(self.store, self.model, self.statements, self.embedding_set, self.options, self.loaders)
        with span(SpanName.ADOPT, run_id=run_id) as recorder:
            receipt = await applier.apply(run_id, found.documents)
            recorder.set("documents", receipt.documents)
            recorder.set("chunks", receipt.chunks)
            recorder.set("batches", receipt.batches)
        return receipt

    async def undo(self, run_id: str) -> UndoReceipt:
        """Remove exactly what run ``run_id`` added and still carries its id; ``run-not-found`` otherwise."""
        with span(SpanName.ADOPT, run_id=run_id) as recorder:
            receipt = await undo(self.store, self.statements, run_id, self.options.batch_size)
            recorder.set("removed", receipt.documents + receipt.chunks + receipt.links)
            recorder.set("batches", receipt.batches)
        return receipt
