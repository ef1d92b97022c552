"""The knowledge writer's statements, rendered once per model and ontology.

Labels, keys and types come from the stored names and the ontology (validated as
plain identifiers); names, aliases and quotes are always parameters. Every returned
column has an alias. Statement names (what the store's hooks see) are the
``extraction.*`` constants of this module.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from graphrag_orm.ontology import Ontology
from graphrag_orm.ontology.entities import Entity
from graphrag_orm.store import StoredNames

__all__ = [
    "KnowledgeWriteStatements",
    "RetractStatements",
    "retract_statements",
]


@dataclass(frozen=True)
class RetractStatements:
    """Taking one document (``$document``) out of the knowledge graph, whatever ontology wrote it.

    The toolkit's mentions and quotes are the incoming relationships of the document's
    chunks that carry a ``key`` and a ``runId``; facts are relationships carrying
    ``documentIds``. In a tenanted layout each node matched is the tenant's.
    """

    #: ``fact``: element ids of the facts that list the document, on things it mentions.
    fact_ids: str
    #: Deletes the mentions and quotes (``$quoteTypes``): ``mentions``, ``links``.
    links: str


@functools.cache
def retract_statements(chunk_label: str, chunk_document: str, tenanted: bool = False) -> RetractStatements:
    """Rendered once per chunk label and stored document-id property.

    ``tenanted``: the chunks, the things that point at them and the other end of each fact
    must carry ``$tenant`` (docs/tenancy.md); untenanted, the text is as it always was.
    """
    owned = ", tenant: $tenant" if tenanted else ""
    chunk = f"(c:{chunk_label} {{{chunk_document}: $document{owned}}})"
    thing = " AND t.tenant = $tenant" if tenanted else ""
    other = "(t)-[f]-(o) WHERE o.tenant = $tenant AND" if tenanted else "(t)-[f]-() WHERE"
    return RetractStatements(
        fact_ids=(
            f"MATCH {chunk}<-[m]-(t) WHERE m.key IS NOT NULL AND m.runId IS NOT NULL{thing} WITH DISTINCT t "
            f"MATCH {other} f.documentIds IS NOT NULL AND $document IN f.documentIds "
            "RETURN DISTINCT elementId(f) AS fact"
        ),
        links=(
            f"MATCH {chunk}<-[r]-() WHERE r.key IS NOT NULL AND r.runId IS NOT NULL "
            "WITH r, NOT type(r) IN $quoteTypes AS isMention "
            "DELETE r RETURN sum(CASE WHEN isMention THEN 1 ELSE 0 END) AS mentions, count(r) AS links"
        ),
    )


def _stored(attribute: str) -> str:
    return str(Entity.defined_properties(aliases=False, rels=False)[attribute].get_db_property_name(attribute))


@dataclass(frozen=True)
class KnowledgeWriteStatements:
    """One ontology's writes: things by kind, facts by allowed triple, mentions and quotes."""

    #: Per kind, ``$rows`` of ``{id, props}``: upsert by id and lock; ``id``, ``aliases`` read after the lock.
    things: dict[str, str]
    #: Per kind, ``$rows`` of ``{id, aliases}``: the merged aliases.
    aliases: dict[str, str]
    #: Per (source kind, type, target kind), ``$rows`` of ``{source, target, props}`` and ``$document``.
    facts: dict[tuple[str, str, str], str]
    #: Per kind, ``$rows`` of ``{thing, chunk, props}``.
    mentions: dict[str, str]
    #: Per (quote type, speaker kind), ``$rows`` of ``{speaker, chunk, props}``.
    quotes: dict[tuple[str, str], str]

    @classmethod
    def render(cls, names: StoredNames, ontology: Ontology) -> KnowledgeWriteStatements:
        key, aliases = _stored("uid"), _stored("aliases")
        # A tenanted layout's things are merged and matched on their id and the tenant, and
        # the chunks they point at are the tenant's (names.owned; nothing untenanted).
        owned = names.owned
        chunk = f"(c:{names.chunk.label} {{{names.chunk.key}: row.chunk{owned}}})"

        def thing(kind: str, field: str, variable: str = "t") -> str:
            return f"({variable}:{ontology.label_of(kind)} {{{key}: row.{field}{owned}}})"

        # The no-op SET takes the thing's write lock, so the aliases read after it are the
        # latest committed ones.
        things = {
            kind: (
                f"UNWIND $rows AS row MERGE {thing(kind, 'id', 'e')} "
                f"ON CREATE SET e += row.props SET e:{':'.join(ontology.labels_of(kind))}, e += {{}} "
                f"RETURN e.{key} AS id, e.{aliases} AS aliases"
            )
            for kind in ontology.kinds
        }
        merged = {
            kind: f"UNWIND $rows AS row MATCH {thing(kind, 'id')} SET t.{aliases} = row.aliases"
            for kind in ontology.kinds
        }
        # ON MATCH SET takes the fact's write lock before it reads documentIds, so concurrent
        # runs adding one fact from different documents keep both ids. The first writer's
        # payload stays.
        facts = {
            (fact.source, fact.type, fact.target): (
                f"UNWIND $rows AS row MATCH {thing(fact.source, 'source', 'a')} "
                f"MATCH {thing(fact.target, 'target', 'b')} "
                f"MERGE (a)-[f:{fact.type}]->(b) ON CREATE SET f += row.props "
                "ON MATCH SET f.documentIds = CASE WHEN $document IN f.documentIds THEN f.documentIds "
                "ELSE coll.sort(f.documentIds + $document) END"
            )
            for fact in ontology.facts
        }
        mentions = {
            kind: (
                f"UNWIND $rows AS row MATCH {thing(kind, 'thing')} MATCH {chunk} "
                f"CREATE (t)-[m:{ontology.mention_type}]->(c) SET m = row.props"
            )
            for kind in ontology.kinds
        }
        quotes = {
            (quote.type, speaker): (
                f"UNWIND $rows AS row MATCH {thing(speaker, 'speaker')} MATCH {chunk} "
                f"CREATE (t)-[q:{quote.type}]->(c) SET q = row.props"
            )
            for quote in ontology.quotes
            for speaker in quote.speakers
        }
        return cls(things=things, aliases=merged, facts=facts, mentions=mentions, quotes=quotes)
