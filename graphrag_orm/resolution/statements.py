"""The statements of entity resolution, rendered once per lexical model and ontology.

Labels come from the ontology and the model (validated identifiers); relationship types
are the ontology's mention, quote and fact types, passed as parameters to ``type(r) IN``
filters, or placed in query text only when they are the ontology's own (a ``CREATE`` needs
one). Names, aliases, ids and recorded properties are always parameters. Within a merge
or an undo, nodes and relationships already locked are addressed by ``elementId``.

Every statement that reads something it will change first writes a no-op (``SET x += {}``)
on it, which takes its write lock, and reads it after: the house's lock-then-read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from graphrag_orm.models import IN_COMMUNITY
from graphrag_orm.ontology import Entity, Ontology
from graphrag_orm.store import StoredNames

__all__ = ["ResolutionStatements", "entity_stored"]


def entity_stored(attribute: str) -> str:
    """The stored name of an :class:`Entity` attribute (``uid`` -> ``id``)."""
    return str(Entity.defined_properties(aliases=False, rels=False)[attribute].get_db_property_name(attribute))


_FACT_ROWS = (
    "RETURN elementId(f) AS element, type(f) AS type, outgoing, properties(f) AS props, "
    "elementId(x) AS other, x.{key} AS otherId, labels(x) AS otherLabels"
)


@dataclass(frozen=True)
class ResolutionStatements:
    """Each statement is a named property, rendered on first use; parameters are named beside each.

    Per-kind statements are dicts keyed by the ontology's kinds; per-type ones by the
    relationship type.
    """

    names: StoredNames
    ontology: Ontology

    @classmethod
    def render(cls, names: StoredNames, ontology: Ontology) -> ResolutionStatements:
        return cls(names, ontology)

    @functools.cached_property
    def _key(self) -> str:
        return entity_stored("uid")

    def _label(self, kind: str) -> str:
        return self.ontology.label_of(kind)

    @functools.cached_property
    def candidates(self) -> dict[str, str]:
        """Per kind, ``$limit``: ``id``, ``name``, ``aliases``, ``placeholder``, ``mentions`` in id order."""
        key, name, aliases = self._key, entity_stored("name"), entity_stored("aliases")
        placeholder, mention = entity_stored("is_placeholder"), self.ontology.mention_type
        return {
            kind: (
                f"MATCH (t:{self._label(kind)}) WITH t ORDER BY t.{key} LIMIT $limit "
                f"RETURN t.{key} AS id, t.{name} AS name, t.{aliases} AS aliases, "
                f"coalesce(t.{placeholder}, false) AS placeholder, COUNT {{ (t)-[:{mention}]->() }} AS mentions"
            )
            for kind in self.ontology.kinds
        }

    @functools.cached_property
    def preview(self) -> dict[str, str]:
        """Per kind, ``$rows`` of ``{i, kept, merged}``: what a preview needs of each pair (ids, no locks)."""
        key, name, aliases = self._key, entity_stored("name"), entity_stored("aliases")
        placeholder, mention = entity_stored("is_placeholder"), self.ontology.mention_type
        facts_of_m = (
            "COLLECT { MATCH (m)-[f]->(x) WHERE type(f) IN $facts "
            f"RETURN {{type: type(f), outgoing: true, other: x.{key}}} }} + "
            "COLLECT { MATCH (x)-[f]->(m) WHERE type(f) IN $facts AND x <> m "
            f"RETURN {{type: type(f), outgoing: false, other: x.{key}}} }}"
        )
        facts_of_k = (
            f"COLLECT {{ MATCH (k)-[f]->(x) WHERE type(f) IN $facts AND x.{key} IN others "
            f"RETURN {{type: type(f), outgoing: true, other: x.{key}}} }} + "
            f"COLLECT {{ MATCH (x)-[f]->(k) WHERE type(f) IN $facts AND x.{key} IN others AND x <> k "
            f"RETURN {{type: type(f), outgoing: false, other: x.{key}}} }}"
        )
        return {
            kind: (
                f"UNWIND $rows AS row OPTIONAL MATCH (m:{self._label(kind)} {{{key}: row.merged}}) "
                f"OPTIONAL MATCH (k:{self._label(kind)} {{{key}: row.kept}}) "
                "WITH row, m, k, CASE WHEN m IS NULL THEN [] ELSE "
                f"{facts_of_m} END AS mergedFacts "
                "WITH row, m, k, mergedFacts, [g IN mergedFacts | g.other] AS others "
                "RETURN row.i AS i, row.merged AS merged, row.kept AS kept, "
                f"m IS NOT NULL AS mergedFound, m.{name} AS mergedName, m.{aliases} AS mergedAliases, "
                f"coalesce(m.{placeholder}, false) AS mergedPlaceholder, "
                f"k IS NOT NULL AS keptFound, k.{name} AS keptName, k.{aliases} AS keptAliases, "
                f"coalesce(k.{placeholder}, false) AS keptPlaceholder, "
                f"CASE WHEN m IS NULL THEN 0 ELSE COUNT {{ (m)-[:{mention}]->() }} END AS mentions, "
                "CASE WHEN m IS NULL THEN 0 ELSE COUNT { (m)-[r]->() WHERE type(r) IN $quotes } END AS quotes, "
                f"mergedFacts, CASE WHEN k IS NULL THEN [] ELSE {facts_of_k} END AS keptFacts"
            )
            for kind in self.ontology.kinds
        }

    @functools.cached_property
    def lock_things(self) -> dict[str, str]:
        """Per kind, ``$ids``: lock the things found and read ``id``, ``element``, ``labels``, ``props``."""
        key = self._key
        return {
            kind: (
                f"UNWIND $ids AS id MATCH (t:{self._label(kind)} {{{key}: id}}) SET t += {{}} "
                f"RETURN t.{key} AS id, elementId(t) AS element, labels(t) AS labels, properties(t) AS props"
            )
            for kind in self.ontology.kinds
        }

    @functools.cached_property
    def fact_ends(self) -> dict[str, str]:
        """Per kind, ``$id``, ``$facts``: ``id``, ``labels`` of the other ends of a thing's facts (no locks)."""
        key = self._key
        return {
            kind: (
                f"MATCH (t:{self._label(kind)} {{{key}: $id}})-[f]-(x) WHERE type(f) IN $facts AND x <> t "
                f"RETURN DISTINCT x.{key} AS id, labels(x) AS labels"
            )
            for kind in self.ontology.kinds
        }

    @functools.cached_property
    def _link_rows(self) -> str:
        return (
            "RETURN elementId(r) AS element, type(r) AS type, properties(r) AS props, "
            f"elementId(c) AS end, c.{self.names.chunk.key} AS chunk"
        )

    @functools.cached_property
    def links_of(self) -> str:
        """``$thing``, ``$links``: lock and read a thing's mentions and quotes."""
        return (
            "MATCH (t) WHERE elementId(t) = $thing MATCH (t)-[r]->(c) WHERE type(r) IN $links "
            f"SET r += {{}} {self._link_rows}"
        )

    @functools.cached_property
    def links_by_key(self) -> str:
        """``$thing``, ``$links``, ``$keys``: lock and read the thing's mentions and quotes with those keys."""
        return (
            "MATCH (t) WHERE elementId(t) = $thing MATCH (t)-[r]->(c) WHERE type(r) IN $links AND r.key IN $keys "
            f"SET r += {{}} {self._link_rows}"
        )

    @functools.cached_property
    def facts_of(self) -> str:
        """``$thing``, ``$facts``: lock and read every fact of a thing (self-loops once)."""
        return (
            "MATCH (t) WHERE elementId(t) = $thing CALL (t) { "
            "MATCH (t)-[f]->(x) WHERE type(f) IN $facts RETURN f, x, true AS outgoing "
            "UNION MATCH (x)-[f]->(t) WHERE type(f) IN $facts AND x <> t RETURN f, x, false AS outgoing } "
            f"SET f += {{}} {_FACT_ROWS.format(key=self._key)}"
        )

    @functools.cached_property
    def facts_with(self) -> str:
        """``$thing``, ``$facts``, ``$others``: lock and read the thing's facts with those other ends."""
        return (
            "MATCH (t) WHERE elementId(t) = $thing CALL (t) { "
            "MATCH (t)-[f]->(x) WHERE type(f) IN $facts AND elementId(x) IN $others RETURN f, x, true AS outgoing "
            "UNION MATCH (x)-[f]->(t) WHERE type(f) IN $facts AND elementId(x) IN $others AND x <> t "
            "RETURN f, x, false AS outgoing } "
            f"SET f += {{}} {_FACT_ROWS.format(key=self._key)}"
        )

    #: ``$ids``: delete relationships by element id; ``deleted``.
    delete_relationships = (
        "UNWIND $ids AS id MATCH ()-[r]->() WHERE elementId(r) = id DELETE r RETURN count(r) AS deleted"
    )

    @functools.cached_property
    def create_relationships(self) -> dict[str, str]:
        """Per relationship type (mention, quotes, facts), ``$rows`` of ``{start, end, props}``."""
        ontology = self.ontology
        return {
            type_: (
                "UNWIND $rows AS row MATCH (a) WHERE elementId(a) = row.start "
                "MATCH (b) WHERE elementId(b) = row.end "
                f"CREATE (a)-[r:{type_}]->(b) SET r = row.props RETURN count(r) AS created"
            )
            for type_ in (ontology.mention_type, *ontology.quote_types, *ontology.fact_types)
        }

    #: ``$rows`` of ``{id, props}``: replace a relationship's properties.
    set_relationships = (
        "UNWIND $rows AS row MATCH ()-[f]->() WHERE elementId(f) = row.id SET f = row.props RETURN count(f) AS updated"
    )
    #: ``$thing``, ``$props``: replace a thing's properties; ``props`` after.
    set_thing = "MATCH (t) WHERE elementId(t) = $thing SET t = $props RETURN properties(t) AS props"
    #: ``$thing``: delete a thing with its places in communities (graphrag_orm.communities, built
    #: again after a merge); the database refuses one that still has other relationships.
    delete_thing = (
        f"MATCH (t) WHERE elementId(t) = $thing CALL (t) {{ MATCH (t)-[p:{IN_COMMUNITY}]->() DELETE p }} "
        "DELETE t RETURN count(t) AS deleted"
    )
    #: ``$labels``, ``$props``: create a thing; ``element``.
    create_thing = "CREATE (t:$($labels)) SET t = $props RETURN elementId(t) AS element"

    @functools.cached_property
    def create_run(self) -> str:
        """``$props``, ``$record``: create a merge's run node."""
        return f"CREATE (r:{self.names.run.label}) SET r = $props, r.mergeRecord = $record"

    @functools.cached_property
    def lock_run(self) -> str:
        """``$id``: lock and read a run: ``status``, ``fingerprint``, ``record``."""
        run = self.names.run
        return (
            f"MATCH (r:{run.label} {{{run.key}: $id}}) SET r += {{}} "
            f"RETURN r.{run.stored('status')} AS status, r.{run.stored('settings_fingerprint')} AS fingerprint, "
            "r.mergeRecord AS record"
        )

    @functools.cached_property
    def set_run_status(self) -> str:
        """``$id``, ``$status``: a run's new status."""
        run = self.names.run
        return f"MATCH (r:{run.label} {{{run.key}: $id}}) SET r.{run.stored('status')} = $status"

    @functools.cached_property
    def run_exists(self) -> str:
        """``$id``: ``found`` when the run node exists."""
        run = self.names.run
        return f"MATCH (r:{run.label} {{{run.key}: $id}}) RETURN count(r) > 0 AS found"
