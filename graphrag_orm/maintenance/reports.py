"""What maintenance takes and reports: the reset scope, removal and health reports.

Reports carry counts, stable codes and ids (document ids, index names, run ids),
never document text.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from graphrag_orm.codes import HealthFinding, LimitName
from graphrag_orm.values import Limit, Options, Value

__all__ = [
    "MAX_FACT_UPDATES",
    "HealthFindingItem",
    "HealthReport",
    "RemovalPreview",
    "RemovalProgress",
    "RemovalReport",
    "ResetScope",
    "StaleRunsReport",
    "TenantCounts",
    "TenantRemovalReport",
]

#: The limit named in ``RemovalReport.limits_reached`` when a single document is listed
#: by more facts than one batch may update (``max_fact_updates``).
MAX_FACT_UPDATES = LimitName.MAX_FACT_UPDATES.value


class ResetScope(Options):
    """Which documents ``reset`` removes: by run, by id, or (neither) every one the toolkit wrote.

    ``run_ids`` selects the documents whose last write was by one of those runs;
    ``document_ids`` the documents with those ids (and any sections and chunks left
    under those ids). Given both, a document matching either is removed. ``None``
    means "not by this"; an empty tuple is refused (``ConfigurationError("invalid-option")``)
    because it would otherwise read as "everything".
    """

    run_ids: tuple[str, ...] | None = None
    document_ids: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _no_empty_selection(self) -> ResetScope:
        for name in ("run_ids", "document_ids"):
            chosen = getattr(self, name)
            if chosen is not None and (not chosen or any(not item for item in chosen)):
                raise ValueError(f"{name} must name at least one non-empty id, or be None")
        return self

    @property
    def is_everything(self) -> bool:
        """True when neither runs nor ids are given: every document the toolkit wrote."""
        return self.run_ids is None and self.document_ids is None


class RemovalProgress(Value):
    """How far a removal has come: the totals after each committed batch (``reset(progress=...)``)."""

    documents: int
    sections: int
    chunks: int
    batches: int
    elapsed_seconds: float


class RemovalReport(Value):
    """What one removal call removed, counted as it was deleted.

    ``links`` counts relationships: the structural ones and, with the knowledge
    extension, mentions and quotes. ``facts`` counts facts deleted (left with no
    document) and ``facts_updated`` facts that only lost documents from their list.
    ``runs`` counts ``IngestionRun`` nodes a reset removed because nothing names them
    any more, and ``communities`` the communities a reset of everything removed.

    Community reports stay true as documents go (graphrag_orm.communities): in each batch's
    transaction, ``findings_retracted`` counts report findings deleted because every one of
    their citations was of a removed document, ``findings_trimmed`` findings that kept other
    citations and lost only those, and ``reports`` the reports deleted because no finding was
    left (and, by a reset of everything, every report). ``refused`` lists documents left in place because more facts list each of
    them alone than one batch may update (``limits_reached`` then names
    ``MaxFactUpdates``); ``not_found`` lists requested ids with nothing stored under them.
    """

    documents: int = 0
    sections: int = 0
    chunks: int = 0
    links: int = 0
    leases: int = 0
    things: int = 0
    facts: int = 0
    facts_updated: int = 0
    runs: int = 0
    communities: int = 0
    reports: int = 0
    findings_retracted: int = 0
    findings_trimmed: int = 0
    batches: int = 0
    refused: tuple[str, ...] = ()
    not_found: tuple[str, ...] = ()
    limits_reached: tuple[Limit, ...] = ()
    elapsed_seconds: float = 0.0


class RemovalPreview(Value):
    """What a reset would remove, counted by reading only: documents, sections and chunks,
    and the community report findings it would retract or trim and the reports it would delete
    (see :class:`RemovalReport`)."""

    documents: int
    sections: int
    chunks: int
    findings_retracted: int = 0
    findings_trimmed: int = 0
    reports: int = 0


class TenantCounts(Value):
    """What one tenant holds in a tenanted graph: its documents, sections and chunks (orphans
    included), ingestion runs and leases. ``preview_tenant()`` counts them (the dry run of
    ``remove_tenant()``), and a tenant removal reports what it ``left``."""

    documents: int = 0
    sections: int = 0
    chunks: int = 0
    runs: int = 0
    leases: int = 0

    @property
    def empty(self) -> bool:
        """True when the tenant holds nothing."""
        return not (self.documents or self.sections or self.chunks or self.runs or self.leases)


class TenantRemovalReport(Value):
    """What ``remove_tenant()`` removed of its tenant, counted as it was deleted, and what it ``left``.

    ``stale_runs_failed`` counts the tenant's runs left ``Running`` by a process that died, marked
    Failed before the run records went. ``left`` is empty when the tenant is gone whole; else
    (a lease taken or a run started meanwhile, a call stopped midway) run it again to finish.
    """

    documents: int = 0
    sections: int = 0
    chunks: int = 0
    links: int = 0
    leases: int = 0
    runs: int = 0
    #: The tenant's things (of the knowledge graph, with their facts), when maintenance has the extension.
    things: int = 0
    #: The tenant's communities and community reports (graphrag_orm.communities), with their findings.
    communities: int = 0
    reports: int = 0
    stale_runs_failed: int = 0
    batches: int = 0
    left: TenantCounts = TenantCounts()
    elapsed_seconds: float = 0.0

    @property
    def complete(self) -> bool:
        """True when nothing of the tenant is left."""
        return self.left.empty


class StaleRunsReport(Value):
    """What ``fail_stale_runs`` did: the runs it marked Failed (by id) and why.

    At most ``page_size`` runs are failed per call; ``limits_reached`` names
    ``StaleRuns`` when more may remain (call it again).
    """

    runs: tuple[str, ...] = ()
    reason: str = ""
    limits_reached: tuple[Limit, ...] = ()
    elapsed_seconds: float = 0.0


class HealthFindingItem(Value):
    """One finding: its stable code, how many elements have it, and ids or names (never text)."""

    code: HealthFinding
    count: int = Field(ge=1)
    detail: str | None = None


class HealthReport(Value):
    """The health report: findings in the order of :class:`HealthFinding`; none means healthy."""

    findings: tuple[HealthFindingItem, ...] = ()

    @property
    def healthy(self) -> bool:
        return not self.findings

    def count(self, code: HealthFinding) -> int:
        """The count of ``code``'s finding, 0 when absent."""
        return sum(item.count for item in self.findings if item.code == code)

    @property
    def codes(self) -> tuple[HealthFinding, ...]:
        return tuple(item.code for item in self.findings)
