"""The integration suite's database: the local test server, wiped before each test.

The suite owns its database. Unless NEO4J_URI is set, it starts (or reuses) the
project's local test server on port 7688 with its own home (``tools/neo4j/home-test``),
apart from the demo's server. A database that holds data the suite did not write is
refused rather than wiped.
"""

from __future__ import annotations

import asyncio
import os
import time

from graphrag_orm.localdb import LocalDbSettings, start
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings

TEST_PORT = int(os.environ.get("GRAPHRAG_TEST_NEO4J_PORT", "7688"))
MARKER_LABEL = "GraphRagTestDatabase"


def suite_connection_settings() -> ConnectionSettings:
    """The suite's connection: NEO4J_URI when set, else the local test server (started if needed)."""
    if os.environ.get("NEO4J_URI"):
        return ConnectionSettings.from_env()
    # Another port gets its own home, so parallel suites never share a database.
    home = "home-test" if TEST_PORT == 7688 else f"home-test-{TEST_PORT}"
    settings = LocalDbSettings.from_env(home_name=home, port=TEST_PORT)
    start(settings)
    os.environ["NEO4J_URI"] = settings.uri
    os.environ.setdefault("NEO4J_PASSWORD", settings.password)
    return ConnectionSettings.from_env()


async def claim_database(store: Store) -> None:
    """Refuse a database holding data without the suite's marker; then mark it."""
    row = (
        await store.read(
            f"OPTIONAL MATCH (m:{MARKER_LABEL}) WITH count(m) AS marked "
            "OPTIONAL MATCH (n) WHERE NOT n:GraphRagMigration RETURN marked, count(n) AS nodes"
        )
    ).records[0]
    marked, nodes = row["marked"], row["nodes"]
    if nodes and not marked:
        raise RuntimeError(
            f"the test database at {os.environ.get('NEO4J_URI')} holds {nodes} nodes the test suite did not write; "
            "the integration suite wipes its database, so point NEO4J_URI at an empty one"
        )
    await store.execute(f"MERGE (:{MARKER_LABEL} {{id: 'test-suite'}})")


async def open_transactions(store: Store) -> list[str]:
    """The current query of each transaction open on the server but the asking one ("" for one
    between statements or committing)."""
    rows = await store.read("SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery", name="test.transactions")
    return [str(row["currentQuery"]) for row in rows if not str(row["currentQuery"]).startswith("SHOW TRANSACTIONS")]


async def wait_for_no_transactions(store: Store, seconds: float = 30.0) -> None:
    """Return once no other transaction is open on the server. A client killed just after it
    sent a commit leaves the server applying it, and Neo4j's reads are read committed: a
    query run meanwhile may find part of that transaction (a document before its chunks)."""
    deadline = time.monotonic() + seconds
    while open_now := await open_transactions(store):
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(open_now)} transactions still open after {seconds} s: {open_now[:3]}")
        await asyncio.sleep(0.05)


async def wipe_data(store: Store) -> None:
    """Delete every node and relationship except the journal and the marker; the schema stays."""
    await store.execute(
        f"MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:{MARKER_LABEL} "
        "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
    )


async def drop_all_schema(store: Store) -> None:
    """Drop every constraint and index (but token lookups) and the migration journal."""
    for row in await store.read("SHOW CONSTRAINTS YIELD name RETURN name"):
        await store.execute(f"DROP CONSTRAINT `{row['name']}` IF EXISTS")
    for row in await store.read("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
        await store.execute(f"DROP INDEX `{row['name']}` IF EXISTS")
    await store.execute("MATCH (m:GraphRagMigration) DETACH DELETE m")
