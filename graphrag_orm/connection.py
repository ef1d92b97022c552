"""Connecting neomodel's ``adb`` to Neo4j from NEO4J_* settings, with a clear failure.

neomodel keeps one driver per process and one transaction per asyncio task
(context variables), so services run concurrent document transactions in separate
tasks through ``adb.transaction``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import neo4j
from neo4j.exceptions import AuthError, ServiceUnavailable
from neomodel import adb, get_config

from graphrag_orm.errors import DatabaseUnavailable
from graphrag_orm.localdb import LOCAL_PASSWORD

DEFAULT_URI = "bolt://127.0.0.1:7687"


@dataclass(frozen=True)
class ConnectionSettings:
    """Where Neo4j is: NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE."""

    uri: str = DEFAULT_URI
    user: str = "neo4j"
    password: str = LOCAL_PASSWORD
    database: str | None = None

    @classmethod
    def from_env(cls) -> ConnectionSettings:
        return cls(
            uri=os.environ.get("NEO4J_URI", DEFAULT_URI),
            user=os.environ.get("NEO4J_USER", "neo4j"),
            password=os.environ.get("NEO4J_PASSWORD", LOCAL_PASSWORD),
            database=os.environ.get("NEO4J_DATABASE") or None,
        )

    def __repr__(self) -> str:  # never show the password
        return f"ConnectionSettings(uri={self.uri!r}, user={self.user!r}, database={self.database!r})"


def _unavailable(settings: ConnectionSettings, reason: str) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        "database-unavailable",
        f"Neo4j is not reachable at {settings.uri} ({reason}). Start the local server with "
        "`graphrag-orm neo4j start`, or set NEO4J_URI (and NEO4J_USER, NEO4J_PASSWORD) to your own.",
    )


async def connect(settings: ConnectionSettings | None = None) -> neo4j.AsyncDriver:
    """Create a driver, check it answers, and hand it to neomodel's ``adb``.

    Raises ``DatabaseUnavailable("database-unavailable")`` naming ``graphrag-orm neo4j
    start`` and ``NEO4J_URI`` when the server cannot be reached or refuses the
    credentials; never a driver stack trace.
    """
    settings = settings or ConnectionSettings.from_env()
    driver = neo4j.AsyncGraphDatabase.driver(
        settings.uri,
        auth=(settings.user, settings.password),
        connection_timeout=10.0,
        max_connection_pool_size=50,
        # Unknown-label and similar notices are expected on an empty graph; they
        # would only fill logs, and the toolkit checks its schema explicitly.
        notifications_min_severity="OFF",
    )
    try:
        await driver.verify_connectivity()
    except AuthError:
        await driver.close()
        raise _unavailable(settings, "the credentials were refused; check NEO4J_USER and NEO4J_PASSWORD") from None
    except (ServiceUnavailable, OSError, ValueError) as error:
        await driver.close()
        raise _unavailable(settings, type(error).__name__) from None
    get_config().database_name = settings.database or neo4j.DEFAULT_DATABASE
    await adb.set_connection(driver=driver)
    return driver


async def disconnect(driver: neo4j.AsyncDriver | None) -> None:
    """Close ``driver`` and detach neomodel from it."""
    if adb.driver is driver:
        adb.driver = None
    if driver is not None:
        await driver.close()


async def server_version() -> str:
    """The Neo4j kernel version, e.g. ``2026.09.0``."""
    rows, _ = await adb.cypher_query(
        "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0]"
    )
    return str(rows[0][0]) if rows else "unknown"
