"""The batched remover: documents whole, in bounded batches, one transaction each.

A batch holds at most ``batch_documents`` documents and ``batch_bytes`` of their
source text (a larger document goes alone). Each batch runs in one write
transaction, in this order:

1. **Survey** (one read): the run stamps of every document, section, chunk,
   expired lease and structural link it would delete, and the degree of each of
   those nodes. A missing or unknown run id, a structural link that joins a
   document to another one, or a relationship of a type neither the layout nor the
   knowledge extension owns raises ``GraphRefused("foreign-graph")`` before any
   write: nothing is ever detached silently. The survey reads committed data as it
   goes (an ingest committing mid-survey can show links that seem to come from
   elsewhere), so a refusal for links it cannot place is surveyed again in a new
   transaction and raised only when the second survey finds them too.
2. **Knowledge** (with an extension): its run stamps join the check; then
   ``count_fact_updates`` — over ``max_fact_updates`` the batch is rolled back,
   halved and tried again, so only a single document listed by that many facts is
   refused (reported, never half-removed); then ``remove_for_documents``, before
   any chunk is deleted.
3. **Findings retracted** (graphrag_orm.communities): every community report
   finding whose every citation is of the batch's documents is deleted; one that
   also cites other documents loses only those citations; a report left with no
   finding is deleted. So no stored finding ever cites a chunk that is gone.
4. **Deletes by key**, never ``DETACH DELETE``: structural links first, then chunks,
   sections, documents and the documents' expired leases. Each statement deletes at
   most ``page_size`` elements of each kind, and rounds repeat until every kind
   reaches the count the survey found; anything left (written meanwhile) makes the
   commit fail, so the batch rolls back whole.

A failure rolls back its own batch only: earlier batches stay removed, each whole.
A transient error (a deadlock with a concurrent writer) retries the batch, at most
:data:`WRITE_ATTEMPTS` times in all (:meth:`Store.write` does it). A concurrent
ingest that links a new chunk or section to a document after the survey read it
makes the commit fail with a ``ConstraintError`` ("still has relationships"; measured:
2 of 90 removals racing re-ingests): the batch is surveyed and run again, at most
:data:`CONFLICT_ATTEMPTS` times in all, then refused with
``RemovalConflict("concurrent-write")``, nothing of it removed. Every read of a
batch runs in the batch's transaction. The statements are in
:mod:`graphrag_orm.maintenance.removal_statements`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from neo4j.exceptions import ClientError, ConstraintError

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import FactUpdatesExceeded, GraphRefused, RemovalConflict
from graphrag_orm.layout import validate_identifier
from graphrag_orm.maintenance.knowledge import KnowledgeMaintenance
from graphrag_orm.maintenance.ownership import Ownership, merge_stamps
from graphrag_orm.maintenance.removal_statements import (
    NODE_KINDS,
    RemovalStatements,
    RetractionStatements,
)
from graphrag_orm.maintenance.retraction import retract_findings
from graphrag_orm.maintenance.scope import DocumentSize
from graphrag_orm.store import Queries, Store, StoredNames, StoreTransaction

__all__ = [
    "CONFLICT_ATTEMPTS",
    "WRITE_ATTEMPTS",
    "BatchRemover",
    "BatchResult",
    "FactUpdatesExceeded",
    "RemovalTotals",
    "plan_batches",
    "run_batches",
]

#: Attempts of one batch when the server reports a transient error (a deadlock).
WRITE_ATTEMPTS = 3
#: Attempts of one batch when a concurrent writer links new nodes to its documents.
CONFLICT_ATTEMPTS = 5
_ENTITY_NOT_FOUND = "Neo.ClientError.Statement.EntityNotFound"


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
    communities: int = 0
    reports: int = 0
    findings_retracted: int = 0
    findings_trimmed: int = 0
    batches: int = 0
    refused: list[str] = field(default_factory=list)
    #: Called with these totals after each committed batch (a caller's progress).
    listener: Callable[[RemovalTotals], None] | None = field(default=None, compare=False, repr=False)

    def add(self, result: BatchResult) -> None:
        self.documents += result.documents
        self.sections += result.sections
        self.chunks += result.chunks
        self.links += result.links
        self.leases += result.leases
        self.facts += result.facts
        self.facts_updated += result.facts_updated
        self.findings_retracted += result.findings_retracted
        self.findings_trimmed += result.findings_trimmed
        self.reports += result.reports
        self.batches += 1
        if self.listener is not None:
            self.listener(self)

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
    #: Community report findings deleted (every citation was of the batch) and trimmed (some were).
    findings_retracted: int = 0
    findings_trimmed: int = 0
    #: Community reports deleted, left with no finding.
    reports: int = 0


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


class _LinksFromElsewhere(Exception):
    """The survey found links it cannot place (``refusal`` says which); :meth:`BatchRemover.remove`
    surveys once more before raising ``refusal``."""

    def __init__(self, refusal: GraphRefused) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@dataclass(frozen=True)
class _Survey:
    stamps: dict[str, dict[str | None, int]]
    expected: dict[str, int]
    crossing: int
    unowned: list[tuple[str, int]]
    known_runs: set[str]


class BatchRemover:
    """Removes documents of one layout in batches (see the module's docstring for the order)."""

    def __init__(
        self,
        store: Store,
        names: StoredNames,
        *,
        knowledge: KnowledgeMaintenance | None,
        page_size: int,
        max_fact_updates: int,
        ownership: Ownership | None = None,
    ) -> None:
        self.store = store
        self.knowledge = knowledge
        self.page_size = page_size
        self.max_fact_updates = max_fact_updates
        self.ownership = ownership or Ownership(names)
        owned = sorted(knowledge.relationship_types) if knowledge is not None else []
        knowledge_types = tuple(validate_identifier(t, "relationship type") for t in owned)
        #: Relationship types a removal may find on lexical nodes: the layout's, then the extension's.
        self.allowed_types = (*names.structural_types, *knowledge_types)
        self.statements = RemovalStatements.render(names, knowledge_types)
        self.retraction = RetractionStatements.render(names)
        self.community_label = names.community.label
        self.report_labels = (names.finding.label, names.report.label)
        #: A tenanted layout's: its batches retract the tenant's community findings only, and
        #: housekeeping removes the tenant's communities only (docs/tenancy.md).
        self.tenanted = names.tenanted

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
            ids = [document.document_id for document in batch]

            async def work(tx: StoreTransaction) -> BatchResult:
                return await self._remove_batch(tx, ids, totals)

            refused: GraphRefused | None = None
            for attempt in range(CONFLICT_ATTEMPTS):
                try:
                    return await self.store.write(work, attempts=WRITE_ATTEMPTS)
                except _LinksFromElsewhere as found:
                    # Seen once, the excess may be a commit landing mid-survey; seen twice in
                    # a row it is in the stored graph, and the batch is refused.
                    if refused is not None or attempt + 1 == CONFLICT_ATTEMPTS:
                        raise found.refusal from None
                    refused = found.refusal
                    await asyncio.sleep(0.05 * 2**attempt)
                    continue
                except (ConstraintError, ClientError) as error:
                    # Removal creates nothing: a constraint can only fail on a node a
                    # concurrent writer linked after the survey (or a node it deleted
                    # under a statement: EntityNotFound). Survey it all again.
                    if not isinstance(error, ConstraintError) and error.code != _ENTITY_NOT_FOUND:
                        raise
                    refused = None
                    if attempt + 1 < CONFLICT_ATTEMPTS:
                        await asyncio.sleep(0.05 * 2**attempt)
            what = f"a batch of {len(ids)} documents" if len(ids) > 1 else f"document {ids[0]}"
            before = totals.before()
            raise RemovalConflict(
                ErrorCode.CONCURRENT_WRITE,
                f"{what} kept changing under a concurrent writer ({CONFLICT_ATTEMPTS} attempts); "
                "nothing of it was removed" + (f" ({before})" if before else "") + "; try again",
            )

        await run_batches(
            plan_batches(documents, max_documents=batch_documents, max_bytes=batch_bytes), attempt, totals
        )

    async def _survey_batch(self, tx: Queries, ids: list[str]) -> _Survey:
        rows = await tx.run(self.statements.survey, {"ids": ids}, name="maintenance.remove.survey")
        link_kinds = self.statements.link_kinds
        stamps: dict[str, dict[str | None, int]] = {}
        expected: dict[str, int] = {}
        crossing = degree = 0
        known_runs: set[str] = set()
        for row in rows:
            item, run, count = row["item"], row["run"], int(row["elements"] or 0)
            if row["known"]:
                known_runs.add(str(run))
            if item == "degree":
                degree += count
            elif item == "crossing":
                crossing += count
            else:
                expected[item] = expected.get(item, 0) + count
                kind = "links" if item in link_kinds else str(item)
                key = None if run is None else str(run)
                stamps.setdefault(kind, {})[key] = stamps.get(kind, {}).get(key, 0) + count
        inside = sum(expected.get(kind, 0) for kind in link_kinds)
        excess = max(degree - 2 * inside - crossing, 0)
        unowned: list[tuple[str, int]] = []
        if excess:
            found = await tx.run(
                self.statements.unowned_types,
                {"ids": ids, "allowed": list(self.allowed_types)},
                name="maintenance.remove.unowned_types",
            )
            unowned = [(str(row["type"]), int(row["links"])) for row in found]
            # What the foreign types do not explain came in from other documents' nodes.
            crossing += max(excess - sum(count for _, count in unowned), 0)
        return _Survey(stamps, expected, crossing, unowned, known_runs)

    async def _remove_batch(self, tx: Queries, ids: list[str], totals: RemovalTotals) -> BatchResult:
        what = f"a batch of {len(ids)} documents" if len(ids) > 1 else f"document {ids[0]}"
        survey = await self._survey_batch(tx, ids)
        if survey.unowned or survey.crossing:
            reasons: list[str] = []
            if survey.unowned:
                listed = ", ".join(f"{kind}: {count}" for kind, count in survey.unowned)
                reasons.append(f"relationships the toolkit does not own are attached ({listed})")
            if survey.crossing:
                reasons.append(f"{survey.crossing} structural links join it to nodes of other documents")
            raise _LinksFromElsewhere(Ownership.refuse(what, "; ".join(reasons), totals.before()))
        chunk_ids: list[str] = []
        if self.knowledge is not None:
            found = await tx.run(self.statements.chunk_ids, {"ids": ids}, name="maintenance.remove.chunk_ids")
            chunk_ids = [str(chunk) for chunk in found.column("id")]
            survey.stamps["mentions, quotes and facts"] = merge_stamps(
                {}, await self.knowledge.run_stamps(tx, ids, chunk_ids)
            )
        await self.ownership.require_owned(
            tx, survey.stamps, what=what, before=totals.before(), known=survey.known_runs
        )

        facts = facts_updated = knowledge_links = 0
        if self.knowledge is not None:
            updates = await self.knowledge.count_fact_updates(tx, ids)
            if updates > self.max_fact_updates:
                raise FactUpdatesExceeded(updates, self.max_fact_updates)
            removed = await self.knowledge.remove_for_documents(tx, ids, chunk_ids, self.page_size)
            knowledge_links = removed.mentions + removed.quotes
            facts, facts_updated = removed.facts_deleted, removed.facts_updated
        retracted, trimmed, reports = await retract_findings(tx, self.retraction, ids)
        links = await self.delete_in_rounds(tx, self.statements.link_kinds, survey.expected, ids)
        nodes = await self.delete_in_rounds(tx, NODE_KINDS, survey.expected, ids)
        return BatchResult(
            documents=nodes["documents"],
            sections=nodes["sections"],
            chunks=nodes["chunks"],
            links=knowledge_links + sum(links.values()),
            leases=nodes["leases"],
            facts=facts,
            facts_updated=facts_updated,
            findings_retracted=retracted,
            findings_trimmed=trimmed,
            reports=reports,
        )

    async def delete_in_rounds(
        self, tx: Queries, kinds: Sequence[str], expected: Mapping[str, int], ids: list[str]
    ) -> dict[str, int]:
        """Delete what the survey found of ``kinds``; each round is one statement deleting at most
        ``page_size`` elements of each kind still pending, until each kind reaches its count or
        a round finds less than a page of it. Whatever is left makes the commit fail."""
        done = dict.fromkeys(kinds, 0)
        pending = [kind for kind in kinds if expected.get(kind, 0) > 0]
        while pending:
            result = await tx.run(
                self.statements.round(pending), {"ids": ids, "page": self.page_size}, name="maintenance.remove.round"
            )
            row = result.records[0]
            still: list[str] = []
            for i, kind in enumerate(pending):
                count = int(row[f"k{i}"] or 0)
                done[kind] += count
                if done[kind] < expected[kind] and count == self.page_size:
                    still.append(kind)
            pending = still
        return done
