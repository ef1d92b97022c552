"""The stored-bytes check: is each citation's quote the stored text at its span, read back by chunk id?

An answer's citations are checked against the *database*, never against the evidence
the answer carries: a retriever that handed the model altered text, or an answer
edited afterwards, fails here. For each citation, the chunk of its ``chunk_id`` is
read back (its text and span, never its embedding) and the citation is:

- ``valid`` when ``chunk.start_byte <= start_byte <= end_byte <= chunk.end_byte`` and
  the chunk text's UTF-8 bytes ``[start_byte - chunk.start_byte, end_byte - chunk.start_byte)``
  decode to exactly the quote (nothing forgiven: no whitespace, no marks, no case);
- ``chunk-missing`` when no stored chunk has that id;
- ``outside-chunk`` when the span is not inside the chunk's span;
- ``quote-differs`` when the bytes differ, or cut a code point.

A failed read is ``RetrievalFailed`` (``retrieval-failed``): the case is reported as an error.

:class:`StoredText` is the extension point: :class:`StoredChunks` reads Neo4j through
the store, one batched statement (``UNWIND``) per call, projecting only the id, text
and span; :class:`~graphrag_orm.evaluation.stand_ins.InMemoryRetriever` answers from
its own passages for tests without a database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from neo4j.exceptions import DriverError, Neo4jError

from graphrag_orm.citations import Citation
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import RetrievalFailed
from graphrag_orm.evaluation.values import CitationCheck, CitationStatus
from graphrag_orm.models import LexicalModel
from graphrag_orm.store import Store

__all__ = ["MAX_IDS_PER_READ", "StoredChunk", "StoredChunks", "StoredText", "check_citations"]

MAX_IDS_PER_READ: Final = 1_000
"""Chunk ids read back by one statement; more are read in several."""


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as stored: its text and its span ``[start_byte, end_byte)``."""

    chunk_id: str
    text: str
    start_byte: int
    end_byte: int


@runtime_checkable
class StoredText(Protocol):
    """Reads stored chunks back by id; ids with no chunk are left out of the mapping."""

    async def chunks(self, chunk_ids: Sequence[str]) -> Mapping[str, StoredChunk]: ...


class StoredChunks:
    """:class:`StoredText` on Neo4j: one read per :data:`MAX_IDS_PER_READ` ids, text and span only
    (in a tenanted layout, the bound tenant's chunks and documents only)."""

    def __init__(self, store: Store, model: LexicalModel) -> None:
        self.store = store
        chunk = model.names.chunk
        self.statement = (
            f"UNWIND $ids AS id MATCH (c:{chunk.label} {{{chunk.key}: id{model.names.owned}}}) "
            f"RETURN c.{chunk.key} AS id, c.{chunk.stored('text')} AS text, "
            f"c.{chunk.stored('start_byte')} AS startByte, c.{chunk.stored('end_byte')} AS endByte"
        )
        document = model.names.document
        self.uris_statement = (
            f"UNWIND $ids AS id MATCH (d:{document.label} {{{document.key}: id{model.names.owned}}}) "
            f"RETURN d.{document.key} AS id, d.{document.stored('source_uri')} AS uri"
        )

    async def chunks(self, chunk_ids: Sequence[str]) -> Mapping[str, StoredChunk]:
        ids = sorted(set(chunk_ids))
        found: dict[str, StoredChunk] = {}
        for start in range(0, len(ids), MAX_IDS_PER_READ):
            try:
                rows = await self.store.read(
                    self.statement, {"ids": ids[start : start + MAX_IDS_PER_READ]}, name="evaluation.stored_chunks"
                )
            except (Neo4jError, DriverError) as error:
                raise RetrievalFailed(
                    ErrorCode.RETRIEVAL_FAILED, f"reading stored chunks back failed: {type(error).__name__}"
                ) from error
            for row in rows:
                found[row["id"]] = StoredChunk(row["id"], row["text"], int(row["startByte"]), int(row["endByte"]))
        return found

    async def document_uris(self, document_ids: Sequence[str]) -> Mapping[str, str]:
        """Each stored document's source URI by its id (ids with no document are left out)."""
        ids = sorted(set(document_ids))
        found: dict[str, str] = {}
        for start in range(0, len(ids), MAX_IDS_PER_READ):
            try:
                rows = await self.store.read(
                    self.uris_statement, {"ids": ids[start : start + MAX_IDS_PER_READ]}, name="evaluation.document_uris"
                )
            except (Neo4jError, DriverError) as error:
                raise RetrievalFailed(
                    ErrorCode.RETRIEVAL_FAILED, f"reading stored documents back failed: {type(error).__name__}"
                ) from error
            found.update({row["id"]: row["uri"] for row in rows if row["uri"]})
        return found


def _status(citation: Citation, chunk: StoredChunk | None) -> CitationStatus:
    if chunk is None:
        return CitationStatus.CHUNK_MISSING
    if not chunk.start_byte <= citation.start_byte <= citation.end_byte <= chunk.end_byte:
        return CitationStatus.OUTSIDE_CHUNK
    stored = chunk.text.encode("utf-8")[citation.start_byte - chunk.start_byte : citation.end_byte - chunk.start_byte]
    try:
        same = stored.decode("utf-8") == citation.quote
    except UnicodeDecodeError:
        same = False
    return CitationStatus.VALID if same else CitationStatus.QUOTE_DIFFERS


def check_citations(citations: Sequence[Citation], stored: Mapping[str, StoredChunk]) -> tuple[CitationCheck, ...]:
    """Each citation with its status under the module's rules, in order."""
    return tuple(
        CitationCheck(
            chunk_id=citation.chunk_id,
            document_id=citation.document_id,
            start_byte=citation.start_byte,
            end_byte=citation.end_byte,
            quote=citation.quote,
            status=_status(citation, stored.get(citation.chunk_id)),
        )
        for citation in citations
    )
