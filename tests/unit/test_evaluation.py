"""Each evaluation metric's exact value on constructed inputs: the in-memory retriever and scripted answers.

No database: :class:`InMemoryRetriever` retrieves (and serves as the stored text), and
``AnswersService`` answers with a ``ScriptedChat`` whose reply depends on the question.
The corpus is built so every rank is known: the retriever ranks passages by shared
content words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from graphrag_orm.answers import Answer, AnswersService
from graphrag_orm.chat import ChatReply, ChatRequest, ChatUsage, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_evidence, parse_question
from graphrag_orm.citations import Citation
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evaluation import (
    CaseOutcome,
    CitationStatus,
    EvalCase,
    EvaluationReport,
    Evaluator,
    InMemoryRetriever,
    StoredChunk,
    holds,
)
from graphrag_orm.evaluation.metrics import outcome_of
from graphrag_orm.evaluation.stored import check_citations
from graphrag_orm.retrieval import RetrievalOptions
from tests.support.tracing import captured_spans

DOCUMENTS = {
    "rabbit": (
        "The White Rabbit took a watch out of its waistcoat-pocket and hurried on.\n\n"
        "Alice followed the Rabbit across the field and down a large rabbit-hole.\n\n"
        "A little bottle on the table was labelled _DRINK  ME_ in large letters.\n"
    ),
    "cat": "The Cheshire Cat grinned from the branch of a tree.\n",
}
BOTTLE = EvalCase(
    id="bottle",
    question="What was on the little bottle on the table?",
    answerable=True,
    required_phrases=("DRINK ME", "Cheshire"),
    expected_documents=("memory:rabbit", "memory:cat"),
)
FOLLOW = EvalCase(
    id="follow",
    question="Where did Alice follow the White Rabbit with the watch?",
    answerable=True,
    required_phrases=("rabbit-hole",),
)
ROSES = EvalCase(id="roses", question="Who painted the roses red?", answerable=False)
CAT = EvalCase(id="cat", question="What did the Cheshire Cat do?", answerable=False)


def citing(request: ChatRequest, words: str) -> str:
    chunk = next(chunk_id for chunk_id, text in parse_evidence(request.messages[-1].content) if words in text)
    return json.dumps({"answer": words, "citations": [{"chunkId": chunk, "quote": words}], "insufficient": None})


DECLINED = json.dumps({"answer": None, "citations": None, "insufficient": "not in the evidence"})
REPLIES: dict[str, Callable[[ChatRequest], str]] = {
    BOTTLE.question: lambda request: citing(request, "A little bottle on the table"),
    FOLLOW.question: lambda request: DECLINED,
    CAT.question: lambda request: citing(request, "The Cheshire Cat grinned"),
}


def scripted(request: ChatRequest) -> str:
    return REPLIES.get(parse_question(request.messages[-1].content), lambda request: DECLINED)(request)


def evaluator(k: int = 3, **given: Any) -> tuple[Evaluator, InMemoryRetriever]:
    retriever = InMemoryRetriever.from_documents(DOCUMENTS)
    answers = AnswersService(retriever, ScriptedChat(scripted))  # type: ignore[arg-type]
    return Evaluator(retriever=retriever, answerer=answers, k=k, **given), retriever


# --- the phrase rule and the outcomes ------------------------------------------------


def test_a_phrase_is_found_forgiving_whitespace_runs_and_emphasis_marks_and_nothing_else() -> None:
    text = "There was a bottle labelled _DRINK\n  ME_ and a **cake**."
    assert holds(text, "DRINK ME") and holds(text, "labelled DRINK ME") and holds(text, "  a cake. ")
    assert holds(text, "_DRINK_ ME") and holds(text, "RIN") and holds("can’t", "can’t")
    assert not holds(text, "drink me"), "no case folding"
    assert not holds(text, "DRINKME"), "whitespace is never optional"
    assert not holds("can’t", "can't"), "quote classes are not forgiven for phrases"
    assert not holds(text, "_ *"), "an empty phrase is never held"


def test_the_four_outcomes_of_abstention() -> None:
    assert outcome_of(answerable=True, answered=True) is CaseOutcome.ANSWERED
    assert outcome_of(answerable=True, answered=False) is CaseOutcome.WRONGLY_REFUSED
    assert outcome_of(answerable=False, answered=False) is CaseOutcome.ABSTAINED
    assert outcome_of(answerable=False, answered=True) is CaseOutcome.WRONGLY_ANSWERED


# --- every metric, per case and in total ----------------------------------------------


async def test_every_metric_per_case_and_in_total() -> None:
    run, _ = evaluator(k=3)
    report = await run.run([BOTTLE, FOLLOW, ROSES, CAT])
    bottle, follow, roses, cat = report.cases
    assert [case.id for case in report.cases] == ["bottle", "follow", "roses", "cat"]

    # bottle: one item (the bottle passage) holds "DRINK ME" through marks and a double space.
    assert bottle.outcome is CaseOutcome.ANSWERED and bottle.reason is None
    assert [item.rank for item in bottle.items] == [1] and bottle.items[0].phrases == (0,)
    assert bottle.phrases_found == (True, False) and bottle.coverage == 0.5
    assert (bottle.first_hit, bottle.recall_at_k, bottle.reciprocal_rank) == (1, 1.0, 1.0)
    assert bottle.documents_found == (True, False) and bottle.document_recall == 0.5
    assert [c.status for c in bottle.citations] == [CitationStatus.VALID] and bottle.citation_validity == 1.0
    assert (
        bottle.citations[0].quote == "A little bottle on the table" and bottle.answer == "A little bottle on the table"
    )
    assert bottle.supported is False, "the quote holds neither DRINK ME nor Cheshire"
    assert bottle.failing  # a phrase and a document not retrieved, and the answer unsupported

    # follow: the watch passage ranks first (3 shared words), the rabbit-hole passage second (2).
    assert follow.outcome is CaseOutcome.WRONGLY_REFUSED and follow.reason == "model-declined"
    assert len(follow.items) == 2 and follow.items[1].phrases == (0,) and not follow.items[0].phrases
    assert (follow.coverage, follow.first_hit, follow.recall_at_k, follow.reciprocal_rank) == (1.0, 2, 1.0, 0.5)
    assert follow.citations == () and follow.citation_validity is None and follow.document_recall is None

    # roses: nothing retrieved, refused without a chat call; no phrase, so no retrieval metric.
    assert roses.outcome is CaseOutcome.ABSTAINED and roses.reason == "no-evidence" and roses.chat_calls == 0
    assert (roses.coverage, roses.recall_at_k, roses.reciprocal_rank, roses.citation_validity) == (None,) * 4
    assert not roses.failing

    # cat: not answerable by its label, but answered with a valid citation.
    assert cat.outcome is CaseOutcome.WRONGLY_ANSWERED and cat.citation_validity == 1.0 and cat.failing

    totals = report.totals
    assert (totals.cases, totals.errors, totals.failing) == (4, 0, 3)
    assert (totals.answered, totals.wrongly_refused, totals.abstained, totals.wrongly_answered) == (1, 1, 1, 1)
    assert totals.abstention == 0.5
    assert (totals.citations, totals.valid_citations, totals.citation_validity) == (2, 2, 1.0)
    assert totals.coverage == 0.75, "the mean over the two cases with phrases; the others contribute nothing"
    assert (totals.recall_at_k, totals.mrr, totals.document_recall) == (1.0, 0.75, 0.5)
    assert totals.reasons == {"model-declined": 1, "no-evidence": 1}
    assert (totals.chat_calls, totals.input_tokens, totals.cases_without_tokens) == (3, 0, 3)
    assert (totals.support_judged, totals.supported, totals.answer_support) == (1, 0, 0.0)


# --- answer support and the abstention's reasons ---------------------------------------


def quoting(words: str, insufficient: str | None = None) -> Callable[[ChatRequest], str]:
    def respond(request: ChatRequest) -> str:
        reply = json.loads(citing(request, words))
        return json.dumps({**reply, "insufficient": insufficient})

    return respond


def run_with(replies: Mapping[str, Callable[[ChatRequest], str]], **given: Any) -> Evaluator:
    def respond(request: ChatRequest) -> str:
        return replies.get(parse_question(request.messages[-1].content), lambda request: DECLINED)(request)

    retriever = InMemoryRetriever.from_documents(DOCUMENTS)
    return Evaluator(retriever=retriever, answerer=AnswersService(retriever, ScriptedChat(respond)), k=3, **given)


async def test_an_answer_is_supported_only_when_a_valid_quote_holds_a_required_phrase() -> None:
    right = EvalCase(id="right", question="What was the bottle labelled?", answerable=True, required_phrases=("ME",))
    wrong = EvalCase(id="wrong", question="Who took a watch out?", answerable=True, required_phrases=("Cheshire",))
    run = run_with(
        {right.question: quoting("labelled _DRINK  ME_"), wrong.question: quoting("The White Rabbit took a watch")}
    )
    report = await run.run([right, wrong, ROSES])
    assert [case.supported for case in report.cases] == [True, False, None]
    assert [case.citation_validity for case in report.cases[:2]] == [1.0, 1.0], "both quotes are real"
    assert report.cases[1].failing and not report.cases[0].failing
    assert (report.totals.support_judged, report.totals.supported, report.totals.answer_support) == (2, 1, 0.5)


async def test_only_a_decline_or_no_evidence_on_an_unanswerable_case_is_an_abstention() -> None:
    bad_quote = json.dumps({"answer": "A cat.", "citations": [{"chunkId": "x", "quote": "y"}], "insufficient": None})
    run = run_with({CAT.question: lambda request: bad_quote})
    declined = EvalCase(id="declined", question="Did Alice follow the Rabbit to the Queen?", answerable=False)
    report = await run.run([CAT, declined, ROSES])
    cat, declined_case, roses = report.cases
    assert (cat.outcome, cat.reason, cat.abstention_correct) == (
        CaseOutcome.FAILED_REFUSAL,
        "citation-not-found",
        False,
    )
    assert declined_case.outcome is CaseOutcome.ABSTAINED and declined_case.reason == "model-declined"
    assert roses.outcome is CaseOutcome.ABSTAINED and roses.reason == "no-evidence"
    assert (report.totals.failed_refusals, report.totals.abstained, report.totals.abstention) == (1, 2, 2 / 3)
    assert outcome_of(answerable=False, answered=False, reason="unreadable-response") is CaseOutcome.FAILED_REFUSAL


# --- failed cases ----------------------------------------------------------------------


def timing_out(request: ChatRequest) -> str:
    raise TimeoutError("Request timed out: sk-secret-key")


async def test_a_case_failing_with_any_exception_is_kept_as_failed_and_the_run_goes_on() -> None:
    run = run_with({FOLLOW.question: timing_out, CAT.question: quoting("The Cheshire Cat grinned")})
    report = await run.run([CAT, FOLLOW, ROSES])
    assert [case.outcome for case in report.cases] == [
        CaseOutcome.WRONGLY_ANSWERED,
        CaseOutcome.ERROR,
        CaseOutcome.ABSTAINED,
    ]
    failed = report.cases[1]
    assert (failed.error_code, failed.error_message) == ("case-failed", "TimeoutError (no code)")
    assert "secret" not in report.model_dump_json()
    assert report.totals.errors == 1 and report.limits_reached == ()


async def test_the_run_stops_after_max_consecutive_failures_and_keeps_what_finished() -> None:
    cases = [
        CAT,
        *(EvalCase(id=f"t{n}", question=f"Where did the White Rabbit hurry ({n})?", answerable=True) for n in range(4)),
        ROSES,
    ]
    run = run_with({case.question: timing_out for case in cases[1:5]}, max_consecutive_failures=3)
    report = await run.run(cases)
    assert [case.id for case in report.cases] == ["cat", "t0", "t1", "t2"]
    assert [(limit.name.value, limit.value) for limit in report.limits_reached] == [("ConsecutiveFailures", 3)]
    assert report.totals.errors == 3 and report.totals.abstained == 1


async def test_k_is_the_retrieval_depth_and_the_cut_of_recall_and_mrr() -> None:
    report = await evaluator(k=1)[0].run([FOLLOW])
    (follow,) = report.cases
    assert len(follow.items) == 1 and follow.limits_reached[0].name.value == "MaxItems"
    assert (follow.coverage, follow.first_hit, follow.recall_at_k, follow.reciprocal_rank) == (0.0, None, 0.0, 0.0)
    assert report.settings.k == 1 and report.totals.mrr == 0.0


async def test_retrieval_only_measures_retrieval_and_leaves_abstention_out() -> None:
    retriever = InMemoryRetriever.from_documents(DOCUMENTS)
    report = await Evaluator(retriever=retriever, k=3).run([FOLLOW, ROSES])
    assert [case.outcome for case in report.cases] == [CaseOutcome.RETRIEVED, CaseOutcome.RETRIEVED]
    assert report.cases[0].reciprocal_rank == 0.5 and report.totals.abstention is None
    assert report.labels.chat is None and report.labels.retriever.stand_in


# --- the stored-bytes check ---------------------------------------------------------------


class Forging:
    """An answerer (the Protocol) that alters each answered answer's first citation with ``forge``."""

    def __init__(self, inner: AnswersService, forge: Callable[[Any], Any]) -> None:
        self.inner, self.forge = inner, forge

    async def answer(self, question: str, *, retrieval: RetrievalOptions | None = None) -> Answer:
        answer = await self.inner.answer(question, retrieval=retrieval)
        if not answer.citations:
            return answer
        return answer.model_copy(update={"citations": (self.forge(answer.citations[0]),)})


