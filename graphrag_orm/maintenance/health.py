"""The health checks: each finding has a stable code and a count; none means healthy.

Every check only reads. A finding's detail names ids (documents, leases, runs),
index names or embedding-set ids, at most :data:`SAMPLE` of them, never text.

- ``schema-missing``: an expected constraint or index is absent, or present with
  another definition; ``index-not-online``: present but not ONLINE.
- ``missing-embedding``: chunks without a vector; ``mixed-embedding-sets``: chunks
  whose vector comes from another embedding set (or names none), and chunks that carry
  a re-embedding's staged vector beside their own (``<set id> (staged)``, from the first
  backfilled page until ``complete()``; see :mod:`graphrag_orm.reembedding`).
- ``orphans``: sections and chunks whose document is gone.
- ``readback-mismatch``: a chunk whose text is not exactly as long, in UTF-8 bytes,
  as its span ``[startByte, endByte)``. Chunks of ASCII text whose length equals the
  span are cleared in the database; the others are read (id, text and span, a page
  of :data:`READBACK_PAGE` at a time) and measured exactly.
- ``expired-leases``: leases left by runs that stopped.
- ``stale-runs``: runs still ``Running`` with no live lease and no progress for
  longer than the stale time (see :mod:`graphrag_orm.maintenance.stale_runs`);
  ``maintenance.fail_stale_runs()`` marks them Failed.
- ``orphan-entities``, ``stale-facts`` and ``stale-communities`` come from the knowledge
  extension: communities the graph changed under since their build, recomputed on read
  (:func:`graphrag_orm.communities.service.stale_communities`).
- ``retracted-findings``: community reports a removal took findings from since they were
  written (graphrag_orm.communities); ``communities refresh`` writes them again.

In a tenanted graph (docs/tenancy.md) every finding counts and names the bound tenant's
chunks, sections, documents, leases, runs, things, facts, communities and community reports
only; the schema findings are the graph's (index and constraint names, no tenant's data).

Each statement is a READ transaction of its own (the store's reads); the statements
are in :mod:`graphrag_orm.maintenance.health_statements`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_orm.codes import HealthFinding
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.maintenance.health_statements import HealthStatements
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance
from graphrag_orm.maintenance.reports import HealthFindingItem, HealthReport
from graphrag_orm.maintenance.stale_runs import StaleRuns
from graphrag_orm.migrate import check_schema
from graphrag_orm.models import LexicalModel
from graphrag_orm.schema import SchemaDefinition
from graphrag_orm.store import Store

__all__ = ["READBACK_PAGE", "SAMPLE", "HealthChecks"]

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
        store: Store,
        model: LexicalModel,
        embedding_set: EmbeddingSet,
        expected_schema: Sequence[SchemaDefinition],
        *,
        knowledge: KnowledgeMaintenance | None = None,
        stale_runs: StaleRuns | None = None,
    ) -> None:
        self.store = store
        self.stale_runs = stale_runs
        self.embedding_set = embedding_set
        self.expected_schema = list(expected_schema)
        self.prefix = model.layout.schema_prefix
        self.knowledge = knowledge
        self.tenanted = model.layout.tenanted
        self.statements = HealthStatements.render(model.names)

    async def check(self) -> HealthReport:
        """Every check, findings in the order of :class:`HealthFinding`; reads only."""
        found: list[HealthFindingItem] = []
        found.extend(await self._schema())
        found.extend(await self._embeddings())
        found.extend(await self._orphans())
        found.extend(await self._readback())
        found.extend(await self._leases())
        found.extend(await self._stale_runs())
        found.extend(await self._retracted())
        if self.knowledge is not None:
            found.extend(await self.knowledge.health(self.store.reader))
        order = {code: position for position, code in enumerate(HealthFinding)}
        found.sort(key=lambda item: order[item.code])
        return HealthReport(findings=tuple(found))

    async def _schema(self) -> list[HealthFindingItem]:
        result = await check_schema(self.store, self.expected_schema, prefix=self.prefix)
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
        missing = await self.store.read(
            self.statements.missing_embedding, {"sample": SAMPLE}, name="maintenance.health.missing_embedding"
        )
        row = missing.records[0]
        chunks, documents = int(row["chunks"]), int(row["documents"])
        if chunks:
            out.append(
                HealthFindingItem(
                    code=HealthFinding.MISSING_EMBEDDING,
                    count=chunks,
                    detail=f"{_n(chunks, 'chunk')} of {_n(documents, 'document')}: {_sample(row['sample'], documents)}",
                )
            )
        mixed = await self.store.read(
            self.statements.mixed_sets, {"set": self.embedding_set.id}, name="maintenance.health.mixed_sets"
        )
        if mixed:
            total = sum(int(row["chunks"]) for row in mixed)
            sets = [f"{row['other']}: {row['chunks']}" for row in mixed]
            out.append(
                HealthFindingItem(
                    code=HealthFinding.MIXED_EMBEDDING_SETS,
                    count=total,
                    detail=f"expected {self.embedding_set.id}; found {_sample(sets, len(sets))}",
                )
            )
        return out

    async def _orphans(self) -> list[HealthFindingItem]:
        found = await self.store.read(self.statements.orphans, {"sample": SAMPLE}, name="maintenance.health.orphans")
        row = found.records[0]
        chunks, sections, documents = int(row["chunks"] or 0), int(row["sections"] or 0), int(row["documents"])
        if not chunks + sections:
            return []
        return [
            HealthFindingItem(
                code=HealthFinding.ORPHANS,
                count=chunks + sections,
                detail=f"{_n(chunks, 'chunk')} and {_n(sections, 'section')} of "
                f"{_n(documents, 'missing document')}: {_sample(row['sample'], documents)}",
            )
        ]

    async def _readback(self) -> list[HealthFindingItem]:
        mismatched: list[str] = []
        documents: set[str] = set()
        after = ""
        while True:
            rows = (
                await self.store.read(
                    self.statements.readback_candidates,
                    {"after": after, "ascii": _ASCII, "page": READBACK_PAGE},
                    name="maintenance.health.readback",
                )
            ).records
            for row in rows:
                if not _reads_back(row["text"], row["start"], row["end"]):
                    mismatched.append(str(row["id"]))
                    documents.add(str(row["document"]))
            if len(rows) < READBACK_PAGE:
                break
            after = str(rows[-1]["id"])
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
        found = await self.store.read(
            self.statements.expired_leases, {"sample": SAMPLE}, name="maintenance.health.expired_leases"
        )
        row = found.records[0]
        count = int(row["leases"])
        if not count:
            return []
        return [
            HealthFindingItem(
                code=HealthFinding.EXPIRED_LEASES, count=count, detail=f"documents {_sample(row['sample'], count)}"
            )
        ]

    async def _retracted(self) -> list[HealthFindingItem]:
        found = await self.store.read(
            self.statements.retracted_reports, {"sample": SAMPLE}, name="maintenance.health.retracted_reports"
        )
        return _retracted_item(found.records[0])

    async def _stale_runs(self) -> list[HealthFindingItem]:
        if self.stale_runs is None:
            return []
        count, sample = await self.stale_runs.count(SAMPLE)
        if not count:
            return []
        return [
            HealthFindingItem(
                code=HealthFinding.STALE_RUNS,
                count=count,
                detail=f"runs {_sample(sample, count)} (no progress for over {self.stale_runs.seconds:g} s)",
            )
        ]


def _retracted_item(row: Any) -> list[HealthFindingItem]:
    reports = int(row["reports"] or 0)
    if not reports:
        return []
    retracted, trimmed = int(row["retracted"] or 0), int(row["trimmed"] or 0)
    return [
        HealthFindingItem(
            code=HealthFinding.RETRACTED_FINDINGS,
            count=reports,
            detail=f"{_n(retracted, 'finding')} retracted and {trimmed} trimmed, of reports "
            f"{_sample(row['sample'], reports)}",
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
