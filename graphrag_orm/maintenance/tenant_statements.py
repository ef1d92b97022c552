"""The reads of a tenant's removal (``remove_tenant``), rendered once from a tenanted model's names.

Every statement is the bound tenant's (``$tenant``, in the statement itself: docs/tenancy.md)
and returns named columns. The removal's deletes are the batched remover's and the scope
reader's statements, which a tenanted layout renders filtered by tenant too.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.maintenance.scope_statements import mine
from graphrag_orm.maintenance.stale_runs import stale_condition
from graphrag_orm.store import StoredNames

__all__ = ["TenantStatements"]


@dataclass(frozen=True)
class TenantStatements:
    """:meth:`render` builds them for a tenanted layout (an untenanted one has no tenant to remove)."""

    #: What the tenant holds: ``documents``, ``sections``, ``chunks``, ``runs``, ``leases`` (counts).
    counts: str
    #: ``$running``, ``$ms``: what is writing the tenant now: ``leases`` unexpired, and ``runs``
    #: ``Running`` that are not stale (see :mod:`graphrag_orm.maintenance.stale_runs`).
    busy: str

    @classmethod
    def render(cls, names: StoredNames) -> TenantStatements:
        if not names.tenanted:
            raise ValueError("a tenant's statements need a tenanted layout")
        m = mine(names)
        lease, run = names.lease, names.run
        counted = {
            "documents": names.document.label,
            "sections": names.section.label,
            "chunks": names.chunk.label,
            "runs": run.label,
            "leases": lease.label,
        }
        return cls(
            counts="RETURN "
            + ", ".join(f"COUNT {{ MATCH (n:{label}{m}) }} AS {kind}" for kind, label in counted.items()),
            busy=(
                f"RETURN COUNT {{ MATCH (l:{lease.label}{m}) WHERE l.{lease.stored('expires_at')} > datetime() }} "
                f"AS leases, COUNT {{ MATCH (r:{run.label}{m}) WHERE r.{run.stored('status')} = $running "
                f"AND NOT ({stale_condition(names)}) }} AS runs"
            ),
        )
