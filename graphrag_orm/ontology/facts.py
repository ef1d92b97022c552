"""Taking documents off facts: the one place both re-ingestion and removal do it.

A fact lists (sorted) the documents that state it. To take documents off, both ends of
each fact are locked first (a no-op write), then each list is read under the locks and
rewritten without them, and a fact left with no document is deleted. So concurrent runs
adding or removing documents on one fact never lose each other's changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from neomodel import adb


async def take_documents_off_facts(fact_ids: Sequence[str], documents: Sequence[str]) -> tuple[int, int]:
    """Rewrite the facts (by element id) without ``documents``; returns (updated, deleted).

    Runs in the caller's transaction (neomodel's ``adb``); never opens one of its own.
    """
    if not fact_ids:
        return 0, 0
    await adb.cypher_query(
        "UNWIND $ids AS id MATCH (a)-[f]->(b) WHERE elementId(f) = id SET a += {}, b += {}", {"ids": list(fact_ids)}
    )
    rows, _ = await adb.cypher_query(
        "UNWIND $ids AS id MATCH ()-[f]->() WHERE elementId(f) = id "
        "WITH f, [d IN f.documentIds WHERE NOT d IN $documents] AS rest "
        "CALL (f, rest) { WITH f, rest WHERE size(rest) = 0 DELETE f RETURN 1 AS gone "
        "UNION ALL WITH f, rest WHERE size(rest) > 0 SET f.documentIds = rest RETURN 0 AS gone } "
        "RETURN sum(gone), count(*)",
        {"ids": list(fact_ids), "documents": list(documents)},
    )
    deleted, total = int(rows[0][0] or 0), int(rows[0][1] or 0)
    return total - deleted, deleted
