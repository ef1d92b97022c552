"""Ingestion: runs, leases, embeddings and one transaction per document.

``ingest`` chunks with the toolkit's chunker; ``ingest_chunked`` takes chunks another
library made (:class:`ChunkedDocument`, :class:`ChunkText`), placed in the stored text
by the text locator (:mod:`graphrag_orm.placement`), with the splitter named by
:func:`chunkers.fingerprint_of <graphrag_orm.ingestion.chunkers.fingerprint_of>`.
"""

from graphrag_orm.ingestion import chunkers
from graphrag_orm.ingestion.chunked import ChunkedDocument
from graphrag_orm.ingestion.chunkers import fingerprint_of
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
from graphrag_orm.placement import ChunkText, PlacementCounts, PlacementMethod

__all__ = [
    "ChunkText",
    "ChunkedDocument",
    "DocumentOutcome",
    "DocumentPreview",
    "DocumentStatus",
    "IngestionOptions",
    "IngestionPreview",
    "IngestionReceipt",
    "IngestionService",
    "PlacementCounts",
    "PlacementMethod",
    "PreviewStatus",
    "RunStatus",
    "chunkers",
    "fingerprint_of",
    "settings_fingerprint",
]
