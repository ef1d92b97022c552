"""Scoped search: keep retrieval inside chosen documents, sections, metadata or a Cypher query.

Every scope resolves to documents, each whole or limited to byte ranges, before any
search: at most 10,000 documents; a metadata or Cypher scope that matches more keeps
the first 10,000 by id and reports ``ScopeDocuments``. Only documents that exist count.
A Cypher scope is the application's query: it runs in the sandbox
(:mod:`graphrag_orm.store.sandbox`: the text gate, the server's plan, then once, never
retried, in a read transaction with its timeout), and at most 100,000 of its rows are
read (more is reported as ``ScopeRows``, and the documents are those of the rows read).
Its byte ranges are bounded too, because every scoped statement's work grows with the
ranges times the chunks of their documents: a range inside another of its document is
dropped (it adds nothing), and at most ``max_ranges`` (1,000; at most 10,000) are kept
in all, the first by document id and start (more is reported as ``ScopeRanges``; a
document whose every range was cut is left out, so a cut narrows the scope, never
widens it). A query the sandbox
refuses raises :class:`ScopeError` with the sandbox's code (``not-allowed``,
``invalid-query``, ``not-read-only``, ``query-failed``); a query without a
``documentId`` column, or with byte offsets that are not integers, ``invalid-scope``.
Routes then search inside the scope, and every item and neighbour is checked against it
again before it becomes evidence (:meth:`ResolvedScope.contains`).

Whether the chunk vector index declares the chunk's document id for filtering inside it
(``CREATE VECTOR INDEX ... WITH [c.documentId]``, a reviewed revision) is read once per
resolver, at its first scope of whole documents, and kept: such a scope is then marked
:attr:`ResolvedScope.in_index` and the vector route filters inside the index. A process
that lives across the revision that declares or removes it reconnects to see the change.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import QueryRefused, ScopeError
from graphrag_orm.retrieval.statements import METADATA_FIELDS, RetrievalStatements
from graphrag_orm.store import Store
from graphrag_orm.store.fence import fence_for
from graphrag_orm.store.sandbox import CypherSandbox, SandboxLimits
from graphrag_orm.tenancy import VouchedTenant
from graphrag_orm.values import Limit, Options

__all__ = [
    "DEFAULT_SCOPE_RANGES",
    "MAX_SCOPE_DOCUMENTS",
    "MAX_SCOPE_RANGES",
    "MAX_SCOPE_ROWS",
    "CypherScope",
    "DocumentFilter",
    "DocumentsScope",
    "MetadataScope",
    "ResolvedScope",
    "Scope",
    "ScopeError",
    "ScopeResolver",
    "SectionsScope",
]

MAX_SCOPE_DOCUMENTS = 10_000
#: Rows of a Cypher scope's query read at most.
MAX_SCOPE_ROWS = 100_000
#: Byte ranges a Cypher scope may keep, in all its documents (``CypherScope.max_ranges``).
DEFAULT_SCOPE_RANGES = 1_000
MAX_SCOPE_RANGES = 10_000


class DocumentsScope(Options):
    """These documents, whole."""

    kind: Literal["documents"] = "documents"
    document_ids: tuple[str, ...] = Field(max_length=MAX_SCOPE_DOCUMENTS)


class SectionsScope(Options):
    """The chunks wholly inside these sections' byte spans."""

    kind: Literal["sections"] = "sections"
    section_ids: tuple[str, ...] = Field(max_length=MAX_SCOPE_DOCUMENTS)


class DocumentFilter(Options):
    """Metadata to match; all given fields must hold. Dates compare as stored text."""

    publisher: str | None = None
    media_type: str | None = None
    uri_prefix: str | None = None
    published_from: str | None = None
    published_before: str | None = None


class MetadataScope(Options):
    """Documents whose metadata matches ``filter``."""

    kind: Literal["metadata"] = "metadata"
    filter: DocumentFilter


class CypherScope(Options):
    """A read-only query returning ``documentId`` and optionally ``startByte`` and ``endByte``.

    It runs in the sandbox; ``max_ranges`` bounds the byte ranges kept (``ScopeRanges``).
    In a tenanted graph it runs only when the application vouches for it per tenant
    (``vouched_tenant``, as :class:`~graphrag_orm.retrieval.options.CypherExpansion`); its rows
    outside the tenant are dropped and counted as ``ScopeOutsideTenant``.
    """

    kind: Literal["cypher"] = "cypher"
    cypher: str = Field(min_length=1, max_length=20_000)
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_seconds: float = Field(10.0, ge=0.1, le=120.0)
    max_ranges: int = Field(DEFAULT_SCOPE_RANGES, ge=1, le=MAX_SCOPE_RANGES)
    vouched_tenant: VouchedTenant = None


Scope = Annotated[DocumentsScope | SectionsScope | MetadataScope | CypherScope, Field(discriminator="kind")]


