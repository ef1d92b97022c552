"""The sandbox for Cypher a caller or a model supplies: the text gate, the server's plan, a bounded read.

One path for every such query (a retrieval's Cypher scope and Cypher expansion, and
Text2Cypher), in order, each refusal a code of :class:`~graphrag_orm.errors.QueryRefused`:

1. the text gate (:class:`~graphrag_orm.store.gate.CypherGate`): ``not-allowed``, or
   ``invalid-query`` for a text that is no query, ``too-deep``, ``regex-not-allowed``
   and ``range-too-large`` for what one expression may cost; then
   :func:`~graphrag_orm.store.gate.check_vector_reads` with ``left_out``:
   ``vector-not-readable`` for a query that names a stored vector property, reads every
   property at once or one by a computed key, or a parameter whose value is such a name.
   Nothing is sent before these pass;
2. in the READ transaction the query then runs in: the properties of every vector index
   the database holds (``SHOW VECTOR INDEXES``, unless ``vector_indexes=False``), so a
   staged re-embedding's property is refused too (``vector-not-readable``); then
   ``EXPLAIN``: ``invalid-query`` when the server cannot plan it, ``not-read-only``
   unless the plan's query type is read-only (``r``), and ``not-allowed`` when the plan
   holds a procedure call, a LoadCSV, a transaction operator or a command (SHOW,
   TERMINATE): the server's plan decides what the query reaches, whatever the text
   gate let through; with ``known_names`` set, ``unknown-name`` when the query names a
   label, relationship type or property key that the database has never held and
   ``known_names`` does not hold (the server's notice on EXPLAIN: a model's guess, such
   as ``b.price`` on a graph without prices, which would read nulls as if they were
   the answer);
3. the query itself, in that transaction, explicit and with the timeout (so the driver
   never retries past it): ``query-timeout`` when the server's transaction timeout
   stops it (``Neo.ClientError.Transaction.TransactionTimedOut*``), ``query-failed``
   with the server's status code for any other failure (a missing parameter, a lost
   connection). The server checks its timeout between rows only, so one expression can
   run past it: the sandbox's own deadline, ``timeout_seconds`` plus
   :data:`DEADLINE_GRACE_SECONDS`, covers the whole run (the gates, EXPLAIN, the rows),
   and when it passes the run is cancelled, its connection closed by the driver (never
   returned to the pool), and ``query-timeout`` raised; nothing is retried then. At
   most ``max_rows`` rows are read, and only while their size stays within
   ``max_bytes``; ``truncated`` says more were there, ``bytes_cut`` that the byte bound
   stopped the read. The one retry: a connection lost before the query itself went out
   (at BEGIN or EXPLAIN, as after a server restart) is tried once more on a fresh
   connection, within the same deadline, since nothing ran.

The server sends at most :data:`MAX_RECORDS_AHEAD` records per batch, so it computes no more
than that ahead of the reader, and the client holds no more than that; a record itself
arrives whole (the driver has no bound on one record): what bounds one record is the
server (its heap, its transaction memory limit, which does not track every value an
expression builds) and the deadline; see docs/security.md.

Every value becomes plain JSON data: strings, numbers, booleans, null, lists and maps.
Dates, times and durations become their ISO 8601 text
(``2026-03-01``, ``10:15:30.000000000+02:00``, ``P1DT2H``), points the text Cypher's
``toString`` gives (``point({x: 1.0, y: 2.0, crs: 'cartesian'})``) and a byte array
``"(bytes left out)"``. A node or relationship is the map of its properties without the
sandbox's ``left_out`` names (the chunk embedding's, ``embedding`` by default) and without
any numeric list property of more than 32 items. Anywhere else, a list of more than 32
numbers of which one has a fractional part (an embedding, whatever mix of int and float
it holds) becomes ``"(vector left out)"``. A list keeps ``max_list_items`` items and a
string ``max_text_chars`` characters, and the result says which were cut, so the caller
reports it. The row cap stops reading at ``max_rows`` and discards the rest without
streaming it (``UNWIND range(1, 100000000) AS n RETURN n`` returns its 50 rows in about
0.2 s).

Never: a retry once the query went out or the deadline passed, an auto-commit or WRITE
transaction, a statement the gate refused, or the query's values in a message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neo4j.exceptions import ClientError, DriverError, Neo4jError
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time
from pydantic import Field

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import QueryRefused, TenantError
from graphrag_orm.layout import DEFAULT_STAGING_PROPERTY
from graphrag_orm.store.gate import CypherGate, check_vector_reads
from graphrag_orm.store.store import Plan, Result, Store, StoreTransaction
from graphrag_orm.values import Options, strings_in

if TYPE_CHECKING:
    from graphrag_orm.store.fence import TenantFence

__all__ = [
    "DEADLINE_GRACE_SECONDS",
    "DEFAULT_LEFT_OUT",
    "DEFAULT_MAX_BYTES",
    "MAX_BYTES",
    "MAX_RECORDS_AHEAD",
    "REFUSED_OPERATORS",
    "TIMEOUT_CODES",
    "CypherSandbox",
    "SandboxLimits",
    "SandboxResult",
    "check_plan",
    "vector_property_names",
]

#: Plan operators a sandboxed query may not hold (and any ``Show...`` or ``Terminate...`` command).
REFUSED_OPERATORS = frozenset(
    {"ProcedureCall", "LoadCSV", "TransactionApply", "TransactionForeach", "AdministrationCommand"}
)
_REFUSED_PREFIXES = ("Show", "Terminate")
#: A numeric list longer than this (with a fractional value, outside properties) is taken for an embedding.
_VECTOR_ITEMS = 32
#: Property names a node or relationship is returned without, unless the sandbox is told otherwise.
DEFAULT_LEFT_OUT = frozenset({"embedding"})
#: The sandbox's own deadline is the timeout plus this: the server's timeout, when it holds, answers first.
DEADLINE_GRACE_SECONDS = 1.0
#: Records the server sends per batch to a sandboxed query (the driver's default is 1,000).
MAX_RECORDS_AHEAD = 20
#: Bytes of rows a sandboxed query reads back (:func:`~graphrag_orm.store.store.value_bytes`).
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
MAX_BYTES = 256 * 1024 * 1024
#: The server's status codes of a transaction stopped by its timeout (``query-timeout``).
TIMEOUT_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
#: The vector property of every vector index (its first; the rest are filter properties such as
#: ``documentId``), read in the sandbox's transaction.
_VECTOR_INDEXES = "SHOW VECTOR INDEXES YIELD properties RETURN properties[0] AS vector"
#: Cypher's names of the coordinate reference systems, by SRID.
_CRS = {7203: "cartesian", 9157: "cartesian-3d", 4326: "wgs-84", 4979: "wgs-84-3d"}


class SandboxLimits(Options):
    """How long a sandboxed query may run and how much of what it returns is kept."""

    timeout_seconds: float = Field(10.0, ge=0.1, le=120.0)
    max_rows: int = Field(50, ge=1, le=100_000)
    max_list_items: int = Field(1_000, ge=1, le=100_000)
    max_text_chars: int = Field(10_000, ge=1, le=1_000_000)
    #: Bytes of rows read back; the read stops before the row that would pass it (``bytes_cut``).
    max_bytes: int = Field(DEFAULT_MAX_BYTES, ge=1_024, le=MAX_BYTES)


@dataclass(frozen=True)
class SandboxResult:
    """A sandboxed query's rows as plain data, and which bounds cut them."""

    keys: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    #: More rows were there than ``max_rows``.
    truncated: bool = False
    #: A list was cut to ``max_list_items``.
    lists_cut: bool = False
    #: A string was cut to ``max_text_chars``.
    texts_cut: bool = False
    #: ``max_bytes`` stopped the read (``truncated`` is then set too).
    bytes_cut: bool = False
    #: Rows a tenant's fence dropped (:mod:`graphrag_orm.store.fence`): outside the tenant.
    outside_tenant: int = 0

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numeric(values: list[Any]) -> bool:
    """Every item is a number (never a bool)."""
    return all(_is_number(v) for v in values)