@pytest.mark.parametrize(
    ("forge", "status"),
    [
        (lambda c: c.model_copy(update={"quote": c.quote.replace("bottle", "flask")}), CitationStatus.QUOTE_DIFFERS),
        (lambda c: c.model_copy(update={"start_byte": c.start_byte + 1}), CitationStatus.QUOTE_DIFFERS),
        (lambda c: c.model_copy(update={"end_byte": 10_000}), CitationStatus.OUTSIDE_CHUNK),
        (lambda c: c.model_copy(update={"chunk_id": "0" * 64}), CitationStatus.CHUNK_MISSING),
    ],
)
async def test_a_citation_that_is_not_the_stored_bytes_moves_citation_validity_only(
    forge: Callable[[Any], Any], status: CitationStatus
) -> None:
    honest, retriever = evaluator(k=3)
    forged = Evaluator(retriever=retriever, answerer=Forging(honest.answerer, forge), k=3)  # type: ignore[arg-type]
    before, after = (await honest.run([BOTTLE])).cases[0], (await forged.run([BOTTLE])).cases[0]
    assert after.citations[0].status is status and after.citation_validity == 0.0
    assert before.citation_validity == 1.0
    for name in ("outcome", "coverage", "recall_at_k", "reciprocal_rank", "document_recall", "phrases_found"):
        assert getattr(after, name) == getattr(before, name), name


