"""A removal's retraction of community report findings (:mod:`graphrag_orm.communities`), in its transaction.

A finding every citation of which is of a removed document is deleted; one that also cites
documents that stay keeps only those citations (trimmed); a report left with no finding is
deleted, and a report that stays counts what was retracted and trimmed from it.
"""

from __future__ import annotations

from graphrag_orm.maintenance.removal_statements import RetractionStatements
from graphrag_orm.store import Queries

__all__ = ["retract_findings"]


async def retract_findings(tx: Queries, st: RetractionStatements, ids: list[str]) -> tuple[int, int, int]:
    """Retract the findings the documents ``ids`` alone supported, trim the others that cite them,
    and delete the reports left with no finding; (retracted, trimmed, reports deleted)."""
    per_report: dict[str, dict[str, int]] = {}
    for statement, column in ((st.retract, "retracted"), (st.trim, "trimmed")):
        found = await tx.run(statement, {"ids": ids}, name=f"maintenance.remove.findings_{column}")
        for row in found:
            counts = per_report.setdefault(str(row["report"]), {"retracted": 0, "trimmed": 0})
            counts[column] += int(row["findings"])
    if not per_report:
        return 0, 0, 0
    rows = [{"id": report, **counts} for report, counts in sorted(per_report.items())]
    settled = await tx.run(st.settle, {"rows": rows}, name="maintenance.remove.reports_settle")
    return (
        sum(counts["retracted"] for counts in per_report.values()),
        sum(counts["trimmed"] for counts in per_report.values()),
        int(settled.value("dropped", 0)),
    )
