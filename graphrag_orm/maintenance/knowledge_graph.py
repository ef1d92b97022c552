"""How maintenance removes and checks the knowledge graph of one ontology.

This implements :class:`~graphrag_orm.maintenance.knowledge.KnowledgeMaintenance`:
removing a batch of documents deletes their mentions and quotes (before their chunks),
takes the documents off each fact that lists them (lock, then read, then write, in
pages), and deletes facts left with none; orphan clean-up deletes things no mention or
quote points to, their facts first; health counts orphan things and facts that list a
document that is gone. Every statement runs in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from neomodel import adb

from graphrag_orm.codes import HealthFinding
from graphrag_orm.maintenance.knowledge import KnowledgeRemoval, RunStamps, ThingsRemoval
from graphrag_orm.maintenance.reports import HealthFindingItem
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.ontology.facts import take_documents_off_facts
from graphrag_orm.store.batches import NodeWrites


class KnowledgeGraphMaintenance:
    """Removal and health for the things, facts, mentions and quotes of ``ontology``."""

    def __init__(self, model: LexicalModel, ontology: Ontology) -> None:
        chunks = NodeWrites(model.chunk)
        documents = NodeWrites(model.document)
        self.chunk = f"c:{chunks.label}"
        self.chunk_key = chunks.key
        self.chunk_document = chunks.stored("document_id")
        self.document_label, self.document_key = documents.label, documents.key
        self.mention = ontology.mention_type
        self.on_chunks = "|".join((ontology.mention_type, *ontology.quote_types))
        self.fact_types = "|".join(ontology.fact_types) or "GRAPHRAG_NO_FACT_TYPE"
        self.things = "|".join(ontology.labels)
        self._types = frozenset((ontology.mention_type, *ontology.quote_types))

    @property
    def relationship_types(self) -> frozenset[str]:
        return self._types

    def _facts_of(self, documents_param: str) -> str:
        """Facts listing any of the documents.

        A kept fact has both ends mentioned in a document that states it, so its facts
        touch the things its chunks mention; a document whose chunks are already gone
        (its facts are stale) is found by a scan of the ontology's fact types instead.
        """
        return (
            f"CALL () {{ MATCH ({self.chunk}) WHERE c.{self.chunk_document} IN ${documents_param} "
            f"MATCH (c)<-[:{self.mention}]-(t) "
            f"MATCH (t)-[f:{self.fact_types}]-() WHERE any(d IN f.documentIds WHERE d IN ${documents_param}) "
            "RETURN f "
            f"UNION MATCH ()-[f:{self.fact_types}]->() "
            f"WHERE any(d IN f.documentIds WHERE d IN ${documents_param}) "
            f"AND NOT EXISTS {{ MATCH ({self.chunk}) WHERE c.{self.chunk_document} IN ${documents_param} }} "
            "RETURN f } WITH DISTINCT f "
        )

    async def run_stamps(self, document_ids: Sequence[str], chunk_ids: Sequence[str]) -> RunStamps:
        rows, _ = await adb.cypher_query(
            f"CALL () {{ MATCH ({self.chunk}) WHERE c.{self.chunk_key} IN $chunks "
            f"MATCH (c)<-[r:{self.on_chunks}]-() RETURN r.runId AS run "
            f"UNION ALL {self._facts_of('documents')} RETURN f.runId AS run }} "
            "RETURN run, count(*)",
            {"chunks": list(chunk_ids), "documents": list(document_ids)},
        )
        return {row[0]: int(row[1]) for row in rows}

    async def count_fact_updates(self, document_ids: Sequence[str]) -> int:
        rows, _ = await adb.cypher_query(
            f"{self._facts_of('documents')} RETURN count(f)", {"documents": list(document_ids)}
        )
        return int(rows[0][0]) if rows else 0

    async def remove_for_documents(
        self, document_ids: Sequence[str], chunk_ids: Sequence[str], page_size: int
    ) -> KnowledgeRemoval:
        documents = list(document_ids)
        rows, _ = await adb.cypher_query(f"{self._facts_of('documents')} RETURN elementId(f)", {"documents": documents})
        fact_ids = [row[0] for row in rows]
        updated = deleted = 0
        for start in range(0, len(fact_ids), page_size):
            page_updated, page_deleted = await take_documents_off_facts(fact_ids[start : start + page_size], documents)
            updated += page_updated
            deleted += page_deleted
        mentions = quotes = 0
        while True:
            rows, _ = await adb.cypher_query(
                f"MATCH ({self.chunk}) WHERE c.{self.chunk_key} IN $chunks MATCH (c)<-[r:{self.on_chunks}]-() "
                "WITH r LIMIT $page WITH r, type(r) = $mention AS isMention DELETE r "
                "RETURN sum(CASE WHEN isMention THEN 1 ELSE 0 END), count(*)",
                {"chunks": list(chunk_ids), "page": page_size, "mention": self.mention},
            )
            page_mentions, total = int(rows[0][0] or 0), int(rows[0][1] or 0)
            mentions += page_mentions
            quotes += total - page_mentions
            if total < page_size:
                break
        return KnowledgeRemoval(mentions=mentions, quotes=quotes, facts_updated=updated, facts_deleted=deleted)

    def _orphans(self) -> str:
        return f"MATCH (t:{self.things}) WHERE NOT EXISTS {{ (t)-[:{self.on_chunks}]->() }} "

    async def orphan_run_stamps(self) -> RunStamps:
        rows, _ = await adb.cypher_query(
            f"CALL () {{ {self._orphans()} RETURN t.runId AS run "
            f"UNION ALL {self._orphans()} MATCH (t)-[f:{self.fact_types}]-() WITH DISTINCT f RETURN f.runId AS run }} "
            "RETURN run, count(*)"
        )
        return {row[0]: int(row[1]) for row in rows}

    async def remove_orphan_things(self, page_size: int) -> ThingsRemoval:
        rows, _ = await adb.cypher_query(
            f"{self._orphans()} WITH t LIMIT $page RETURN elementId(t)", {"page": page_size}
        )
        things = [row[0] for row in rows]
        if not things:
            return ThingsRemoval()
        rows, _ = await adb.cypher_query(
            f"UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id MATCH (t)-[f:{self.fact_types}]-() "
            "WITH DISTINCT f DELETE f RETURN count(f)",
            {"ids": things},
        )
        facts = int(rows[0][0]) if rows else 0
        rows, _ = await adb.cypher_query(
            "UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id DELETE t RETURN count(t)", {"ids": things}
        )
        return ThingsRemoval(things=int(rows[0][0]) if rows else 0, facts=facts)

    async def run_ids_in_use(self, run_ids: Sequence[str]) -> frozenset[str]:
        rows, _ = await adb.cypher_query(
            f"CALL () {{ MATCH (t:{self.things}) WHERE t.runId IN $runs RETURN DISTINCT t.runId AS run "
            f"UNION MATCH ()-[r:{self.on_chunks}|{self.fact_types}]->() WHERE r.runId IN $runs "
            "RETURN DISTINCT r.runId AS run } RETURN collect(DISTINCT run)",
            {"runs": list(run_ids)},
        )
        return frozenset(rows[0][0]) if rows else frozenset()

    async def health(self) -> Sequence[HealthFindingItem]:
        rows, _ = await adb.cypher_query(f"{self._orphans()} RETURN count(t)")
        findings: list[HealthFindingItem] = []
        orphans = int(rows[0][0]) if rows else 0
        if orphans:
            findings.append(HealthFindingItem(code=HealthFinding.ORPHAN_ENTITIES, count=orphans))
        rows, _ = await adb.cypher_query(
            f"MATCH ()-[f:{self.fact_types}]->() UNWIND f.documentIds AS d WITH f, d "
            f"WHERE NOT EXISTS {{ MATCH (:{self.document_label} {{{self.document_key}: d}}) }} "
            "RETURN count(DISTINCT f)"
        )
        stale = int(rows[0][0]) if rows else 0
        if stale:
            findings.append(HealthFindingItem(code=HealthFinding.STALE_FACTS, count=stale))
        return findings
