"""``graphrag-orm eval`` as a user runs it: the quick start's pages ingested, then the cases of
``tests/data/evaluation/quickstart.jsonl`` (offline stand-ins) as a table, JSON, HTML and a comparison."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from graphrag_orm.evaluation import EvaluationReport
from tests.e2e.test_cli import QUICKSTART, ROOT, cli

CASES = ROOT / "tests" / "data" / "evaluation" / "quickstart.jsonl"


def _ingest() -> None:
    cli("ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/", check=True)


def test_eval_prints_a_table_of_the_cases_and_the_totals(graph: None) -> None:
    _ingest()
    result = cli("eval", str(CASES), check=True)
    out = result.stdout
    for piece in ("loans", "laser", "club", "parking", "bus", "abstained", "model-declined", "1/2"):
        assert piece in out, piece
    assert "recall@10" in out and "MRR@10" in out and "5 (1 failing, 0 errors)" in out
    assert "HashingEmbedder" in out and "ExtractiveChat" in out and "(stand-in)" in out
    assert "Traceback" not in result.stderr


def test_json_html_and_compare(graph: None, tmp_path: Path) -> None:
    _ingest()
    baseline = cli("eval", str(CASES), "--json", check=True)
    report = EvaluationReport.model_validate_json(baseline.stdout)
    assert [case.id for case in report.cases] == ["loans", "laser", "club", "parking", "bus"]
    assert (
        report.totals.coverage == 0.875 and report.totals.abstention == 1.0 and report.totals.citation_validity == 1.0
    )
    assert report.cases[0].document_recall == 1.0 and report.labels.chat is not None and report.labels.chat.stand_in
    saved = tmp_path / "baseline.json"
    saved.write_text(baseline.stdout, encoding="utf-8")

    # The same cases with the bus case's label fixed: its coverage rises, nothing else moves.
    fixed = tmp_path / "fixed.jsonl"
    fixed.write_text(CASES.read_text(encoding="utf-8").replace("a ferry timetable", "every Tuesday and Thursday"))
    page = tmp_path / "report.html"
    compared = cli("eval", str(fixed), "--compare", str(saved), "--html", str(page), check=True)
    assert "compared with the baseline" in compared.stdout and "changed cases" in compared.stdout
    assert "+0.50" in compared.stdout and f"wrote {page}" in compared.stdout
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") >= 6 and "Compared with the baseline" in html and "<script" not in html
    assert "bus" in html and "Changed cases" in html

    # Failing cases come first in the page.
    failing = cli("eval", str(CASES), "--html", str(page), "--json", check=True)
    assert json.loads(failing.stdout)["totals"]["failing"] == 1
    html = page.read_text(encoding="utf-8")
    assert html.index("<summary>bus:") < html.index("<summary>loans:")


def test_failed_cases_are_kept_and_shown_and_the_run_stops_after_failures_in_a_row(graph: None, tmp_path: Path) -> None:
    _ingest()
    recordings = tmp_path / "empty.json"
    recordings.write_text(json.dumps({"format": "graphrag-orm-recording", "version": 1, "entries": []}))
    env = {"GRAPHRAG_MODEL_MODE": "replay", "GRAPHRAG_RECORDINGS": str(recordings)}
    result = cli("eval", str(CASES), "--max-consecutive-failures", "2", env=env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "failed loans: " in result.stdout and "(recording-missing)" in result.stdout
    assert "limit reached: ConsecutiveFailures (2)" in result.stdout and "2 (2 failing, 2 errors)" in result.stdout


def test_a_bad_cases_file_or_report_is_one_coded_line(graph: None, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "fine?", "answerable": true}\n{"question": "private words", "answerable": "maybe"}\n')
    result = cli("eval", str(bad))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "cases line 2" in line and "(invalid-cases)" in line and "private words" not in line

    report = tmp_path / "not-a-report.json"
    report.write_text("{}")
    result = cli("eval", str(CASES), "--compare", str(report))
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert "(invalid-report)" in line


def test_html_without_matplotlib_is_missing_extra_naming_the_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None; from graphrag_orm.cli import main; "
        f"sys.argv = ['graphrag-orm', 'eval', {str(CASES)!r}, '--html', {str(tmp_path / 'r.html')!r}]; main()"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "pip install 'graphrag-orm[eval]'" in line and "(missing-extra)" in line
    assert not (tmp_path / "r.html").exists()
