"""Opening a driver from NEO4J_* settings, with a coded failure instead of a driver trace."""

from __future__ import annotations

import os
from dataclasses import dataclass

import neo4j
from neo4j.exceptions import AuthError, ServiceUnavailable

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import DatabaseUnavailable
from graphrag_orm.localdb import LOCAL_PASSWORD
from graphrag_orm.store.store import Store

__all__ = [
    "DEFAULT_URI",
    "ConnectionSettings",
    "answers_return_one",
    "open_driver",
    "open_store",
    "server_version",
]

DEFAULT_URI = "bolt://127.0.0.1:7687"


@dataclass(frozen=True, repr=False)
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
        ErrorCode.DATABASE_UNAVAILABLE,
        f"Neo4j is not reachable at {settings.uri} ({reason}). Start the local server with "
        "`graphrag-orm neo4j start`, or set NEO4J_URI (and NEO4J_USER, NEO4J_PASSWORD) to your own.",
    )


async def open_driver(settings: ConnectionSettings | None = None) -> neo4j.AsyncDriver:
    """Create a driver and check it answers.

    Raises ``DatabaseUnavailable("database-unavailable")`` naming ``graphrag-orm neo4j
    start`` and ``NEO4J_URI`` when the server cannot be reached or refuses the
    credentials; never a driver stack trace.
    """
    settings = settings or ConnectionSettings.from_env()
    try:
        driver = neo4j.AsyncGraphDatabase.driver(
            settings.uri,
            auth=(settings.user, settings.password),
            connection_timeout=10.0,
            max_connection_pool_size=50,
            # Unknown-label and similar notices are expected on an empty graph; they
            # would only fill logs, and the toolkit checks its schema explicitly.
            notifications_min_severity="OFF",
        )
    except ValueError as error:
        raise _unavailable(settings, type(error).__name__) from None
    try:
        await driver.verify_connectivity()
    except AuthError:
        await driver.close()
        raise _unavailable(settings, "the credentials were refused; check NEO4J_USER and NEO4J_PASSWORD") from None
    except (ServiceUnavailable, OSError, ValueError) as error:
        await driver.close()
        raise _unavailable(settings, type(error).__name__) from None
    return driver


async def open_store(settings: ConnectionSettings | None = None) -> Store:
    """A :class:`Store` on a new driver (close it with ``await store.driver.close()``)."""
    settings = settings or ConnectionSettings.from_env()
    driver = await open_driver(settings)
    return Store(driver, database=settings.database)


async def server_version(store: Store) -> str:
    """The Neo4j kernel version, e.g. ``2026.09.0``."""
    result = await store.read(
        "CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0] AS version",
        name="server.version",
    )
    return str(result.value("version", "unknown"))


def answers_return_one(uri: str, user: str, password: str, *, timeout: float = 5.0) -> bool:
    """True when the server at ``uri`` answers ``RETURN 1`` with these credentials (blocking; no retries)."""
    try:
        with neo4j.GraphDatabase.driver(
            uri, auth=(user, password), connection_timeout=timeout, max_transaction_retry_time=0
        ) as driver:
            records, _, _ = driver.execute_query("RETURN 1 AS one")
            return bool(records and records[0]["one"] == 1)
    except Exception:
        return False
