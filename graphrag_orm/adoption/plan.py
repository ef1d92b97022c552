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

In a tenanted graph (docs/tenancy.md) a plan adopts for one tenant: its layout is the
tenanted one and its store is bound to the tenant (``Store.for_tenant``, ``rag.store`` of a
facade bound to one), else ``tenant-refused`` or ``tenant-required`` when the plan is
built, before anything is sent. The plan sees the nodes that carry no tenant (the other
library's, not claimed yet) and the tenant's own, never another tenant's; apply claims what
it adopts for the tenant (``tenant`` stamped, ids qualified by the tenant as ingestion's
are) and undo gives it back. Every adopted index the layout names is rebuilt under the same
name with ``tenant`` declared (:meth:`AdoptionPlan.prepare_steps`), as a tenanted graph's
routes filter inside the index.
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
from graphrag_orm.schema import CreateStep, DropStep, MigrationStep, Schema
from graphrag_orm.store import Store
from graphrag_orm.tenancy import check_fenced, require_tenant
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
        # The statements are rendered from the layout and sent by the store: both tenanted, and
        # the store bound to the tenant the adopted documents are claimed for (docs/tenancy.md).
        check_fenced(layout.tenanted, store.tenanted, "adoption")
        require_tenant(layout.tenanted, store.tenant, "adoption")
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
        """The key constraints and the indexes the layout does not name, as creation steps.

        In a tenanted layout, each index the layout names then follows as a drop of the other
        tool's definition and a creation under the same name that declares ``tenant`` (the
        vector index filters by it, the full-text index covers it): a tenanted graph's routes
        filter inside the index. The drop keeps the old definition, so a downgrade restores it.
        """
        named = {self.layout.vector_index, self.layout.fulltext_index} - {None}
        steps: list[MigrationStep] = [
            step
            for step in Schema.create_steps(self.layout, self.embedding_set)
            if not (isinstance(step, CreateStep) and step.definition.name in named)
        ]
        if self.layout.tenanted:
            theirs = Schema.definitions(self.layout.replace(tenancy="off"), self.embedding_set)
            ours = {d.name: d for d in Schema.definitions(self.layout, self.embedding_set)}
            for definition in theirs:
                if definition.name in named:
                    steps += [DropStep(definition=definition), CreateStep(definition=ours[definition.name])]
        return steps

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
        tenant = self.store.tenant.value if self.store.tenant is not None else None
        applier = Applier(
            self.store, self.model, self.statements, self.embedding_set, self.options, self.loaders, tenant=tenant
        )
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
