"""The one place the toolkit's statements go to Neo4j.

A :class:`Store` wraps the driver the facade holds (and a database name). Every
statement goes out through it:

- :meth:`Store.read` runs one statement in a managed READ transaction (so a
  ``neo4j://`` routing URI sends it to a cluster's secondaries); the driver retries it
  on a lost connection or a transient error. ``max_rows`` bounds what is read and says
  when more was there; ``timeout`` is the server-side transaction timeout.
- :meth:`Store.read_work` runs several read statements in one READ transaction.
- :meth:`Store.write` runs a unit of work in an explicit WRITE transaction and retries
  it whole, at most ``attempts`` times, when the server reports a transient error (a
  deadlock with a concurrent writer): the retry policy written once, for every writer.
- :meth:`Store.execute` runs one auto-commit statement in WRITE mode: schema commands
  and ``CALL { ... } IN TRANSACTIONS``, which cannot run inside a transaction.
- :meth:`StoreTransaction.explain` asks the server's plan of a statement without running
  it (its query type and operators): the sandbox for caller-supplied Cypher
  (:mod:`graphrag_orm.store.sandbox`) decides on it. In a transaction of
  ``read_work(..., notices=True)`` the plan also lists the labels, relationship types and
  property keys the statement names that the database has never held
  (:attr:`Plan.unknown`, from the server's ``01N50``-``01N52`` notices; the driver's log
  records of that session's notices, which quote the statement, are dropped).

A read issued after a write through the same store sees that write. On a cluster
(a ``neo4j://`` routing driver) every session of the store shares a bookmark manager
for that; on one server (``bolt://``) a committed write is visible to every later
transaction already, and the store sends no bookmarks: they cost the server about a
tenth of its ingestion throughput (docs/benchmarks.md, "After the store seam").
``Store(..., causal_consistency=True)`` asks for bookmarks whatever the driver.

Statement hooks (:meth:`Store.add_hook`) see each statement's name, access mode,
duration, rows and update counters, never its text or parameters: tracing and the
benchmarks' statement counts use them; nothing patches the driver.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeVar

import neo4j
import neo4j.api
import neo4j.graph
from neo4j.exceptions import DriverError, Neo4jError, TransientError

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import StoreNotConnected
from graphrag_orm.store.plans import OTHER_CLASSIFICATIONS, Plan, UnknownName, noticed, plan_of
from graphrag_orm.tenancy import Tenant, statement_parameters

__all__ = [
    "DEFAULT_WRITE_ATTEMPTS",
    "MAX_WRITE_ATTEMPTS",
    "AccessMode",
    "Plan",
    "Queries",
    "Result",
    "StatementEvent",
    "StatementHook",
    "Store",
    "StoreTransaction",
    "UnknownName",
]

T = TypeVar("T")

#: Attempts of one write transaction when the server reports a transient error.
DEFAULT_WRITE_ATTEMPTS = 3
#: Attempts of one read statement when the driver calls its error retryable.
DEFAULT_READ_ATTEMPTS = 3
MAX_WRITE_ATTEMPTS = 10

_log = logging.getLogger("graphrag_orm.store")

_COUNTERS = (
    "nodes_created",
    "nodes_deleted",
    "relationships_created",
    "relationships_deleted",
    "properties_set",
    "labels_added",
    "labels_removed",
    "indexes_added",
    "indexes_removed",
    "constraints_added",
    "constraints_removed",
)


class AccessMode(StrEnum):
    READ = "READ"
    WRITE = "WRITE"


@dataclass(frozen=True)
class StatementEvent:
    """One statement as a hook sees it: no text, no parameters."""

    name: str
    mode: AccessMode
    seconds: float
    rows: int
    counters: Mapping[str, int]
    #: The exception's type name when the statement failed, else None.
    error: str | None = None


StatementHook = Callable[[StatementEvent], None]


@dataclass(frozen=True)
class Result:
    """The records of one statement, read by key, with its update counters."""

    keys: tuple[str, ...]
    records: list[dict[str, Any]]
    counters: Mapping[str, int] = field(default_factory=dict)
    #: True when ``max_rows`` (or ``max_bytes``) stopped the read before the last record.
    truncated: bool = False
    #: True when ``max_bytes`` stopped the read: the next record would have passed it.
    bytes_cut: bool = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __bool__(self) -> bool:
        return bool(self.records)

    def single(self) -> dict[str, Any] | None:
        """The first record, or None when there is none."""
        return self.records[0] if self.records else None

    def value(self, key: str | None = None, default: Any = None) -> Any:
        """One value of the first record (its first column unless ``key``), or ``default``."""
        if not self.records:
            return default
        record = self.records[0]
        if key is None:
            key = self.keys[0]
        value = record.get(key, default)
        return default if value is None else value

    def column(self, key: str) -> list[Any]:
        return [record[key] for record in self.records]


class Queries(Protocol):
    """Something that runs statements: a :class:`StoreTransaction`, or a store's reader."""

    async def run(
        self, cypher: str, parameters: Mapping[str, Any] | None = None, *, name: str = "statement"
    ) -> Result: ...


