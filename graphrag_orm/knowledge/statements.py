"""The knowledge reads' statements (things by name, a thing's facts), rendered once per layout and ontology.

Labels, relationship types and the index name come from the ontology and the layout
(validated identifiers); every value, the name searched and the thing id included, is a
parameter. Things are read by their stored ``id``; facts by their ontology types,
either direction.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.statements import in_scope
from graphrag_orm.store.names import StoredNames

__all__ = ["KnowledgeReadStatements"]


@dataclass(frozen=True)
class KnowledgeReadStatements:
    """``knowledge.things`` and ``knowledge.facts`` (and their scoped forms) for one model and ontology."""

    names: StoredNames
    names_index: str
    labels: tuple[str, ...]
    fact_types: tuple[str, ...]
    mention: str

    @classmethod
    def of(cls, model: LexicalModel, ontology: Ontology) -> KnowledgeReadStatements:
        return cls(
            model.names,
            ontology.names_index_name(model.layout),
            ontology.labels,
            ontology.fact_types,
            ontology.mention_type,
        )

    def things(self, *, scoped: bool) -> str:
        """``knowledge.things``: up to ``$candidates`` things matching ``$query``, best first, with ``inScope``."""
        return self._things_scoped if scoped else self._things

    @functools.cached_property
    def _things(self) -> str:
        return self._render_things("true")

    @functools.cached_property
    def _things_scoped(self) -> str:
        chunk = self.names.chunk.label
        condition = (
            f"EXISTS {{ MATCH (node)-[:{self.mention}]->(c:{chunk}) "
            f"WHERE {in_scope(self.names, 'c')}{self.names.tenant_and('c')} }}"
        )
        return self._render_things(condition)

    def _render_things(self, in_scope_condition: str) -> str:
        # A tenanted layout's names index covers the tenant: the names are asked AND the
        # tenant's phrase (boosted 0), then each hit's tenant is checked exactly (docs/tenancy.md).
        query, theirs = "$query", ""
        if self.names.tenanted:
            query = "'(name:(' + $query + ') OR aliases:(' + $query + ')) AND tenant:\"' + $tenant + '\"^0'"
            theirs = "WHERE node.tenant = $tenant "
        return (
            f"CALL db.index.fulltext.queryNodes($index, {query}, {{limit: $candidates}}) YIELD node, score {theirs}"
            "RETURN node.id AS id, labels(node) AS labels, node.name AS name, node.aliases AS aliases, "
            f"node.description AS description, score, {in_scope_condition} AS inScope "
            "ORDER BY score DESC, id"
        )

    def facts(self, *, scoped: bool) -> str:
        """``knowledge.facts``: the thing ``$id`` (no row when there is none) and up to ``$limit`` of its facts."""
        return self._facts_scoped if scoped else self._facts

    @functools.cached_property
    def _facts(self) -> str:
        return self._render_facts("")

    @functools.cached_property
    def _facts_scoped(self) -> str:
        chunk, document = self.names.chunk.label, self.names.chunk.stored("document_id")
        # A fact is inside the scope when a whole document of the scope states it, or a
        # chunk inside the scope (of a document that states it) mentions both its ends.
        return self._render_facts(
            "WHERE any(d IN f.documentIds WHERE d IN $whole) "
            f"OR EXISTS {{ MATCH (a)-[:{self.mention}]->(c:{chunk})<-[:{self.mention}]-(b) "
            f"WHERE c.{document} IN f.documentIds AND {in_scope(self.names, 'c')}{self.names.tenant_and('c')} }} "
        )

    def _render_facts(self, condition: str) -> str:
        # A tenanted layout's thing is the tenant's, and so is each fact's other end.
        owned, other = self.names.owned, "(o) WHERE o.tenant = $tenant " if self.names.tenanted else "() "
        finds = " UNION ".join(f"MATCH (t:{label} {{id: $id{owned}}}) RETURN t" for label in self.labels)
        if not self.fact_types:  # an ontology of kinds without facts
            return f"CALL () {{ {finds} }} WITH t LIMIT 1 RETURN t.id AS id, [] AS facts"
        return (
            f"CALL () {{ {finds} }} WITH t LIMIT 1 "
            "CALL (t) { "
            f"MATCH (t)-[f:{'|'.join(self.fact_types)}]-{other}"
            "WITH DISTINCT f WITH f, startNode(f) AS a, endNode(f) AS b "
            f"{condition}"
            "WITH f, a, b ORDER BY type(f), a.name, b.name, elementId(f) LIMIT $limit "
            "RETURN collect({type: type(f), source: a.id, sourceName: a.name, target: b.id, targetName: b.name, "
            "documentIds: f.documentIds}) AS facts } "
            "RETURN t.id AS id, facts"
        )
