"""Bounds of maintenance: batches, pages and fact updates."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.values import Options

__all__ = [
    "DEFAULT_TENANT_BATCH_DOCUMENTS",
    "MAX_TENANT_BATCH_DOCUMENTS",
    "MIB",
    "MaintenanceOptions",
    "check_tenant_batch",
]

MIB = 1 << 20

DEFAULT_TENANT_BATCH_DOCUMENTS = 100
"""Documents per batch (one transaction) when a tenant is removed whole (``remove_tenant``)."""
MAX_TENANT_BATCH_DOCUMENTS = 1_000
"""At most this many documents per batch of ``remove_tenant``; more (or fewer than 1) is ``invalid-option``."""


def check_tenant_batch(batch_documents: object) -> int:
    """``batch_documents`` when it is 1 to :data:`MAX_TENANT_BATCH_DOCUMENTS`; else ``invalid-option``."""
    if isinstance(batch_documents, bool) or not isinstance(batch_documents, int):
        raise ConfigurationError(ErrorCode.INVALID_OPTION, "a tenant's batch size must be a whole number of documents")
    if not 1 <= batch_documents <= MAX_TENANT_BATCH_DOCUMENTS:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            f"a tenant's batch size must be 1 to {MAX_TENANT_BATCH_DOCUMENTS} documents; got {batch_documents}",
        )
    return batch_documents


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
