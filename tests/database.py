"""The integration suite's database: the local test server, wiped before each test.

The suite owns its database. Unless NEO4J_URI is set, it starts (or reuses) the
project's local test server on port 7688 with its own home (``tools/neo4j/home-test``),
apart from the demo's server. A database that holds data the suite did not write is
refused rather than wiped.
"""

from __future__ import annotations

import os

from neomodel import adb

from graphrag_orm.connection import ConnectionSettings
from graphrag_orm.localdb import LocalDbSettings, start

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


async def claim_database() -> None:
    """Refuse a database holding data without the suite's marker; then mark it."""
    rows, _ = await adb.cypher_query(
        f"OPTIONAL MATCH (m:{MARKER_LABEL}) WITH count(m) AS marked "
        "OPTIONAL MATCH (n) WHERE NOT n:GraphRagMigration RETURN marked, count(n) AS nodes"
    )
    marked, nodes = rows[0]
    if nodes and not marked:
        raise RuntimeError(
            f"the test database at {os.environ.get('NEO4J_URI')} holds {nodes} nodes the test suite did not write; "
            "the integration suite wipes its database, so point NEO4J_URI at an empty one"
        )
    await adb.cypher_query(f"MERGE (:{MARKER_LABEL} {{id: 'test-suite'}})")


async def wipe_data() -> None:
    """Delete every node and relationship except the journal and the marker; the schema stays."""
    await adb.cypher_query(
        f"MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:{MARKER_LABEL} "
        "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
    )


async def drop_all_schema() -> None:
    """Drop every constraint and index (but token lookups) and the migration journal."""
    rows, _ = await adb.cypher_query("SHOW CONSTRAINTS YIELD name RETURN name")
    for (name,) in rows:
        await adb.cypher_query(f"DROP CONSTRAINT `{name}` IF EXISTS")
    rows, _ = await adb.cypher_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name")
    for (name,) in rows:
        await adb.cypher_query(f"DROP INDEX `{name}` IF EXISTS")
    await adb.cypher_query("MATCH (m:GraphRagMigration) DETACH DELETE m")
