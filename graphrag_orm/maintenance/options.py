"""Bounds of maintenance: batches, pages and fact updates."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["MIB", "MaintenanceOptions"]

MIB = 1 << 20


class MaintenanceOptions(Options):
    """Bounds of removal; a value outside them is ``ConfigurationError("invalid-option")``."""

    batch_documents: int = Field(100, ge=1, le=1_000, description="documents per batch (one transaction)")
    batch_bytes: int = Field(8 * MIB, ge=1 << 10, le=256 * MIB, description="source bytes per batch")
    page_size: int = Field(1_000, ge=1, le=100_000, description="elements touched per statement")
    max_fact_updates: int = Field(
        100_000, ge=1, le=10_000_000, description="facts one batch may update; over it the batch is halved"
    )
    stale_run_seconds: float | None = Field(
        None,
        ge=1.0,
        le=86_400.0,
        description="a Running run with no live lease and no progress for longer is stale; "
        "None: the ingestion's lease duration (600 s by default)",
    )
