"""Re-embedding as a reviewed plan: a staged index, a resumable backfill, a cut-over, a cleanup.

A vector index covers one label and property, so the new embedding set's vectors go to a
second chunk property (the *staging* property) under their own index, and the
application cuts over by deploying the layout whose embedding property is that one::

    plan = Reembedding(rag.store).plan(layout, from_set, to_set, staging_property="embeddingNext")
    await plan.preview()                   # steps, stage, chunks done and to do (reads only)
    plan.prepare_steps()                   # the new index, for the application's migration chain
    receipt = await plan.backfill(embedder)  # resumable, in bounded pages, with retries
    GraphRag(layout=plan.new_layout, embedding_set=to_set, embedder=embedder)  # cut-over
    await plan.complete()                  # embeddingSetId of every chunk becomes the new set's
    await plan.cleanup(); plan.cleanup_steps()  # old vectors removed; the old index dropped

In a tenanted graph each tenant runs the plan on its own store, and the operator's
:func:`progress_by_tenant` (an administrative read) says when every tenant is backfilled,
so the cut-over leaves no chunk behind (docs/tenancy.md).

See :mod:`graphrag_orm.reembedding.plan` for each stage's contract and docs/reembedding.md.
"""

from typing import TYPE_CHECKING

from graphrag_orm.lazy import lazy_exports
from graphrag_orm.reembedding.backfill import BackfillProgress
from graphrag_orm.reembedding.names import STAGED_SET_PROPERTY
from graphrag_orm.reembedding.options import BackfillOptions, PageOptions
from graphrag_orm.reembedding.plan import ReembeddingPlan
from graphrag_orm.reembedding.receipts import (
    BackfillReceipt,
    CleanupReceipt,
    CompleteReceipt,
    ReembeddingPreview,
    ReembeddingStage,
)

if TYPE_CHECKING:
    from graphrag_orm.reembedding.service import DEFAULT_STAGING_PROPERTY, Reembedding
    from graphrag_orm.reembedding.tenants import TenantProgress, TenantsProgress, progress_by_tenant

__all__ = [
    "DEFAULT_STAGING_PROPERTY",
    "STAGED_SET_PROPERTY",
    "BackfillOptions",
    "BackfillProgress",
    "BackfillReceipt",
    "CleanupReceipt",
    "CompleteReceipt",
    "PageOptions",
    "Reembedding",
    "ReembeddingPlan",
    "ReembeddingPreview",
    "ReembeddingStage",
    "TenantProgress",
    "TenantsProgress",
    "progress_by_tenant",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DEFAULT_STAGING_PROPERTY": "graphrag_orm.reembedding.service",
        "Reembedding": "graphrag_orm.reembedding.service",
        **dict.fromkeys(
            ("TenantProgress", "TenantsProgress", "progress_by_tenant"), "graphrag_orm.reembedding.tenants"
        ),
    },
    __all__,
)
