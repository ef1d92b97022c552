"""The communities' statements: the facts detection reads, and one build's batched writes.

Labels and relationship types come from the ontology (validated identifiers) and the
community model; every value is a parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from graphrag_orm.models import COMMUNITY_LABEL, IN_COMMUNITY, PARENT_COMMUNITY
from graphrag_orm.ontology import Ontology

__all__ = ["CommunityStatements"]

_C, _IN, _PARENT = COMMUNITY_LABEL, IN_COMMUNITY, PARENT_COMMUNITY


@dataclass(frozen=True)
class CommunityStatements:
    facts: str | None
    labels: tuple[str, ...]

    @classmethod
    def of(cls, ontology: Ontology) -> CommunityStatements:
        facts = None
        if ontology.fact_types:
            facts = (
                f"MATCH (a)-[f:{'|'.join(ontology.fact_types)}]->(b) "
                "WHERE a.id IS NOT NULL AND b.id IS NOT NULL "
                "RETURN a.id AS source, type(f) AS type, b.id AS target, coalesce(f.documentIds, []) AS documentIds, "
                "[l IN labels(a) WHERE l IN $labels][0] AS sourceLabel, "
                "[l IN labels(b) WHERE l IN $labels][0] AS targetLabel "
                "ORDER BY source, type, target LIMIT $limit"
            )
        return cls(facts, ontology.labels)

    # One build replaces the last: its communities and every IN_COMMUNITY go first.
    clear: ClassVar[str] = f"MATCH (c:{_C}) CALL (c) {{ DETACH DELETE c }} RETURN count(*) AS removed"
    create: ClassVar[str] = (
        f"UNWIND $rows AS row CREATE (c:{_C}) SET c.id = row.id, c.level = row.level, c.size = row.size, "
        "c.facts = row.facts, c.fingerprint = row.fingerprint, c.buildId = $build, c.builtAt = datetime()"
    )
    parents: ClassVar[str] = (
        f"UNWIND $rows AS row MATCH (c:{_C} {{id: row.id}}) MATCH (p:{_C} {{id: row.parent}}) "
        f"CREATE (c)-[:{_PARENT}]->(p)"
    )

    def members(self, label: str) -> str:
        """``IN_COMMUNITY`` from each thing of ``label`` (by its id) to its community."""
        return (
            f"UNWIND $rows AS row MATCH (t:{label} {{id: row.thing}}) MATCH (c:{_C} {{id: row.community}}) "
            f"CREATE (t)-[:{_IN} {{buildId: $build}}]->(c)"
        )

    listing: ClassVar[str] = (
        f"MATCH (c:{_C}) OPTIONAL MATCH (c)-[:{_PARENT}]->(p:{_C}) "
        "RETURN c.id AS id, c.level AS level, c.size AS size, c.facts AS facts, c.fingerprint AS fingerprint, "
        "p.id AS parent ORDER BY level, id LIMIT $limit"
    )
    membership: ClassVar[str] = (
        f"MATCH (t)-[:{_IN}]->(c:{_C} {{id: $id}}) RETURN t.id AS thing, t.name AS name ORDER BY thing LIMIT $limit"
    )
