"""Maintenance and health: explicit, bounded, complete deletes and a report with stable codes.

``MaintenanceService`` re-ingests what changed, removes documents (one, by run, by id,
or every one the toolkit wrote) and orphans, and checks health. Deletes run by key,
links before nodes, in pages, never with ``DETACH DELETE``; documents go in batches,
one transaction each, each document whole. Only what the toolkit wrote is removed:
anything else under its labels is refused with ``GraphRefused("foreign-graph")``.
In a tenanted graph every call is the bound tenant's, and ``remove_tenant`` removes
that tenant whole (docs/tenancy.md).
"""

from typing import TYPE_CHECKING

from graphrag_orm.lazy import lazy_exports
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance, KnowledgeRemoval, RunStamps, ThingsRemoval
from graphrag_orm.maintenance.options import (
    DEFAULT_TENANT_BATCH_DOCUMENTS,
    MAX_TENANT_BATCH_DOCUMENTS,
    MaintenanceOptions,
)
from graphrag_orm.maintenance.reports import (
    MAX_FACT_UPDATES,
    HealthFindingItem,
    HealthReport,
    RemovalPreview,
    RemovalProgress,
    RemovalReport,
    ResetScope,
    StaleRunsReport,
    TenantCounts,
    TenantRemovalReport,
)

if TYPE_CHECKING:
    from graphrag_orm.maintenance.service import MaintenanceService

__all__ = [
    "DEFAULT_TENANT_BATCH_DOCUMENTS",
    "MAX_FACT_UPDATES",
    "MAX_TENANT_BATCH_DOCUMENTS",
    "HealthFindingItem",
    "HealthReport",
    "KnowledgeMaintenance",
    "KnowledgeRemoval",
    "MaintenanceOptions",
    "MaintenanceService",
    "RemovalPreview",
    "RemovalProgress",
    "RemovalReport",
    "ResetScope",
    "RunStamps",
    "StaleRunsReport",
    "TenantCounts",
    "TenantRemovalReport",
    "ThingsRemoval",
]

__getattr__, __dir__ = lazy_exports(__name__, {"MaintenanceService": "graphrag_orm.maintenance.service"}, __all__)
