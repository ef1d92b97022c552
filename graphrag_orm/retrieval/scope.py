"""Scoped search: keep retrieval inside chosen documents, sections, metadata or a Cypher query.

Every scope resolves to documents, each whole or limited to byte ranges, before any
search (at most 10,000 documents: a metadata or Cypher scope that matches more keeps
the first by id and reports ``ScopeDocuments``). Routes then search inside it, and
every item and neighbour is checked against the resolved scope again before it
becomes evidence (:meth:`ResolvedScope.contains`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from neomodel import adb
from pydantic import Field

from graphrag_orm.codes import LimitName
from graphrag_orm.errors import GraphRagError
from graphrag_orm.models import LexicalModel
from graphrag_orm.store.batches import NodeWrites
from graphrag_orm.values import Limit, Options

MAX_SCOPE_DOCUMENTS = 10_000


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
    """A read-only query returning ``documentId`` and optionally ``startByte`` and ``endByte``."""

    kind: Literal["cypher"] = "cypher"
    cypher: str = Field(min_length=1, max_length=20_000)
    parameters: dict[str, Any] = Field(default_factory=dict)
    timeout_seconds: float = Field(10.0, ge=0.1, le=120.0)


Scope = Annotated[DocumentsScope | SectionsScope | MetadataScope | CypherScope, Field(discriminator="kind")]


class ScopeError(GraphRagError):
    """A scope query failed or returned something that is not a scope (``invalid-scope``)."""


@dataclass(frozen=True)
class ResolvedScope:
    """Documents, each whole (no ranges) or limited to byte ranges; plus the chunk count."""

    kind: str
    ranges: dict[str, tuple[tuple[int, int], ...] | None] = field(default_factory=dict)
    chunks: int = 0
    limits: tuple[Limit, ...] = ()

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

    def contains(self, document_id: str, start_byte: int, end_byte: int) -> bool:
        """Whether a chunk lies inside the scope: its document whole, or wholly inside one range."""
        if document_id not in self.ranges:
            return False
        spans = self.ranges[document_id]
        return spans is None or any(start <= start_byte and end_byte <= end for start, end in spans)


class ScopeResolver:
    """Resolves scopes against one layout's graph; reads only."""

    def __init__(self, model: LexicalModel) -> None:
        self.documents = NodeWrites(model.document)
        self.sections = NodeWrites(model.section)
        self.chunks = NodeWrites(model.chunk)

    async def resolve(self, scope: DocumentsScope | SectionsScope | MetadataScope | CypherScope) -> ResolvedScope:
        if isinstance(scope, DocumentsScope):
            ranges: dict[str, tuple[tuple[int, int], ...] | None] = {}
            existing = await self._existing(list(scope.document_ids))
            for doc in existing:
                ranges[doc] = None
            return await self._counted(scope.kind, ranges, ())
        if isinstance(scope, SectionsScope):
            return await self._sections(scope)
        if isinstance(scope, MetadataScope):
            return await self._metadata(scope)
        return await self._cypher(scope)

    async def _existing(self, ids: Sequence[str]) -> list[str]:
        docs = self.documents
        rows, _ = await adb.cypher_query(
            f"UNWIND $ids AS id MATCH (d:{docs.label} {{{docs.key}: id}}) RETURN d.{docs.key} ORDER BY d.{docs.key}",
            {"ids": list(ids)},
        )
        return [row[0] for row in rows]

    async def _sections(self, scope: SectionsScope) -> ResolvedScope:
        sec = self.sections
        rows, _ = await adb.cypher_query(
            f"UNWIND $ids AS id MATCH (s:{sec.label} {{{sec.key}: id}}) "
            f"RETURN s.{sec.stored('document_id')}, s.{sec.stored('start_byte')}, s.{sec.stored('end_byte')}",
            {"ids": list(scope.section_ids)},
        )
        spans: dict[str, list[tuple[int, int]]] = {}
        for doc, start, end in rows:
            spans.setdefault(doc, []).append((int(start), int(end)))
        ranges: dict[str, tuple[tuple[int, int], ...] | None] = {doc: tuple(sorted(s)) for doc, s in spans.items()}
        return await self._counted(scope.kind, ranges, ())

    async def _metadata(self, scope: MetadataScope) -> ResolvedScope:
        docs = self.documents
        flt = scope.filter
        conditions: list[str] = []
        params: dict[str, Any] = {"limit": MAX_SCOPE_DOCUMENTS + 1}
        if flt.publisher is not None:
            conditions.append(f"d.{docs.stored('publisher')} = $publisher")
            params["publisher"] = flt.publisher
        if flt.media_type is not None:
            conditions.append(f"d.{docs.stored('media_type')} = $mediaType")
            params["mediaType"] = flt.media_type
        if flt.uri_prefix is not None:
            conditions.append(f"d.{docs.stored('source_uri')} STARTS WITH $uriPrefix")
            params["uriPrefix"] = flt.uri_prefix
        if flt.published_from is not None:
            conditions.append(f"d.{docs.stored('published')} >= $publishedFrom")
            params["publishedFrom"] = flt.published_from
        if flt.published_before is not None:
            conditions.append(f"d.{docs.stored('published')} < $publishedBefore")
            params["publishedBefore"] = flt.published_before
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        rows, _ = await adb.cypher_query(
            f"MATCH (d:{docs.label}) {where}RETURN d.{docs.key} AS id ORDER BY id LIMIT $limit", params
        )
        ids = [row[0] for row in rows]
        limits: tuple[Limit, ...] = ()
        if len(ids) > MAX_SCOPE_DOCUMENTS:
            ids = ids[:MAX_SCOPE_DOCUMENTS]
            limits = (Limit(name=LimitName.SCOPE_DOCUMENTS, value=MAX_SCOPE_DOCUMENTS),)
        return await self._counted(scope.kind, dict.fromkeys(ids), limits)

    async def _cypher(self, scope: CypherScope) -> ResolvedScope:
        driver = adb.driver
        if driver is None:
            raise ScopeError("invalid-scope", "not connected")
        database = getattr(adb, "_database_name", None)
        collected: dict[str, list[tuple[int, int]] | None] = {}
        limits: tuple[Limit, ...] = ()
        try:
            async with driver.session(database=database, default_access_mode="READ") as session:
                tx = await session.begin_transaction(timeout=scope.timeout_seconds)
                try:
                    result = await tx.run(scope.cypher, scope.parameters)
                    keys = result.keys()
                    if "documentId" not in keys:
                        raise ScopeError("invalid-scope", "a Cypher scope must return a documentId column")
                    async for record in result:
                        doc = record["documentId"]
                        if not isinstance(doc, str):
                            continue
                        if doc not in collected and len(collected) == MAX_SCOPE_DOCUMENTS:
                            limits = (Limit(name=LimitName.SCOPE_DOCUMENTS, value=MAX_SCOPE_DOCUMENTS),)
                            break
                        start = record.get("startByte") if "startByte" in keys else None
                        end = record.get("endByte") if "endByte" in keys else None
                        if start is None or end is None:
                            collected[doc] = None
                        elif doc not in collected or collected[doc] is not None:
                            spans = collected.setdefault(doc, [])
                            assert spans is not None
                            spans.append((int(start), int(end)))
                finally:
                    await tx.rollback()
        except ScopeError:
            raise
        except Exception as error:  # the application's query; report its failure by type
            raise ScopeError("invalid-scope", f"the scope query failed: {type(error).__name__}") from error
        existing = set(await self._existing(list(collected)))
        ranges: dict[str, tuple[tuple[int, int], ...] | None] = {
            doc: (None if spans is None else tuple(sorted(spans)))
            for doc, spans in collected.items()
            if doc in existing
        }
        return await self._counted(scope.kind, ranges, limits)

    async def _counted(
        self, kind: str, ranges: dict[str, tuple[tuple[int, int], ...] | None], limits: tuple[Limit, ...]
    ) -> ResolvedScope:
        resolved = ResolvedScope(kind=kind, ranges=ranges, limits=limits)
        if not ranges:
            return resolved
        ch = self.chunks
        doc_field, start_field, end_field = ch.stored("document_id"), ch.stored("start_byte"), ch.stored("end_byte")
        rows, _ = await adb.cypher_query(
            f"CALL () {{ UNWIND $whole AS doc MATCH (c:{ch.label} {{{doc_field}: doc}}) RETURN c "
            f"UNION UNWIND $ranges AS r MATCH (c:{ch.label} {{{doc_field}: r.documentId}}) "
            f"WHERE c.{start_field} >= r.startByte AND c.{end_field} <= r.endByte RETURN c }} "
            "RETURN count(c)",
            {"whole": resolved.whole_documents, "ranges": resolved.range_rows},
        )
        return ResolvedScope(kind=kind, ranges=ranges, chunks=int(rows[0][0] or 0), limits=limits)
