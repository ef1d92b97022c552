"""How maintenance removes and checks the knowledge graph of one ontology.

This implements :class:`~graphrag_orm.maintenance.knowledge.KnowledgeMaintenance`:
removing a batch of documents deletes their mentions and quotes (before their chunks),
takes the documents off each fact that lists them (lock, then read, then write, in
pages), and deletes facts left with none; orphan clean-up deletes things no mention or
quote points to, their facts first; health counts orphan things and facts that list a
document that is gone, the communities the graph changed under since their build
(:mod:`graphrag_orm.communities`), and the staged or retired nodes of a build that is running
or did not finish. Every statement runs in the ``tx`` the caller passes; none
opens a transaction of its own. The statements are in
:mod:`graphrag_orm.maintenance.knowledge_statements`. In a tenanted layout each is the
tenant's (``$tenant``), the communities and build leftovers health reads too.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphrag_orm.codes import HealthFinding
from graphrag_orm.maintenance.knowledge import KnowledgeRemoval, RunStamps, ThingsRemoval
from graphrag_orm.maintenance.knowledge_statements import KnowledgeMaintenanceStatements
from graphrag_orm.maintenance.reports import HealthFindingItem
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.ontology.facts import take_documents_off_facts
from graphrag_orm.store import Queries

__all__ = ["KnowledgeGraphMaintenance"]


class KnowledgeGraphMaintenance:
    """Removal and health for the things, facts, mentions and quotes of ``ontology``."""

    def __init__(self, model: LexicalModel, ontology: Ontology) -> None:
        self.mention = ontology.mention_type
        #: A tenanted layout's statements: every one finds, counts and deletes the tenant's
        #: things, facts, mentions and quotes only (``$tenant``, docs/tenancy.md).
        self.tenanted = model.layout.tenanted
        self.statements = KnowledgeMaintenanceStatements.render(model.names, ontology)
        names = model.names
        # Imported here: the communities package loads only for a graph with an ontology.
        from graphrag_orm.communities.staging import StagingStatements
        from graphrag_orm.communities.statements import CommunityStatements

        self.communities = CommunityStatements.of(
            ontology,
            names.community.label,
            (names.finding.label, names.report.label),
            (names.chunk.label, names.chunk.key),
            tenanted=names.tenanted,
        )
        self.staging = StagingStatements.of(self.communities)
        self._types = frozenset((ontology.mention_type, *ontology.quote_types))

    @property
    def relationship_types(self) -> frozenset[str]:
        return self._types

    async def run_stamps(self, tx: Queries, document_ids: Sequence[str], chunk_ids: Sequence[str]) -> RunStamps:
        result = await tx.run(
            self.statements.run_stamps,
            {"chunks": list(chunk_ids), "documents": list(document_ids)},
            name="knowledge.maintenance.run_stamps",
        )
        return {row["run"]: int(row["elements"]) for row in result}

    async def count_fact_updates(self, tx: Queries, document_ids: Sequence[str]) -> int:
        result = await tx.run(
            self.statements.count_facts, {"documents": list(document_ids)}, name="knowledge.maintenance.count_facts"
        )
        return int(result.value("facts", 0))

    async def remove_for_documents(
        self, tx: Queries, document_ids: Sequence[str], chunk_ids: Sequence[str], page_size: int
    ) -> KnowledgeRemoval:
        documents = list(document_ids)
        found = await tx.run(self.statements.fact_ids, {"documents": documents}, name="knowledge.maintenance.fact_ids")
        fact_ids = [str(fact) for fact in found.column("fact")]
        updated = deleted = 0
        for start in range(0, len(fact_ids), page_size):
            page_updated, page_deleted = await take_documents_off_facts(
                tx, fact_ids[start : start + page_size], documents, tenanted=self.tenanted
            )
            updated += page_updated
            deleted += page_deleted
        mentions = quotes = 0
        while True:
            row = (
                await tx.run(
                    self.statements.delete_on_chunks,
                    {"chunks": list(chunk_ids), "page": page_size, "mention": self.mention},
                    name="knowledge.maintenance.delete_on_chunks",
                )
            ).single() or {}
            page_mentions, total = int(row.get("mentions") or 0), int(row.get("links") or 0)
            mentions += page_mentions
            quotes += total - page_mentions
            if total < page_size:
                break
        return KnowledgeRemoval(mentions=mentions, quotes=quotes, facts_updated=updated, facts_deleted=deleted)

    async def orphan_run_stamps(self, tx: Queries) -> RunStamps:
        result = await tx.run(self.statements.orphan_stamps, name="knowledge.maintenance.orphan_stamps")
        return {row["run"]: int(row["elements"]) for row in result}

    async def remove_orphan_things(self, tx: Queries, page_size: int) -> ThingsRemoval:
        found = await tx.run(
            self.statements.orphan_things, {"page": page_size}, name="knowledge.maintenance.orphan_things"
        )
        things = found.column("thing")
        if not things:
            return ThingsRemoval()
        facts = await tx.run(
            self.statements.delete_facts_of_things, {"ids": things}, name="knowledge.maintenance.delete_orphan_facts"
        )
        removed = await tx.run(
            self.statements.delete_things, {"ids": things}, name="knowledge.maintenance.delete_orphan_things"
        )
        return ThingsRemoval(things=int(removed.value("things", 0)), facts=int(facts.value("facts", 0)))

    async def run_ids_in_use(self, tx: Queries, run_ids: Sequence[str]) -> frozenset[str]:
        result = await tx.run(
            self.statements.runs_in_use, {"runs": list(run_ids)}, name="knowledge.maintenance.runs_in_use"
        )
        return frozenset(result.value("runs", []))

    async def health(self, tx: Queries) -> Sequence[HealthFindingItem]:
        findings: list[HealthFindingItem] = []
        orphans = int((await tx.run(self.statements.count_orphans, name="knowledge.health.orphans")).value("things", 0))
        if orphans:
            findings.append(HealthFindingItem(code=HealthFinding.ORPHAN_ENTITIES, count=orphans))
        stale = int(
            (await tx.run(self.statements.count_stale_facts, name="knowledge.health.stale_facts")).value("facts", 0)
        )
        if stale:
            findings.append(HealthFindingItem(code=HealthFinding.STALE_FACTS, count=stale))
        from graphrag_orm.communities.service import MAX_STALE_SAMPLE, stale_communities

        communities = await stale_communities(tx, self.communities, limit=MAX_STALE_SAMPLE)
        if communities.stale:
            shown = ", ".join(c.id for c in communities.communities)
            more = communities.stale - len(communities.communities)
            findings.append(
                HealthFindingItem(
                    code=HealthFinding.STALE_COMMUNITIES,
                    count=communities.stale,
                    detail=f"of {communities.checked}: {shown}" + (f" (and {more} more)" if more else ""),
                )
            )
        left = await tx.run(
            self.staging.count_leftovers, self.staging.leftover_parameters, name="knowledge.health.build_leftovers"
        )
        staged, retired = int(left.value("staged", 0)), int(left.value("retired", 0))
        if staged or retired:
            findings.append(
                HealthFindingItem(
                    code=HealthFinding.COMMUNITY_BUILD_LEFTOVERS,
                    count=staged + retired,
                    detail=f"{staged} staged, {retired} retired: a build running now, or one that did not finish",
                )
            )
        return findings
