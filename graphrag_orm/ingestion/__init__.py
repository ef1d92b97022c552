"""Ingestion: runs, leases, embeddings and one transaction per document."""

from graphrag_orm.ingestion.options import IngestionOptions
from graphrag_orm.ingestion.receipts import (
    DocumentOutcome,
    DocumentPreview,
    DocumentStatus,
    IngestionPreview,
    IngestionReceipt,
    PreviewStatus,
    RunStatus,
)
from graphrag_orm.ingestion.service import IngestionService, settings_fingerprint

__all__ = [
    "DocumentOutcome",
    "DocumentPreview",
    "DocumentStatus",
    "IngestionOptions",
    "IngestionPreview",
    "IngestionReceipt",
    "IngestionService",
    "PreviewStatus",
    "RunStatus",
    "settings_fingerprint",
]
