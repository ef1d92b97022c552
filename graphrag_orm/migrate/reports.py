"""What the runner reports: where the database is on the chain, a plan, what was applied."""

from __future__ import annotations

from enum import StrEnum

from graphrag_orm.values import Value

__all__ = ["ApplyReport", "MigrationPlan", "MigrationStatus", "PlannedRevision", "RevisionState", "RevisionStatus"]


class RevisionState(StrEnum):
    APPLIED = "applied"
    PENDING = "pending"
    CHECKSUM_MISMATCH = "checksum-mismatch"
    UNKNOWN = "unknown"


class RevisionStatus(Value):
    revision: str
    message: str
    state: RevisionState
    applied_at: str | None = None


class MigrationStatus(Value):
    """Where the database is on the chain; read only."""

    database_head: str | None
    chain_head: str | None
    revisions: tuple[RevisionStatus, ...]

    @property
    def up_to_date(self) -> bool:
        return self.database_head == self.chain_head and all(r.state == RevisionState.APPLIED for r in self.revisions)


class PlannedRevision(Value):
    revision: str
    message: str
    cypher: tuple[str, ...]


class MigrationPlan(Value):
    """What ``apply`` (or ``downgrade``) would run: exact Cypher, nothing executed."""

    direction: str
    revisions: tuple[PlannedRevision, ...]


class ApplyReport(Value):
    applied: tuple[str, ...] = ()
    statements: int = 0
    waited_seconds: float = 0.0
    direction: str = "upgrade"
