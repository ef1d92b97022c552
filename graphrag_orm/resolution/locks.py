"""Locking things in one global order: the ontology's kinds, then ids (as extraction does).

A merge or an undo locks every thing it will touch (both things and the other ends of the
merged thing's facts) before it locks or reads a single relationship. Found by the stress
test (tests/integration/test_resolution_stress.py): when things were locked as they were
met, a merge re-pointing a fact onto a place that concurrent re-ingestion also wrote facts
to deadlocked with it (``DeadlockDetected``) in 7 of 200 cycles, past five retries, and the
re-ingested documents failed too; taking the place's lock first, in the writer's order, made
both wait instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from graphrag_orm.ontology import Ontology
from graphrag_orm.resolution.statements import ResolutionStatements
from graphrag_orm.store import Queries

__all__ = ["lock_things"]


async def lock_things(
    tx: Queries, statements: ResolutionStatements, ontology: Ontology, wanted: Mapping[str, Set[str]]
) -> dict[str, dict[str, Any]]:
    """Lock the things of ``wanted`` (ids by kind) in the global order; the rows of those found, by id."""
    found: dict[str, dict[str, Any]] = {}
    for kind in ontology.kinds:
        ids = sorted(wanted.get(kind, ()))
        if ids:
            result = await tx.run(statements.lock_things[kind], {"ids": ids}, name="resolution.lock")
            found.update({str(row["id"]): dict(row) for row in result})
    return found