def _is_vector(values: list[Any]) -> bool:
    """More than 32 numbers, one of them with a fractional part: an embedding, however it mixes int and float."""
    return (
        len(values) > _VECTOR_ITEMS
        and _numeric(values)
        and any(isinstance(v, float) and not v.is_integer() for v in values)
    )


def _point_text(point: Point) -> str:
    """The text Cypher's ``toString`` gives a point: ``point({x: 1.0, y: 2.0, crs: 'cartesian'})``."""
    axes = ", ".join(f"{axis}: {float(v)!r}" for axis, v in zip("xyz", point, strict=False))
    return f"point({{{axes}, crs: '{_CRS.get(point.srid or 0, str(point.srid))}'}})"


@dataclass
class _Plain:
    """Turns row values into plain JSON data (the module's rules), remembering what it cut."""

    max_list_items: int
    max_text_chars: int
    left_out: frozenset[str]
    lists_cut: bool = False
    texts_cut: bool = False

    def value(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            if len(value) > self.max_text_chars:
                self.texts_cut = True
                return value[: self.max_text_chars]
            return value
        if isinstance(value, Point):  # a tuple: checked before lists
            return _point_text(value)
        if isinstance(value, Date | DateTime | Time | Duration):
            return value.iso_format()
        if isinstance(value, list | tuple):
            return self.items(list(value))
        if isinstance(value, dict):
            return {str(k): self.value(v) for k, v in value.items()}
        if isinstance(value, Node | Relationship):
            return self.properties(value)
        if isinstance(value, Path):
            return {"nodes": [self.value(n) for n in value.nodes], "relationships": [self.value(r) for r in value]}
        if isinstance(value, bytes | bytearray):
            return "(bytes left out)"
        return str(value)  # pragma: no cover (the driver returns no other type)

    def items(self, values: list[Any]) -> Any:
        if _is_vector(values):
            return "(vector left out)"
        if len(values) > self.max_list_items:
            self.lists_cut = True
        return [self.value(v) for v in values[: self.max_list_items]]

    def properties(self, entity: Node | Relationship) -> dict[str, Any]:
        """Its properties, without the left-out names and any numeric list of more than 32 items."""
        kept: dict[str, Any] = {}
        for key, v in dict(entity).items():
            if key in self.left_out or (isinstance(v, list) and len(v) > _VECTOR_ITEMS and _numeric(v)):
                continue
            kept[key] = self.value(v)
        return kept


def _reason(error: BaseException) -> str:
    """The server's status code, or the error's type: never its message (it may quote the query)."""
    code = getattr(error, "code", None) if isinstance(error, Neo4jError) else None
    return str(code) if code else type(error).__name__


def _timed_out(error: BaseException) -> bool:
    return isinstance(error, Neo4jError) and error.code in TIMEOUT_CODES


def _timeout(seconds: float) -> QueryRefused:
    return QueryRefused(ErrorCode.QUERY_TIMEOUT, f"the query ran past its timeout of {seconds:g} s")


def vector_property_names(*layouts_or_names: Any) -> frozenset[str]:
    """The vector property names to leave out and refuse: ``embedding``, the default staging
    property, and each given name or layout's ``chunk_embedding_property``."""
    names = set(DEFAULT_LEFT_OUT) | {DEFAULT_STAGING_PROPERTY}
    for item in layouts_or_names:
        names.add(item if isinstance(item, str) else str(item.chunk_embedding_property))
    return frozenset(names)


def check_plan(plan: Plan) -> None:
    """Refuse a plan that may write (``not-read-only``) or reaches past the graph (``not-allowed``)."""
    if plan.query_type != "r":
        raise QueryRefused(
            ErrorCode.NOT_READ_ONLY, f"the server plans the query as {plan.query_type or 'unknown'}, not read-only"
        )
    for operator in plan.operators:
        if operator in REFUSED_OPERATORS or operator.startswith(_REFUSED_PREFIXES):
            raise QueryRefused(ErrorCode.NOT_ALLOWED, f"the server's plan holds a {operator} operator")


#: The most unknown names a refusal's message lists (each cut to :data:`_NAME_CHARS`).
_NAMES_SHOWN = 3
_NAME_CHARS = 60


def check_names(plan: Plan, known: frozenset[str]) -> None:
    """Refuse (``unknown-name``) a plan that names what the database never held and ``known`` lacks."""
    unknown = [item for item in plan.unknown if item.name not in known]
    if not unknown:
        return
    shown = ", ".join(f"{item.kind} `{item.name[:_NAME_CHARS]}`" for item in unknown[:_NAMES_SHOWN])
    more = f" and {len(unknown) - _NAMES_SHOWN} more" if len(unknown) > _NAMES_SHOWN else ""
    raise QueryRefused(
        ErrorCode.UNKNOWN_NAME,
        f"the query names {shown}{more}, which the graph has never held and the schema does not declare",
    )


@dataclass(frozen=True)
class CypherSandbox:
    """Runs caller- or model-supplied Cypher through the gates the module's docstring lists."""

    gate: CypherGate = field(default_factory=CypherGate)
    #: Property names left out of every node and relationship (the layout's chunk embedding).
    left_out: frozenset[str] = DEFAULT_LEFT_OUT

    #: Also refuse the properties of every vector index the database holds (read in the query's transaction).
    vector_indexes: bool = True

    #: The names a query may use that the database may not hold yet (a schema's): with
    #: these set, a label, relationship type or property key that is neither held nor
    #: among them is refused (``unknown-name``). ``None``: not checked.
    known_names: frozenset[str] | None = None

    def check(self, cypher: str, parameters: Mapping[str, Any] | None = None) -> None:
        """The checks that send nothing: the text gate, the vector names, the parameters' values."""
        self.gate.check(cypher)
        check_vector_reads(cypher, self.left_out)
        self._check_parameters(parameters, self.left_out)

    @staticmethod
    def _check_parameters(parameters: Mapping[str, Any] | None, names: frozenset[str]) -> None:
        if parameters and any(text in names for text in strings_in(parameters)):
            raise QueryRefused(
                ErrorCode.VECTOR_NOT_READABLE,
                "a parameter holds the name of a stored vector property; vectors are not readable",
            )

    async def run(
        self,
        store: Store,
        cypher: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        limits: SandboxLimits | None = None,
        name: str = "sandbox",
        fence: TenantFence | None = None,
    ) -> SandboxResult:
        """The query's rows, bounded; :class:`QueryRefused` (``not-allowed``, ``invalid-query``,
        ``too-deep``, ``regex-not-allowed``, ``range-too-large``, ``vector-not-readable``,
        ``not-read-only``, ``unknown-name``, ``query-failed``, ``query-timeout``) otherwise. Sends nothing the
        text gate refused; returns or raises within ``timeout_seconds`` plus
        :data:`DEADLINE_GRACE_SECONDS`.

        In a tenanted graph a query runs only with the application's ``fence`` for the store's
        tenant (:mod:`graphrag_orm.store.fence`): without one ``tenant-refused``, for another
        tenant ``tenant-mismatch``; its rows outside the tenant are dropped and counted in
        ``outside_tenant``. Untenanted, ``fence`` changes nothing."""
        if store.tenanted:
            if fence is None:
                raise TenantError(
                    ErrorCode.TENANT_REFUSED,
                    "caller-supplied Cypher (a Cypher scope, an expansion, Text2Cypher) runs in a tenanted graph "
                    "only when the application vouches for it per tenant (vouched_tenant)",
                )
            fence.check(store.tenant, "caller-supplied Cypher")
        else:
            fence = None
        limits = limits or SandboxLimits()
        self.check(cypher, parameters)
        try:
            async with asyncio.timeout(limits.timeout_seconds + DEADLINE_GRACE_SECONDS):
                result, outside = await self._run(store, cypher, parameters, limits, name, fence)
        except TimeoutError as error:
            # Cancelled: the driver closed the connection rather than return it to the pool.
            raise _timeout(limits.timeout_seconds) from error
        plain = _Plain(limits.max_list_items, limits.max_text_chars, self.left_out)
        rows = tuple({key: plain.value(value) for key, value in record.items()} for record in result)
        return SandboxResult(
            result.keys, rows, result.truncated, plain.lists_cut, plain.texts_cut, result.bytes_cut, outside
        )

    async def _run(
        self,
        store: Store,
        cypher: str,
        parameters: Mapping[str, Any] | None,
        limits: SandboxLimits,
        name: str,
        fence: TenantFence | None,
    ) -> tuple[Result, int]:
        sent = False

        async def work(tx: StoreTransaction) -> tuple[Result, int]:
            nonlocal sent
            if self.vector_indexes:
                indexed = await tx.run(_VECTOR_INDEXES, name=f"{name}.vector_indexes")
                names = frozenset(str(row["vector"]) for row in indexed if row["vector"]) - self.left_out
                if names:
                    check_vector_reads(cypher, names)
                    self._check_parameters(parameters, names)
            try:
                plan = await tx.explain(cypher, parameters, name=f"{name}.explain")
            except ClientError as error:
                if _timed_out(error):
                    raise _timeout(limits.timeout_seconds) from error
                raise QueryRefused(
                    ErrorCode.INVALID_QUERY, f"the server cannot plan the query ({_reason(error)})"
                ) from error
            except (TypeError, ValueError) as error:  # a parameter the driver cannot send
                raise QueryRefused(
                    ErrorCode.INVALID_QUERY, f"a parameter cannot be sent ({type(error).__name__})"
                ) from error
            check_plan(plan)
            if self.known_names is not None:
                check_names(plan, self.known_names)
            sent = True
            result = await tx.run(cypher, parameters, name=name, max_rows=limits.max_rows, max_bytes=limits.max_bytes)
            # The fence reads in the query's transaction: the keys it checks are the graph the rows came from.
            return await fence.keep(tx, result, name=name) if fence is not None else (result, 0)

        for attempt in range(2):
            sent = False
            try:
                return await store.read_work(
                    work,
                    timeout=limits.timeout_seconds,
                    retry=False,
                    fetch_size=MAX_RECORDS_AHEAD,
                    notices=self.known_names is not None,
                )
            except QueryRefused:
                raise
            except (Neo4jError, DriverError, OSError) as error:
                if _timed_out(error):
                    raise _timeout(limits.timeout_seconds) from error
                # A connection lost before the query went out (a pooled connection to a
                # server restarted since): nothing ran, so once more on a fresh one.
                retryable = isinstance(error, Neo4jError | DriverError) and error.is_retryable()
                if attempt == 0 and not sent and retryable:
                    continue
                raise QueryRefused(ErrorCode.QUERY_FAILED, f"the query failed ({_reason(error)})") from error
        raise AssertionError("unreachable")  # pragma: no cover (the loop returns or raises)
