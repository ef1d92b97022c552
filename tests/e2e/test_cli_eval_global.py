"""``graphrag-orm eval --global``: the harbour sample's global questions from the command line.

Offline (the stand-in's word overlap over the offline reports) the command prints the same
figures as :class:`~graphrag_orm.evaluation.GlobalEvaluator` in Python; with the environment's
model failing (the loopback server answering 400) every case is a coded failure, the run stops
after the consecutive failures allowed and exits 1; bad options are refused with a code.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphrag_orm import GraphRag
from tests.e2e.test_cli import ROOT, cli
from tests.e2e.test_global_model_surfaces import ONTOLOGY, live
from tests.integration.test_community_reports import harbour  # noqa: F401 (the fixture)
from tests.integration.test_global_evaluation import CASES
from tests.integration.test_global_model import write_reports
from tests.support.openai_server import OpenAIServer

ENV = {"PYTHONPATH": str(ROOT)}


async def test_eval_global_prints_the_figures_the_python_harness_gives(harbour: GraphRag) -> None:  # noqa: F811
    await write_reports(harbour)
    ran = cli("eval", str(CASES), "--global", "--ontology", ONTOLOGY, "--json", env=ENV)
    assert ran.returncode == 0, ran.stderr
    report: dict[str, Any] = json.loads(ran.stdout)
    totals = report["totals"]
    assert report["writer"] == "offline-word-overlap" and report["limitsReached"] == []
    assert (totals["answered"], totals["abstained"], totals["errors"]) == (4, 2, 0)
    assert totals["citationValidity"] == 1.0 and totals["citations"] > 0 and totals["abstention"] == 1.0
    # The offline path's documented figure (docs/global-questions.md): one phrase and one document missed.
    assert totals["phraseCoverage"] == totals["documentCoverage"] == pytest.approx((3 + 2 / 3) / 4)
    houses = next(case for case in report["cases"] if case["id"] == "houses-based")
    assert houses["documentsMissing"] == ["https://example.org/harbour/ashgrove"]

    shown = cli("eval", str(CASES), "--global", "--ontology", ONTOLOGY, "--max-cases", "2", env=ENV)
    assert shown.returncode == 0, shown.stderr
    for text in ("global cases", "orrin-ships", "phrase coverage", "offline-word-overlap", "limit reached: MaxCases"):
        assert text in shown.stdout, text


async def test_eval_global_with_a_failing_model_stops_with_coded_cases(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    openai_server.fail(400, times=100)
    env = live(openai_server)
    ran = cli(
        "eval", str(CASES), "--global", "--ontology", ONTOLOGY, "--json", "--max-consecutive-failures", "2", env=env
    )
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    report: dict[str, Any] = json.loads(ran.stdout)
    assert [case["outcome"] for case in report["cases"]] == ["error", "error"]
    assert {case["errorCode"] for case in report["cases"]} == {"model-request-rejected"}
    assert report["limitsReached"] == [{"name": "ConsecutiveFailures", "value": 2}]


def test_eval_global_refuses_what_it_cannot_do_with_a_code(graph: None) -> None:
    for args, said in (
        (("--global",), "--ontology"),
        (("--global", "--ontology", ONTOLOGY, "--k", "5"), "--k"),
        (("--global", "--ontology", ONTOLOGY, "--concurrency", "2", "--compare", "x.json"), "--compare, --concurrency"),
    ):
        refused = cli("eval", str(CASES), *args, env=ENV)
        assert refused.returncode == 1 and "invalid-option" in refused.stderr, refused.stderr
        assert said in refused.stderr and "Traceback" not in refused.stderr