def test_the_check_compares_bytes_and_refuses_a_span_cutting_a_code_point() -> None:
    stored = {"c": StoredChunk("c", "café au lait", 100, 100 + len("café au lait".encode()))}
    item = InMemoryRetriever.from_documents({"d": "x"}).items[0]
    base = {"document_id": item.document_id, "chunk_id": "c"}
    valid = Citation(**base, start_byte=100, end_byte=105, quote="café")
    cut = Citation(**base, start_byte=100, end_byte=104, quote="caf")
    assert [check.status for check in check_citations([valid, cut], stored)] == [
        CitationStatus.VALID,
        CitationStatus.QUOTE_DIFFERS,
    ]


# --- tokens, errors, bounds, lanes, labels, the span and JSON ---------------------------


class CountingChat(ScriptedChat):
    """A scripted chat whose replies report tokens, as a provider's would."""

    async def complete(self, request: ChatRequest) -> ChatReply:
        reply = await super().complete(request)
        return reply.model_copy(update={"usage": ChatUsage(input_tokens=100, output_tokens=7)})


async def test_tokens_and_times_come_from_each_answers_receipt() -> None:
    retriever = InMemoryRetriever.from_documents(DOCUMENTS)
    answers = AnswersService(retriever, CountingChat(scripted))  # type: ignore[arg-type]
    report = await Evaluator(retriever=retriever, answerer=answers).run([BOTTLE, ROSES, CAT])
    assert [(c.input_tokens, c.output_tokens, c.chat_calls) for c in report.cases] == [
        (100, 7, 1),
        (None, None, 0),
        (100, 7, 1),
    ]
    totals = report.totals
    assert (totals.input_tokens, totals.output_tokens, totals.chat_calls, totals.cases_without_tokens) == (
        200,
        14,
        2,
        0,
    )
    assert all(case.seconds >= case.retrieval_seconds >= 0 for case in report.cases)