def value_bytes(value: Any) -> int:
    """About the bytes a value takes on the wire: UTF-8 text, 8 a number, the sum of a container's items."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, list | tuple):
        return 1 + sum(value_bytes(item) for item in value)
    if isinstance(value, dict):
        return 1 + sum(value_bytes(key) + value_bytes(item) for key, item in value.items())
    if isinstance(value, neo4j.graph.Node | neo4j.graph.Relationship):
        return 16 + value_bytes(dict(value)) + sum(len(label) for label in getattr(value, "labels", ()))
    if isinstance(value, neo4j.graph.Path):
        return 1 + sum(value_bytes(node) for node in value.nodes) + sum(value_bytes(rel) for rel in value)
    return 8


async def _consume(
    result: neo4j.AsyncResult, max_rows: int | None, max_bytes: int | None = None
) -> tuple[tuple[str, ...], list[dict[str, Any]], dict[str, int], bool, bool]:
    keys = tuple(result.keys())
    records: list[dict[str, Any]] = []
    truncated = bytes_cut = False
    total = 0
    async for record in result:
        if max_rows is not None and len(records) >= max_rows:
            truncated = True
            break
        values = record.values()
        if max_bytes is not None:
            total += sum(value_bytes(value) for value in values)
            if total > max_bytes:
                truncated = bytes_cut = True
                break
        records.append(dict(zip(keys, values, strict=True)))
    # The rest is discarded on the server, never streamed.
    summary = await result.consume()
    counters = summary.counters
    changed = {name: value for name in _COUNTERS if (value := getattr(counters, name, 0))}
    return keys, records, changed, truncated, bytes_cut


class StoreTransaction:
    """Statements inside one transaction of a :class:`Store` (a write, or a multi-statement read)."""

    def __init__(self, store: Store, tx: neo4j.AsyncManagedTransaction | neo4j.AsyncTransaction, mode: AccessMode):
        self._store = store
        self._tx = tx
        self.mode = mode

    async def run(
        self,
        cypher: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        name: str = "statement",
        max_rows: int | None = None,
        max_bytes: int | None = None,
    ) -> Result:
        """The statement's records: at most ``max_rows``, and, with ``max_bytes``, records only
        while their total (:func:`value_bytes`) stays within it; ``truncated`` and
        ``bytes_cut`` say which stopped the read. A record arrives whole: ``max_bytes``
        stops the read after the record that passes it, which is not kept."""
        began = time.perf_counter()
        try:
            result = await self._tx.run(cypher, self._store.parameters(parameters))
            keys, records, counters, truncated, bytes_cut = await _consume(result, max_rows, max_bytes)
        except BaseException as error:
            self._store._emit(name, self.mode, began, 0, {}, type(error).__name__)
            raise
        self._store._emit(name, self.mode, began, len(records), counters, None)
        return Result(keys, records, counters, truncated, bytes_cut)

    async def explain(self, cypher: str, parameters: Mapping[str, Any] | None = None, *, name: str = "explain") -> Plan:
        """The server's plan of ``cypher`` (sent as ``EXPLAIN`` + ``cypher``), which is not run."""
        began = time.perf_counter()
        try:
            result = await self._tx.run("EXPLAIN " + cypher, self._store.parameters(parameters))
            summary = await result.consume()
        except BaseException as error:
            self._store._emit(name, self.mode, began, 0, {}, type(error).__name__)
            raise
        self._store._emit(name, self.mode, began, 0, {}, None)
        return plan_of(summary)


