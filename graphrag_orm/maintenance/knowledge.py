"""The extension point through which removal and health reach the knowledge graph.

Extraction (things, facts, mentions and quotes) is written by another part of the
toolkit. Maintenance does not know its labels or types; it asks this protocol.

The transactional contract: every method takes, as its first parameter, the ``tx``
(a :class:`~graphrag_orm.store.Queries`) its statements must run in, and runs every
statement through ``tx.run``. Inside a batch that is the batch's write transaction,
so the extension's reads and writes commit or roll back with the batch, and a
transient error retries the whole batch, the extension's part included. An
implementation therefore never opens a transaction or a session of its own, never
keeps ``tx`` after the call returns, and never runs two statements on it at once
(no ``asyncio.gather`` over one transaction). The read-only methods may also be given
a store's reader (each statement a READ transaction of its own) when maintenance
calls them outside a batch: :meth:`KnowledgeMaintenance.orphan_run_stamps` before an
orphan clean-up, :meth:`KnowledgeMaintenance.health` from ``check()``.

What removal expects, per batch of documents (one transaction, the same ``tx``), in
this order:

1. :meth:`KnowledgeMaintenance.run_stamps` — the run id of every element the removal
   would change or delete, so the foreign-graph rule applies to knowledge as it does
   to the lexical graph. Nothing is written before every stamp is checked.
2. :meth:`KnowledgeMaintenance.count_fact_updates` — facts listing any of the
   documents; over ``max_fact_updates`` the batch is rolled back, halved and tried
   again, so only a single document listed by that many facts is refused.
3. :meth:`KnowledgeMaintenance.remove_for_documents` — before any chunk is deleted.
   It deletes mentions and quotes on those chunks, takes the documents off each
   fact's ``documentIds`` (a sorted list) with the lock-then-read pattern, and deletes
   facts left with none. Relationships of :attr:`KnowledgeMaintenance.relationship_types`
   left on a chunk or document afterwards make the batch fail at commit, whole.

Orphan clean-up calls :meth:`KnowledgeMaintenance.remove_orphan_things` with a write
transaction per page; a reset by run or of everything asks
:meth:`KnowledgeMaintenance.run_ids_in_use` inside the transaction that deletes run nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import Field

from graphrag_orm.maintenance.reports import HealthFindingItem
from graphrag_orm.store import Queries
from graphrag_orm.values import Value

__all__ = ["KnowledgeMaintenance", "KnowledgeRemoval", "ThingsRemoval"]

#: Run id (None for an element without one) to the number of elements carrying it.
RunStamps = Mapping[str | None, int]


class KnowledgeRemoval(Value):
    """What :meth:`KnowledgeMaintenance.remove_for_documents` changed in one batch."""

    mentions: int = Field(0, ge=0)
    quotes: int = Field(0, ge=0)
    facts_updated: int = Field(0, ge=0)
    facts_deleted: int = Field(0, ge=0)


class ThingsRemoval(Value):
    """What one call of :meth:`KnowledgeMaintenance.remove_orphan_things` deleted."""

    things: int = Field(0, ge=0)
    facts: int = Field(0, ge=0)


@runtime_checkable
class KnowledgeMaintenance(Protocol):
    """What removal and health need from the knowledge graph (implemented by extraction)."""

    @property
    def relationship_types(self) -> frozenset[str]:
        """Relationship types it writes on chunks or documents (mentions, quotes, facts to a document).

        Removal leaves these to :meth:`remove_for_documents`; any other relationship
        type on a node it would delete, other than the layout's structural ones, makes
        the batch refused (``GraphRefused("foreign-graph")``) instead of detached.
        """
        ...

    async def run_stamps(self, tx: Queries, document_ids: Sequence[str], chunk_ids: Sequence[str]) -> RunStamps:
        """Run ids of what :meth:`remove_for_documents` would delete or change, with counts. Reads only."""
        ...

    async def count_fact_updates(self, tx: Queries, document_ids: Sequence[str]) -> int:
        """How many facts list any of ``document_ids`` (each is updated or deleted). Reads only."""
        ...

    async def remove_for_documents(
        self, tx: Queries, document_ids: Sequence[str], chunk_ids: Sequence[str], page_size: int
    ) -> KnowledgeRemoval:
        """Delete mentions and quotes on ``chunk_ids``; take ``document_ids`` off facts; delete facts left with none.

        Runs in ``tx``, the batch's transaction, before its chunks are deleted; every
        statement touches at most ``page_size`` elements.
        """
        ...

    async def orphan_run_stamps(self, tx: Queries) -> RunStamps:
        """Run ids of the things no mention points to, and of their facts, with counts. Reads only."""
        ...

    async def remove_orphan_things(self, tx: Queries, page_size: int) -> ThingsRemoval:
        """Delete at most ``page_size`` things that no mention points to, their facts first.

        Called repeatedly, each call with a write transaction of its own (``tx``),
        until it deletes fewer than ``page_size`` things.
        """
        ...

    async def run_ids_in_use(self, tx: Queries, run_ids: Sequence[str]) -> frozenset[str]:
        """Which of ``run_ids`` a thing, fact, mention or quote still carries (those runs are kept). Reads only."""
        ...

    async def health(self, tx: Queries) -> Sequence[HealthFindingItem]:
        """Its findings: ``orphan-entities`` (things no mention points to) and ``stale-facts``
        (facts listing a document that is gone). Reads only; none when healthy."""
        ...
