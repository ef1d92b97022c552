"""The samples' check after ingesting: say why each document failed, and stop rather than go on with a partial graph.

A sample that evaluated or queried a graph missing a document would report figures about
a corpus it never had (a lease left by a killed run once made the novel sample evaluate
an empty graph, printing only ``failed 1``). :func:`require_ingested` prints one line per
failed document, with its code and what the code means, and raises the first failure's
code as a :class:`~graphrag_orm.errors.GraphRagError`, which each sample prints as its
one-line error and exits non-zero on.
"""

from __future__ import annotations

from typing import Final

from rich.console import Console
from rich.markup import escape

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import GraphRagError
from graphrag_orm.ingestion import IngestionReceipt
from graphrag_orm.ingestion.receipts import DocumentStatus

__all__ = ["require_ingested"]

_WHY: Final[dict[str, str]] = {
    DocumentErrorCode.LEASE_HELD: (
        "another run holds its lease; a killed run leaves one until it expires (600 s by default): "
        "wait and run again, or ingest with --wait-for-leases"
    ),
    DocumentErrorCode.LEASE_LOST: "another run took the document over while this one worked on it",
    DocumentErrorCode.EXTRACTION_FAILED: "an extraction call failed, so nothing of the document was written",
    DocumentErrorCode.MODEL_UNREACHABLE: "the model endpoint could not be reached: check OPENAI_BASE_URL",
    DocumentErrorCode.EMBEDDING_FAILED: "the embedding call failed after its retries",
    DocumentErrorCode.WRITE_FAILED: "the database refused or dropped the write",
    DocumentErrorCode.RECORDING_MISSING: "replay mode has no recording for one of its requests",
    DocumentErrorCode.CALL_BUDGET_EXCEEDED: "record mode spent its call budget (GRAPHRAG_MAX_CALLS)",
}
_OTHER: Final = "see the outcomes and codes in docs/ingest.md"


def require_ingested(receipt: IngestionReceipt, console: Console) -> None:
    """Print why each failed document failed; raise the first one's code when any did (nothing when none did)."""
    failed = [outcome for outcome in receipt.documents if outcome.status == DocumentStatus.FAILED]
    codes = [str(outcome.error_code or "failed") for outcome in failed]
    for outcome, code in zip(failed, codes, strict=True):
        console.print(f"[red]failed[/] {escape(outcome.source_uri)}: {code} ({_WHY.get(code, _OTHER)})")
    if failed:
        raise GraphRagError(
            codes[0],
            f"{len(failed)} of {len(receipt.documents)} documents failed to ingest (the first: "
            f"{failed[0].source_uri}): stopping rather than going on with a partial graph",
        )
