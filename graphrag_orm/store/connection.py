"""Opening a driver from NEO4J_* settings, with a coded failure instead of a driver trace.

``invalid-uri``, ``auth-failed``, ``database-not-found`` or ``database-unavailable``
(see :func:`open_driver`); a message shows the URI's scheme, host and port only and
never the password.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import neo4j
from neo4j.exceptions import AuthError, ClientError, DriverError, Neo4jError, ServiceUnavailable

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import DatabaseUnavailable
from graphrag_orm.store.store import Store

__all__ = [
    "BOLT_SCHEMES",
    "DEFAULT_URI",
    "LOCAL_PASSWORD",
    "ConnectionSettings",
    "answers_return_one",
    "check_uri",
    "open_driver",
    "open_store",
    "server_version",
    "shown_uri",
]

#: The password the local server is given at its first start, unless NEO4J_PASSWORD is set.
LOCAL_PASSWORD = "graphrag-local"

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


#: The schemes the Neo4j driver speaks (Bolt, direct or routed, with or without TLS).
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

_DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"


def shown_uri(uri: str) -> str:
    """``uri`` as messages show it: scheme, host and port only (user information, path and
    query dropped, since a password may hide there)."""
    parts = urlsplit(uri)
    if not parts.scheme or "://" not in uri:
        return "(not a URI)" if "@" in uri or ":" in uri else repr(uri)
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ":(not a number)"
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{port}"


def check_uri(uri: str) -> None:
    """Refuse a ``NEO4J_URI`` the driver cannot use, before any driver is built.

    ``DatabaseUnavailable("invalid-uri")`` for another scheme (``http://`` is the browser's
    port, not Bolt's), no host, or a port that is not a number from 1 to 65535.
    """
    scheme = uri.partition("://")[0].lower() if "://" in uri else ""
    problem = ""
    if scheme not in BOLT_SCHEMES:
        problem = f"the scheme must be one of {', '.join(BOLT_SCHEMES)}"
        if scheme in ("http", "https"):
            problem += " (http is Neo4j Browser's port; Bolt listens on 7687 by default)"
    else:
        try:
            parts = urlsplit(uri)
            if not parts.hostname:
                problem = "it names no host"
            elif parts.port is not None and not 1 <= parts.port <= 65535:
                problem = "its port must be from 1 to 65535"
        except ValueError:
            problem = "its port must be a number from 1 to 65535"
    if problem:
        raise DatabaseUnavailable(
            ErrorCode.INVALID_URI,
            f"NEO4J_URI {shown_uri(uri)} is not a Neo4j URI: {problem}; for the local server use "
            f"{DEFAULT_URI} (`graphrag-orm neo4j start` prints the one to use)",
        )


def _unavailable(settings: ConnectionSettings, reason: str) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        ErrorCode.DATABASE_UNAVAILABLE,
        f"Neo4j is not reachable at {shown_uri(settings.uri)} ({reason}). Start the local server with "
        "`graphrag-orm neo4j start`, or set NEO4J_URI (and NEO4J_USER, NEO4J_PASSWORD) to your own.",
    )


def _auth_failed(settings: ConnectionSettings) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        ErrorCode.AUTH_FAILED,
        f"Neo4j at {shown_uri(settings.uri)} refused the credentials of user {settings.user!r}: check "
        "NEO4J_USER and NEO4J_PASSWORD (a local server of `graphrag-orm neo4j start` keeps the password "
        f"NEO4J_PASSWORD held at the first start of its home: {LOCAL_PASSWORD!r} when it was unset)",
    )


def _database_not_found(settings: ConnectionSettings) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        ErrorCode.DATABASE_NOT_FOUND,
        f"Neo4j at {shown_uri(settings.uri)} has no database {settings.database!r}: set NEO4J_DATABASE to one "
        "it has (`SHOW DATABASES` lists them), or unset it for the server's default database",
    )


async def open_driver(settings: ConnectionSettings | None = None) -> neo4j.AsyncDriver:
    """Create a driver and check it answers, on the settings' database.

    Every failure is a :class:`DatabaseUnavailable` with a code and a one-line message
    that never holds the password, never a driver stack trace: ``invalid-uri`` (a
    ``NEO4J_URI`` that is not a Bolt URI, refused before any connection), ``auth-failed``
    (the server refused ``NEO4J_USER``/``NEO4J_PASSWORD``), ``database-not-found`` (no
    database named ``NEO4J_DATABASE``) and ``database-unavailable`` (nothing answers:
    the message names ``graphrag-orm neo4j start`` and ``NEO4J_URI``).
    """
    settings = settings or ConnectionSettings.from_env()
    check_uri(settings.uri)
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
    except (ValueError, DriverError) as error:
        raise DatabaseUnavailable(
            ErrorCode.INVALID_URI,
            f"NEO4J_URI {shown_uri(settings.uri)} is refused by the driver ({type(error).__name__})",
        ) from None
    try:
        await driver.verify_connectivity()
        if settings.database is not None:
            # verify_connectivity() reaches the server, not the database: a name it does
            # not have would fail only at the first statement, as a driver trace.
            async with driver.session(database=settings.database, default_access_mode=neo4j.READ_ACCESS) as session:
                await (await session.run("RETURN 1 AS one")).consume()
    except AuthError:
        await driver.close()
        raise _auth_failed(settings) from None
    except ClientError as error:
        await driver.close()
        if error.code == _DATABASE_NOT_FOUND:
            raise _database_not_found(settings) from None
        raise _unavailable(settings, f"{type(error).__name__} {error.code}") from None
    except (ServiceUnavailable, Neo4jError, DriverError, OSError, ValueError) as error:
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
