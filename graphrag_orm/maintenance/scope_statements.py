"""The reads that find what a removal covers, rendered once from the stored names.

Every statement returns named columns (read by key). Pages of documents are ordered
by id and resume after ``$after``, at most ``$page`` ids each. A section or chunk is
an orphan when it names a ``documentId`` that no document node has; one without a
``documentId`` is never part of a scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.models import HAS_FINDING
from graphrag_orm.store import StoredNames

__all__ = ["ScopeStatements", "orphan_chunk", "orphan_section"]


def orphan_chunk(names: StoredNames, var: str = "c") -> str:
    """A predicate on chunk ``var``: it names a document that is not stored."""
    doc, of = names.document, names.chunk.stored("document_id")
    return f"{var}.{of} IS NOT NULL AND NOT EXISTS {{ MATCH (:{doc.label} {{{doc.key}: {var}.{of}}}) }}"


def orphan_section(names: StoredNames, var: str = "s") -> str:
    """A predicate on section ``var``: it names a document that is not stored."""
    doc, of = names.document, names.section.stored("document_id")
    return f"{var}.{of} IS NOT NULL AND NOT EXISTS {{ MATCH (:{doc.label} {{{doc.key}: {var}.{of}}}) }}"


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
        return cls(
            all_documents=f"MATCH (d:{doc}) WHERE d.{key} > $after {page}",
            documents_of_runs=f"MATCH (d:{doc}) WHERE d.{run} IN $runs AND d.{key} > $after {page}",
            named=(
                f"UNWIND $ids AS id OPTIONAL MATCH (d:{doc} {{{key}: id}}) "
                f"RETURN id, d IS NOT NULL AS found, d.{length} AS bytes, d.{run} AS run, "
                f"d IS NOT NULL AND EXISTS {{ MATCH (:{run_label} {{{run_key}: d.{run}}}) }} AS known"
            ),
            named_parts=(
                "UNWIND $ids AS id RETURN id, "
                f"COLLECT {{ MATCH (c:{chunk} {{{chunk_doc}: id}}) RETURN c.{end} }} + "
                f"COLLECT {{ MATCH (s:{section} {{{section_doc}: id}}) RETURN 0 }} AS ends"
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
                f"CALL () {{ MATCH (x:{doc}) RETURN 'documents' AS kind, x.{run} AS run, {other} AS other "
                f"UNION ALL MATCH (x:{section}) RETURN 'sections' AS kind, x.{run} AS run, {other} AS other "
                f"UNION ALL MATCH (x:{chunk}) RETURN 'chunks' AS kind, x.{run} AS run, {other} AS other "
                f"UNION ALL MATCH ()-[x:{names.structural}]->() RETURN 'links' AS kind, x.{run} AS run, 0 AS other }} "
                "RETURN kind, run, count(*) AS elements, sum(other) AS other"
            ),
            graph_unowned=(
                f"CALL () {{ MATCH (x:{doc}) RETURN x UNION MATCH (x:{section}) RETURN x "
                f"UNION MATCH (x:{chunk}) RETURN x }} "
                "MATCH (x)-[r]-() WHERE NOT type(r) IN $allowed "
                "RETURN type(r) AS type, count(DISTINCT r) AS links ORDER BY type"
            ),
            runs_exist=f"MATCH (r:{run_label}) WHERE r.{run_key} IN $runs RETURN r.{run_key} AS run",
            run_documents=f"MATCH (d:{doc}) WHERE d.{run} IN $runs RETURN d.{run} AS run, count(d) AS documents",
            preview_everything=(
                f"RETURN COUNT {{ MATCH (d:{doc}) }} AS documents, "
                f"COUNT {{ MATCH (s:{section}) WHERE s.{section_doc} IS NOT NULL }} AS sections, "
                f"COUNT {{ MATCH (c:{chunk}) WHERE c.{chunk_doc} IS NOT NULL }} AS chunks, "
                f"COUNT {{ MATCH (f:{finding}) }} AS findingsRetracted, 0 AS findingsTrimmed, "
                f"COUNT {{ MATCH (r:{report}) }} AS reports"
            ),
            preview_scope=(
                f"CALL () {{ MATCH (d:{doc}) WHERE d.{run} IN $runs RETURN d.{key} AS id "
                "UNION UNWIND $ids AS id RETURN id } "
                "WITH collect(id) AS ids "
                f"RETURN COUNT {{ MATCH (d:{doc}) WHERE d.{key} IN ids }} AS documents, "
                f"COUNT {{ MATCH (s:{section}) WHERE s.{section_doc} IN ids }} AS sections, "
                f"COUNT {{ MATCH (c:{chunk}) WHERE c.{chunk_doc} IN ids }} AS chunks, "
                f"COUNT {{ MATCH (f:{finding}) WHERE {gone} }} AS findingsRetracted, "
                f"COUNT {{ MATCH (f:{finding}) WHERE any(d IN f.documentIds WHERE d IN ids) AND NOT {gone} }} "
                "AS findingsTrimmed, "
                f"COUNT {{ MATCH (r:{report})-[:{HAS_FINDING}]->(:{finding}) WITH DISTINCT r "
                f"WHERE NOT EXISTS {{ MATCH (r)-[:{HAS_FINDING}]->(f:{finding}) WHERE NOT {gone} }} RETURN r }} "
                "AS reports"
            ),
        )
