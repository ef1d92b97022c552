"""The communities' statements: the facts detection reads, and one build's batched writes.

Labels and relationship types come from the ontology (validated identifiers) and the
community model; every value is a parameter. In a tenanted layout (docs/tenancy.md) every
community, report, thing and chunk a statement finds is the bound tenant's (``$tenant``, in
the statement), and a community is written with it; untenanted, every statement is what it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.models import HAS_FINDING, HAS_REPORT, IN_COMMUNITY, PARENT_COMMUNITY
from graphrag_orm.ontology import Ontology

__all__ = ["CommunityStatements"]


@dataclass(frozen=True)
class CommunityStatements:
    """The facts read, a build's writes and the listing, for one ontology and community label."""

    facts: str | None
    labels: tuple[str, ...]
    community: str
    #: The reports' labels (finding, report): a build retires the previous build's reports with its communities.
    reports: tuple[str, str]
    #: The ontology's fact types, joined for a relationship pattern ("" without any).
    fact_types: str = ""
    #: The layout's chunk label and key: a refresh writes again a report citing a chunk that is gone.
    chunk: tuple[str, str] = ("Chunk", "id")
    #: A tenanted layout: every node found is the tenant's, every community written carries it.
    tenanted: bool = False

    @classmethod
    def of(
        cls,
        ontology: Ontology,
        community_label: str,
        reports: tuple[str, str],
        chunk: tuple[str, str] = ("Chunk", "id"),
        *,
        tenanted: bool = False,
    ) -> CommunityStatements:
        facts = None
        if ontology.fact_types:
            ends = " AND a.tenant = $tenant AND b.tenant = $tenant" if tenanted else ""
            facts = (
                f"MATCH (a)-[f:{'|'.join(ontology.fact_types)}]->(b) "
                f"WHERE a.id IS NOT NULL AND b.id IS NOT NULL{ends} "
                "RETURN a.id AS source, type(f) AS type, b.id AS target, coalesce(f.documentIds, []) AS documentIds, "
                "[l IN labels(a) WHERE l IN $labels][0] AS sourceLabel, "
                "[l IN labels(b) WHERE l IN $labels][0] AS targetLabel "
                "ORDER BY source, type, target LIMIT $limit"
            )
        return cls(facts, ontology.labels, community_label, reports, "|".join(ontology.fact_types), chunk, tenanted)

    @property
    def owned(self) -> str:
        """``, tenant: $tenant`` to close a node pattern's map with, in a tenanted layout; else nothing."""
        return ", tenant: $tenant" if self.tenanted else ""

    @property
    def own(self) -> str:
        """`` {tenant: $tenant}`` for a node pattern without a map, in a tenanted layout; else nothing."""
        return " {tenant: $tenant}" if self.tenanted else ""

    def tenant_and(self, variable: str) -> str:
        """`` AND v.tenant = $tenant``, in a tenanted layout; else nothing."""
        return f" AND {variable}.tenant = $tenant" if self.tenanted else ""

    @property
    def outdated_reports(self) -> str:
        """``$keys`` (``communityId|fingerprint`` of the communities a refresh writes): the ``id`` of each
        stored report a refresh writes again: its community is not among them with the fingerprint the
        report was written from, a removal took findings from it, or a finding cites a chunk that is gone."""
        finding, report = self.reports
        chunk, key = self.chunk
        return (
            f"MATCH (r:{report}{self.own}) WHERE NOT (r.communityId + '|' + r.fingerprint) IN $keys "
            "OR coalesce(r.retracted, 0) + coalesce(r.trimmed, 0) > 0 "
            f"OR EXISTS {{ MATCH (r)-[:{HAS_FINDING}]->(f:{finding}) "
            f"WHERE any(id IN f.chunkIds WHERE NOT EXISTS {{ MATCH (:{chunk} {{{key}: id{self.owned}}}) }}) }} "
            "RETURN r.id AS id ORDER BY id"
        )

    @property
    def drop_reports(self) -> tuple[str, str]:
        """``$ids``: the findings of those reports, then the reports; ``removed``."""
        finding, report = self.reports
        return (
            f"UNWIND $ids AS rid MATCH (:{report} {{id: rid{self.owned}}})-[:{HAS_FINDING}]->(f:{finding}) "
            "CALL (f) { DETACH DELETE f } RETURN count(*) AS removed",
            f"UNWIND $ids AS rid MATCH (r:{report} {{id: rid{self.owned}}}) CALL (r) {{ DETACH DELETE r }} "
            "RETURN count(*) AS removed",
        )

    @property
    def relink_reports(self) -> str:
        """After a refresh's communities are written: each kept report to its community again; ``kept``."""
        report = self.reports[1]
        return (
            f"MATCH (r:{report}{self.own}) WHERE NOT EXISTS {{ (:{self.community})-[:{HAS_REPORT}]->(r) }} "
            f"MATCH (c:{self.community} {{id: r.communityId{self.owned}}}) CREATE (c)-[:{HAS_REPORT}]->(r) "
            "RETURN count(*) AS kept"
        )

    @property
    def reports_of(self) -> str:
        """``$ids``: the ``reports`` linked to those communities."""
        return (
            f"UNWIND $ids AS cid MATCH (:{self.community} {{id: cid{self.owned}}})-[:{HAS_REPORT}]->(r) "
            "RETURN count(r) AS reports"
        )

    @property
    def remove(self) -> str:
        """``$ids``: the communities a local refresh replaces, with their ``IN_COMMUNITY``; ``removed``."""
        return (
            f"UNWIND $ids AS cid MATCH (c:{self.community} {{id: cid{self.owned}}}) CALL (c) {{ DETACH DELETE c }} "
            "RETURN count(*) AS removed"
        )

    @property
    def stored(self) -> str:
        """Every stored community as a refresh reads it: ``id``, ``level``, ``fingerprint``, ``parent``, ``members``."""
        c = self.community
        return (
            f"MATCH (c:{c}{self.own}) OPTIONAL MATCH (c)-[:{PARENT_COMMUNITY}]->(p:{c}) "
            "RETURN c.id AS id, c.level AS level, c.fingerprint AS fingerprint, p.id AS parent, "
            f"COLLECT {{ MATCH (t)-[:{IN_COMMUNITY}]->(c) WHERE t.id IS NOT NULL RETURN t.id }} AS members "
            "ORDER BY level, id"
        )

    @property
    def create(self) -> str:
        return (
            f"UNWIND $rows AS row CREATE (c:{self.community}) SET c.id = row.id, c.level = row.level, "
            "c.size = row.size, c.facts = row.facts, c.fingerprint = row.fingerprint, c.buildId = $build, "
            f"c.builtAt = datetime(){', c.tenant = $tenant' if self.tenanted else ''}"
        )

    @property
    def parents(self) -> str:
        c = self.community
        return (
            f"UNWIND $rows AS row MATCH (c:{c} {{id: row.id{self.owned}}}) MATCH (p:{c} {{id: row.parent{self.owned}}}) "
            f"CREATE (c)-[:{PARENT_COMMUNITY}]->(p)"
        )

    def members(self, label: str) -> str:
        """``IN_COMMUNITY`` from each thing of ``label`` (by its id) to its community."""
        return (
            f"UNWIND $rows AS row MATCH (t:{label} {{id: row.thing{self.owned}}}) "
            f"MATCH (c:{self.community} {{id: row.community{self.owned}}}) "
            f"CREATE (t)-[:{IN_COMMUNITY} {{buildId: $build}}]->(c)"
        )

    @property
    def listing(self) -> str:
        c = self.community
        return (
            f"MATCH (c:{c}{self.own}) OPTIONAL MATCH (c)-[:{PARENT_COMMUNITY}]->(p:{c}) "
            "RETURN c.id AS id, c.level AS level, c.size AS size, c.facts AS facts, c.fingerprint AS fingerprint, "
            "p.id AS parent ORDER BY level, id LIMIT $limit"
        )

    @property
    def stored_page(self) -> str:
        """``$after``, ``$page``: the stored communities' ``id``, ``level``, ``fingerprint``, by id."""
        return (
            f"MATCH (c:{self.community}) WHERE c.id > $after{self.tenant_and('c')} "
            "RETURN c.id AS id, c.level AS level, c.fingerprint AS fingerprint ORDER BY id LIMIT $page"
        )

    @property
    def now(self) -> str | None:
        """``$ids``, ``$labels``: each community as the graph holds it now: ``members`` (thing ids), ``facts``
        among them (``[source, type, target, documentIds]``, as a build reads them) and ``unplaced``, the
        things of the ontology's labels joined by a fact to a member and placed in no community at all."""
        if self.facts is None:
            return None
        c, types = self.community, self.fact_types
        return (
            f"UNWIND $ids AS cid MATCH (c:{c} {{id: cid{self.owned}}}) RETURN cid AS id, "
            f"COLLECT {{ MATCH (t)-[:{IN_COMMUNITY}]->(c) RETURN t.id }} AS members, "
            f"COLLECT {{ MATCH (a)-[:{IN_COMMUNITY}]->(c) MATCH (a)-[f:{types}]->(b) "
            f"WHERE b.id IS NOT NULL AND (b)-[:{IN_COMMUNITY}]->(c) "
            "RETURN [a.id, type(f), b.id, coalesce(f.documentIds, [])] } AS facts, "
            f"COUNT {{ MATCH (a)-[:{IN_COMMUNITY}]->(c) MATCH (a)-[:{types}]-(b) "
            f"WHERE a <> b AND b.id IS NOT NULL{self.tenant_and('b')} AND NOT EXISTS {{ (b)-[:{IN_COMMUNITY}]->(:{c}) }} "
            "AND any(l IN labels(b) WHERE l IN $labels) RETURN DISTINCT b } AS unplaced"
        )

    @property
    def membership(self) -> str:
        return (
            f"MATCH (t)-[:{IN_COMMUNITY}]->(c:{self.community} {{id: $id{self.owned}}}) "
            "RETURN t.id AS thing, t.name AS name ORDER BY thing LIMIT $limit"
        )
