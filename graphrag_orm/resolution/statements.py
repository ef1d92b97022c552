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

from dataclasses import dataclass

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
    """Parameters are named beside each statement."""

    #: Per kind, ``$limit``: ``id``, ``name``, ``aliases``, ``placeholder``, ``mentions`` in id order.
    candidates: dict[str, str]
    #: Per kind, ``$rows`` of ``{i, kept, merged}``: what a preview needs of each pair (ids, no locks).
    preview: dict[str, str]
    #: Per kind, ``$ids``: lock the things found and read ``id``, ``element``, ``labels``, ``props``.
    lock_things: dict[str, str]
    #: Per kind, ``$id``, ``$facts``: ``id``, ``labels`` of the other ends of a thing's facts (no locks).
    fact_ends: dict[str, str]
    #: ``$thing``, ``$links``: lock and read a thing's mentions and quotes.
    links_of: str
    #: ``$thing``, ``$links``, ``$keys``: lock and read the thing's mentions and quotes with those keys.
    links_by_key: str
    #: ``$thing``, ``$facts``: lock and read every fact of a thing (self-loops once).
    facts_of: str
    #: ``$thing``, ``$facts``, ``$others``: lock and read the thing's facts with those other ends.
    facts_with: str
    #: ``$ids``: delete relationships by element id; ``deleted``.
    delete_relationships: str
    #: Per relationship type (mention, quotes, facts), ``$rows`` of ``{start, end, props}``.
    create_relationships: dict[str, str]
    #: ``$rows`` of ``{id, props}``: replace a relationship's properties.
    set_relationships: str
    #: ``$thing``, ``$props``: replace a thing's properties; ``props`` after.
    set_thing: str
    #: ``$thing``: delete a thing (the database refuses one that still has relationships).
    delete_thing: str
    #: ``$labels``, ``$props``: create a thing; ``element``.
    create_thing: str
    #: ``$props``, ``$record``: create a merge's run node.
    create_run: str
    #: ``$id``: lock and read a run: ``status``, ``fingerprint``, ``record``.
    lock_run: str
    #: ``$id``, ``$status``: a run's new status.
    set_run_status: str
    #: ``$id``: ``found`` when the run node exists.
    run_exists: str

    @classmethod
    def render(cls, names: StoredNames, ontology: Ontology) -> ResolutionStatements:
        key, name, aliases = entity_stored("uid"), entity_stored("name"), entity_stored("aliases")
        placeholder = entity_stored("is_placeholder")
        mention, chunk_key = ontology.mention_type, names.chunk.key
        run, status = names.run, names.run.stored("status")
        fingerprint = run.stored("settings_fingerprint")
        fact_rows = _FACT_ROWS.format(key=key)

        def label(kind: str) -> str:
            return ontology.label_of(kind)

        candidates = {
            kind: (
                f"MATCH (t:{label(kind)}) WITH t ORDER BY t.{key} LIMIT $limit "
                f"RETURN t.{key} AS id, t.{name} AS name, t.{aliases} AS aliases, "
                f"coalesce(t.{placeholder}, false) AS placeholder, COUNT {{ (t)-[:{mention}]->() }} AS mentions"
            )
            for kind in ontology.kinds
        }
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
        preview = {
            kind: (
                f"UNWIND $rows AS row OPTIONAL MATCH (m:{label(kind)} {{{key}: row.merged}}) "
                f"OPTIONAL MATCH (k:{label(kind)} {{{key}: row.kept}}) "
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
            for kind in ontology.kinds
        }
        lock_things = {
            kind: (
                f"UNWIND $ids AS id MATCH (t:{label(kind)} {{{key}: id}}) SET t += {{}} "
                f"RETURN t.{key} AS id, elementId(t) AS element, labels(t) AS labels, properties(t) AS props"
            )
            for kind in ontology.kinds
        }
        link_rows = (
            "RETURN elementId(r) AS element, type(r) AS type, properties(r) AS props, "
            f"elementId(c) AS end, c.{chunk_key} AS chunk"
        )
        types = (mention, *ontology.quote_types, *ontology.fact_types)
        return cls(
            candidates=candidates,
            preview=preview,
            lock_things=lock_things,
            fact_ends={
                kind: (
                    f"MATCH (t:{label(kind)} {{{key}: $id}})-[f]-(x) WHERE type(f) IN $facts AND x <> t "
                    f"RETURN DISTINCT x.{key} AS id, labels(x) AS labels"
                )
                for kind in ontology.kinds
            },
            links_of=(
                "MATCH (t) WHERE elementId(t) = $thing MATCH (t)-[r]->(c) WHERE type(r) IN $links "
                f"SET r += {{}} {link_rows}"
            ),
            links_by_key=(
                "MATCH (t) WHERE elementId(t) = $thing MATCH (t)-[r]->(c) WHERE type(r) IN $links AND r.key IN $keys "
                f"SET r += {{}} {link_rows}"
            ),
            facts_of=(
                "MATCH (t) WHERE elementId(t) = $thing CALL (t) { "
                "MATCH (t)-[f]->(x) WHERE type(f) IN $facts RETURN f, x, true AS outgoing "
                "UNION MATCH (x)-[f]->(t) WHERE type(f) IN $facts AND x <> t RETURN f, x, false AS outgoing } "
                f"SET f += {{}} {fact_rows}"
            ),
            facts_with=(
                "MATCH (t) WHERE elementId(t) = $thing CALL (t) { "
                "MATCH (t)-[f]->(x) WHERE type(f) IN $facts AND elementId(x) IN $others RETURN f, x, true AS outgoing "
                "UNION MATCH (x)-[f]->(t) WHERE type(f) IN $facts AND elementId(x) IN $others AND x <> t "
                "RETURN f, x, false AS outgoing } "
                f"SET f += {{}} {fact_rows}"
            ),
            delete_relationships=(
                "UNWIND $ids AS id MATCH ()-[r]->() WHERE elementId(r) = id DELETE r RETURN count(r) AS deleted"
            ),
            create_relationships={
                type_: (
                    "UNWIND $rows AS row MATCH (a) WHERE elementId(a) = row.start "
                    "MATCH (b) WHERE elementId(b) = row.end "
                    f"CREATE (a)-[r:{type_}]->(b) SET r = row.props RETURN count(r) AS created"
                )
                for type_ in types
            },
            set_relationships=(
                "UNWIND $rows AS row MATCH ()-[f]->() WHERE elementId(f) = row.id SET f = row.props "
                "RETURN count(f) AS updated"
            ),
            set_thing="MATCH (t) WHERE elementId(t) = $thing SET t = $props RETURN properties(t) AS props",
            delete_thing="MATCH (t) WHERE elementId(t) = $thing DELETE t RETURN count(t) AS deleted",
            create_thing="CREATE (t:$($labels)) SET t = $props RETURN elementId(t) AS element",
            create_run=f"CREATE (r:{run.label}) SET r = $props, r.mergeRecord = $record",
            lock_run=(
                f"MATCH (r:{run.label} {{{run.key}: $id}}) SET r += {{}} "
                f"RETURN r.{status} AS status, r.{fingerprint} AS fingerprint, r.mergeRecord AS record"
            ),
            set_run_status=f"MATCH (r:{run.label} {{{run.key}: $id}}) SET r.{status} = $status",
            run_exists=f"MATCH (r:{run.label} {{{run.key}: $id}}) RETURN count(r) > 0 AS found",
        )
