"""What ``/search`` and ``/documents`` return: frozen values with camelCase JSON.

Documents are shown by metadata and chunk spans only, never their text; a search
returns passages labelled as evidence to read and quote, not an answer.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from graphrag_orm.evidence import EvidenceItem, Grounding, PageStart, leave_out_source_grounding, leave_out_unset
from graphrag_orm.values import Limit, Value

__all__ = [
    "SEARCH_LABEL",
    "ChunkEntry",
    "DocumentEntry",
    "DocumentView",
    "DocumentsPage",
    "Passage",
    "SearchResult",
]

SEARCH_LABEL: Final = "evidence to read and quote, not an answer"


class Passage(Value):
    """One evidence item of a search: ``text`` is exactly the stored bytes ``[start_byte, end_byte)``.

    JSON names ``grounding`` only when it is ``Chunk`` (the span is in the stored chunk's own
    text) and ``textOrigin`` only for derived text, so other documents' passages read as before.
    """

    document_id: str
    chunk_id: str
    source_uri: str
    title: str | None = None
    start_byte: int
    end_byte: int
    score: float
    text: str
    pages: tuple[PageStart, ...] | None = None
    grounding: Grounding = Grounding.SOURCE
    text_origin: str | None = None

    @model_serializer(mode="wrap")
    def _json_leaves_out_unset(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        return leave_out_source_grounding(leave_out_unset(handler(self), info, ("pages", "text_origin")), info)

    @classmethod
    def of(cls, item: EvidenceItem) -> Passage:
        return cls(
            document_id=item.document_id,
            chunk_id=item.chunk_id,
            source_uri=item.source_uri,
            title=item.title,
            start_byte=item.start_byte,
            end_byte=item.end_byte,
            score=item.score,
            text=item.text,
            pages=item.pages,
            grounding=item.grounding,
            text_origin=item.text_origin,
        )


class SearchResult(Value):
    """Passages, best first, and the bounds the search reached."""

    label: Literal["evidence to read and quote, not an answer"] = SEARCH_LABEL
    passages: tuple[Passage, ...]
    limits_reached: tuple[Limit, ...] = ()


class DocumentEntry(Value):
    """One document of the list: identity, source, title, media type, length and chunk count."""

    document_id: str
    source_uri: str
    title: str | None = None
    media_type: str | None = None
    utf8_length: int | None = None
    chunks: int = 0


class DocumentsPage(Value):
    """Documents by source URI, inside the application's scope; ``more`` were left out by the limit."""

    documents: tuple[DocumentEntry, ...]
    more: int


class ChunkEntry(Value):
    """Where one chunk lies in the document's UTF-8 bytes (end exclusive)."""

    chunk_id: str
    start_byte: int
    end_byte: int


class DocumentView(Value):
    """One document's metadata and its chunks' spans in order, never their text.

    Inside a scope limited to byte ranges (sections), only the chunks inside it are
    listed. ``limits_reached`` names ``MaxListed`` when the document has more chunks
    than one response lists. JSON names ``grounding`` only for a chunk-grounded (adopted)
    document, whose chunk spans are in each chunk's own text, and ``textOrigin`` only for
    derived text.
    """

    document_id: str
    source_uri: str
    title: str | None = None
    media_type: str | None = None
    published: str | None = None
    publisher: str | None = None
    url: str | None = None
    utf8_length: int | None = None
    content_hash: str | None = None
    run_id: str | None = None
    chunks: tuple[ChunkEntry, ...]
    limits_reached: tuple[Limit, ...] = ()
    grounding: Grounding = Grounding.SOURCE
    text_origin: str | None = None

    @model_serializer(mode="wrap")
    def _json_leaves_out_unset(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        return leave_out_source_grounding(leave_out_unset(handler(self), info, ("text_origin",)), info)