class _Reader:
    """Each statement a read of its own (for code written against :class:`Queries`)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def run(self, cypher: str, parameters: Mapping[str, Any] | None = None, *, name: str = "statement") -> Result:
        return await self._store.read(cypher, parameters, name=name)


class Store:
    """One database on one driver; see the module's docstring for what each call promises."""

    def __init__(
        self,
        driver: neo4j.AsyncDriver | None = None,
        *,
        database: str | None = None,
        hooks: Sequence[StatementHook] = (),
        causal_consistency: bool | None = None,
        tenanted: bool = False,
        tenant: Tenant | None = None,
    ) -> None:
        self._driver = driver
        #: A tenanted graph's store refuses every statement until bound to a tenant.
        self.tenanted = tenanted
        self.tenant = tenant
        self.database = database
        self._hooks: list[StatementHook] = list(hooks)
        #: ``None``: bookmarks on a routing driver only; ``True``/``False``: always/never.
        self.causal_consistency = causal_consistency
        self._bookmarks = self._bookmark_manager(driver)
        #: A :class:`Queries` whose every statement is a read of its own.
        self.reader: Queries = _Reader(self)

    @property
    def connected(self) -> bool:
        return self._driver is not None

    @property
    def driver(self) -> neo4j.AsyncDriver:
        if self._driver is None:
            raise StoreNotConnected(ErrorCode.NOT_CONNECTED, "the store has no driver yet; call connect() first")
        return self._driver

    def bind(self, driver: neo4j.AsyncDriver, database: str | None = None) -> None:
        """Point the store at ``driver`` (the facade's ``connect()`` does this)."""
        self._driver = driver
        self.database = database
        self._bookmarks = self._bookmark_manager(driver)

    def _bookmark_manager(self, driver: neo4j.AsyncDriver | None) -> neo4j.api.AsyncBookmarkManager | None:
        wanted = self.causal_consistency
        if wanted is None:
            wanted = isinstance(driver, neo4j.AsyncNeo4jDriver)
        return neo4j.AsyncGraphDatabase.bookmark_manager() if wanted else None

    @property
    def uses_bookmarks(self) -> bool:
        """Whether the store's sessions share a bookmark manager (see the module's docstring)."""
        return self._bookmarks is not None

    def for_tenant(self, tenant: Tenant | str) -> Store:
        """A store of the same driver, hooks and bookmarks whose statements carry ``$tenant``."""
        bound = copy.copy(self)
        bound.tenant = Tenant.of(tenant)
        bound.reader = _Reader(bound)
        return bound

    def parameters(self, parameters: Mapping[str, Any] | None) -> dict[str, Any]:
        """The parameters a statement is sent with (``tenant-required`` refuses before it goes out)."""
        return statement_parameters(self.tenanted, self.tenant, parameters)

    def unbind(self) -> None:
        self._driver = None

    def add_hook(self, hook: StatementHook) -> Callable[[], None]:
        """Call ``hook`` after every statement; returns a function that removes it."""
        self._hooks.append(hook)

        def remove() -> None:
            if hook in self._hooks:
                self._hooks.remove(hook)

        return remove

    def _emit(
        self, name: str, mode: AccessMode, began: float, rows: int, counters: Mapping[str, int], error: str | None
    ) -> None:
        if not self._hooks:
            return
        event = StatementEvent(name, mode, time.perf_counter() - began, rows, counters, error)
        for hook in tuple(self._hooks):
            try:
                hook(event)
            except Exception:  # a hook never breaks the statement it observes
                _log.exception("statement hook %r failed", hook)

    def _session(self, mode: AccessMode, fetch_size: int | None = None, notices: bool = False) -> neo4j.AsyncSession:
        extra: dict[str, Any] = {} if fetch_size is None else {"fetch_size": fetch_size}
        if notices:  # the driver has them off; this session asks for unknown names only
            extra["notifications_min_severity"] = "WARNING"
            extra["notifications_disabled_classifications"] = list(OTHER_CLASSIFICATIONS)
        return self.driver.session(
            database=self.database,
            default_access_mode=neo4j.READ_ACCESS if mode is AccessMode.READ else neo4j.WRITE_ACCESS,
            bookmark_manager=self._bookmarks,
            **extra,
        )

    async def read(
        self,
        cypher: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        name: str = "read",
        timeout: float | None = None,  # noqa: ASYNC109 (the server's transaction timeout)
        max_rows: int | None = None,
        retry: bool = True,
    ) -> Result:
        """One statement in READ mode; at most ``max_rows`` records (``truncated`` says more).

        With ``retry`` (the default) it is one auto-commit statement in a READ session:
        one round trip, where a managed transaction takes three (begin, run, commit), and
        it is sent again, at most ``DEFAULT_READ_ATTEMPTS`` times in all, when the driver
        calls its error retryable (a lost connection, a transient error); a read changes
        nothing, so sending it again is safe. With ``retry=False`` the statement runs once
        in an explicit transaction, so a ``timeout`` is never exceeded by retries
        (caller-supplied Cypher).
        """
        sent = self.parameters(parameters)
        if not retry:

            async def work(tx: StoreTransaction) -> Result:
                return await tx.run(cypher, parameters, name=name, max_rows=max_rows)

            return await self.read_work(work, timeout=timeout, retry=False)
        query = neo4j.Query(cypher, timeout=timeout) if timeout is not None else cypher
        for attempt in range(DEFAULT_READ_ATTEMPTS):
            began = time.perf_counter()
            try:
                async with self._session(AccessMode.READ) as session:
                    result = await session.run(query, sent)
                    keys, records, counters, truncated, _ = await _consume(result, max_rows)
            except (Neo4jError, DriverError) as error:
                self._emit(name, AccessMode.READ, began, 0, {}, type(error).__name__)
                if not error.is_retryable() or attempt + 1 == DEFAULT_READ_ATTEMPTS:
                    raise
                await asyncio.sleep(0.05 * 2**attempt)
                continue
            except BaseException as error:
                self._emit(name, AccessMode.READ, began, 0, {}, type(error).__name__)
                raise
            self._emit(name, AccessMode.READ, began, len(records), counters, None)
            return Result(keys, records, counters, truncated)
        raise AssertionError("unreachable")

    async def read_work(
        self,
        work: Callable[[StoreTransaction], Awaitable[T]],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (the server's transaction timeout)
        retry: bool = True,
        fetch_size: int | None = None,
        notices: bool = False,
    ) -> T:
        """Several read statements in one READ transaction (a consistent view).

        ``fetch_size``: records the server sends per batch (the driver's default, 1,000,
        unless given); the server computes no more of a statement's records ahead of the
        reader than that. ``notices``: the server reports the names a statement uses that
        the database has never held (:attr:`Plan.unknown` of an EXPLAIN)."""
        self.parameters(None)  # a tenanted store without a tenant opens no transaction
        with noticed(notices):
            async with self._session(AccessMode.READ, fetch_size, notices) as session:
                if not retry:
                    async with await session.begin_transaction(timeout=timeout) as tx:
                        return await work(StoreTransaction(self, tx, AccessMode.READ))

                async def managed(tx: neo4j.AsyncManagedTransaction) -> T:
                    return await work(StoreTransaction(self, tx, AccessMode.READ))

                function = neo4j.unit_of_work(timeout=timeout)(managed) if timeout is not None else managed
                return await session.execute_read(function)

    async def write(
        self,
        work: Callable[[StoreTransaction], Awaitable[T]],
        *,
        attempts: int = DEFAULT_WRITE_ATTEMPTS,
        timeout: float | None = None,  # noqa: ASYNC109 (the server's transaction timeout)
        backoff_seconds: float = 0.05,
    ) -> T:
        """Run ``work`` in one WRITE transaction and commit it; nothing is kept when it raises.

        A transient error (a deadlock, a lock timeout) rolls the transaction back whole
        and runs ``work`` again, at most ``attempts`` times in all, with a doubling wait;
        the last one is raised. Any other error is raised at once.
        """
        attempts = max(1, min(attempts, MAX_WRITE_ATTEMPTS))
        self.parameters(None)  # a tenanted store without a tenant opens no transaction
        for attempt in range(attempts):
            try:
                async with self._session(AccessMode.WRITE) as session:
                    tx = await session.begin_transaction(timeout=timeout)
                    try:
                        value = await work(StoreTransaction(self, tx, AccessMode.WRITE))
                        await tx.commit()
                        return value
                    finally:
                        # After a commit this is a no-op; otherwise it rolls back (also on cancellation).
                        await asyncio.shield(tx.close())
            except TransientError:
                if attempt + 1 == attempts:
                    raise
                await asyncio.sleep(backoff_seconds * 2**attempt)
        raise AssertionError("unreachable")

    async def execute(
        self, cypher: str, parameters: Mapping[str, Any] | None = None, *, name: str = "execute"
    ) -> Result:
        """One auto-commit statement in WRITE mode (schema commands, ``CALL ... IN TRANSACTIONS``)."""
        sent = self.parameters(parameters)
        began = time.perf_counter()
        async with self._session(AccessMode.WRITE) as session:
            try:
                result = await session.run(cypher, sent)
                keys, records, counters, truncated, _ = await _consume(result, None)
            except BaseException as error:
                self._emit(name, AccessMode.WRITE, began, 0, {}, type(error).__name__)
                raise
        self._emit(name, AccessMode.WRITE, began, len(records), counters, None)
        return Result(keys, records, counters, truncated)
