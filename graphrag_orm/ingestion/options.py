"""Ingestion settings: every batch, lane and bound has a default and a maximum."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["MAX_CHUNKS_PER_DOCUMENT", "MAX_VECTOR_COORDINATES_PER_DOCUMENT", "IngestionOptions", "chunk_bound"]

#: The largest ``max_chunks_per_document``: one document is one transaction, and it must fit
#: the server's transaction memory (measured in docs/ingest.md, "How large a document can be").
MAX_CHUNKS_PER_DOCUMENT = 15_000
#: Whatever the option, a document's vectors hold at most this many coordinates: the
#: transaction's memory grows with the dimensions (about 30 bytes a coordinate, measured).
MAX_VECTOR_COORDINATES_PER_DOCUMENT = 6_000_000


def chunk_bound(max_chunks_per_document: int, dimensions: int) -> int:
    """The chunks a document may have: the option, capped by the coordinates bound for ``dimensions``."""
    return max(1, min(max_chunks_per_document, MAX_VECTOR_COORDINATES_PER_DOCUMENT // max(dimensions, 1)))


class IngestionOptions(Options):
    """Bounds of one ``ingest`` call; a value outside them is ``ConfigurationError("invalid-option")``."""

    embedding_batch_size: int = Field(32, ge=1, le=256, description="texts per embedding call")
    lanes: int = Field(2, ge=1, le=8, description="model calls in flight at once")
    documents_in_flight: int = Field(4, ge=1, le=64, description="documents loaded, embedded or written at once")
    max_documents: int = Field(10_000, ge=1, le=100_000, description="documents per call; more is reported")
    max_document_bytes: int = Field(16 << 20, ge=1 << 10, le=256 << 20, description="a larger document fails")
    max_chunks_per_document: int = Field(
        5_000,
        ge=1,
        le=MAX_CHUNKS_PER_DOCUMENT,
        description="a document of more chunks (or of more than 6,000,000 vector coordinates) "
        "fails with document-too-large before any model call",
    )
    lease_duration_seconds: float = Field(600.0, ge=1.0, le=86_400.0, description="renewed every third of it")
    wait_for_leases_seconds: float = Field(
        0.0,
        ge=0.0,
        le=86_400.0,
        description="after the pass, documents another run holds are tried again until released or expired, "
        "for at most this long (many workers, one manifest); 0: reported lease-held at once",
    )
    write_attempts: int = Field(3, ge=1, le=10, description="tries of a document's transaction on transient errors")
    fit_chunks_to_embedder: bool = Field(
        True,
        description="size chunks to the embedder's max_input_tokens, counted with its own tokenizer "
        "(count_tokens) when it has one, so no text goes unembedded; off, chunks over it are embedded "
        "in part and counted in the receipt (chunks_over_window, EmbedderWindow)",
    )
