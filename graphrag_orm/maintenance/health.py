"""The health checks: each finding has a stable code and a count; none means healthy.

Every check only reads. A finding's detail names ids (documents, leases, runs),
index names or embedding-set ids, at most :data:`SAMPLE` of them, never text.

- ``schema-missing``: an expected constraint or index is absent, or present with
  another definition; ``index-not-online``: present but not ONLINE.
- ``missing-embedding``: chunks without a vector; ``mixed-embedding-sets``: chunks
  whose vector comes from another embedding set (or names none).
- ``orphans``: sections and chunks whose document is gone.
- ``readback-mismatch``: a chunk whose text is not exactly as long, in UTF-8 bytes,
  as its span ``[startByte, endByte)``. Chunks of ASCII text whose length equals the
  span are cleared in the database; the others are read (id, text and span, a page
  of :data:`READBACK_PAGE` at a time) and measured exactly.
- ``expired-leases``: leases left by runs that stopped.
- ``orphan-entities`` and ``stale-facts`` come from the knowledge extension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neomodel import adb

from graphrag_orm.codes import HealthFinding
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance
from graphrag_orm.maintenance.reports import HealthFindingItem, HealthReport
from graphrag_orm.maintenance.scope import LexicalNames, ScopeReader
from graphrag_orm.migrate import check_schema
from graphrag_orm.models import LexicalModel
from graphrag_orm.schema import SchemaDefinition

#: Ids or names shown in a finding's detail.
SAMPLE = 5
#: Chunks read per page by the exact read-back check.
READBACK_PAGE = 1_000
_ASCII = r"[\x00-\x7F]*"


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _sample(ids: Sequence[Any], total: int) -> str:
    shown = ", ".join(str(item) for item in list(ids)[:SAMPLE])
    return shown + (f" (and {total - SAMPLE} more)" if total > SAMPLE else "")


class HealthChecks:
    """Runs the checks of one layout and embedding set."""

    def __init__(
        self,
        model: LexicalModel,
        embedding_set: EmbeddingSet,
        expected_schema: Sequence[SchemaDefinition],
        *,
        knowledge: KnowledgeMaintenance | None = None,
    ) -> None:
        self.embedding_set = embedding_set
        self.expected_schema = list(expected_schema)
        self.prefix = model.layout.schema_prefix
        self.knowledge = knowledge
        self.scope = ScopeReader(model)
        n: LexicalNames = self.scope.names
        chunk = n.chunk
        label, doc = n.chunk_label, n.chunk_doc
        embedding, set_id = chunk.stored("embedding"), chunk.stored("embedding_set_id")
        text, start, end = chunk.stored("text"), chunk.stored("start_byte"), n.chunk_end
        self._missing_embedding = (
            f"MATCH (c:{label}) WHERE c.{embedding} IS NULL "
            f"RETURN count(c), count(DISTINCT c.{doc}), collect(DISTINCT c.{doc})[0..$sample]"
        )
        self._mixed_sets = (
            f"MATCH (c:{label}) WHERE c.{embedding} IS NOT NULL "
            f"AND (c.{set_id} IS NULL OR c.{set_id} <> $set) "
            f"RETURN coalesce(c.{set_id}, '(none)') AS other, count(c) ORDER BY other"
        )
        self._readback_candidates = (
            f"MATCH (c:{label}) WHERE c.{n.chunk_key} > $after AND NOT coalesce("
            f"c.{text} =~ $ascii AND size(c.{text}) = c.{end} - c.{start}, false) "
            f"RETURN c.{n.chunk_key}, c.{doc}, c.{text}, c.{start}, c.{end} ORDER BY c.{n.chunk_key} LIMIT $page"
        )
        lease = n.lease
        self._expired_leases = (
            f"MATCH (l:{n.lease_label}) WHERE l.{n.lease_expires} <= datetime() "
            f"WITH l ORDER BY l.{lease.key} RETURN count(l), collect(l.{lease.key})[0..$sample]"
        )

    async def check(self) -> HealthReport:
        """Every check, findings in the order of :class:`HealthFinding`; reads only."""
        found: list[HealthFindingItem] = []
        found.extend(await self._schema())
        found.extend(await self._embeddings())
        found.extend(await self._orphans())
        found.extend(await self._readback())
        found.extend(await self._leases())
        if self.knowledge is not None:
            found.extend(await self.knowledge.health())
        order = {code: position for position, code in enumerate(HealthFinding)}
        found.sort(key=lambda item: order[item.code])
        return HealthReport(findings=tuple(found))

    async def _schema(self) -> list[HealthFindingItem]:
        result = await check_schema(self.expected_schema, prefix=self.prefix)
        out: list[HealthFindingItem] = []
        absent = [item.name for item in (*result.missing, *result.different)]
        if absent:
            out.append(
                HealthFindingItem(
                    code=HealthFinding.SCHEMA_MISSING, count=len(absent), detail=_sample(absent, len(absent))
                )
            )
        offline = [f"{item.name} ({item.actual})" for item in result.not_online]
        if offline:
            out.append(
                HealthFindingItem(
                    code=HealthFinding.INDEX_NOT_ONLINE, count=len(offline), detail=_sample(offline, len(offline))
                )
            )
        return out

    async def _embeddings(self) -> list[HealthFindingItem]:
        out: list[HealthFindingItem] = []
        rows, _ = await adb.cypher_query(self._missing_embedding, {"sample": SAMPLE})
        chunks, documents, sample = rows[0]
        if chunks:
            out.append(
                HealthFindingItem(
                    code=HealthFinding.MISSING_EMBEDDING,
                    count=int(chunks),
                    detail=f"{_n(int(chunks), 'chunk')} of {_n(int(documents), 'document')}: "
                    f"{_sample(sample, int(documents))}",
                )
            )
        rows, _ = await adb.cypher_query(self._mixed_sets, {"set": self.embedding_set.id})
        if rows:
            total = sum(int(row[1]) for row in rows)
            sets = [f"{row[0]}: {row[1]}" for row in rows]
            out.append(
                HealthFindingItem(
                    code=HealthFinding.MIXED_EMBEDDING_SETS,
                    count=total,
                    detail=f"expected {self.embedding_set.id}; found {_sample(sets, len(sets))}",
                )
            )
        return out

    async def _orphans(self) -> list[HealthFindingItem]:
        rows, _ = await adb.cypher_query(self.scope.orphan_counts, {"sample": SAMPLE})
        chunks, sections, documents, sample = rows[0]
        total = int(chunks or 0) + int(sections or 0)
        if not total:
            return []
        return [
            HealthFindingItem(
                code=HealthFinding.ORPHANS,
                count=total,
                detail=f"{_n(int(chunks or 0), 'chunk')} and {_n(int(sections or 0), 'section')} of "
                f"{_n(int(documents), 'missing document')}: {_sample(sample, int(documents))}",
            )
        ]

    async def _readback(self) -> list[HealthFindingItem]:
        mismatched: list[str] = []
        documents: set[str] = set()
        after = ""
        while True:
            rows, _ = await adb.cypher_query(
                self._readback_candidates, {"after": after, "ascii": _ASCII, "page": READBACK_PAGE}
            )
            for chunk_id, document_id, text, start, end in rows:
                if not _reads_back(text, start, end):
                    mismatched.append(str(chunk_id))
                    documents.add(str(document_id))
            if len(rows) < READBACK_PAGE:
                break
            after = str(rows[-1][0])
        if not mismatched:
            return []
        return [
            HealthFindingItem(
                code=HealthFinding.READBACK_MISMATCH,
                count=len(mismatched),
                detail=f"{_n(len(mismatched), 'chunk')} of {_n(len(documents), 'document')}: "
                f"{_sample(sorted(documents), len(documents))}",
            )
        ]

    async def _leases(self) -> list[HealthFindingItem]:
        rows, _ = await adb.cypher_query(self._expired_leases, {"sample": SAMPLE})
        count, keys = rows[0]
        if not count:
            return []
        return [
            HealthFindingItem(
                code=HealthFinding.EXPIRED_LEASES, count=int(count), detail=f"documents {_sample(keys, int(count))}"
            )
        ]


def _reads_back(text: object, start: object, end: object) -> bool:
    """True when ``text`` is exactly ``end - start`` bytes of UTF-8 (a missing value never is)."""
    if not isinstance(text, str) or not isinstance(start, int) or not isinstance(end, int):
        return False
    try:
        return len(text.encode("utf-8")) == end - start
    except UnicodeEncodeError:  # a lone surrogate cannot have come from UTF-8 bytes
        return False


__all__ = ["READBACK_PAGE", "SAMPLE", "HealthChecks"]
