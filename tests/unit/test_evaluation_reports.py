"""The evaluation's reports: the terminal table, the comparison of two runs, and the HTML page."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from graphrag_orm.answers import AnswersService
from graphrag_orm.chat import ChatRequest, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_question
from graphrag_orm.errors import EvaluationError
from graphrag_orm.evaluation import (
    CaseOutcome,
    EvalCase,
    EvaluationReport,
    Evaluator,
    InMemoryRetriever,
    compare_reports,
    load_report,
    render_table,
    write_html,
)
from tests.unit.test_evaluation import BOTTLE, CAT, DOCUMENTS, FOLLOW, ROSES, scripted

HOSTILE = EvalCase(
    id="[bold]x[/bold]", question="<script>alert(1)</script> the table?", answerable=True, required_phrases=("<b>",)
)


async def report_of(k: int = 3, cases: tuple[EvalCase, ...] = (BOTTLE, FOLLOW, ROSES, CAT)) -> EvaluationReport:
    retriever = InMemoryRetriever.from_documents(DOCUMENTS)
    answers = AnswersService(retriever, ScriptedChat(scripted))  # type: ignore[arg-type]
    return await Evaluator(retriever=retriever, answerer=answers, k=k).run(cases)


def printed(report: EvaluationReport, baseline: EvaluationReport | None = None) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    render_table(report, console, compare_reports(report, baseline) if baseline else None)
    return out.getvalue()


async def test_the_table_shows_each_case_the_totals_and_what_ran() -> None:
    text = printed(await report_of())
    for piece in ("bottle", "wrongly-refused", "abstained", "wrongly-answered", "1/1", "1/2", "0.50", "model-declined"):
        assert piece in text, piece
    assert "recall@3" in text and "MRR@3" in text and "abstention" in text and "0.75" in text
    assert "InMemoryRetriever" in text and "(stand-in)" in text and "k=3" in text


async def test_the_table_and_the_page_show_answer_support_failed_refusals_and_failed_cases(tmp_path: Path) -> None:
    retriever = InMemoryRetriever.from_documents(DOCUMENTS)

    def failing(request: ChatRequest) -> str:
        if "bottle" in parse_question(request.messages[-1].content):
            raise TimeoutError("timed out")
        return scripted(request)

    answers = AnswersService(retriever, ScriptedChat(failing))  # type: ignore[arg-type]
    report = await Evaluator(retriever=retriever, answerer=answers, k=3).run([BOTTLE, CAT])
    text = printed(report)
    assert "failed bottle: TimeoutError (no code) (case-failed)" in text
    assert "answer support" in text and "failed refusals 0" in text and "support" in text
    page = write_html(report, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Failed: TimeoutError (no code) (case-failed)" in page and "answer support" in page


async def test_a_report_of_the_first_format_still_reads(tmp_path: Path) -> None:
    data = json.loads((await report_of()).model_dump_json(by_alias=True))
    data["format"] = "graphrag-orm-evaluation/1"
    for case in data["cases"]:
        del case["supported"], case["errorMessage"]
    for name in ("failedRefusals", "supportJudged", "supported", "answerSupport"):
        del data["totals"][name]
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    old = load_report(tmp_path / "old.json")
    assert old.totals.answer_support is None and old.totals.failed_refusals == 0
    assert all(case.supported is None for case in old.cases)
    assert compare_reports(await report_of(), old).metrics[1].name == "answer support"


async def test_the_table_prints_markup_in_a_case_file_as_typed() -> None:
    text = printed(await report_of(cases=(HOSTILE,)))
    assert "[bold]x[/bold]" in text


async def test_compare_gives_the_change_per_metric_and_per_case() -> None:
    deep, shallow = await report_of(k=3), await report_of(k=1)
    comparison = compare_reports(shallow, deep)
    assert comparison.k == (3, 1)
    metrics = {metric.name: metric for metric in comparison.metrics}
    assert (metrics["MRR"].baseline, metrics["MRR"].current, metrics["MRR"].delta) == (0.75, 0.5, -0.25)
    assert metrics["MRR"].better is False and metrics["citation validity"].better is None
    changed = {case.id: case for case in comparison.changed_cases}
    assert set(changed) == {"follow"}, "only the case whose hit fell past k changed"
    follow = {metric.name: metric for metric in changed["follow"].metrics}
    assert (follow["reciprocal rank"].delta, follow["coverage"].delta, follow["recall@k"].delta) == (-0.5, -1.0, -1.0)
    assert changed["follow"].baseline_outcome is changed["follow"].current_outcome is CaseOutcome.WRONGLY_REFUSED

    fewer = compare_reports(await report_of(cases=(BOTTLE, ROSES)), deep)
    assert fewer.only_in_baseline == ("follow", "cat") and fewer.only_in_current == ()
    text = printed(shallow, deep)
    assert "compared with the baseline (k 3 then 1)" in text and "changed cases" in text and "-0.25" in text


async def test_a_report_reads_back_from_json_and_anything_else_is_invalid_report(tmp_path: Path) -> None:
    report = await report_of()
    path = tmp_path / "run.json"
    path.write_text(report.model_dump_json(by_alias=True, indent=2), encoding="utf-8")
    assert load_report(path) == report
    for name, text in (("bad.json", "{not json"), ("other.json", json.dumps({"format": "x"})), ("none.json", None)):
        target = tmp_path / name
        if text is not None:
            target.write_text(text, encoding="utf-8")
        with pytest.raises(EvaluationError) as raised:
            load_report(target)
        assert raised.value.code == "invalid-report" and "\n" not in raised.value.message
    wrong = json.loads(report.model_dump_json(by_alias=True))
    wrong["format"] = "graphrag-orm-evaluation/9"
    (tmp_path / "future.json").write_text(json.dumps(wrong), encoding="utf-8")
    with pytest.raises(EvaluationError, match="another format"):
        load_report(tmp_path / "future.json")


async def test_the_html_page_is_self_contained_with_a_chart_per_metric_and_failing_cases_first(tmp_path: Path) -> None:
    report = await report_of(cases=(ROSES, BOTTLE, FOLLOW, CAT, HOSTILE))
    page = write_html(report, tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 8, "abstention, validity, support, coverage, recall, RR, document recall, time"
    for caption in ("abstention (cases per outcome)", "citation validity", "coverage", "recall@3", "reciprocal rank"):
        assert f"<figcaption>{caption}</figcaption>" in page
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"<(link|img|iframe)|src=|@import|url\((?!#)|href=\"(?!#)", page), "nothing is fetched"
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "element ids are unique across the charts"
    assert all(f'id="{ref}"' in page for ref in re.findall(r"url\(#([^)]+)\)", page)), "references resolve"
    order = [page.index(f"<summary>{name}:") for name in ("bottle", "follow", "cat", "roses")]
    assert order[:3] == sorted(order[:3]) and order[2] < order[3], "failing cases first, then the rest"
    assert page.count("class='case failing' open") == 4 and "class='case'>" in page
    assert "not retrieved: <q>Cheshire</q>" in page and "memory:rabbit" in page and ">valid<" in page
    assert "stand-in" in page


async def test_the_html_comparison_shows_both_runs(tmp_path: Path) -> None:
    deep, shallow = await report_of(k=3), await report_of(k=1)
    page = write_html(shallow, tmp_path / "compare.html", compare=deep).read_text(encoding="utf-8")
    assert "Compared with the baseline" in page and "Changed cases" in page and ">-0.25<" in page
    assert page.count(">baseline<") >= 7, "each chart has a legend with the baseline"


def test_without_matplotlib_the_html_report_is_missing_extra_naming_the_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from graphrag_orm.evaluation.charts import require_matplotlib\n"
        "from graphrag_orm.errors import EvaluationError\n"
        "try:\n    require_matplotlib()\nexcept EvaluationError as e:\n    print(e.code, '|', e.message)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.startswith("missing-extra | ") and "pip install 'graphrag-orm[eval]'" in result.stdout
