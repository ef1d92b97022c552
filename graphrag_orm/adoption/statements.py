"""Every statement adoption sends, rendered once from a lexical model's stored names.

Labels, types and property names come from the layout's model classes
(:class:`~graphrag_orm.store.StoredNames`); the path is neo4j-graphrag's ``path``. Every
value is a parameter; columns are read by key. Names (``adoption.*``) are what the
store's hooks see. Nodes found by a read are written by element id in the same
transaction, so the id cannot move between the read and the write.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.adoption.identity import PATH_PROPERTY
from graphrag_orm.codes import ErrorCode
from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.models import LexicalModel

__all__ = ["AdoptionStatements"]

# A chunk with a missing or repeated index, named by its document's path and the index.
_INDEX_EXAMPLE = f"coalesce(d.{PATH_PROPERTY}, elementId(d)) + ' #' + coalesce(toStringOrNull(index), 'none')"


@dataclass(frozen=True)
class AdoptionStatements:
    """The dry run's reads, apply's page writes and undo's removals for one layout."""

    #: The stored names apply writes on documents and chunks (undo removes exactly these).
    document_keys: tuple[str, ...]
    chunk_keys: tuple[str, ...]
    #: ``documents``, ``chunks``, ``unembedded``, ``documentLinks``, ``nextLinks``.
    counts: str
    #: One statement per blocker code: ``count`` and ``examples`` (``$listed`` at most).
    blockers: dict[ErrorCode, str]
    #: ``$paths``: each document of those paths with its chunks' ``index`` and ``text``.
    chunks_of_paths: str
    #: ``$limit`` documents without a key, by path: ``element``, ``path``, ``chunks``.
    page: str
    set_documents: str
    set_chunks: str
    #: ``$elements`` (chunks), ``$run``: stamps their document and next-chunk links; ``links``.
    stamp_links: str
    #: ``$run``, ``$limit``: one page of removals each; ``removed``.
    undo_documents: str
    undo_chunks: str
    undo_links: str
    #: ``$rows``: the run node, created Running; ``$id``, ``$counts``: its status and counts, then completedAt.
    start_run: str
    finish_run: str
    #: ``$run``: ``fingerprint`` of that run (no row when there is none).
    run: str
    #: ``$run``: deletes the run node when nothing names it any more.
    delete_run: str

    @classmethod
    def render(cls, model: LexicalModel) -> AdoptionStatements:
        names = model.names
        doc, chunk, run = names.document, names.chunk, names.run
        d, c = doc.label, chunk.label
        from_doc, next_chunk = names.chunk_document.relationship_type, names.next_chunk.relationship_type
        order, text = chunk.stored("order"), chunk.stored("text")
        embedding, run_id = chunk.stored("embedding"), names.run_id
        document_keys = (doc.key, *(doc.stored(a) for a in ("source_uri", "media_type", "content_hash")))
        document_keys += (doc.stored("length_bytes"), run_id)
        chunk_keys = (chunk.key, *(chunk.stored(a) for a in ("document_id", "start_byte", "end_byte")))
        chunk_keys += (GROUNDING_PROPERTY, chunk.stored("embedding_set_id"), run_id)
        owned = f"EXISTS {{ MATCH (r:{run.label}) WHERE r.{run.key} = n.{run_id} }}"
        listed = "collect({})[..$listed] AS examples"
        in_doc = f"(c)-[:{from_doc}]->(:{d})"
        blockers = {
            ErrorCode.CHUNK_WITHOUT_DOCUMENT: (
                f"MATCH (c:{c}) WHERE NOT EXISTS {{ {in_doc} }} "
                f"RETURN count(c) AS count, {listed.format('elementId(c)')}"
            ),
            ErrorCode.CHUNK_IN_SEVERAL_DOCUMENTS: (
                f"MATCH (c:{c}) WHERE COUNT {{ {in_doc} }} > 1 RETURN count(c) AS count, {listed.format('elementId(c)')}"
            ),
            ErrorCode.DOCUMENT_WITHOUT_PATH: (
                f"MATCH (d:{d}) WHERE d.{PATH_PROPERTY} IS NULL OR NOT d.{PATH_PROPERTY} IS :: STRING "
                f"OR trim(d.{PATH_PROPERTY}) = '' RETURN count(d) AS count, {listed.format('elementId(d)')}"
            ),
            ErrorCode.DUPLICATE_PATH: (
                f"MATCH (d:{d}) WHERE d.{PATH_PROPERTY} IS :: STRING NOT NULL WITH d.{PATH_PROPERTY} AS path, count(d) AS n "
                f"WHERE n > 1 RETURN coalesce(sum(n), 0) AS count, {listed.format('path')}"
            ),
            ErrorCode.CHUNK_WITHOUT_INDEX: (
                f"MATCH (c:{c})-[:{from_doc}]->(d:{d}) WITH d, c.{order} AS index, count(c) AS n "
                f"WHERE index IS NULL OR NOT index IS :: INTEGER OR n > 1 "
                f"RETURN coalesce(sum(n), 0) AS count, "
                f"{listed.format(_INDEX_EXAMPLE)}"
            ),
            ErrorCode.CHUNK_WITHOUT_TEXT: (
                f"MATCH (c:{c}) WHERE c.{text} IS NULL OR NOT c.{text} IS :: STRING "
                f"RETURN count(c) AS count, {listed.format('elementId(c)')}"
            ),
            ErrorCode.EMBEDDING_DIMENSIONS: (
                f"MATCH (c:{c}) WHERE c.{embedding} IS NOT NULL AND size(c.{embedding}) <> $dimensions "
                f"RETURN count(c) AS count, {listed.format('elementId(c)')}"
            ),
            ErrorCode.OWNED_BY_RUN: (
                f"MATCH (n) WHERE (n:{d} OR n:{c}) AND n.{run_id} IS NOT NULL AND {owned} "
                f"RETURN count(n) AS count, {listed.format('elementId(n)')}"
            ),
            ErrorCode.PROPERTY_TAKEN: (
                f"CALL () {{ MATCH (n:{d}) WHERE any(k IN keys(n) WHERE k IN $documentKeys) RETURN n AS e "
                f"UNION MATCH (n:{c}) WHERE any(k IN keys(n) WHERE k IN $chunkKeys) RETURN n AS e }} "
                f"WITH e WHERE e.{run_id} IS NULL OR NOT EXISTS {{ MATCH (r:{run.label}) WHERE r.{run.key} = e.{run_id} }} "
                f"WITH collect(elementId(e)) AS nodes "
                f"CALL () {{ MATCH (:{c})-[l:{from_doc}|{next_chunk}]->() WHERE l.{run_id} IS NOT NULL "
                f"RETURN collect(elementId(l)) AS links }} "
                f"RETURN size(nodes) + size(links) AS count, (nodes + links)[..$listed] AS examples"
            ),
        }
        counts = (
            f"CALL () {{ MATCH (d:{d}) RETURN count(d) AS documents }} "
            f"CALL () {{ MATCH (c:{c}) RETURN count(c) AS chunks, "
            f"count(CASE WHEN c.{embedding} IS NULL THEN 1 END) AS unembedded }} "
            f"CALL () {{ MATCH (:{c})-[l:{from_doc}]->(:{d}) RETURN count(l) AS documentLinks }} "
            f"CALL () {{ MATCH (:{c})-[l:{next_chunk}]->(:{c}) RETURN count(l) AS nextLinks }} "
            "RETURN documents, chunks, unembedded, documentLinks, nextLinks"
        )
        chunk_rows = (
            f"COLLECT {{ MATCH (c:{c})-[:{from_doc}]->(d) "
            f"RETURN {{element: elementId(c), index: c.{order}, text: c.{text}, embedded: c.{embedding} IS NOT NULL}} }}"
        )
        return cls(
            document_keys=document_keys,
            chunk_keys=chunk_keys,
            counts=counts,
            blockers=blockers,
            chunks_of_paths=(
                f"UNWIND $paths AS path MATCH (d:{d}) WHERE d.{PATH_PROPERTY} = path "
                f"RETURN path, {chunk_rows} AS chunks"
            ),
            page=(
                f"MATCH (d:{d}) WHERE d.{doc.key} IS NULL WITH d ORDER BY d.{PATH_PROPERTY} LIMIT $limit "
                f"RETURN elementId(d) AS element, d.{PATH_PROPERTY} AS path, {chunk_rows} AS chunks"
            ),
            set_documents=f"UNWIND $rows AS row MATCH (d:{d}) WHERE elementId(d) = row.element SET d += row.props",
            set_chunks=f"UNWIND $rows AS row MATCH (c:{c}) WHERE elementId(c) = row.element SET c += row.props",
            stamp_links=(
                f"UNWIND $elements AS element MATCH (c:{c}) WHERE elementId(c) = element "
                f"CALL (c) {{ MATCH (c)-[l:{from_doc}]->(:{d}) RETURN l "
                f"UNION MATCH (c)-[l:{next_chunk}]->(:{c}) RETURN l }} "
                f"SET l.{run_id} = $run RETURN count(l) AS links"
            ),
            undo_documents=_remove(f"(n:{d})", f"n.{run_id} = $run", "n", document_keys),
            undo_chunks=_remove(f"(n:{c})", f"n.{run_id} = $run", "n", chunk_keys),
            undo_links=_remove(f"(:{c})-[n:{from_doc}|{next_chunk}]->()", f"n.{run_id} = $run", "n", (run_id,)),
            start_run=run.create_statement(),
            finish_run=(
                f"MATCH (r:{run.label} {{{run.key}: $id}}) SET r += $counts, r.{run.stored('completed_at')} = datetime()"
            ),
            run=f"MATCH (r:{run.label} {{{run.key}: $run}}) RETURN r.{run.stored('settings_fingerprint')} AS fingerprint",
            delete_run=(
                f"MATCH (r:{run.label} {{{run.key}: $run}}) "
                f"WHERE NOT EXISTS {{ MATCH (n) WHERE (n:{d} OR n:{c}) AND n.{run_id} = $run }} "
                f"AND NOT EXISTS {{ MATCH (:{c})-[l:{from_doc}|{next_chunk}]->() WHERE l.{run_id} = $run }} "
                "DELETE r RETURN count(r) AS deleted"
            ),
        )


def _remove(pattern: str, where: str, var: str, keys: tuple[str, ...]) -> str:
    removed = ", ".join(f"{var}.{key}" for key in keys)
    return f"MATCH {pattern} WHERE {where} WITH {var} LIMIT $limit REMOVE {removed} RETURN count({var}) AS removed"
