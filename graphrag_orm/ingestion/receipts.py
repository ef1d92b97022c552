"""What an ingestion call reports: per-document outcomes with codes, counts, limits, retries."""

from __future__ import annotations

from enum import StrEnum

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.extraction.summary import ExtractionSummary
from graphrag_orm.placement import PlacementCounts
from graphrag_orm.retry import RetrySummary
from graphrag_orm.values import Limit, Value

__all__ = [
    "DocumentOutcome",
    "DocumentPreview",
    "DocumentStatus",
    "IngestionPreview",
    "IngestionReceipt",
    "PreviewStatus",
    "RunStatus",
]


class DocumentStatus(StrEnum):
    INGESTED = "Ingested"
    UNCHANGED = "Unchanged"
    FAILED = "Failed"


class RunStatus(StrEnum):
    """Running, then Completed (every document has an outcome, not all of them failed) or Failed
    (cancelled, threw, or every document failed)."""

    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"


class DocumentOutcome(Value):
    """One document's outcome; ``error_code`` is a stable code, never a message."""

    document_id: str
    source_uri: str
    status: DocumentStatus
    error_code: DocumentErrorCode | None = None
    chunks: int = 0
    embedding_calls: int = 0
    #: Chunks longer than the embedder reads (``max_input_tokens``): only their start was embedded.
    chunks_over_window: int = 0
    #: ``ingest_chunked`` only: how many of the caller's chunks each rule of the text locator
    #: placed (and how many were skipped as empty); None for ``ingest`` and for a document
    #: that was unchanged or failed before its chunks were placed.
    placement: PlacementCounts | None = None


class IngestionReceipt(Value):
    """The receipt of one ``ingest`` or ``ingest_chunked`` call."""

    run_id: str
    status: RunStatus
    documents: tuple[DocumentOutcome, ...]
    chunks_written: int
    embedding_calls: int
    input_tokens: int | None
    elapsed_seconds: float
    limits_reached: tuple[Limit, ...] = ()
    retries: RetrySummary = RetrySummary()
    #: Chunks written that are longer than the embedder's window (``max_input_tokens``), so only
    #: their first tokens were embedded; when not 0, ``EmbedderWindow`` (the window) is in
    #: ``limits_reached``. Counted with the embedder's ``count_tokens``, else estimated at four
    #: UTF-8 bytes a token.
    chunks_over_window: int = 0
    #: With an ontology: what extraction kept (counted per document), pruned and quarantined.
    extraction: ExtractionSummary | None = None
    #: ``ingest_chunked`` only: the placement counts of the documents ingested, summed.
    placement: PlacementCounts | None = None

    def count(self, status: DocumentStatus) -> int:
        return sum(1 for outcome in self.documents if outcome.status == status)

    @property
    def ingested(self) -> int:
        return self.count(DocumentStatus.INGESTED)

    @property
    def unchanged(self) -> int:
        return self.count(DocumentStatus.UNCHANGED)

    @property
    def failed(self) -> int:
        return self.count(DocumentStatus.FAILED)


class PreviewStatus(StrEnum):
    NEW = "New"
    CHANGED = "Changed"
    UNCHANGED = "Unchanged"
    FAILED = "Failed"


class DocumentPreview(Value):
    document_id: str
    source_uri: str
    status: PreviewStatus
    error_code: DocumentErrorCode | None = None
    chunks: int = 0
    embedding_calls: int = 0
    extraction_calls: int = 0
    input_tokens: int = 0
    chunks_over_window: int = 0


class IngestionPreview(Value):
    """What ``ingest`` would do and cost; nothing was written.

    ``input_tokens`` is counted with the token counter when one is set
    (``tokens_counted``), else estimated at four UTF-8 bytes per token.
    """

    documents: tuple[DocumentPreview, ...]
    chunks: int
    embedding_calls: int
    extraction_calls: int
    input_tokens: int
    tokens_counted: bool
    limits_reached: tuple[Limit, ...] = ()
    #: Chunks that ``ingest`` would embed only in part (over the embedder's ``max_input_tokens``).
    chunks_over_window: int = 0
