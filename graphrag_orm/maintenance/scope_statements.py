"""The reads that find what a removal covers, rendered once from the stored names.

Every statement returns named columns (read by key). Pages of documents are ordered
by id and resume after ``$after``, at most ``$page`` ids each. A section or chunk is
an orphan when it names a ``documentId`` that no document node has; one without a
``documentId`` is never part of a scope.

In a tenanted layout (docs/tenancy.md) every read is the bound tenant's, in the same
statement (``$tenant``): its documents, sections, chunks and runs, an orphan is the
tenant's section or chunk whose (the tenant's) document is gone, and the community report
findings of the knowledge graph are not counted (a tenanted graph has none: the knowledge
graph is refused there). Untenanted, every statement is what it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.models import HAS_FINDING
from graphrag_orm.store import StoredNames

__all__ = ["ScopeStatements", "mine", "orphan_chunk", "orphan_section"]


def _orphan(names: StoredNames, var: str, of: str) -> str:
    doc, owned = names.document, names.owned
    return (
        f"{var}.{of} IS NOT NULL{names.tenant_and(var)} "
        f"AND NOT EXISTS {{ MATCH (:{doc.label} {{{doc.key}: {var}.{of}{owned}}}) }}"
    )


def orphan_chunk(names: StoredNames, var: str = "c") -> str:
    """A predicate on chunk ``var``: it names a document that is not stored (tenanted: the tenant's
    chunk, whose document of the tenant is not stored)."""
    return _orphan(names, var, names.chunk.stored("document_id"))


def orphan_section(names: StoredNames, var: str = "s") -> str:
    """A predicate on section ``var``: it names a document that is not stored (tenanted: the tenant's)."""
    return _orphan(names, var, names.section.stored("document_id"))


def mine(names: StoredNames) -> str:
    """`` {tenant: $tenant}`` to close a node pattern of the bound tenant's nodes, in a tenanted layout."""
    owned = names.owned
    return f" {{{owned.removeprefix(', ')}}}" if owned else ""


@dataclass(frozen=True)
class ScopeStatements:
    """The scope reader's statements; :meth:`render` builds them from one model's names."""

    #: Every document: ``id``, ``bytes``; ``$after``, ``$page``.
    all_documents: str
    #: Documents of ``$runs``: ``id``, ``bytes``; ``$after``, ``$page``.
    documents_of_runs: str
    #: For each of ``$ids``: ``id``, ``found``, ``bytes``, ``run``, ``known`` (the run names a run node).
    named: str
    #: For each of ``$ids`` without a document: ``id``, ``ends`` (end bytes of its chunks, 0 per section).
    named_parts: str
    #: Ids that orphan sections and chunks name: ``id``, ``bytes`` (the last chunk's end); ``$after``, ``$page``.
    orphan_groups: str
    #: Run stamps of orphan sections and chunks: ``kind``, ``run``, ``elements``.
    orphan_stamps: str
    #: Run stamps of every lexical node and structural link: ``kind``, ``run``, ``elements``, and
    #: ``other`` (relationships of types not allowed, from degrees).
    graph_stamps: str
    #: Types not in ``$allowed`` on lexical nodes: ``type``, ``links``.
    graph_unowned: str
    #: Which of ``$runs`` name a run node: ``run``.
    runs_exist: str
    #: Documents carrying each of ``$runs``: ``run``, ``documents``.
    run_documents: str
    #: What a reset of everything removes: ``documents``, ``sections``, ``chunks``.
    preview_everything: str
    #: What a reset of ``$runs`` and ``$ids`` removes: ``documents``, ``sections``, ``chunks``, and the
    #: report findings retracted (``findingsRetracted``) and trimmed (``findingsTrimmed``), ``reports`` deleted.
    preview_scope: str

    @classmethod
    def render(cls, names: StoredNames, allowed_types: Sequence[str]) -> ScopeStatements:
        """``allowed_types``: the relationship types maintenance may find on lexical nodes."""
        doc, key, length = names.document.label, names.document.key, names.document.stored("length_bytes")
        chunk, chunk_doc, end = names.chunk.label, names.chunk.stored("document_id"), names.chunk.stored("end_byte")
        section, section_doc = names.section.label, names.section.stored("document_id")
        run_label, run_key, run = names.run.label, names.run.key, names.run_id
        finding, report = names.finding.label, names.report.label
        # A finding every citation of which is of the scope's documents (the retraction's test).
        gone = "(size(f.documentIds) > 0 AND all(d IN f.documentIds WHERE d IN ids))"
        page = f"RETURN d.{key} AS id, coalesce(d.{length}, 0) AS bytes ORDER BY id LIMIT $page"
        # From degrees, without expanding: relationships of the node not of an allowed type.
        other = f"COUNT {{ (x)--() }} - COUNT {{ (x)-[:{'|'.join(allowed_types)}]-() }}"
        m, owned, t = mine(names), names.owned, names.tenant_and
        links = f"MATCH ()-[x:{names.structural}]->() RETURN 'links' AS kind, x.{run} AS run, 0 AS other "
        if names.tenanted:  # the links from the tenant's nodes (a link carries no tenant of its own)
            links = "UNION ALL ".join(
                f"MATCH (:{label}{m})-[x:{names.structural}]->() RETURN 'links' AS kind, x.{run} AS run, 0 AS other "
                for label in (doc, section, chunk)
            )
        if names.tenanted:  # the knowledge graph's findings and reports are not a tenant's (none is written)
            findings = "0 AS findingsRetracted, 0 AS findingsTrimmed, 0 AS reports"
            scope_findings = findings
        else:
            findings = (
                f"COUNT {{ MATCH (f:{finding}) }} AS findingsRetracted, 0 AS findingsTrimmed, "
                f"COUNT {{ MATCH (r:{report}) }} AS reports"
            )
            scope_findings = (
                f"COUNT {{ MATCH (f:{finding}) WHERE {gone} }} AS findingsRetracted, "
                f"COUNT {{ MATCH (f:{finding}) WHERE any(d IN f.documentIds WHERE d IN ids) AND NOT {gone} }} "
                "AS findingsTrimmed, "
                f"COUNT {{ MATCH (r:{report})-[:{HAS_FINDING}]->(:{finding}) WITH DISTINCT r "
                f"WHERE NOT EXISTS {{ MATCH (r)-[:{HAS_FINDING}]->(f:{finding}) WHERE NOT {gone} }} RETURN r }} "
                "AS reports"
            )
        return cls(
            all_documents=f"MATCH (d:{doc}) WHERE d.{key} > $after{t('d')} {page}",
            documents_of_runs=f"MATCH (d:{doc}) WHERE d.{run} IN $runs AND d.{key} > $after{t('d')} {page}",
            named=(
                f"UNWIND $ids AS id OPTIONAL MATCH (d:{doc} {{{key}: id{owned}}}) "
                f"RETURN id, d IS NOT NULL AS found, d.{length} AS bytes, d.{run} AS run, "
                f"d IS NOT NULL AND EXISTS {{ MATCH (:{run_label} {{{run_key}: d.{run}{owned}}}) }} AS known"
            ),
            named_parts=(
                "UNWIND $ids AS id RETURN id, "
                f"COLLECT {{ MATCH (c:{chunk} {{{chunk_doc}: id{owned}}}) RETURN c.{end} }} + "
                f"COLLECT {{ MATCH (s:{section} {{{section_doc}: id{owned}}}) RETURN 0 }} AS ends"
            ),
            orphan_groups=(
                f"CALL () {{ MATCH (c:{chunk}) WHERE {orphan_chunk(names)} "
                f"RETURN c.{chunk_doc} AS id, c.{end} AS end "
                f"UNION ALL MATCH (s:{section}) WHERE {orphan_section(names)} "
                f"RETURN s.{section_doc} AS id, 0 AS end }} "
                "WITH id, max(end) AS lastByte WHERE id > $after "
                "RETURN id, coalesce(lastByte, 0) AS bytes ORDER BY id LIMIT $page"
            ),
            orphan_stamps=(
                f"CALL () {{ MATCH (c:{chunk}) WHERE {orphan_chunk(names)} RETURN 'chunks' AS kind, c.{run} AS run "
                f"UNION ALL MATCH (s:{section}) WHERE {orphan_section(names)} "
                f"RETURN 'sections' AS kind, s.{run} AS run }} "
                "RETURN kind, run, count(*) AS elements"
            ),
            graph_stamps=(
                f"CALL () {{ MATCH (x:{doc}{m}) RETURN 'documents' AS kind, x.{run} AS run, {other} AS other "
                f"UNION ALL MATCH (x:{section}{m}) RETURN 'sections' AS kind, x.{run} AS run, {other} AS other "
                f"UNION ALL MATCH (x:{chunk}{m}) RETURN 'chunks' AS kind, x.{run} AS run, {other} AS other "
                f"UNION ALL {links}}} "
                "RETURN kind, run, count(*) AS elements, sum(other) AS other"
            ),
            graph_unowned=(
                f"CALL () {{ MATCH (x:{doc}{m}) RETURN x UNION MATCH (x:{section}{m}) RETURN x "
                f"UNION MATCH (x:{chunk}{m}) RETURN x }} "
                "MATCH (x)-[r]-() WHERE NOT type(r) IN $allowed "
                "RETURN type(r) AS type, count(DISTINCT r) AS links ORDER BY type"
            ),
            runs_exist=f"MATCH (r:{run_label}) WHERE r.{run_key} IN $runs{t('r')} RETURN r.{run_key} AS run",
            run_documents=(
                f"MATCH (d:{doc}) WHERE d.{run} IN $runs{t('d')} RETURN d.{run} AS run, count(d) AS documents"
            ),
            preview_everything=(
                f"RETURN COUNT {{ MATCH (d:{doc}{m}) }} AS documents, "
                f"COUNT {{ MATCH (s:{section}) WHERE s.{section_doc} IS NOT NULL{t('s')} }} AS sections, "
                f"COUNT {{ MATCH (c:{chunk}) WHERE c.{chunk_doc} IS NOT NULL{t('c')} }} AS chunks, "
                f"{findings}"
            ),
            preview_scope=(
                f"CALL () {{ MATCH (d:{doc}) WHERE d.{run} IN $runs{t('d')} RETURN d.{key} AS id "
                "UNION UNWIND $ids AS id RETURN id } "
                "WITH collect(id) AS ids "
                f"RETURN COUNT {{ MATCH (d:{doc}) WHERE d.{key} IN ids{t('d')} }} AS documents, "
                f"COUNT {{ MATCH (s:{section}) WHERE s.{section_doc} IN ids{t('s')} }} AS sections, "
                f"COUNT {{ MATCH (c:{chunk}) WHERE c.{chunk_doc} IN ids{t('c')} }} AS chunks, "
                f"{scope_findings}"
            ),
        )