@dataclass(frozen=True)
class ResolvedScope:
    """Documents, each whole (no ranges) or limited to byte ranges; the scope's and the graph's chunk counts."""

    kind: str
    ranges: dict[str, tuple[tuple[int, int], ...] | None] = field(default_factory=dict)
    chunks: int = 0
    limits: tuple[Limit, ...] = ()
    #: Chunks in the whole graph when the scope was resolved (sizes an over-fetch).
    total_chunks: int = 0
    #: Whole documents only, and the vector index declares the document id: filter inside it.
    in_index: bool = False
    #: Per ranged document: range starts in order, and the farthest end reached so far.
    _reach: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def document_ids(self) -> list[str]:
        return sorted(self.ranges)

    @property
    def empty(self) -> bool:
        return not self.ranges or self.chunks == 0

    @property
    def range_rows(self) -> list[dict[str, Any]]:
        """Ranges as parameter rows for server-side filtering (whole documents: no rows)."""
        return [
            {"documentId": doc, "startByte": start, "endByte": end}
            for doc, spans in self.ranges.items()
            if spans is not None
            for start, end in spans
        ]

    @property
    def whole_documents(self) -> list[str]:
        return sorted(doc for doc, spans in self.ranges.items() if spans is None)

    @property
    def parameters(self) -> dict[str, Any]:
        """``$whole`` and ``$ranges``, the parameters of every statement that filters by the scope."""
        return {"whole": self.whole_documents, "ranges": self.range_rows}

    def contains(self, document_id: str, start_byte: int, end_byte: int) -> bool:
        """Whether a chunk lies inside the scope: its document whole, or wholly inside one range."""
        if document_id not in self.ranges:
            return False
        spans = self.ranges[document_id]
        if spans is None:
            return True
        # Some range holds the chunk when the farthest end of the ranges starting at or
        # before it reaches its end: a bisection, not a scan of every range.
        if document_id not in self._reach:
            ordered = sorted(spans)
            reach, farthest = [], -1
            for _, end in ordered:
                farthest = max(farthest, end)
                reach.append(farthest)
            self._reach[document_id] = ([start for start, _ in ordered], reach)
        starts, reach = self._reach[document_id]
        k = bisect.bisect_right(starts, start_byte)
        return k > 0 and reach[k - 1] >= end_byte


Ranges = dict[str, tuple[tuple[int, int], ...] | None]


