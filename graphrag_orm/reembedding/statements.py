"""The re-embedding's Cypher, rendered once from the stored names and the plan's two properties.

Labels and property names come from the model classes (``StoredNames``) and from names
the plan validated as plain identifiers; every value (set ids, keys, vectors, page
sizes) is a parameter. Reads project keys, texts and counts, never a vector.

A chunk's staging vector is *from the new set* when the staging property holds a vector
and ``coalesce(stagedEmbeddingSetId, embeddingSetId)`` is the new set's id: staged by a
backfill (the marker), or completed, or written by an ingestion already on the new
layout. Every other chunk is to do.

In a tenanted layout (docs/tenancy.md) every statement reads, counts and writes the bound
tenant's chunks only (``$tenant``, in the statement itself): a tenant's backfill never
sends another tenant's text to its embedder. Untenanted, every statement is what it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.reembedding.names import STAGED_SET_PROPERTY
from graphrag_orm.store import StoredNames

__all__ = ["ReembeddingStatements", "chunk_conditions"]


def chunk_conditions(names: StoredNames, staging: str) -> tuple[str, str, str]:
    """Conditions on a chunk ``c`` (``$to``: the new set's id): its staging vector is from the new
    set, it is completed, it is still to do."""
    set_id, marker = names.chunk.stored("embedding_set_id"), STAGED_SET_PROPERTY
    return (
        f"c.{staging} IS NOT NULL AND coalesce(c.{marker}, c.{set_id}, '') = $to",
        f"coalesce(c.{staging} IS NOT NULL AND c.{marker} IS NULL AND c.{set_id} = $to, false)",
        f"(c.{staging} IS NULL OR coalesce(c.{marker}, c.{set_id}, '') <> $to)",
    )


@dataclass(frozen=True)
class ReembeddingStatements:
    """Parameters beside each statement; ``$to`` is the new set's id throughout."""

    #: ``$to``: ``chunks``, ``backfilled``, ``completed``, ``old_vectors`` (counts).
    progress: str
    #: ``$to``: ``to_do`` (count).
    to_do: str
    #: ``$to``, ``$after``, ``$page``: ``id`` and ``text`` of chunks to do, by key.
    page: str
    #: ``$to``, ``$rows`` (``id``, ``text``, ``vector``): ``written`` (count); a chunk whose text
    #: changed since it was read is skipped.
    stage: str
    #: ``$to``, ``$page``: ``completed`` (count) of one page.
    complete: str
    #: ``$to``, ``$page``: ``removed`` (count) of one page.
    cleanup: str
    #: ``$to``: ``kept`` (count): chunks holding an old vector that are not completed.
    not_completed: str

    @classmethod
    def render(cls, names: StoredNames, live: str, staging: str) -> ReembeddingStatements:
        chunk = names.chunk
        label, key, text, set_id = chunk.label, chunk.key, chunk.stored("text"), chunk.stored("embedding_set_id")
        marker = STAGED_SET_PROPERTY
        from_new, completed, to_do = chunk_conditions(names, staging)
        t = names.tenant_and("c")
        return cls(
            progress=(
                f"MATCH (c:{label}) {names.tenant_where('c')}RETURN count(c) AS chunks, "
                f"count(CASE WHEN {from_new} THEN 1 END) AS backfilled, "
                f"count(CASE WHEN {completed} THEN 1 END) AS completed, "
                f"count(c.{live}) AS old_vectors"
            ),
            to_do=f"MATCH (c:{label}) WHERE {to_do}{t} RETURN count(c) AS to_do",
            page=(
                f"MATCH (c:{label}) WHERE c.{key} > $after AND {to_do}{t} "
                f"RETURN c.{key} AS id, c.{text} AS text ORDER BY id LIMIT $page"
            ),
            stage=(
                f"UNWIND $rows AS row MATCH (c:{label} {{{key}: row.id{names.owned}}}) WHERE c.{text} = row.text "
                f"SET c.{staging} = row.vector, c.{marker} = $to RETURN count(c) AS written"
            ),
            complete=(
                f"MATCH (c:{label}) WHERE c.{marker} = $to AND c.{staging} IS NOT NULL{t} "
                f"WITH c LIMIT $page SET c.{set_id} = $to REMOVE c.{marker} RETURN count(c) AS completed"
            ),
            cleanup=(
                f"MATCH (c:{label}) WHERE c.{live} IS NOT NULL AND {completed}{t} "
                f"WITH c LIMIT $page REMOVE c.{live} RETURN count(c) AS removed"
            ),
            not_completed=(
                f"MATCH (c:{label}) WHERE c.{live} IS NOT NULL AND NOT ({completed}){t} RETURN count(c) AS kept"
            ),
        )
