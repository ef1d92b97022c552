"""What the catalog returns: frozen values with camelCase JSON, never stored text."""

from __future__ import annotations

from datetime import datetime

from graphrag_orm.values import Limit, Value

__all__ = ["CatalogChunk", "DocumentDetail", "DocumentList", "DocumentSummary", "RunList", "RunSummary"]


class DocumentSummary(Value):
    """One stored document: identity, source, title, size, chunks and the run that wrote it."""

    id: str
    source_uri: str
    title: str | None = None
    media_type: str | None = None
    length_bytes: int | None = None
    chunks: int = 0
    run_id: str | None = None
    ingested_at: datetime | None = None


class DocumentList(Value):
    """Documents ordered by source URI; ``total`` counts every stored one, so ``more`` are left out."""

    documents: tuple[DocumentSummary, ...]
    total: int
    limits_reached: tuple[Limit, ...] = ()

    @property
    def more(self) -> int:
        return max(self.total - len(self.documents), 0)


class RunSummary(Value):
    """One ingestion run as its node records it."""

    id: str
    status: str
    started_at: datetime | None = None
    completed_at: datetime | None = None
    documents_ingested: int = 0
    documents_unchanged: int = 0
    documents_failed: int = 0
    chunks_written: int = 0
    failure_reason: str | None = None


class RunList(Value):
    """Runs, newest first; ``total`` counts every run node, so ``more`` are left out."""

    runs: tuple[RunSummary, ...]
    total: int
    limits_reached: tuple[Limit, ...] = ()

    @property
    def more(self) -> int:
        return max(self.total - len(self.runs), 0)


class CatalogChunk(Value):
    """Where one chunk lies in the document's UTF-8 bytes (end exclusive), and its section's title."""

    id: str
    order: int
    start_byte: int
    end_byte: int
    token_count: int | None = None
    section: str | None = None


class DocumentDetail(Value):
    """One document's metadata and its chunk spans in order (at most the limit; ``chunk_count`` is all)."""

    id: str
    source_uri: str
    title: str | None = None
    media_type: str | None = None
    length_bytes: int | None = None
    content_hash: str | None = None
    run_id: str | None = None
    ingested_at: datetime | None = None
    published: str | None = None
    publisher: str | None = None
    url: str | None = None
    text_origin: str | None = None
    pages: int | None = None
    sections: int = 0
    chunk_count: int = 0
    chunks: tuple[CatalogChunk, ...] = ()
    limits_reached: tuple[Limit, ...] = ()
