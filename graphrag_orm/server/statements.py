"""The reads the endpoints add to the catalog's: documents listed inside a resolved scope, and a document's grounding."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.evidence import GROUNDING_PROPERTY
from graphrag_orm.store import StoredNames

__all__ = ["ServerStatements"]


@dataclass(frozen=True)
class ServerStatements:
    """Named reads, rendered once from one model's stored names; columns read by key."""

    #: Which of ``$ids`` are documents, the first ``$limit`` by source URI then id: ``id``,
    #: ``sourceUri``, ``title``, ``mediaType``, ``lengthBytes``, ``chunks``.
    documents_in: str
    #: Whether document ``$id`` has chunks whose grounding is ``$chunk`` (adopted, chunk-grounded): ``grounded``.
    chunk_grounded: str

    @classmethod
    def render(cls, names: StoredNames) -> ServerStatements:
        doc, chunk = names.document, names.chunk
        key, uri = doc.key, doc.stored("source_uri")
        return cls(
            documents_in=(
                f"UNWIND $ids AS id MATCH (d:{doc.label} {{{key}: id}}) "
                f"WITH d ORDER BY d.{uri}, d.{key} LIMIT $limit "
                f"RETURN d.{key} AS id, d.{uri} AS sourceUri, d.{doc.stored('title')} AS title, "
                f"d.{doc.stored('media_type')} AS mediaType, d.{doc.stored('length_bytes')} AS lengthBytes, "
                f"COUNT {{ MATCH (c:{chunk.label}) WHERE c.{chunk.stored('document_id')} = d.{key} }} AS chunks"
            ),
            chunk_grounded=(
                f"RETURN EXISTS {{ MATCH (c:{chunk.label}) WHERE c.{chunk.stored('document_id')} = $id "
                f"AND c.{GROUNDING_PROPERTY} = $chunk }} AS grounded"
            ),
        )
