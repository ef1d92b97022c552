"""The statements of entity resolution, rendered once per lexical model and ontology.

Labels come from the ontology and the model (validated identifiers); relationship types
are the ontology's mention, quote and fact types, passed as parameters to ``type(r) IN``
filters, or placed in query text only when they are the ontology's own (a ``CREATE`` needs
one). Names, aliases, ids and recorded properties are always parameters. Within a merge
or an undo, nodes and relationships already locked are addressed by ``elementId``.

Every statement that reads something it will change first writes a no-op (``SET x += {}``)
on it, which takes its write lock, and reads it after: the house's lock-then-read.

In a tenanted layout (docs/tenancy.md) every statement is the bound tenant's, in the statement
itself (``$tenant``): a thing or run is matched with ``tenant: $tenant``, each node met by
element id (a thing, a chunk, a fact's other end, a relationship's two ends) is checked to carry
the tenant, and what is created (a thing on undo, a merge's run) is stamped with it. A mention,
quote or fact that joins the tenant's thing to another tenant's node is neither read nor moved:
the merged thing then keeps it and the database refuses its deletion, so the merge fails whole.
Untenanted, every statement renders as it did before tenancy.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from graphrag_orm.models import IN_COMMUNITY
from graphrag_orm.ontology import Entity, Ontology
from graphrag_orm.store import StoredNames
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY

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

    def _end(self, variable: str) -> str:
        """A relationship's far end: ``(c) WHERE c.tenant = $tenant`` in a tenanted layout, else ``()``."""
        return f"({variable}) {self.names.tenant_where(variable).rstrip()}" if self.names.tenanted else "()"

    def _stamp(self, variable: str) -> str:
        """``, v.tenant = $tenant`` for a node written in a tenanted layout; else nothing."""
        return f", {variable}.{TENANT_PROPERTY} = ${TENANT_PARAMETER}" if self.names.tenanted else ""

    @functools.cached_property
    def candidates(self) -> dict[str, str]:
        """Per kind, ``$limit``: ``id``, ``name``, ``aliases``, ``placeholder``, ``mentions`` in id order."""
        key, name, aliases = self._key, entity_stored("name"), entity_stored("aliases")
        placeholder, mention = entity_stored("is_placeholder"), self.ontology.mention_type
        return {
            kind: (
                f"MATCH (t:{self._label(kind)}) {self.names.tenant_where('t')}WITH t ORDER BY t.{key} LIMIT $limit "
                f"RETURN t.{key} AS id, t.{name} AS name, t.{aliases} AS aliases, "
                f"coalesce(t.{placeholder}, false) AS placeholder, "
                f"COUNT {{ (t)-[:{mention}]->{self._end('c')} }} AS mentions"
            )
            for kind in self.ontology.kinds
        }

    @functools.cached_property
    def preview(self) -> dict[str, str]:
        """Per kind, ``$rows`` of ``{i, kept, merged}``: what a preview needs of each pair (ids, no locks)."""
        key, name, aliases = self._key, entity_stored("name"), entity_stored("aliases")
        placeholder, mention = entity_stored("is_placeholder"), self.ontology.mention_type
        owned, mine = self.names.owned, self.names.tenant_and("x")
        facts_of_m = (
            f"COLLECT {{ MATCH (m)-[f]->(x) WHERE type(f) IN $facts{mine} "
            f"RETURN {{type: type(f), outgoing: true, other: x.{key}}} }} + "
            f"COLLECT {{ MATCH (x)-[f]->(m) WHERE type(f) IN $facts AND x <> m{mine} "
            f"RETURN {{type: type(f), outgoing: false, other: x.{key}}} }}"
        )
        facts_of_k = (
            f"COLLECT {{ MATCH (k)-[f]->(x) WHERE type(f) IN $facts AND x.{key} IN others{mine} "
            f"RETURN {{type: type(f), outgoing: true, other: x.{key}}} }} + "
            f"COLLECT {{ MATCH (x)-[f]->(k) WHERE type(f) IN $facts AND x.{key} IN others AND x <> k{mine} "
            f"RETURN {{type: type(f), outgoing: false, other: x.{key}}} }}"
        )
        quote_end = "(c)" if self.names.tenanted else "()"
        quote_end += f" WHERE type(r) IN $quotes{self.names.tenant_and('c')}"
        return {
            kind: (
                f"UNWIND $rows AS row OPTIONAL MATCH (m:{self._label(kind)} {{{key}: row.merged{owned}}}) "
                f"OPTIONAL MATCH (k:{self._label(kind)} {{{key}: row.kept{owned}}}) "
                "WITH row, m, k, CASE WHEN m IS NULL THEN [] ELSE "
                f"{facts_of_m} END AS mergedFacts "
                "WITH row, m, k, mergedFacts, [g IN mergedFacts | g.other] AS others "
                "RETURN row.i AS i, row.merged AS merged, row.kept AS kept, "
                f"m IS NOT NULL AS mergedFound, m.{name} AS mergedName, m.{aliases} AS mergedAliases, "
                f"coalesce(m.{placeholder}, false) AS mergedPlaceholder, "
                f"k IS NOT NULL AS keptFound, k.{name} AS keptName, k.{aliases} AS keptAliases, "
                f"coalesce(k.{placeholder}, false) AS keptPlaceholder, "
                f"CASE WHEN m IS NULL THEN 0 ELSE COUNT {{ (m)-[:{mention}]->{self._end('c')} }} END AS mentions, "
                f"CASE WHEN m IS NULL THEN 0 ELSE COUNT {{ (m)-[r]->{quote_end} }} END AS quotes, "
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
                f"UNWIND $ids AS id MATCH (t:{self._label(kind)} {{{key}: id{self.names.owned}}}) SET t += {{}} "
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
                f"MATCH (t:{self._label(kind)} {{{key}: $id{self.names.owned}}})-[f]-(x) "
                f"WHERE type(f) IN $facts AND x <> t{self.names.tenant_and('x')} "
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
            f"MATCH (t) WHERE elementId(t) = $thing{self.names.tenant_and('t')} "
            f"MATCH (t)-[r]->(c) WHERE type(r) IN $links{self.names.tenant_and('c')} "
            f"SET r += {{}} {self._link_rows}"
        )

    @functools.cached_property
    def links_by_key(self) -> str:
        """``$thing``, ``$links``, ``$keys``: lock and read the thing's mentions and quotes with those keys."""
        return (
            f"MATCH (t) WHERE elementId(t) = $thing{self.names.tenant_and('t')} "
            f"MATCH (t)-[r]->(c) WHERE type(r) IN $links AND r.key IN $keys{self.names.tenant_and('c')} "
            f"SET r += {{}} {self._link_rows}"
        )

    @functools.cached_property
    def facts_of(self) -> str:
        """``$thing``, ``$facts``: lock and read every fact of a thing (self-loops once)."""
        return (
            f"MATCH (t) WHERE elementId(t) = $thing{self.names.tenant_and('t')} CALL (t) {{ "
            f"MATCH (t)-[f]->(x) WHERE type(f) IN $facts{self.names.tenant_and('x')} RETURN f, x, true AS outgoing "
            f"UNION MATCH (x)-[f]->(t) WHERE type(f) IN $facts AND x <> t{self.names.tenant_and('x')} "
            "RETURN f, x, false AS outgoing } "
            f"SET f += {{}} {_FACT_ROWS.format(key=self._key)}"
        )

    @functools.cached_property
    def facts_with(self) -> str:
        """``$thing``, ``$facts``, ``$others``: lock and read the thing's facts with those other ends."""
        return (
            f"MATCH (t) WHERE elementId(t) = $thing{self.names.tenant_and('t')} CALL (t) {{ "
            f"MATCH (t)-[f]->(x) WHERE type(f) IN $facts AND elementId(x) IN $others{self.names.tenant_and('x')} "
            "RETURN f, x, true AS outgoing "
            "UNION MATCH (x)-[f]->(t) WHERE type(f) IN $facts AND elementId(x) IN $others AND x <> t"
            f"{self.names.tenant_and('x')} RETURN f, x, false AS outgoing }} "
            f"SET f += {{}} {_FACT_ROWS.format(key=self._key)}"
        )

    @functools.cached_property
    def _relationship(self) -> str:
        """A relationship matched by element id: its two ends must carry the tenant when tenanted."""
        if self.names.tenanted:
            return f"(a)-[{{r}}]->(b) WHERE elementId({{r}}) = {{id}}{self.names.tenant_and('a')}{self.names.tenant_and('b')}"
        return "()-[{r}]->() WHERE elementId({r}) = {id}"

    @functools.cached_property
    def delete_relationships(self) -> str:
        """``$ids``: delete relationships by element id; ``deleted``."""
        return (
            f"UNWIND $ids AS id MATCH {self._relationship.format(r='r', id='id')} DELETE r RETURN count(r) AS deleted"
        )

    @functools.cached_property
    def create_relationships(self) -> dict[str, str]:
        """Per relationship type (mention, quotes, facts), ``$rows`` of ``{start, end, props}``."""
        ontology = self.ontology
        return {
            type_: (
                f"UNWIND $rows AS row MATCH (a) WHERE elementId(a) = row.start{self.names.tenant_and('a')} "
                f"MATCH (b) WHERE elementId(b) = row.end{self.names.tenant_and('b')} "
                f"CREATE (a)-[r:{type_}]->(b) SET r = row.props RETURN count(r) AS created"
            )
            for type_ in (ontology.mention_type, *ontology.quote_types, *ontology.fact_types)
        }

    @functools.cached_property
    def set_relationships(self) -> str:
        """``$rows`` of ``{id, props}``: replace a relationship's properties."""
        return (
            f"UNWIND $rows AS row MATCH {self._relationship.format(r='f', id='row.id')} "
            "SET f = row.props RETURN count(f) AS updated"
        )

    @functools.cached_property
    def set_thing(self) -> str:
        """``$thing``, ``$props``: replace a thing's properties; ``props`` after."""
        return (
            f"MATCH (t) WHERE elementId(t) = $thing{self.names.tenant_and('t')} "
            f"SET t = $props{self._stamp('t')} RETURN properties(t) AS props"
        )

    @functools.cached_property
    def delete_thing(self) -> str:
        """``$thing``: delete a thing with its places in communities (graphrag_orm.communities, built
        again after a merge); the database refuses one that still has other relationships."""
        return (
            f"MATCH (t) WHERE elementId(t) = $thing{self.names.tenant_and('t')} "
            f"CALL (t) {{ MATCH (t)-[p:{IN_COMMUNITY}]->{self._end('c')} DELETE p }} "
            "DELETE t RETURN count(t) AS deleted"
        )

    @functools.cached_property
    def create_thing(self) -> str:
        """``$labels``, ``$props``: create a thing; ``element``."""
        return f"CREATE (t:$($labels)) SET t = $props{self._stamp('t')} RETURN elementId(t) AS element"

    @functools.cached_property
    def create_run(self) -> str:
        """``$props``, ``$record``: create a merge's run node (the tenant's, when tenanted)."""
        return f"CREATE (r:{self.names.run.label}) SET r = $props, r.mergeRecord = $record{self._stamp('r')}"

    @functools.cached_property
    def lock_run(self) -> str:
        """``$id``: lock and read a run: ``status``, ``fingerprint``, ``record``."""
        run = self.names.run
        return (
            f"MATCH (r:{run.label} {{{run.key}: $id{self.names.owned}}}) SET r += {{}} "
            f"RETURN r.{run.stored('status')} AS status, r.{run.stored('settings_fingerprint')} AS fingerprint, "
            "r.mergeRecord AS record"
        )

    @functools.cached_property
    def set_run_status(self) -> str:
        """``$id``, ``$status``: a run's new status."""
        run = self.names.run
        return f"MATCH (r:{run.label} {{{run.key}: $id{self.names.owned}}}) SET r.{run.stored('status')} = $status"

    @functools.cached_property
    def run_exists(self) -> str:
        """``$id``: ``found`` when the run node exists."""
        run = self.names.run
        return f"MATCH (r:{run.label} {{{run.key}: $id{self.names.owned}}}) RETURN count(r) > 0 AS found"
