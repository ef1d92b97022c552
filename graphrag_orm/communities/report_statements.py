"""The reports' statements: what a writer is shown of a community, and one run's batched writes.

Labels come from the layout's model (validated identifiers), relationship types from the
ontology and the model's constants; every value is a parameter. The reads project what a
report needs (ids, names, fact types, mention quotes, chunk text and offsets), never an
embedding. In a tenanted layout (docs/tenancy.md) every community, report, finding, chunk and
document a statement finds is the bound tenant's (``$tenant``, in the statement), and every
report and finding is written with it: a citation is checked against the tenant's own stored
text only. Untenanted, every statement is what it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.models import HAS_FINDING, HAS_REPORT, IN_COMMUNITY, LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.statements import CHUNK_FIELDS, DOCUMENT_FIELDS

__all__ = ["ReportStatements"]


@dataclass(frozen=True)
class ReportStatements:
    """One ontology's and layout's report reads and writes."""

    communities: str
    #: The communities with no report (what ``write(only_missing=True)`` reports on).
    missing: str
    #: ``$ids`` (community ids): their reports' findings, then their reports; ``removed``.
    clear_findings_of: str
    clear_reports_of: str
    facts: str | None
    evidence: str
    chunks: str
    clear_findings: str
    clear_reports: str
    create_reports: str
    create_findings: str
    listing: str
    findings_of: str

    @classmethod
    def of(cls, ontology: Ontology, model: LexicalModel) -> ReportStatements:
        names = model.names
        community, report, finding = names.community.label, names.report.label, names.finding.label
        chunk, document = names.chunk, names.document
        # A tenanted layout's: a map's closing entry, a bare pattern's map, and the written property.
        owned, own = names.owned, " {tenant: $tenant}" if names.tenanted else ""
        stamped = ", r.tenant = $tenant" if names.tenanted else ""
        facts = None
        if ontology.fact_types:
            # The facts among a community's members (both ends placed in it), in one order.
            facts = (
                f"UNWIND $ids AS cid MATCH (c:{community} {{id: cid{owned}}}) "
                f"CALL (c) {{ MATCH (a)-[:{IN_COMMUNITY}]->(c) MATCH (a)-[f:{'|'.join(ontology.fact_types)}]->(b) "
                f"WHERE a <> b AND (b)-[:{IN_COMMUNITY}]->(c) "
                "RETURN a, f, b ORDER BY a.id, type(f), b.id LIMIT $limit } "
                "RETURN c.id AS community, elementId(a) AS a, a.id AS source, a.name AS sourceName, type(f) AS type, "
                "elementId(b) AS b, b.id AS target, b.name AS targetName, coalesce(f.documentIds, []) AS documentIds"
            )
        mention = ontology.mention_type
        # Chunks of a fact's documents that mention both its ends: where extraction grounded it.
        evidence = (
            "UNWIND $pairs AS p MATCH (a) WHERE elementId(a) = p.a MATCH (b) WHERE elementId(b) = p.b "
            f"CALL (a, b, p) {{ MATCH (a)-[m:{mention}]->(ch:{chunk.label}{own})<-[n:{mention}]-(b) "
            "WHERE m.documentId IN p.documents "
            f"WITH ch.{chunk.key} AS chunk, collect(DISTINCT m.quote) AS sourceMentions, "
            "collect(DISTINCT n.quote) AS targetMentions "
            "RETURN chunk, sourceMentions, targetMentions ORDER BY chunk LIMIT $perFact } "
            "RETURN p.key AS key, chunk, sourceMentions, targetMentions"
        )
        chunk_fields = ", ".join(f"{key}: c.{chunk.stored(attribute)}" for key, attribute in CHUNK_FIELDS.items())
        document_fields = ", ".join(
            f"{key}: d.{document.stored(attribute)}" for key, attribute in DOCUMENT_FIELDS.items()
        )
        chunks = (
            f"UNWIND $ids AS id MATCH (c:{chunk.label} {{{chunk.key}: id{owned}}}) "
            f"OPTIONAL MATCH (d:{document.label} {{{document.key}: c.{chunk.stored('document_id')}{owned}}}) "
            f"RETURN c {{id: c.{chunk.key}, {chunk_fields}, grounding: c.{GROUNDING_PROPERTY}}} AS chunk, "
            f"d {{{document_fields}}} AS document ORDER BY id"
        )
        return cls(
            communities=(
                f"MATCH (c:{community}{own}) RETURN c.id AS id, c.level AS level, c.fingerprint AS fingerprint "
                "ORDER BY level, id LIMIT $limit"
            ),
            missing=(
                f"MATCH (c:{community}{own}) WHERE NOT EXISTS {{ (c)-[:{HAS_REPORT}]->(:{report}) }} "
                "RETURN c.id AS id, c.level AS level, c.fingerprint AS fingerprint ORDER BY level, id LIMIT $limit"
            ),
            clear_findings_of=(
                f"UNWIND $ids AS cid MATCH (:{report} {{communityId: cid{owned}}})-[:{HAS_FINDING}]->(f:{finding}) "
                "CALL (f) { DETACH DELETE f } RETURN count(*) AS removed"
            ),
            clear_reports_of=(
                f"UNWIND $ids AS cid MATCH (r:{report} {{communityId: cid{owned}}}) CALL (r) {{ DETACH DELETE r }} "
                "RETURN count(*) AS removed"
            ),
            facts=facts,
            evidence=evidence,
            chunks=chunks,
            clear_findings=f"MATCH (f:{finding}{own}) CALL (f) {{ DETACH DELETE f }} RETURN count(*) AS removed",
            clear_reports=f"MATCH (r:{report}{own}) CALL (r) {{ DETACH DELETE r }} RETURN count(*) AS removed",
            create_reports=(
                f"UNWIND $rows AS row MATCH (c:{community} {{id: row.community{owned}}}) "
                f"CREATE (c)-[:{HAS_REPORT}]->(r:{report}) SET r = row.props{stamped}, r.writtenAt = datetime()"
            ),
            create_findings=(
                f"UNWIND $rows AS row MATCH (r:{report} {{id: row.report{owned}}}) "
                f"CREATE (r)-[:{HAS_FINDING}]->(f:{finding}) SET f = row.props{stamped.replace('r.', 'f.')}"
            ),
            listing=(
                f"MATCH (r:{report}{own}) RETURN r.id AS id, r.communityId AS community, r.level AS level, "
                "r.title AS title, r.writer AS writer, r.fingerprint AS fingerprint, r.unsupported AS unsupported, "
                "coalesce(r.retracted, 0) AS retracted, coalesce(r.trimmed, 0) AS trimmed "
                "ORDER BY level, community LIMIT $limit"
            ),
            findings_of=(
                f"UNWIND $ids AS rid MATCH (r:{report} {{id: rid{owned}}})-[:{HAS_FINDING}]->(f:{finding}) "
                "RETURN rid AS report, f.text AS text, f.chunkIds AS chunkIds, f.documentIds AS documentIds, "
                "f.startBytes AS startBytes, f.endBytes AS endBytes, f.quotes AS quotes ORDER BY report, f.position"
            ),
        )
