"""Bounds of a re-embedding: pages, batches, lanes and retries, each with a default and a maximum."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.retry import RetryOptions
from graphrag_orm.values import Options

__all__ = ["MAX_BACKFILL_PAGE", "MAX_PAGE", "BackfillOptions", "PageOptions"]

#: The largest backfill page: one page is one write transaction holding its vectors
#: (1,000 x 4,096 coordinates stays within ingestion's measured per-transaction bound).
MAX_BACKFILL_PAGE = 1_000
#: The largest page of ``complete()`` and ``cleanup()`` (they set or remove one property a chunk).
MAX_PAGE = 10_000


class BackfillOptions(Options):
    """Bounds of one ``backfill`` call; a value outside them is ``ConfigurationError("invalid-option")``."""

    page_size: int = Field(100, ge=1, le=MAX_BACKFILL_PAGE, description="chunks read, embedded and written a page")
    embedding_batch_size: int = Field(32, ge=1, le=256, description="texts per embedding call")
    lanes: int = Field(2, ge=1, le=8, description="embedding calls of a page in flight at once")
    max_pages: int = Field(
        10_000, ge=1, le=1_000_000, description="pages per call; more is reported (MaxPages) and the next call resumes"
    )
    write_attempts: int = Field(3, ge=1, le=10, description="tries of a page's transaction on transient errors")
    retry: RetryOptions = Field(default_factory=RetryOptions, description="retries of embedding calls")


class PageOptions(Options):
    """Bounds of one ``complete`` or ``cleanup`` call."""

    page_size: int = Field(1_000, ge=1, le=MAX_PAGE, description="chunks changed a transaction")
    max_pages: int = Field(
        10_000, ge=1, le=1_000_000, description="pages per call; more is reported (MaxPages) and the next call resumes"
    )