async def test_a_case_with_a_coded_error_is_reported_and_the_run_goes_on() -> None:
    run, _ = evaluator(k=3, retrieval=RetrievalOptions(max_question_chars=60))
    long = EvalCase(id="long", question="Why? " * 20, answerable=True, required_phrases=("x",))
    report = await run.run([long, BOTTLE])
    assert report.cases[0].outcome is CaseOutcome.ERROR and report.cases[0].error_code == "question-too-long"
    assert report.cases[0].coverage is None and report.cases[0].failing
    assert report.cases[1].outcome is CaseOutcome.ANSWERED
    assert (report.totals.errors, report.totals.coverage, report.totals.abstention) == (1, 0.5, 1.0)


async def test_max_cases_runs_the_first_ones_and_says_so() -> None:
    report = await evaluator(max_cases=2)[0].run([BOTTLE, FOLLOW, ROSES])
    assert [case.id for case in report.cases] == ["bottle", "follow"]
    assert [(limit.name.value, limit.value) for limit in report.limits_reached] == [("MaxCases", 2)]


async def test_lanes_keep_the_file_order_and_the_same_metrics() -> None:
    cases = [BOTTLE, FOLLOW, ROSES, CAT] * 3
    cases = [case.model_copy(update={"id": f"{case.id}-{n}"}) for n, case in enumerate(cases)]
    one = await evaluator(concurrency=1)[0].run(cases)
    four = await evaluator(concurrency=4)[0].run(cases)
    assert [c.id for c in four.cases] == [c.id for c in cases]
    assert [c.model_copy(update={"seconds": 0, "retrieval_seconds": 0, "answer_seconds": 0}) for c in four.cases] == [
        c.model_copy(update={"seconds": 0, "retrieval_seconds": 0, "answer_seconds": 0}) for c in one.cases
    ]
    assert four.settings.concurrency == 4


