"""Ingestion settings: every batch, lane and bound has a default and a maximum."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["IngestionOptions"]


class IngestionOptions(Options):
    """Bounds of one ``ingest`` call; a value outside them is ``ConfigurationError("invalid-option")``."""

    embedding_batch_size: int = Field(32, ge=1, le=256, description="texts per embedding call")
    lanes: int = Field(2, ge=1, le=8, description="model calls in flight at once")
    documents_in_flight: int = Field(4, ge=1, le=64, description="documents loaded, embedded or written at once")
    max_documents: int = Field(10_000, ge=1, le=100_000, description="documents per call; more is reported")
    max_document_bytes: int = Field(16 << 20, ge=1 << 10, le=256 << 20, description="a larger document fails")
    lease_duration_seconds: float = Field(600.0, ge=1.0, le=86_400.0, description="renewed every third of it")
    write_attempts: int = Field(3, ge=1, le=10, description="tries of a document's transaction on transient errors")
