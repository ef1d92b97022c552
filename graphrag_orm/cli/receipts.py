"""How ``ingest`` shows its receipt and preview: one row a document, with the code in full and what it means.

Outcomes carry stable codes, never messages (so scripts can rely on them); the table
adds a short explanation of each code from :data:`DOCUMENT_ERROR_MESSAGES`, and never
cuts a code short, however narrow the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Column, Table
from rich.text import Text

from graphrag_orm.cli._common import stored
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.ingestion import DocumentOutcome, DocumentPreview, IngestionPreview, IngestionReceipt

__all__ = [
    "DOCUMENT_ERROR_MESSAGES",
    "PDF_EXTRA_MISSING",
    "explain",
    "pdf_extra_missing",
    "preview_table",
    "receipt_table",
]

DOCUMENT_ERROR_MESSAGES: dict[DocumentErrorCode, str] = {
    DocumentErrorCode.UNSUPPORTED_MEDIA_TYPE: "no loader reads this kind of file (.md, .markdown, .txt, .pdf)",
    DocumentErrorCode.READ_FAILED: "the file could not be read (missing, or no permission)",
    DocumentErrorCode.INVALID_UTF8: "the text is not valid UTF-8",
    DocumentErrorCode.DOCUMENT_TOO_LARGE: "over the document size or chunk bound",
    DocumentErrorCode.PDF_NO_TEXT: "the PDF has no text layer (scanned pages need OCR first)",
    DocumentErrorCode.PDF_UNREADABLE: "the PDF could not be parsed",
    DocumentErrorCode.LEASE_HELD: "another ingestion is writing this document now; try again later",
    DocumentErrorCode.LEASE_LOST: "the document's lease expired while it was written; nothing was kept",
    DocumentErrorCode.EMBEDDING_FAILED: "the embedding model call failed",
    DocumentErrorCode.EMBEDDING_COUNT: "the embedding model returned the wrong number of vectors",
    DocumentErrorCode.EMBEDDING_DIMENSIONS: "the embedding model returned vectors of other dimensions than the index",
    DocumentErrorCode.INVALID_EMBEDDING: "the embedding model returned an invalid vector (not finite, or all zero)",
    DocumentErrorCode.RATE_LIMITED: "the model kept answering 429 (rate limited) after every retry",
    DocumentErrorCode.EXTRACTION_FAILED: "the extraction model call failed",
    DocumentErrorCode.WRITE_FAILED: "the database refused or lost the write; nothing of it was kept",
    DocumentErrorCode.POSITION_NOT_RECOVERED: "a chunk's byte position could not be recovered",
    DocumentErrorCode.PDF_TIMEOUT: "reading the PDF took longer than allowed",
    DocumentErrorCode.MODEL_UNREACHABLE: "the model endpoint is not reachable (check OPENAI_BASE_URL)",
    DocumentErrorCode.CALL_BUDGET_EXCEEDED: "record mode spent GRAPHRAG_MAX_CALLS; this document's call was not sent",
    DocumentErrorCode.RECORDING_MISSING: "replay mode has no recording for this document's model call",
}


#: What a PDF refused for want of pypdf is told (docs/ingest.md: the message names the extra).
PDF_EXTRA_MISSING = "PDF support needs the pdf extra: pip install 'graphrag-orm[pdf]'"


def pdf_extra_missing(code: DocumentErrorCode | str | None, source_uri: str) -> bool:
    """Whether a document was refused only because it is a PDF and the ``pdf`` extra is not installed."""
    if code != DocumentErrorCode.UNSUPPORTED_MEDIA_TYPE or not source_uri.lower().endswith(".pdf"):
        return False
    try:
        import pypdf  # noqa: F401  (imported as the PDF loader imports it: only when there is one to read)
    except ImportError:
        return True
    return False


def explain(code: DocumentErrorCode | str | None, source_uri: str = "") -> str:
    """What a document error code means, in a few words; empty for no code."""
    if code is None:
        return ""
    if pdf_extra_missing(code, source_uri):
        return PDF_EXTRA_MISSING
    try:
        return DOCUMENT_ERROR_MESSAGES[DocumentErrorCode(code)]
    except ValueError:
        return ""


def _outcome_table(items: Sequence[DocumentOutcome | DocumentPreview], *extra: Column, title: str) -> Table:
    """The columns every document row has (id, source, status, code, message, chunks), then ``extra``."""
    # The code column never wraps and is as wide as its longest code: rich shrinks the others first.
    widest = max((len(item.error_code.value) for item in items if item.error_code is not None), default=4)
    return Table(
        Column("document", no_wrap=True),
        Column("source", overflow="fold"),
        Column("status", no_wrap=True),
        Column("code", no_wrap=True, min_width=widest),
        Column("message", min_width=12),
        Column("chunks", justify="right"),
        *extra,
        title=title,
    )


def _outcome_cells(item: DocumentOutcome | DocumentPreview) -> list[str | Text]:
    code = item.error_code
    return [
        item.document_id[:12],
        stored(item.source_uri),
        item.status.value,
        code.value if code else "",
        explain(code, item.source_uri),
        str(item.chunks),
    ]


def receipt_table(receipt: IngestionReceipt) -> Table:
    table = _outcome_table(receipt.documents, title=f"run {receipt.run_id}")
    for outcome in receipt.documents:
        table.add_row(*_outcome_cells(outcome))
    return table


def preview_table(preview: IngestionPreview) -> Table:
    table = _outcome_table(
        preview.documents,
        Column("embedding calls", justify="right"),
        Column("input tokens", justify="right"),
        title="preview (nothing written)",
    )
    for item in preview.documents:
        table.add_row(*_outcome_cells(item), str(item.embedding_calls), str(item.input_tokens))
    return table
