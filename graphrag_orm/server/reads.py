"""``/search`` and ``/documents``: reads inside the scope the application chose for the request.

Nothing is cached and nothing is written. A document outside the scope does not exist
as far as these reads go: it is neither listed nor shown. Inside a scope limited to
byte ranges (sections, a Cypher scope with spans) a document is listed whole, and
shown with only the chunks inside the scope.
"""

from __future__ import annotations

import re
from typing import Final

from graphrag_orm.catalog import MAX_CHUNK_LIMIT
from graphrag_orm.catalog.values import DocumentSummary
from graphrag_orm.errors import DocumentNotResolved
from graphrag_orm.facade import GraphRag
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retrieval.scope import Scope
from graphrag_orm.server.options import ServerOptions
from graphrag_orm.server.views import ChunkEntry, DocumentEntry, DocumentsPage, DocumentView, Passage, SearchResult

__all__ = ["ServerReads"]

_FULL_ID: Final = re.compile(r"[0-9a-f]{64}")


class ServerReads:
    """The endpoints' reads of one ``GraphRag``, each inside the scope it is given."""

    def __init__(self, rag: GraphRag, options: ServerOptions) -> None:
        self.rag = rag
        self.options = options

    @property
    def question_bound(self) -> int:
        """Characters a question, a query or a turn's question may have: the base options' ``max_question_chars``."""
        return self.retrieval_options(None).max_question_chars

    def retrieval_options(self, scope: Scope | None) -> RetrievalOptions:
        """The base options with, when given, the request's scope."""
        base = self.options.retrieval or self.rag.retriever.options
        return base if scope is None else base.model_copy(update={"scope": scope})

    async def search(self, query: str, limit: int, scope: Scope | None) -> SearchResult:
        """At most ``limit`` passages for ``query``; raises what the retriever raises."""
        options = self.retrieval_options(scope).model_copy(update={"max_items": limit})
        evidence = await self.rag.retriever.retrieve(query, options)
        return SearchResult(
            passages=tuple(Passage.of(item) for item in evidence.items), limits_reached=evidence.limits_reached
        )

    async def documents(self, limit: int, scope: Scope | None) -> DocumentsPage:
        """The first ``limit`` documents by source URI inside ``scope`` (the base options' when None)."""
        scope = scope if scope is not None else self.retrieval_options(None).scope
        if scope is None:
            listed = await self.rag.catalog.documents(limit)
            return DocumentsPage(documents=tuple(_entry(summary) for summary in listed.documents), more=listed.more)
        resolved = await self.rag.retriever.resolve_scope(scope)
        listed = await self.rag.catalog.documents(limit, among=resolved.document_ids)
        return DocumentsPage(documents=tuple(_entry(summary) for summary in listed.documents), more=listed.more)

    async def document(self, document_id: str, scope: Scope | None) -> DocumentView | None:
        """One document by its full id, inside ``scope``; None when absent or outside it."""
        document_id = document_id.strip().lower()
        if not _FULL_ID.fullmatch(document_id):
            return None
        scope = scope if scope is not None else self.retrieval_options(None).scope
        resolved = await self.rag.retriever.resolve_scope(scope) if scope is not None else None
        if resolved is not None and document_id not in resolved.ranges:
            return None
        try:
            detail = await self.rag.catalog.document(document_id, chunk_limit=MAX_CHUNK_LIMIT)
        except DocumentNotResolved:
            return None
        chunks = tuple(
            ChunkEntry(chunk_id=span.id, start_byte=span.start_byte, end_byte=span.end_byte)
            for span in detail.chunks
            if resolved is None or resolved.contains(document_id, span.start_byte, span.end_byte)
        )
        return DocumentView(
            document_id=detail.id,
            source_uri=detail.source_uri,
            title=detail.title,
            media_type=detail.media_type,
            published=detail.published,
            publisher=detail.publisher,
            url=detail.url,
            utf8_length=detail.length_bytes,
            content_hash=detail.content_hash,
            run_id=detail.run_id,
            chunks=chunks,
            limits_reached=detail.limits_reached,
            grounding=await self.rag.catalog.grounding(detail.id),
            text_origin=detail.text_origin,
        )


def _entry(summary: DocumentSummary) -> DocumentEntry:
    return DocumentEntry(
        document_id=summary.id,
        source_uri=summary.source_uri,
        title=summary.title,
        media_type=summary.media_type,
        utf8_length=summary.length_bytes,
        chunks=summary.chunks,
    )
