"""Taking documents off facts: the one place both re-ingestion and removal do it.

A fact lists (sorted) the documents that state it. To take documents off, both ends of
each fact are locked first (a no-op write), then each list is read under the locks and
rewritten without them, and a fact left with no document is deleted. So concurrent runs
adding or removing documents on one fact never lose each other's changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphrag_orm.store import Queries

__all__ = ["take_documents_off_facts"]

_LOCK_ENDS = "UNWIND $ids AS id MATCH (a)-[f]->(b) WHERE elementId(f) = id SET a += {}, b += {}"
_REWRITE = (
    "UNWIND $ids AS id MATCH ()-[f]->() WHERE elementId(f) = id "
    "WITH f, [d IN f.documentIds WHERE NOT d IN $documents] AS rest "
    "CALL (f, rest) { WITH f, rest WHERE size(rest) = 0 DELETE f RETURN 1 AS gone "
    "UNION ALL WITH f, rest WHERE size(rest) > 0 SET f.documentIds = rest RETURN 0 AS gone } "
    "RETURN sum(gone) AS deleted, count(*) AS facts"
)


# A tenanted graph's facts are between one tenant's things: each is found (by element id)
# only when both its ends are the tenant's ($tenant), so another tenant's fact is never touched.
_TENANT_ENDS = " AND a.tenant = $tenant AND b.tenant = $tenant"
_LOCK_ENDS_TENANT = _LOCK_ENDS.replace("elementId(f) = id", "elementId(f) = id" + _TENANT_ENDS)
_REWRITE_TENANT = _REWRITE.replace("MATCH ()-[f]->()", "MATCH (a)-[f]->(b)").replace(
    "elementId(f) = id", "elementId(f) = id" + _TENANT_ENDS
)


def fact_statements(tenanted: bool) -> tuple[str, str]:
    """The lock and rewrite statements; a tenanted graph's touch only the tenant's facts."""
    return (_LOCK_ENDS_TENANT, _REWRITE_TENANT) if tenanted else (_LOCK_ENDS, _REWRITE)


async def take_documents_off_facts(
    tx: Queries, fact_ids: Sequence[str], documents: Sequence[str], *, tenanted: bool = False
) -> tuple[int, int]:
    """Rewrite the facts (by element id) without ``documents``; returns (updated, deleted).

    Both statements run in ``tx``, the caller's write transaction (the document's
    re-ingestion or the removal's batch); it never opens a transaction of its own. In a
    tenanted graph (``tenanted``) a fact is rewritten only when both its ends are the tenant's.
    """
    if not fact_ids:
        return 0, 0
    lock, rewrite = fact_statements(tenanted)
    await tx.run(lock, {"ids": list(fact_ids)}, name="ontology.facts.lock")
    result = await tx.run(rewrite, {"ids": list(fact_ids), "documents": list(documents)}, name="ontology.facts.rewrite")
    row = result.single() or {}
    deleted, total = int(row.get("deleted") or 0), int(row.get("facts") or 0)
    return total - deleted, deleted
