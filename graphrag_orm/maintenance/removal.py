"""The batched remover: documents whole, in bounded batches, one transaction each.

A batch holds at most ``batch_documents`` documents and ``batch_bytes`` of their
source text (a larger document goes alone). Each batch runs in one write
transaction, in this order:

1. **Survey** (one read): the run stamps of every document, section, chunk,
   expired lease and structural link it would delete, and the degree of each of
   those nodes. A missing or unknown run id, a structural link that joins a
   document to another one, or a relationship of a type neither the layout nor the
   knowledge extension owns raises ``GraphRefused("foreign-graph")`` before any
   write: nothing is ever detached silently.
2. **Knowledge** (with an extension): its run stamps join the check; then
   ``count_fact_updates`` — over ``max_fact_updates`` the batch is rolled back,
   halved and tried again, so only a single document listed by that many facts is
   refused (reported, never half-removed); then ``remove_for_documents``, before
   any chunk is deleted.
3. **Deletes by key**, never ``DETACH DELETE``: structural links first, then chunks,
   sections, documents and the documents' expired leases. Each statement deletes at
   most ``page_size`` elements of each kind, and rounds repeat until every kind
   reaches the count the survey found; anything left (written meanwhile) makes the
   commit fail, so the batch rolls back whole.

A failure rolls back its own batch only: earlier batches stay removed, each whole.
A transient error (a deadlock with a concurrent writer) retries the batch, at most
three times in all.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from neo4j.exceptions import TransientError
from neomodel import adb

from graphrag_orm.ingestion.receipts import RunStatus
from graphrag_orm.layout import validate_identifier
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance
from graphrag_orm.maintenance.ownership import Ownership, merge_stamps, stamps_from_rows
from graphrag_orm.maintenance.scope import DocumentSize, LexicalNames
from graphrag_orm.models import LexicalModel

WRITE_ATTEMPTS = 3


@dataclass
class RemovalTotals:
    """Counts accumulated over the batches of one call."""

    documents: int = 0
    sections: int = 0
    chunks: int = 0
    links: int = 0
    leases: int = 0
    things: int = 0
    facts: int = 0
    facts_updated: int = 0
    runs: int = 0
    batches: int = 0
    refused: list[str] = field(default_factory=list)

    def add(self, result: BatchResult) -> None:
        self.documents += result.documents
        self.sections += result.sections
        self.chunks += result.chunks
        self.links += result.links
        self.leases += result.leases
        self.facts += result.facts
        self.facts_updated += result.facts_updated
        self.batches += 1

    def before(self) -> str:
        """Words for a refusal: what earlier batches of this call removed, or nothing."""
        if not self.batches:
            return ""
        documents = f"{self.documents} document" + ("" if self.documents == 1 else "s")
        batches = f"{self.batches} earlier batch" + ("" if self.batches == 1 else "es")
        return f"{documents} in {batches} {'was' if self.documents == 1 else 'were'} removed, each whole"


@dataclass(frozen=True)
class BatchResult:
    """What one committed batch removed."""

    documents: int = 0
    sections: int = 0
    chunks: int = 0
    links: int = 0
    leases: int = 0
    facts: int = 0
    facts_updated: int = 0


class FactUpdatesExceeded(Exception):
    """A batch would update more facts than allowed; it was rolled back (internal)."""

    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"{count} fact updates, over {limit}")
        self.count = count
        self.limit = limit


def plan_batches(
    documents: Iterable[DocumentSize], *, max_documents: int, max_bytes: int
) -> list[tuple[DocumentSize, ...]]:
    """Cut ``documents`` (in order) into batches of at most ``max_documents`` and ``max_bytes``.

    A batch takes documents while both bounds hold; a document larger than
    ``max_bytes`` forms a batch of its own. Every document is in exactly one batch.
    """
    if max_documents < 1 or max_bytes < 1:
        raise ValueError("batch bounds must be positive")
    batches: list[tuple[DocumentSize, ...]] = []
    current: list[DocumentSize] = []
    size = 0
    for document in documents:
        fits = len(current) < max_documents and size + document.utf8_bytes <= max_bytes
        if current and not fits:
            batches.append(tuple(current))
            current, size = [], 0
        current.append(document)
        size += document.utf8_bytes
    if current:
        batches.append(tuple(current))
    return batches


async def run_batches(
    batches: Iterable[Sequence[DocumentSize]],
    attempt: Callable[[tuple[DocumentSize, ...]], Awaitable[BatchResult]],
    totals: RemovalTotals,
) -> None:
    """Run ``attempt`` on each batch in order, halving a batch whose fact updates exceed the bound.

    A batch of one document over the bound is recorded in ``totals.refused`` and the
    next batch runs. Any other exception ends the call; batches already committed stay.
    """
    pending: deque[tuple[DocumentSize, ...]] = deque(tuple(batch) for batch in batches)
    while pending:
        batch = pending.popleft()
        if not batch:
            continue
        try:
            result = await attempt(batch)
        except FactUpdatesExceeded:
            if len(batch) == 1:
                totals.refused.append(batch[0].document_id)
                continue
            middle = (len(batch) + 1) // 2
            pending.appendleft(batch[middle:])
            pending.appendleft(batch[:middle])
            continue
        totals.add(result)


@dataclass(frozen=True)
class _Survey:
    stamps: dict[str, dict[str | None, int]]
    expected: dict[str, int]
    crossing: int
    unowned: list[tuple[str, int]]
    known_runs: set[str]


#: Nodes a batch deletes, after every link: in this order.
_NODE_KINDS = ("chunks", "sections", "documents", "leases")
_SOURCES = ("chunks", "sections", "documents")


class BatchRemover:
    """Removes documents of one layout in batches (see the module's docstring for the order)."""

    def __init__(
        self,
        model: LexicalModel,
        *,
        knowledge: KnowledgeMaintenance | None,
        page_size: int,
        max_fact_updates: int,
        ownership: Ownership | None = None,
    ) -> None:
        self.knowledge = knowledge
        self.page_size = page_size
        self.max_fact_updates = max_fact_updates
        self.ownership = ownership or Ownership(model)
        n = self.names = LexicalNames(model)
        doc, sec, chk, lease, run = n.doc_label, n.section_label, n.chunk_label, n.lease_label, n.run_id
        owned = sorted(knowledge.relationship_types) if knowledge is not None else []
        self.allowed_types = (*n.structural_types, *(validate_identifier(t, "relationship type") for t in owned))
        links = n.structural
        self._where = {
            "documents": (doc, f"x.{n.doc_key} IN $ids"),
            "sections": (sec, f"x.{n.section_doc} IN $ids"),
            "chunks": (chk, f"x.{n.chunk_doc} IN $ids"),
        }
        expired = f"x.{n.lease_expires} <= datetime()"
        in_lease = f"x.{n.lease_key} IN $ids AND {expired}"
        nodes = (
            f"CALL () {{ MATCH (x:{doc}) WHERE {self._where['documents'][1]} "
            f"RETURN x, x.{n.doc_key} AS doc, 'documents' AS kind "
            f"UNION ALL MATCH (x:{sec}) WHERE {self._where['sections'][1]} "
            f"RETURN x, x.{n.section_doc} AS doc, 'sections' AS kind "
            f"UNION ALL MATCH (x:{chk}) WHERE {self._where['chunks'][1]} "
            f"RETURN x, x.{n.chunk_doc} AS doc, 'chunks' AS kind "
            f"UNION ALL MATCH (x:{lease}) WHERE {in_lease} RETURN x, x.{n.lease_key} AS doc, 'leases' AS kind }} "
        )
        # A link stays inside its document when its target names the same document (a
        # section or chunk by its documentId, a document by its id): properties, not labels,
        # because the survey reads one target per link and labels cost a read each.
        same = f"coalesce(m.{n.chunk_doc}, m.{n.section_doc}, m.{n.doc_key}) = doc"
        knowledge_types = "|".join(self.allowed_types[len(n.structural_types) :])
        degree = "COUNT { (x)--() }" + (f" - COUNT {{ (x)-[:{knowledge_types}]-() }}" if knowledge_types else "")
        # One round trip: run stamps of nodes and of their outgoing structural links, links
        # that leave their document, and each node's degree without the extension's types
        # (degrees are read, not expanded). Every structural link inside the batch is counted
        # twice in the degrees, so any excess is a link from elsewhere or of a foreign type.
        self._survey = (
            nodes + "CALL (x, doc, kind) { "
            f"RETURN kind AS item, x.{run} AS run, 1 AS n "
            f"UNION ALL MATCH (x)-[r:{links}]->(m) "
            f"RETURN CASE WHEN {same} THEN kind + ' ' + type(r) ELSE 'crossing' END AS item, r.{run} AS run, 1 AS n "
            f"UNION ALL RETURN 'degree' AS item, null AS run, {degree} AS n }} "
            f"WITH item, run, sum(n) AS n "
            f"RETURN item, run, n, run IS NOT NULL AND EXISTS {{ MATCH (:{n.run_label} {{{n.run_key}: run}}) }}"
        )
        # Only when the survey finds an excess: name the foreign types and count links from elsewhere.
        self._unowned_types = (
            nodes + "MATCH (x)-[r]-() WHERE NOT type(r) IN $allowed RETURN type(r), count(DISTINCT r) ORDER BY type(r)"
        )
        self._chunk_ids = f"MATCH (x:{chk}) WHERE {self._where['chunks'][1]} RETURN x.{n.chunk_key}"
        # Each part deletes at most $page elements of one kind and names the count it returns.
        self._parts: dict[str, tuple[str, str]] = {}
        #: Links are deleted by the kind of their source and their type ("chunks IN_DOCUMENT"),
        #: each from its source, so each is found once.
        self._link_kinds = tuple(f"{kind} {link_type}" for kind in _SOURCES for link_type in n.structural_types)
        for kind in _SOURCES:
            label, where = self._where[kind]
            for link_type in n.structural_types:
                self._parts[f"{kind} {link_type}"] = (
                    f"MATCH (x:{label})-[r:{link_type}]->() WHERE {where} WITH r LIMIT $page DELETE r",
                    "count(r)",
                )
            self._parts[kind] = (f"MATCH (x:{label}) WHERE {where} WITH x LIMIT $page DELETE x", "count(x)")
        # Lock, then read: a lease renewed or taken over meanwhile is no longer expired and stays.
        self._parts["leases"] = (
            f"MATCH (x:{lease}) WHERE {in_lease} WITH x LIMIT $page "
            f"SET x.{n.lease_claims} = coalesce(x.{n.lease_claims}, 0) + 1 "
            f"WITH x, {expired} AS gone FOREACH (_ IN CASE WHEN gone THEN [1] ELSE [] END | DELETE x)",
            "sum(CASE WHEN gone THEN 1 ELSE 0 END)",
        )
        self._rounds: dict[tuple[str, ...], str] = {}
        self._expired_page = (
            f"MATCH (x:{lease}) WHERE {expired} RETURN x.{n.lease_key}, x.{run} ORDER BY x.{n.lease_key} LIMIT $page"
        )
        self._expired_stamps = f"MATCH (x:{lease}) WHERE {expired} RETURN 'leases', x.{run}, count(*)"
        # Structural links are written with their nodes and carry the same run id, so nodes suffice.
        self._runs_in_use = (
            f"CALL () {{ MATCH (x:{doc}) WHERE x.{run} IN $runs RETURN x.{run} AS run "
            f"UNION MATCH (x:{sec}) WHERE x.{run} IN $runs RETURN x.{run} AS run "
            f"UNION MATCH (x:{chk}) WHERE x.{run} IN $runs RETURN x.{run} AS run "
            f"UNION MATCH (x:{lease}) WHERE x.{run} IN $runs RETURN x.{run} AS run }} "
            "RETURN run"
        )
        self._finished_runs = (
            f"MATCH (r:{n.run_label}) WHERE r.{n.run_status} <> $running RETURN r.{n.run_key} ORDER BY r.{n.run_key}"
        )
        # A run node with relationships is not one the toolkit wrote; it is left alone.
        self._delete_runs = (
            f"MATCH (r:{n.run_label}) WHERE r.{n.run_key} IN $runs AND r.{n.run_status} <> $running "
            "AND NOT EXISTS { (r)--() } WITH r LIMIT $page DELETE r RETURN count(r)"
        )

    # ------------------------------------------------------------------ documents

    async def remove(
        self,
        documents: Sequence[DocumentSize],
        totals: RemovalTotals,
        *,
        batch_documents: int,
        batch_bytes: int,
    ) -> None:
        """Remove ``documents`` in batches, adding to ``totals``; see the module's docstring."""

        async def attempt(batch: tuple[DocumentSize, ...]) -> BatchResult:
            return await self._attempt(batch, totals)

        await run_batches(
            plan_batches(documents, max_documents=batch_documents, max_bytes=batch_bytes), attempt, totals
        )

    async def _attempt(self, batch: tuple[DocumentSize, ...], totals: RemovalTotals) -> BatchResult:
        ids = [document.document_id for document in batch]
        for attempt in range(WRITE_ATTEMPTS):
            try:
                async with adb.transaction:
                    return await self._remove_batch(ids, totals)
            except TransientError:
                # The transaction rolled back whole; a deadlock with a writer is worth a retry.
                if attempt + 1 == WRITE_ATTEMPTS:
                    raise
                await asyncio.sleep(0.05 * 2**attempt)
        raise AssertionError("unreachable")

    async def _survey_batch(self, ids: list[str]) -> _Survey:
        rows, _ = await adb.cypher_query(self._survey, {"ids": ids})
        stamps: dict[str, dict[str | None, int]] = {}
        expected: dict[str, int] = {}
        crossing = degree = 0
        known_runs: set[str] = set()
        for item, run, value, known in rows:
            count = int(value or 0)
            if known:
                known_runs.add(str(run))
            if item == "degree":
                degree += count
            elif item == "crossing":
                crossing += count
            else:
                expected[item] = expected.get(item, 0) + count
                kind = "links" if item in self._link_kinds else str(item)
                key = None if run is None else str(run)
                stamps.setdefault(kind, {})[key] = stamps.get(kind, {}).get(key, 0) + count
        inside = sum(expected.get(kind, 0) for kind in self._link_kinds)
        excess = max(degree - 2 * inside - crossing, 0)
        unowned: list[tuple[str, int]] = []
        if excess:
            rows, _ = await adb.cypher_query(self._unowned_types, {"ids": ids, "allowed": list(self.allowed_types)})
            unowned = [(str(row[0]), int(row[1])) for row in rows]
            # What the foreign types do not explain came in from other documents' nodes.
            crossing += max(excess - sum(count for _, count in unowned), 0)
        return _Survey(stamps, expected, crossing, unowned, known_runs)

    async def _remove_batch(self, ids: list[str], totals: RemovalTotals) -> BatchResult:
        what = f"a batch of {len(ids)} documents" if len(ids) > 1 else f"document {ids[0]}"
        survey = await self._survey_batch(ids)
        if survey.unowned or survey.crossing:
            reasons: list[str] = []
            if survey.unowned:
                listed = ", ".join(f"{kind}: {count}" for kind, count in survey.unowned)
                reasons.append(f"relationships the toolkit does not own are attached ({listed})")
            if survey.crossing:
                reasons.append(f"{survey.crossing} structural links join it to nodes of other documents")
            raise Ownership.refuse(what, "; ".join(reasons), totals.before())
        chunk_ids: list[str] = []
        if self.knowledge is not None:
            rows, _ = await adb.cypher_query(self._chunk_ids, {"ids": ids})
            chunk_ids = [str(row[0]) for row in rows]
            survey.stamps["mentions, quotes and facts"] = merge_stamps(
                {}, await self.knowledge.run_stamps(ids, chunk_ids)
            )
        await self.ownership.require_owned(survey.stamps, what=what, before=totals.before(), known=survey.known_runs)

        facts = facts_updated = knowledge_links = 0
        if self.knowledge is not None:
            updates = await self.knowledge.count_fact_updates(ids)
            if updates > self.max_fact_updates:
                raise FactUpdatesExceeded(updates, self.max_fact_updates)
            removed = await self.knowledge.remove_for_documents(ids, chunk_ids, self.page_size)
            knowledge_links = removed.mentions + removed.quotes
            facts, facts_updated = removed.facts_deleted, removed.facts_updated
        links = await self._delete_in_rounds(self._link_kinds, survey.expected, ids)
        nodes = await self._delete_in_rounds(_NODE_KINDS, survey.expected, ids)
        return BatchResult(
            documents=nodes["documents"],
            sections=nodes["sections"],
            chunks=nodes["chunks"],
            links=knowledge_links + sum(links.values()),
            leases=nodes["leases"],
            facts=facts,
            facts_updated=facts_updated,
        )

    async def _delete_in_rounds(self, kinds: Sequence[str], expected: dict[str, int], ids: list[str]) -> dict[str, int]:
        """Delete what the survey found of ``kinds``; each round is one statement deleting at most
        ``page_size`` elements of each kind still pending, until each kind reaches its count or
        a round finds less than a page of it. Whatever is left makes the commit fail."""
        done = dict.fromkeys(kinds, 0)
        pending = [kind for kind in kinds if expected.get(kind, 0) > 0]
        while pending:
            rows, _ = await adb.cypher_query(self._round(tuple(pending)), {"ids": ids, "page": self.page_size})
            still: list[str] = []
            for kind, value in zip(pending, rows[0], strict=True):
                count = int(value or 0)
                done[kind] += count
                if done[kind] < expected[kind] and count == self.page_size:
                    still.append(kind)
            pending = still
        return done

    def _round(self, kinds: tuple[str, ...]) -> str:
        statement = self._rounds.get(kinds)
        if statement is None:
            calls = " ".join(
                f"CALL () {{ {self._parts[kind][0]} RETURN {self._parts[kind][1]} AS k{i} }}"
                for i, kind in enumerate(kinds)
            )
            statement = f"{calls} RETURN {', '.join(f'k{i}' for i in range(len(kinds)))}"
            self._rounds[kinds] = statement
        return statement

    # ------------------------------------------------------------------ leases and runs

    async def expired_lease_stamps(self) -> dict[str, dict[str | None, int]]:
        """Run stamps of every expired lease (a read)."""
        rows, _ = await adb.cypher_query(self._expired_stamps)
        return stamps_from_rows(rows)

    async def remove_expired_leases(self) -> int:
        """Delete every expired lease, ``page_size`` per transaction, each page checked before it is written.

        A lease renewed or taken over while this runs is no longer expired and is
        kept; an unexpired lease is never touched.
        """
        removed = 0
        while True:
            async with adb.transaction:
                rows, _ = await adb.cypher_query(self._expired_page, {"page": self.page_size})
                keys = [str(row[0]) for row in rows]
                stamps: dict[str | None, int] = {}
                for _, run in rows:
                    key = None if run is None else str(run)
                    stamps[key] = stamps.get(key, 0) + 1
                await self.ownership.require_owned({"leases": stamps}, what="expired leases")
                if keys:
                    counts = await self._delete_in_rounds(("leases",), {"leases": len(keys)}, keys)
                    removed += counts["leases"]
            if len(rows) < self.page_size:
                return removed

    async def finished_runs(self) -> list[str]:
        """Ids of every run that is not Running (a read)."""
        rows, _ = await adb.cypher_query(self._finished_runs, {"running": RunStatus.RUNNING.value})
        return [str(row[0]) for row in rows]

    async def remove_runs(self, run_ids: Sequence[str]) -> int:
        """Delete the ``IngestionRun`` nodes of ``run_ids`` that nothing names any more.

        Kept: a run still Running, a run that a document, section, chunk or lease
        still names (structural links are written with their nodes and carry the
        same run id), one the knowledge extension still uses, and a run node with
        relationships (the toolkit writes none). Deleting a named run would make what
        names it look foreign.
        """
        wanted = sorted(set(run_ids))
        removed = 0
        for start in range(0, len(wanted), self.page_size):
            part = wanted[start : start + self.page_size]
            async with adb.transaction:
                rows, _ = await adb.cypher_query(self._runs_in_use, {"runs": part})
                in_use = {str(row[0]) for row in rows}
                if self.knowledge is not None:
                    in_use |= set(await self.knowledge.run_ids_in_use(part))
                free = [run for run in part if run not in in_use]
                if free:
                    rows, _ = await adb.cypher_query(
                        self._delete_runs,
                        {"runs": free, "page": self.page_size, "running": RunStatus.RUNNING.value},
                    )
                    removed += int(rows[0][0]) if rows else 0
        return removed


__all__ = [
    "WRITE_ATTEMPTS",
    "BatchRemover",
    "BatchResult",
    "FactUpdatesExceeded",
    "RemovalTotals",
    "plan_batches",
    "run_batches",
]
