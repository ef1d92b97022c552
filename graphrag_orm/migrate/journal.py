"""The journal: one ``GraphRagMigration`` node per applied revision, in the database.

Each node records the revision's id, predecessor, checksum, message, step count and
when it was applied. The journal is read back through the same walk as the chain of
files (:func:`~graphrag_orm.migrate.chain.linear_walk`), so a journal that is not one
line from a root is ``broken-chain`` (or ``branched-chain``). Its uniqueness constraint
and the migration lock's (:mod:`~graphrag_orm.migrate.lock`) are the only schema
created without a revision.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from neo4j.exceptions import ClientError, TransientError

from graphrag_orm.migrate.chain import linear_walk
from graphrag_orm.migrate.revisions import Revision
from graphrag_orm.store import Store, StoreTransaction

__all__ = [
    "JOURNAL_CONSTRAINT",
    "JOURNAL_LABEL",
    "AppliedRevision",
    "ensure_journal",
    "ensure_schema",
    "forget_revision",
    "read_journal",
    "record_revision",
]

JOURNAL_LABEL = "GraphRagMigration"
JOURNAL_CONSTRAINT = "graphrag_migration_revision_unique"

_ENSURE = f"CREATE CONSTRAINT {JOURNAL_CONSTRAINT} IF NOT EXISTS FOR (m:{JOURNAL_LABEL}) REQUIRE m.revision IS UNIQUE"
_READ = (
    f"MATCH (m:{JOURNAL_LABEL}) RETURN m.revision AS revision, m.downRevision AS downRevision, "
    "m.checksum AS checksum, toString(m.appliedAt) AS appliedAt"
)
_RECORD = (
    f"CREATE (m:{JOURNAL_LABEL} {{revision: $revision, downRevision: $down, checksum: $checksum, "
    "message: $message, steps: $steps, appliedAt: datetime()})"
)
_FORGET = f"MATCH (m:{JOURNAL_LABEL} {{revision: $revision}}) DELETE m"


@dataclass(frozen=True)
class AppliedRevision:
    """One journal entry as the database holds it."""

    revision: str
    down_revision: str | None
    checksum: str
    applied_at: str


async def read_journal(store: Store) -> list[AppliedRevision]:
    """Applied revisions, root first, each after its predecessor. Reads only."""
    result = await store.read(_READ, name="migrate.journal.read")
    entries = [
        AppliedRevision(row["revision"], row["downRevision"], row["checksum"], row["appliedAt"]) for row in result
    ]
    return linear_walk(
        entries, key=lambda entry: entry.revision, parent=lambda entry: entry.down_revision, source="the journal"
    )


async def ensure_journal(store: Store) -> None:
    """Create the journal's uniqueness constraint unless it exists (schema DDL, auto-commit)."""
    await ensure_schema(store, _ENSURE, name="migrate.journal.ensure")


async def ensure_schema(store: Store, cypher: str, *, name: str) -> None:
    """Run one ``CREATE ... IF NOT EXISTS``, tolerating a concurrent process creating the same thing.

    Two processes creating one constraint at once can see a deadlock, or "an equivalent
    constraint already exists" although the statement says ``IF NOT EXISTS``; the
    statement is sent again (at most five times), which then finds it made.
    """
    for attempt in range(5):
        try:
            await store.execute(cypher, name=name)
            return
        except (TransientError, ClientError) as error:
            if attempt == 4 or not (isinstance(error, TransientError) or "AlreadyExists" in (error.code or "")):
                raise
            await asyncio.sleep(0.1 * 2**attempt)


async def record_revision(store: Store, revision: Revision) -> None:
    """Add ``revision`` to the journal (one write transaction)."""

    async def work(tx: StoreTransaction) -> None:
        await tx.run(
            _RECORD,
            {
                "revision": revision.revision,
                "down": revision.down_revision,
                "checksum": revision.checksum,
                "message": revision.message,
                "steps": len(revision.steps),
            },
            name="migrate.journal.record",
        )

    await store.write(work)


async def forget_revision(store: Store, revision: str) -> None:
    """Remove ``revision`` from the journal (after a downgrade undid it)."""

    async def work(tx: StoreTransaction) -> None:
        await tx.run(_FORGET, {"revision": revision}, name="migrate.journal.forget")

    await store.write(work)
