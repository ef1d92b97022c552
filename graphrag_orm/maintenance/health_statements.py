"""The reads of the health checks, rendered once from the stored names. Named columns only.

In a tenanted layout (docs/tenancy.md) each read counts and names the bound tenant's chunks,
sections, documents, leases, runs and retracted community reports only (``$tenant``, in the
same statement). Untenanted, every statement is what it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.maintenance.scope_statements import orphan_chunk, orphan_section
from graphrag_orm.reembedding.names import STAGED_SET_PROPERTY
from graphrag_orm.store import StoredNames

__all__ = ["HealthStatements"]


@dataclass(frozen=True)
class HealthStatements:
    """Parameters beside each statement; ``$sample`` bounds the ids a finding names."""

    #: ``$sample``: ``chunks`` without a vector, ``documents`` they belong to, a ``sample`` of those.
    missing_embedding: str
    #: ``$set``: ``other`` embedding set id (``(none)`` when unnamed) and its ``chunks``, by set: chunks
    #: whose vector names another set, and chunks carrying a re-embedding's staged vector
    #: (``<set id> (staged)``, until the re-embedding's ``complete()``).
    mixed_sets: str
    #: ``$sample``: orphan ``chunks`` and ``sections``, the ``documents`` they name, a ``sample`` of those.
    orphans: str
    #: ``$after``, ``$ascii``, ``$page``: ``id``, ``document``, ``text``, ``start``, ``end`` of chunks
    #: not already cleared in the database (ASCII text exactly as long as its span), by id.
    readback_candidates: str
    #: ``$sample``: expired ``leases`` and a ``sample`` of their keys, by key.
    expired_leases: str
    #: ``$sample``: community ``reports`` a removal took findings from, the ``findings`` it retracted and
    #: trimmed, and a ``sample`` of their ids, by id.
    retracted_reports: str

    @classmethod
    def render(cls, names: StoredNames) -> HealthStatements:
        chunk = names.chunk
        label, key, doc = chunk.label, chunk.key, chunk.stored("document_id")
        embedding, set_id = chunk.stored("embedding"), chunk.stored("embedding_set_id")
        staged = STAGED_SET_PROPERTY
        text, start, end = chunk.stored("text"), chunk.stored("start_byte"), chunk.stored("end_byte")
        section, section_doc = names.section.label, names.section.stored("document_id")
        lease, expires = names.lease, names.lease.stored("expires_at")
        t = names.tenant_and
        return cls(
            missing_embedding=(
                f"MATCH (c:{label}) WHERE c.{embedding} IS NULL{t('c')} "
                f"RETURN count(c) AS chunks, count(DISTINCT c.{doc}) AS documents, "
                f"collect(DISTINCT c.{doc})[0..$sample] AS sample"
            ),
            mixed_sets=(
                f"MATCH (c:{label}) {names.tenant_where('c')}WITH c, c.{embedding} IS NOT NULL "
                f"AND (c.{set_id} IS NULL OR c.{set_id} <> $set) AS other_live "
                f"WHERE other_live OR c.{staged} IS NOT NULL "
                f"RETURN CASE WHEN other_live THEN coalesce(c.{set_id}, '(none)') "
                f"ELSE c.{staged} + ' (staged)' END AS other, count(c) AS chunks ORDER BY other"
            ),
            orphans=(
                f"CALL () {{ MATCH (c:{label}) WHERE {orphan_chunk(names)} RETURN 'chunk' AS kind, c.{doc} AS id "
                f"UNION ALL MATCH (s:{section}) WHERE {orphan_section(names)} "
                f"RETURN 'section' AS kind, s.{section_doc} AS id }} "
                "RETURN sum(CASE kind WHEN 'chunk' THEN 1 ELSE 0 END) AS chunks, "
                "sum(CASE kind WHEN 'section' THEN 1 ELSE 0 END) AS sections, "
                "count(DISTINCT id) AS documents, collect(DISTINCT id)[0..$sample] AS sample"
            ),
            readback_candidates=(
                f"MATCH (c:{label}) WHERE c.{key} > $after{t('c')} AND NOT coalesce("
                f"c.{text} =~ $ascii AND size(c.{text}) = c.{end} - c.{start}, false) "
                f"RETURN c.{key} AS id, c.{doc} AS document, c.{text} AS text, c.{start} AS start, c.{end} AS end "
                "ORDER BY id LIMIT $page"
            ),
            expired_leases=(
                f"MATCH (l:{lease.label}) WHERE l.{expires} <= datetime(){t('l')} "
                f"WITH l ORDER BY l.{lease.key} RETURN count(l) AS leases, collect(l.{lease.key})[0..$sample] AS sample"
            ),
            retracted_reports=(
                f"MATCH (r:{names.report.label}) WHERE coalesce(r.retracted, 0) + coalesce(r.trimmed, 0) > 0{t('r')} "
                "WITH r ORDER BY r.id RETURN count(r) AS reports, "
                "sum(coalesce(r.retracted, 0)) AS retracted, sum(coalesce(r.trimmed, 0)) AS trimmed, "
                "collect(r.id)[0..$sample] AS sample"
            ),
        )
