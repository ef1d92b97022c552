"""The ingest command's tables, JSON output and file collection, rendered and walked without a database."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.color import ColorSystem
from rich.console import Console

from graphrag_orm.cli import _common as common
from graphrag_orm.cli._common import print_json
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


def test_json_piped_is_the_text_a_terminal_shows_without_colour(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _receipt(DocumentErrorCode.UNSUPPORTED_MEDIA_TYPE).to_json()
    shown = Console(file=io.StringIO(), color_system=None, width=40)
    shown.print_json(text)
    print_json(text)  # captured: not a terminal, so written as is
    piped = capsys.readouterr().out
    assert piped == shown.file.getvalue()  # type: ignore[attr-defined]
    assert json.loads(piped) == json.loads(text) and piped.startswith('{\n  "runId": "run-1"')
    # On a terminal it goes through rich's highlighter (colour codes around the values).
    monkeypatch.setattr(common.console, "_force_terminal", True)
    monkeypatch.setattr(common.console, "_color_system", ColorSystem.STANDARD)
    print_json('{"name": "é"}')
    coloured = capsys.readouterr().out
    assert "\x1b[" in coloured and '"é"' in coloured
