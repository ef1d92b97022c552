"""A real model writes the harbour sample's community reports and answers its global questions.

Live with ``make test-real`` (each reply recorded), replayed in ``make test``. The harbour
graph is the suite's (32 pages, the ``FLEET`` ontology, scripted extraction, detection seeded),
so the requests, and the recordings, are the same run after run. The assertions are about the
toolkit, never about the model being right: every stored finding cites the stored bytes at its
span, what did not verify is counted by code, every global answer cites only verified spans or
is refused with a reason, and the evaluation harness scores the run. The figures are printed
(``pytest -s``) and kept in docs/global-questions.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.harbour.fleet import FLEET
from graphrag_orm import GraphRag
from graphrag_orm.chat import ChatClient, Recorder
from graphrag_orm.codes import GlobalRefusal, ReportDrop
from graphrag_orm.communities import (
    ChatReportWriter,
    GlobalAnswers,
    GlobalOptions,
    ReportOptions,
    ReportService,
    ReportsWritten,
)
from graphrag_orm.evaluation import CaseOutcome, GlobalEvaluationReport, GlobalEvaluator, StoredChunks, load_cases
from graphrag_orm.evaluation.values import CitationStatus
from tests.integration.test_community_reports import assert_every_citation_is_the_stored_bytes, harbour  # noqa: F401
from tests.real.conftest import RECORDING

LARGER = RECORDING.with_name("qwen2.5-coder-1.5b.json")
CASES = Path(__file__).resolve().parents[2] / "examples" / "harbour" / "global_questions.jsonl"
#: Small prompts and replies: a 0.5B model on two shared cores reads ~200 tokens/s and writes ~25.
REPORTS = ReportOptions(
    max_facts_per_report=12, max_chunks_per_report=4, max_evidence_bytes=6_000, max_output_tokens=400
)
GLOBAL = GlobalOptions(max_map_calls=4, map_reports_per_call=3, max_call_tokens=3_000, max_output_tokens=300)


async def written_and_answered(rag: GraphRag, chat: ChatClient) -> tuple[ReportsWritten, GlobalEvaluationReport]:
    """The model writes the reports, then answers the global questions; every promise checked on the way."""
    service = ReportService(rag.store, FLEET, REPORTS, writer=ChatReportWriter(chat, REPORTS))
    written = await service.write()
    assert written.calls > 0
    assert set(written.dropped) <= {code.value for code in ReportDrop}, "every drop has its code"
    listing = await service.list()
    assert len(listing.reports) == written.reports
    if listing.reports:
        assert await assert_every_citation_is_the_stored_bytes(rag, listing) >= written.findings
    print(
        f"\nreports by the real model: {written.reports} stored of {written.calls} calls, "
        f"{written.findings} findings kept, dropped {written.dropped}, "
        f"{written.input_tokens} tokens in / {written.output_tokens} out, {written.seconds:.1f} s"
    )

    corpus = GlobalAnswers(rag.store, FLEET, GLOBAL, chat=chat)
    report = await GlobalEvaluator(corpus=corpus, stored=StoredChunks(rag.store, rag.model)).run(load_cases(CASES))
    totals = report.totals
    assert totals.errors == 0, [case.error_code for case in report.cases]
    for case in report.cases:
        assert all(check.status is CitationStatus.VALID for check in case.citations), case.id
        if case.outcome in (CaseOutcome.ANSWERED, CaseOutcome.WRONGLY_ANSWERED):
            assert case.citations and case.answer, "an answer cites verified spans"
        else:
            assert case.reason in {reason.value for reason in GlobalRefusal} and not case.citations
    print(
        f"global answers by the real model: answered {totals.answered}, abstained {totals.abstained}, "
        f"wrongly refused {totals.wrongly_refused}, wrongly answered {totals.wrongly_answered}, "
        f"failed refusals {totals.failed_refusals}; phrase coverage {totals.phrase_coverage}, "
        f"document coverage {totals.document_coverage}, citation validity {totals.citation_validity} "
        f"({totals.valid_citations}/{totals.citations}); reasons {totals.reasons}; {totals.chat_calls} calls"
    )
    return written, report


async def test_real_reports_keep_only_verified_findings_and_global_answers_are_cited_or_refused(
    harbour: GraphRag,  # noqa: F811
    real_chat: ChatClient,
) -> None:
    await written_and_answered(harbour, real_chat)


async def test_the_larger_models_reports_cut_at_the_output_limit_keep_what_they_finished(
    harbour: GraphRag,  # noqa: F811
) -> None:
    """The 1.5B's recorded replies, replayed whatever model the suite runs (record them with
    ``GRAPHRAG_REAL_MODEL=qwen2.5-coder-1.5b make test-real``): it writes longer reports than the
    0.5B, and each reply ran past the 400-token limit. Read as far as it went, each keeps the
    findings it finished; before, all three were unreadable and no report was stored."""
    if not LARGER.is_file():
        pytest.fail(f"no recording at {LARGER}", pytrace=False)
    written, _ = await written_and_answered(harbour, Recorder(LARGER, "replay").chat(None))
    assert written.dropped.get(ReportDrop.CUT_FINDING.value, 0) >= 1 and written.reports >= 1
    assert written.dropped.get(ReportDrop.UNREADABLE_REPORT.value, 0) < written.calls
