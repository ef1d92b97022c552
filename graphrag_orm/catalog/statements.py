"""The catalog's reads, rendered once from one model's stored names; every column read by key.

In a tenanted layout (docs/tenancy.md) every read matches the bound tenant's documents,
chunks, sections and runs only (``$tenant``); untenanted, the text is what it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.store import StoredNames

__all__ = ["CatalogStatements"]


@dataclass(frozen=True)
class CatalogStatements:
    """Named reads of documents, runs and chunk spans."""

    #: ``total``.
    count_documents: str
    #: ``$limit`` documents by source URI: ``id``, ``sourceUri``, ``title``, ``mediaType``,
    #: ``lengthBytes``, ``chunks``, ``runId``, ``ingestedAt``.
    documents: str
    #: ``total``.
    count_runs: str
    #: ``$limit`` runs, newest first: ``id``, ``status``, ``startedAt``, ``completedAt``, the counts, ``failureReason``.
    runs: str
    #: The document ``$id``: its summary columns and ``contentHash``, ``published``, ``publisher``,
    #: ``url``, ``textOrigin``, ``pages``, ``sections``.
    document: str
    #: ``$limit`` chunks of ``$id`` by order: ``id``, ``order``, ``startByte``, ``endByte``, ``tokenCount``, ``section``.
    chunks: str
    #: Documents whose id starts with ``$prefix``: ``matches``, ``id`` (the smallest).
    prefix: str
    #: Which of ``$ids`` name a document: ``id``.
    existing: str
    #: How many of ``$ids`` name a document: ``total``.
    count_documents_among: str
    #: The first ``$limit`` of the documents ``$ids`` name, by source URI: the columns of ``documents``.
    documents_among: str
    #: Whether document ``$id`` has chunks whose grounding is ``$chunk`` (adopted, chunk-grounded): ``grounded``.
    chunk_grounded: str

    @classmethod
    def render(cls, names: StoredNames) -> CatalogStatements:
        doc, chunk, section, run = names.document, names.chunk, names.section, names.run
        key, chunk_doc = doc.key, chunk.stored("document_id")
        owned = names.owned
        mine = f" {{{owned.removeprefix(', ')}}}" if owned else ""
        chunks_of = f"COUNT {{ MATCH (c:{chunk.label}) WHERE c.{chunk_doc} = d.{key}{names.tenant_and('c')} }}"
        summary = (
            f"d.{key} AS id, d.{doc.stored('source_uri')} AS sourceUri, d.{doc.stored('title')} AS title, "
            f"d.{doc.stored('media_type')} AS mediaType, d.{doc.stored('length_bytes')} AS lengthBytes, "
            f"{chunks_of} AS chunks, d.{names.run_id} AS runId, d.{doc.stored('ingested_at')} AS ingestedAt"
        )
        counts = ", ".join(
            f"r.{run.stored(attribute)} AS {run.stored(attribute)}"
            for attribute in (
                "documents_ingested",
                "documents_unchanged",
                "documents_failed",
                "chunks_written",
                "failure_reason",
            )
        )
        started = run.stored("started_at")
        section_doc = section.stored("document_id")
        return cls(
            count_documents=f"MATCH (d:{doc.label}{mine}) RETURN count(d) AS total",
            documents=(
                f"MATCH (d:{doc.label}{mine}) WITH d ORDER BY d.{doc.stored('source_uri')}, d.{key} LIMIT $limit "
                f"RETURN {summary}"
            ),
            count_runs=f"MATCH (r:{run.label}{mine}) RETURN count(r) AS total",
            runs=(
                f"MATCH (r:{run.label}{mine}) WITH r ORDER BY r.{started} DESC, r.{run.key} LIMIT $limit "
                f"RETURN r.{run.key} AS id, r.{run.stored('status')} AS status, r.{started} AS startedAt, "
                f"r.{run.stored('completed_at')} AS completedAt, {counts}"
            ),
            document=(
                f"MATCH (d:{doc.label} {{{key}: $id{owned}}}) RETURN {summary}, "
                f"d.{doc.stored('content_hash')} AS contentHash, d.{doc.stored('published')} AS published, "
                f"d.{doc.stored('publisher')} AS publisher, d.{doc.stored('url')} AS url, "
                f"d.{doc.stored('text_origin')} AS textOrigin, size(d.{doc.stored('page_starts')}) AS pages, "
                f"COUNT {{ MATCH (s:{section.label}) WHERE s.{section_doc} = d.{key}{names.tenant_and('s')} }} AS sections"
            ),
            chunks=(
                f"MATCH (c:{chunk.label}) WHERE c.{chunk_doc} = $id{names.tenant_and('c')} "
                f"WITH c ORDER BY c.{chunk.stored('order')}, c.{chunk.stored('start_byte')} LIMIT $limit "
                f"OPTIONAL MATCH (c)-[:{names.chunk_section.relationship_type}]->(s:{section.label}) "
                f"WITH c, head(collect(s.{section.stored('title')})) AS section "
                f"RETURN c.{chunk.key} AS id, c.{chunk.stored('order')} AS `order`, "
                f"c.{chunk.stored('start_byte')} AS startByte, c.{chunk.stored('end_byte')} AS endByte, "
                f"c.{chunk.stored('token_count')} AS tokenCount, section "
                f"ORDER BY `order`, startByte"
            ),
            prefix=(
                f"MATCH (d:{doc.label}{mine}) WHERE d.{key} STARTS WITH $prefix RETURN count(d) AS matches, min(d.{key}) AS id"
            ),
            existing=f"UNWIND $ids AS id MATCH (d:{doc.label} {{{key}: id{owned}}}) RETURN d.{key} AS id",
            count_documents_among=(
                f"UNWIND $ids AS id MATCH (d:{doc.label} {{{key}: id{owned}}}) RETURN count(d) AS total"
            ),
            documents_among=(
                f"UNWIND $ids AS id MATCH (d:{doc.label} {{{key}: id{owned}}}) "
                f"WITH d ORDER BY d.{doc.stored('source_uri')}, d.{key} LIMIT $limit RETURN {summary}"
            ),
            chunk_grounded=(
                f"RETURN EXISTS {{ MATCH (c:{chunk.label}) WHERE c.{chunk_doc} = $id{names.tenant_and('c')} "
                f"AND c.{GROUNDING_PROPERTY} = $chunk }} AS grounded"
            ),
        )
