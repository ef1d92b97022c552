"""``graphrag-orm eval`` on the novel sample with the real model, as a user runs it (a subprocess).

The chapter is ingested offline (no model reads it), then a few of the sample's labelled
cases are evaluated with ``GRAPHRAG_MODEL_MODE=record`` against the served model, or
``replay`` from ``tests/data/recordings/<model>-eval.json`` in ``make test``. The
assertions are the command's promises, whatever the model writes: no traceback, every
case in the report either finished (answered with citations the evaluator located in the
stored bytes, or refused with a coded reason) or failed with an error code, and citation
validity reported.
"""

from __future__ import annotations

import json
from pathlib import Path

from graphrag_orm.codes import ErrorCode, RefusalReason
from graphrag_orm.evaluation import EvaluationReport
from graphrag_orm.evaluation.values import CaseOutcome, CitationStatus
from tests.e2e.test_cli import ROOT, cli
from tests.real.conftest import MODEL, surface_environment, surface_recording

NOVEL = ROOT / "examples" / "novel"
RECORDING = surface_recording("eval")
#: Three answerable cases and two the chapter cannot answer: minutes of model time, not an hour.
CASES = ("label", "watch", "dinah", "sister-name", "hatter")
#: Items retrieved per case (the prompt's evidence), kept small for a slow model.
K = 3


def _cases(folder: Path) -> Path:
    chosen = [
        line
        for line in (NOVEL / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        if line.startswith("{") and json.loads(line)["id"] in CASES
    ]
    assert len(chosen) == len(CASES)
    path = folder / "cases.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


def test_eval_on_the_novel_sample_finishes_every_case_or_reports_its_code(graph: None, tmp_path: Path) -> None:
    env = surface_environment(RECORDING)
    base = "https://example.org/graphrag-orm/novel/"
    cli("ingest", str(NOVEL / "alice-chapter-1.txt"), "--base-uri", base, check=True)

    result = cli("eval", str(_cases(tmp_path)), "--json", "--k", str(K), env=env, timeout=3_600)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 0, result.stderr
    report = EvaluationReport.model_validate_json(result.stdout)

    assert [case.id for case in report.cases] == list(CASES), "every case is in the report, finished or failed"
    assert report.labels.chat is not None and not report.labels.chat.stand_in
    # The recorded model names the chat (model and date from the recording), never a class name.
    assert MODEL in report.labels.chat.label and "RecordingChat" not in report.labels.chat.label
    citations = 0
    for case in report.cases:
        if case.outcome is CaseOutcome.ERROR:
            assert case.error_code in set(ErrorCode), case.error_message
            continue
        assert case.outcome is not CaseOutcome.RETRIEVED, "the model answered every case"
        if case.outcome in (CaseOutcome.ANSWERED, CaseOutcome.WRONGLY_ANSWERED):
            assert case.answer and case.citations
            assert all(check.status is CitationStatus.VALID for check in case.citations), case.id
            assert case.citation_validity == 1.0
        else:
            assert case.reason in set(RefusalReason) and case.answer is None and case.citations == ()
        citations += len(case.citations)
    totals = report.totals
    assert totals.cases == len(CASES) and totals.citations == citations
    assert totals.citation_validity == (1.0 if citations else None)
