"""The statements of :class:`~graphrag_orm.maintenance.knowledge_graph.KnowledgeGraphMaintenance`.

Rendered once from the lexical model's stored names and one ontology's labels and
types; every statement returns named columns. Things are the ontology's labels; what
points from a thing to a chunk is a mention or a quote; facts are the ontology's fact
types, each listing the documents that state it in ``documentIds``.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.models import IN_COMMUNITY
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import StoredNames
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY

__all__ = ["KnowledgeMaintenanceStatements"]

#: A relationship type no ontology declares: an ontology without facts matches none.
NO_FACT_TYPE = "GRAPHRAG_NO_FACT_TYPE"


@dataclass(frozen=True)
class KnowledgeMaintenanceStatements:
    """Parameters are named beside each statement; :meth:`render` builds them."""

    #: ``$chunks``, ``$documents``: ``run``, ``elements`` for mentions, quotes and facts a removal touches.
    run_stamps: str
    #: ``$documents``: ``facts``, how many facts list any of them.
    count_facts: str
    #: ``$documents``: ``fact``, the element id of each fact listing any of them.
    fact_ids: str
    #: ``$chunks``, ``$page``, ``$mention``: delete a page of mentions and quotes; ``mentions``, ``links``.
    delete_on_chunks: str
    #: ``run``, ``elements`` of orphan things and their facts.
    orphan_stamps: str
    #: ``$page``: ``thing``, element ids of a page of orphan things.
    orphan_things: str
    #: ``$ids`` (things): delete their facts; ``facts``.
    delete_facts_of_things: str
    #: ``$ids`` (things): delete them; ``things``.
    delete_things: str
    #: ``$runs``: ``runs``, those still carried by a thing, mention, quote or fact.
    runs_in_use: str
    #: ``things`` no mention points to.
    count_orphans: str
    #: ``facts`` listing a document that is not stored.
    count_stale_facts: str

    @classmethod
    def render(cls, names: StoredNames, ontology: Ontology) -> KnowledgeMaintenanceStatements:
        """In a tenanted layout every chunk, thing and fact end matched must carry ``$tenant``
        (docs/tenancy.md); untenanted, each statement is as it always was."""
        chunk, chunk_key = f"c:{names.chunk.label}", names.chunk.key
        chunk_document = names.chunk.stored("document_id")
        mention = ontology.mention_type
        on_chunks = "|".join((ontology.mention_type, *ontology.quote_types))
        facts = "|".join(ontology.fact_types) or NO_FACT_TYPE
        things = "|".join(ontology.labels)
        c_, t_, a_, b_ = (names.tenant_and(v) for v in ("c", "t", "a", "b"))
        # A tenanted graph's fact has both ends the tenant's; its other end is checked too.
        other = f"(o) WHERE o.{TENANT_PROPERTY} = ${TENANT_PARAMETER} AND" if names.tenanted else "() WHERE"
        ends = ("(a)", "(b)") if names.tenanted else ("()", "()")
        # A kept fact has both ends mentioned in a document that states it, so its facts
        # touch the things its chunks mention; a document whose chunks are already gone
        # (its facts are stale) is found by a scan of the ontology's fact types instead.
        facts_of = (
            f"CALL () {{ MATCH ({chunk}) WHERE c.{chunk_document} IN $documents{c_} "
            f"MATCH (c)<-[:{mention}]-(t){' WHERE ' + t_[5:] if t_ else ''} "
            f"MATCH (t)-[f:{facts}]-{other} any(d IN f.documentIds WHERE d IN $documents) "
            "RETURN f "
            f"UNION MATCH {ends[0]}-[f:{facts}]->{ends[1]} "
            f"WHERE {a_[5:] + b_ + ' AND ' if a_ else ''}any(d IN f.documentIds WHERE d IN $documents) "
            f"AND NOT EXISTS {{ MATCH ({chunk}) WHERE c.{chunk_document} IN $documents{c_} }} "
            "RETURN f } WITH DISTINCT f "
        )
        orphans = f"MATCH (t:{things}) WHERE {t_[5:] + ' AND ' if t_ else ''}NOT EXISTS {{ (t)-[:{on_chunks}]->() }} "
        of_things = f"MATCH (t)-[f:{facts}]-{other.removesuffix(' AND').removesuffix(' WHERE')} "
        document = f"(:{names.document.label} {{{names.document.key}: d{names.owned}}})"
        return cls(
            run_stamps=(
                f"CALL () {{ MATCH ({chunk}) WHERE c.{chunk_key} IN $chunks{c_} "
                f"MATCH (c)<-[r:{on_chunks}]-() RETURN r.runId AS run "
                f"UNION ALL {facts_of} RETURN f.runId AS run }} "
                "RETURN run, count(*) AS elements"
            ),
            count_facts=f"{facts_of} RETURN count(f) AS facts",
            fact_ids=f"{facts_of} RETURN elementId(f) AS fact",
            delete_on_chunks=(
                f"MATCH ({chunk}) WHERE c.{chunk_key} IN $chunks{c_} MATCH (c)<-[r:{on_chunks}]-() "
                "WITH r LIMIT $page WITH r, type(r) = $mention AS isMention DELETE r "
                "RETURN sum(CASE WHEN isMention THEN 1 ELSE 0 END) AS mentions, count(*) AS links"
            ),
            orphan_stamps=(
                f"CALL () {{ {orphans} RETURN t.runId AS run "
                f"UNION ALL {orphans} {of_things}WITH DISTINCT f RETURN f.runId AS run }} "
                "RETURN run, count(*) AS elements"
            ),
            orphan_things=f"{orphans} WITH t LIMIT $page RETURN elementId(t) AS thing",
            delete_facts_of_things=(
                f"UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id{t_} {of_things}"
                "WITH DISTINCT f DELETE f RETURN count(f) AS facts"
            ),
            # A thing's places in communities (graphrag_orm.communities) go with it.
            delete_things=(
                f"UNWIND $ids AS id MATCH (t) WHERE elementId(t) = id{t_} "
                f"CALL (t) {{ MATCH (t)-[p:{IN_COMMUNITY}]->() DELETE p }} DELETE t RETURN count(t) AS things"
            ),
            runs_in_use=(
                f"CALL () {{ MATCH (t:{things}) WHERE t.runId IN $runs{t_} RETURN DISTINCT t.runId AS run "
                f"UNION MATCH {ends[0]}-[r:{on_chunks}|{facts}]->() WHERE {a_[5:] + ' AND ' if a_ else ''}"
                "r.runId IN $runs RETURN DISTINCT r.runId AS run } RETURN collect(DISTINCT run) AS runs"
            ),
            count_orphans=f"{orphans} RETURN count(t) AS things",
            count_stale_facts=(
                f"MATCH {ends[0]}-[f:{facts}]->{ends[1]} {'WHERE ' + a_[5:] + b_ + ' ' if a_ else ''}"
                "UNWIND f.documentIds AS d WITH f, d "
                f"WHERE NOT EXISTS {{ MATCH {document} }} "
                "RETURN count(DISTINCT f) AS facts"
            ),
        )
