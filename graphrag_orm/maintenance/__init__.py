"""Maintenance and health: explicit, bounded, complete deletes and a report with stable codes.

``MaintenanceService`` re-ingests what changed, removes documents (one, by run, by id,
or every one the toolkit wrote) and orphans, and checks health. Deletes run by key,
links before nodes, in pages, never with ``DETACH DELETE``; documents go in batches,
one transaction each, each document whole. Only what the toolkit wrote is removed:
anything else under its labels is refused with ``GraphRefused("foreign-graph")``.
"""

from typing import TYPE_CHECKING

from graphrag_orm.lazy import lazy_exports
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance, KnowledgeRemoval, RunStamps, ThingsRemoval
from graphrag_orm.maintenance.options import MaintenanceOptions
from graphrag_orm.maintenance.reports import (
    MAX_FACT_UPDATES,
    HealthFindingItem,
    HealthReport,
    RemovalPreview,
    RemovalProgress,
    RemovalReport,
    ResetScope,
    StaleRunsReport,
)

if TYPE_CHECKING:
    from graphrag_orm.maintenance.service import MaintenanceService

__all__ = [
    "MAX_FACT_UPDATES",
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
    "ThingsRemoval",
]

__getattr__, __dir__ = lazy_exports(__name__, {"MaintenanceService": "graphrag_orm.maintenance.service"}, __all__)