@pytest.mark.parametrize(
    "bad",
    [
        {"k": 0},
        {"k": 129},
        {"concurrency": 9},
        {"max_cases": 10_001},
        {"k": True},
        {"max_consecutive_failures": 0},
        {"max_consecutive_failures": 1_001},
    ],
)
def test_bounds_are_checked(bad: Mapping[str, Any]) -> None:
    with pytest.raises(ConfigurationError) as raised:
        evaluator(**bad)
    assert raised.value.code == "invalid-option"


def test_an_evaluator_needs_a_retriever_and_answers_need_stored_text() -> None:
    with pytest.raises(ConfigurationError, match="a GraphRag or a retriever"):
        Evaluator()

    class Plain:
        options = RetrievalOptions()

        async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Sequence[Any]: ...

    with pytest.raises(ConfigurationError, match="stored-text reader"):
        Evaluator(retriever=Plain(), answerer=evaluator()[0].answerer)  # type: ignore[arg-type]


async def test_the_report_names_the_stand_ins_round_trips_as_json_and_traces_counts_only() -> None:
    with captured_spans() as exporter:
        report = await evaluator()[0].run([BOTTLE, ROSES])
    labels = report.labels
    assert labels.retriever.stand_in and "InMemoryRetriever" in labels.retriever.label
    assert labels.chat is not None and labels.chat.stand_in and "ScriptedChat" in labels.chat.label
    text = report.model_dump_json(by_alias=True)
    assert EvaluationReport.model_validate_json(text) == report
    data = json.loads(text)
    assert data["format"] == "graphrag-orm-evaluation/2" and "startedAt" in data and data["settings"]["k"] == 3
    assert data["cases"][0]["citationValidity"] == 1.0 and data["totals"]["wronglyAnswered"] == 0
    (evaluate,) = [span for span in exporter.get_finished_spans() if span.name == "GraphRag.Evaluate"]
    assert dict(evaluate.attributes or {}) == {"graphrag.cases": 2}
    answers = [span for span in exporter.get_finished_spans() if span.name == "GraphRag.Answer"]
    assert len(answers) == 2 and all(span.parent is not None for span in answers)


async def test_with_lanes_the_failures_in_a_row_stop_every_lane() -> None:
    cases = [
        EvalCase(id=f"t{n}", question=f"Where did the White Rabbit hurry ({n})?", answerable=True) for n in range(8)
    ]
    run = run_with({case.question: timing_out for case in cases}, max_consecutive_failures=2, concurrency=2)
    report = await run.run(cases)
    assert 2 <= len(report.cases) <= 3 and all(case.outcome is CaseOutcome.ERROR for case in report.cases)
    assert [limit.name.value for limit in report.limits_reached] == ["ConsecutiveFailures"]