class ScopeResolver:
    """Resolves scopes against one layout's graph; reads only."""

    def __init__(self, store: Store, statements: RetrievalStatements, sandbox: CypherSandbox | None = None) -> None:
        self.store = store
        self.statements = statements
        self.sandbox = sandbox or CypherSandbox()
        #: The vector index's declared filter properties, read at the first whole-document scope.
        self._index_filter: tuple[str, ...] | None = None

    async def index_filter(self) -> tuple[str, ...]:
        """The properties the chunk vector index declares for filtering inside it (read once, then kept)."""
        if self._index_filter is None:
            result = await self.store.read(
                self.statements.vector_filter_properties,
                {"name": self.statements.vector_index},
                name="retrieval.scope.vector_filter",
            )
            row = result.single() or {}
            self._index_filter = tuple(row.get("properties") or ())[1:]
        return self._index_filter

    async def resolve(self, scope: DocumentsScope | SectionsScope | MetadataScope | CypherScope) -> ResolvedScope:
        """The scope's documents and ranges, counted. A Cypher scope's query the sandbox
        refuses raises ``ScopeError`` with the sandbox's code; one that returns no
        ``documentId`` column or offsets that are not integers, ``ScopeError("invalid-scope")``."""
        if isinstance(scope, DocumentsScope):
            existing, _ = await self._existing(scope.document_ids)
            return await self._counted(scope.kind, dict.fromkeys(existing), ())
        if isinstance(scope, SectionsScope):
            return await self._sections(scope)
        if isinstance(scope, MetadataScope):
            return await self._metadata(scope)
        return await self._cypher(scope)

    async def _existing(self, ids: Sequence[str]) -> tuple[list[str], tuple[Limit, ...]]:
        """Which of ``ids`` are documents: the first :data:`MAX_SCOPE_DOCUMENTS` by id, and the limit when more."""
        result = await self.store.read(
            self.statements.existing_documents,
            {"ids": list(ids), "limit": MAX_SCOPE_DOCUMENTS + 1},
            name="retrieval.scope.documents",
        )
        return _capped(result.column("id"))

    async def _sections(self, scope: SectionsScope) -> ResolvedScope:
        result = await self.store.read(
            self.statements.sections, {"ids": list(scope.section_ids)}, name="retrieval.scope.sections"
        )
        spans: dict[str, list[tuple[int, int]]] = {}
        for row in result:
            spans.setdefault(row["documentId"], []).append((int(row["startByte"]), int(row["endByte"])))
        return await self._counted(scope.kind, {doc: tuple(sorted(s)) for doc, s in spans.items()}, ())

    async def _metadata(self, scope: MetadataScope) -> ResolvedScope:
        given = {name: value for name, value in scope.filter.model_dump().items() if value is not None}
        fields = tuple(name for name in METADATA_FIELDS if name in given)
        parameters: dict[str, Any] = {METADATA_FIELDS[name][2]: given[name] for name in fields}
        result = await self.store.read(
            self.statements.metadata(fields),
            {**parameters, "limit": MAX_SCOPE_DOCUMENTS + 1},
            name="retrieval.scope.metadata",
        )
        ids, limits = _capped(result.column("id"))
        return await self._counted(scope.kind, dict.fromkeys(ids), limits)

    async def _cypher(self, scope: CypherScope) -> ResolvedScope:
        try:
            result = await self.sandbox.run(
                self.store,
                scope.cypher,
                scope.parameters,
                limits=SandboxLimits(timeout_seconds=scope.timeout_seconds, max_rows=MAX_SCOPE_ROWS),
                name="retrieval.scope.cypher",
                fence=fence_for(self.statements.names, scope.vouched_tenant),
            )
        except QueryRefused as refused:
            raise ScopeError(refused.code, f"the Cypher scope was refused: {refused.message}") from refused
        if "documentId" not in result.keys:
            raise ScopeError(ErrorCode.INVALID_SCOPE, "a Cypher scope must return a documentId column")
        collected: dict[str, set[tuple[int, int]] | None] = {}
        for row in result:
            doc = row["documentId"]
            if not isinstance(doc, str):
                continue
            start, end = row.get("startByte"), row.get("endByte")
            if start is None or end is None:
                collected[doc] = None  # a whole document covers its ranges
            elif doc not in collected or collected[doc] is not None:
                spans = collected.setdefault(doc, set())
                assert spans is not None
                spans.add((_offset(start), _offset(end)))
        existing, limits = await self._existing(sorted(collected))
        if result.truncated:
            limits = (Limit(name=LimitName.SCOPE_ROWS, value=MAX_SCOPE_ROWS), *limits)
        if result.outside_tenant:
            limits = (Limit(name=LimitName.SCOPE_OUTSIDE_TENANT, value=result.outside_tenant), *limits)
        ranges, cut = _bounded_ranges(collected, existing, scope.max_ranges)
        return await self._counted(scope.kind, ranges, (*limits, *cut))

    async def _counted(self, kind: str, ranges: Ranges, limits: tuple[Limit, ...]) -> ResolvedScope:
        resolved = ResolvedScope(kind=kind, ranges=ranges, limits=limits)
        if not ranges:
            return resolved
        result = await self.store.read(self.statements.scope_size, resolved.parameters, name="retrieval.scope.size")
        row = result.single() or {}
        whole = all(spans is None for spans in ranges.values())
        document_id = self.statements.names.chunk.stored("document_id")
        return ResolvedScope(
            kind=kind,
            ranges=ranges,
            chunks=int(row.get("chunks") or 0),
            limits=limits,
            total_chunks=int(row.get("total") or 0),
            in_index=whole and document_id in await self.index_filter(),
        )


def _offset(value: object) -> int:
    """A byte offset a Cypher scope returned: an integer (or a float without a fraction)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScopeError(ErrorCode.INVALID_SCOPE, "a Cypher scope's startByte and endByte must be integers")
    return value


def _bounded_ranges(
    collected: dict[str, set[tuple[int, int]] | None], documents: Sequence[str], max_ranges: int
) -> tuple[Ranges, tuple[Limit, ...]]:
    """``documents`` (in id order) with their ranges: none inside another of its document,
    at most ``max_ranges`` in all, the first by document and start; a document left
    without ranges is left out."""
    ranges: Ranges = {}
    left = max_ranges
    cut = False
    for doc in documents:
        spans = collected[doc]
        if spans is None:
            ranges[doc] = None
            continue
        kept: list[tuple[int, int]] = []
        farthest: int | None = None
        # By start, the longest first: a range ending within the farthest end so far is inside another.
        for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
            if farthest is None or end > farthest:
                kept.append((start, end))
                farthest = end
        if len(kept) > left:
            cut, kept = True, kept[:left]
        left -= len(kept)
        if kept:
            ranges[doc] = tuple(kept)
    return ranges, ((Limit(name=LimitName.SCOPE_RANGES, value=max_ranges),) if cut else ())


def _capped(ids: list[str]) -> tuple[list[str], tuple[Limit, ...]]:
    """At most :data:`MAX_SCOPE_DOCUMENTS` ids (already in id order), and the limit when there were more."""
    if len(ids) > MAX_SCOPE_DOCUMENTS:
        return ids[:MAX_SCOPE_DOCUMENTS], (Limit(name=LimitName.SCOPE_DOCUMENTS, value=MAX_SCOPE_DOCUMENTS),)
    return ids, ()
