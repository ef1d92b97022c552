"""The ingest command's tables and file collection, rendered and walked without a database."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from graphrag_orm.cli.collect import DEFAULT_PATTERNS, collect_sources
from graphrag_orm.cli.receipts import receipt_table
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.ingestion import DocumentOutcome, DocumentStatus, IngestionReceipt, RunStatus


def _receipt(code: DocumentErrorCode) -> IngestionReceipt:
    outcome = DocumentOutcome(
        document_id="f" * 64,
        source_uri="https://example.org/a/rather/long/path/to/a/page/that/takes/room.md",
        status=DocumentStatus.FAILED,
        error_code=code,
    )
    return IngestionReceipt(
        run_id="run-1",
        status=RunStatus.COMPLETED,
        documents=(outcome,),
        chunks_written=0,
        embedding_calls=0,
        input_tokens=None,
        elapsed_seconds=0.1,
    )


def test_a_narrow_terminal_never_cuts_the_code_and_the_row_says_what_it_means() -> None:
    console = Console(width=90, record=True, color_system=None)
    console.print(receipt_table(_receipt(DocumentErrorCode.UNSUPPORTED_MEDIA_TYPE)))
    text = console.export_text()
    assert "unsupported-media-type" in text
    assert "loader" in text, "the row says what the code means"
    assert "room.md" in text, "a long source wraps instead of being cut"


def test_a_folder_of_files_no_loader_reads_is_counted_by_pattern_and_media_type(tmp_path: Path) -> None:
    (tmp_path / "a.rst").write_text("a", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.rst").write_text("b", encoding="utf-8")
    (tmp_path / "c.md").write_text("# C\n", encoding="utf-8")
    collected = collect_sources([tmp_path], None, DEFAULT_PATTERNS)
    assert [Path(s.source_uri).name for s in collected.sources] == ["c.md"]
    (folder,) = collected.folders
    assert (folder.taken, folder.by_pattern, folder.by_media_type) == (1, 2, 0)
    everything = collect_sources([tmp_path], None, ("*",))
    assert [Path(s.source_uri).name for s in everything.sources] == ["c.md"]
    assert everything.folders[0].by_media_type == 2
    assert ".rst 2" in everything.folders[0].describe(("*",))
