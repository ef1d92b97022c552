"""The evaluation harness on a small corpus with known answers, ingested for real, offline.

Two short documents, one paragraph per chunk (HashingEmbedder, the real chunker, the
real retriever on Neo4j), answered by ``ExtractiveChat`` or a scripted chat. Every
metric's value is checked; then a broken retriever, a fabricating chat, a tampering
retriever and a forged answer each move the metric they should, and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from graphrag_orm import GraphRag, GraphRagOptions
from graphrag_orm.answers import Answer, AnswersService
from graphrag_orm.chat import ChatClient, ChatRequest, ExtractiveChat, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_evidence
from graphrag_orm.chat.extractive import sentences
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evaluation import (
    CaseOutcome,
    CaseResult,
    CitationStatus,
    EvalCase,
    EvaluationReport,
    Evaluator,
    StoredChunks,
)
from graphrag_orm.evidence import Evidence
from graphrag_orm.retrieval import RetrievalOptions, Retriever
from graphrag_orm.sources import Sources
from graphrag_orm.store import StatementEvent
from graphrag_orm.store.connection import ConnectionSettings
from tests.support.tracing import captured_spans

BIKES = (
    "The BC-310 brake caliper is supplied by Northwind Components of Leeds, under a contract signed in 2024.\n\n"
    "Each caliper is tested at 40 bar before it leaves the factory; the test takes “about nine minutes” per unit.\n\n"
    "Riders call the BC-310 _the quiet one_ because it never squeals... or almost never, say the mechanics.\n\n"
    "The café beside the factory serves espresso to visitors on Fridays, and its pastries are made in Leeds.\n"
)
ALICE = (
    "Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing to do.\n\n"
    "“What is the use of a book,” thought Alice, “without pictures or conversations?” She looked at it again.\n"
)
K = 3


@dataclass(frozen=True)
class Corpus:
    rag: GraphRag
    bikes: str  # document ids
    alice: str


def facade(chat: ChatClient) -> GraphRag:
    options = GraphRagOptions(chunking=ChunkerOptions(max_utf8_bytes=160, overlap_paragraphs=0))
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=chat,
        options=options,
    )


@pytest.fixture
async def corpus(graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[Corpus]:
    rag = facade(ExtractiveChat())
    await rag.connect(neo4j_settings, neomodel=False)
    receipt = await rag.ingestion.ingest([Sources.text("bikes", BIKES), Sources.text("alice", ALICE)])
    assert receipt.chunks_written == 6
    bikes, alice = (document.document_id for document in receipt.documents)
    yield Corpus(rag, bikes, alice)
    await rag.close()


def cases(corpus: Corpus) -> list[EvalCase]:
    return [
        EvalCase(
            id="supplier",
            question="Who supplies the BC-310 brake caliper?",
            answerable=True,
            required_phrases=("Northwind Components",),
            expected_documents=(corpus.bikes,),
        ),
        EvalCase(
            id="test",
            question="How long does the caliper test at 40 bar take?",
            answerable=True,
            required_phrases=("about nine minutes", "tested at 40 bar"),
        ),
        EvalCase(
            id="quiet",
            question="What do riders call the BC-310?",
            answerable=True,
            required_phrases=("the quiet one",),
        ),
        EvalCase(
            id="alice",
            question="What was Alice tired of, sitting by her sister?",
            answerable=True,
            required_phrases=("sitting by her sister", "without pictures or conversations"),
            expected_documents=(corpus.alice, "0" * 64),
        ),
        EvalCase(id="motor", question="What is the torque of the Z-900 motor?", answerable=False),
    ]


def metrics(case: CaseResult) -> tuple[Any, ...]:
    return (case.outcome.value, case.citation_validity, case.coverage, case.recall_at_k, case.reciprocal_rank)


async def test_every_metric_on_a_corpus_with_known_answers(corpus: Corpus) -> None:
    reads: list[StatementEvent] = []
    remove = corpus.rag.store.add_hook(reads.append)
    with captured_spans() as exporter:
        report = await Evaluator(corpus.rag, k=K).run(cases(corpus))
    remove()
    by_id = {case.id: case for case in report.cases}
    assert metrics(by_id["supplier"]) == ("answered", 1.0, 1.0, 1.0, 1.0)
    assert metrics(by_id["test"]) == ("answered", 1.0, 1.0, 1.0, 1.0)
    assert metrics(by_id["quiet"]) == ("answered", 1.0, 1.0, 1.0, 1.0), "the stored _the quiet one_ holds the phrase"
    alice = by_id["alice"]
    # Both Alice passages are retrieved: the first holds the first phrase, the second the other.
    assert alice.phrases_found == (True, True) and alice.coverage == 1.0 and alice.reciprocal_rank == 1.0
    assert alice.documents_found == (True, False) and alice.document_recall == 0.5
    assert by_id["supplier"].document_recall == 1.0
    motor = by_id["motor"]
    assert (motor.outcome, motor.reason, motor.coverage, motor.citation_validity) == (
        CaseOutcome.ABSTAINED,
        "model-declined",
        None,
        None,
    )
    for case in report.cases:
        assert len(case.items) == K, "k is the retrieval's depth"
        for check in case.citations:
            assert check.status is CitationStatus.VALID
    totals = report.totals
    assert (totals.cases, totals.errors, totals.failing) == (5, 0, 1)
    assert (totals.answered, totals.abstained, totals.wrongly_refused, totals.wrongly_answered) == (4, 1, 0, 0)
    assert (totals.abstention, totals.citation_validity, totals.citations, totals.valid_citations) == (1.0, 1.0, 4, 4)
    assert (totals.coverage, totals.recall_at_k, totals.mrr, totals.document_recall) == (1.0, 1.0, 1.0, 0.75)
    assert totals.reasons == {"model-declined": 1} and totals.chat_calls == 5
    assert report.labels.embedder is not None and report.labels.embedder.stand_in
    assert report.labels.chat is not None and "ExtractiveChat" in report.labels.chat.label
    assert report.labels.embedding_set == OFFLINE_EMBEDDING_SET.id and not report.labels.retriever.stand_in
    assert report.settings.routes == ("FullText", "Vector")
    # The citations were read back in one batched read per answered case, never loading embeddings.
    stored = [event for event in reads if event.name == "evaluation.stored_chunks"]
    assert len(stored) == 4 and all(event.rows == 1 for event in stored)
    assert "embedding" not in StoredChunks(corpus.rag.store, corpus.rag.model).statement
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "GraphRag.Evaluate"]
    assert dict(span.attributes or {}) == {"graphrag.cases": 5}
    assert EvaluationReport.model_validate_json(report.model_dump_json(by_alias=True)) == report


# --- a broken retriever --------------------------------------------------------------


class WrongItems:
    """A retriever that retrieves for another question than the one asked (the café's)."""

    def __init__(self, inner: Retriever, reverse: bool = False) -> None:
        self.inner, self.reverse, self.options = inner, reverse, inner.options

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence:
        if self.reverse:
            evidence = await self.inner.retrieve(question, options)
            return evidence.model_copy(update={"items": evidence.items[::-1]})
        evidence = await self.inner.retrieve("café espresso pastries visitors Fridays", options)
        return evidence.model_copy(update={"question": question})


def first_sentence(request: ChatRequest) -> str:
    """Answers every question by quoting the first sentence of the first evidence item."""
    chunk_id, text = parse_evidence(request.messages[-1].content)[0]
    quote = sentences(text)[0]
    return json.dumps({"answer": quote, "citations": [{"chunkId": chunk_id, "quote": quote}], "insufficient": None})


async def run_with(corpus: Corpus, retriever: Any, chat: ChatClient, answerer: Any = None) -> EvaluationReport:
    answers = answerer or AnswersService(retriever, chat)
    stored = StoredChunks(corpus.rag.store, corpus.rag.model)
    return await Evaluator(retriever=retriever, answerer=answers, stored=stored, k=K).run(cases(corpus))


async def test_a_broken_retriever_moves_coverage_recall_and_mrr_and_nothing_else(corpus: Corpus) -> None:
    chat = ScriptedChat(first_sentence)
    good = await run_with(corpus, corpus.rag.retriever, chat)
    wrong = await run_with(corpus, WrongItems(corpus.rag.retriever), chat)
    g, w = good.totals, wrong.totals
    assert (g.coverage, g.recall_at_k, g.mrr) == (1.0, 1.0, 1.0)
    assert w.coverage is not None and w.recall_at_k is not None and w.mrr is not None
    assert w.coverage < g.coverage and w.recall_at_k < g.recall_at_k and w.mrr < g.mrr
    assert by_id(wrong)["supplier"].coverage == 0.0 and by_id(wrong)["supplier"].reciprocal_rank == 0.0
    # The answers still quote stored text: validity and abstention do not move.
    assert w.citation_validity == g.citation_validity == 1.0 and w.citations == g.citations
    assert (w.answered, w.wrongly_answered, w.abstention) == (g.answered, g.wrongly_answered, g.abstention)

    reversed_ = await run_with(corpus, WrongItems(corpus.rag.retriever, reverse=True), chat)
    r = reversed_.totals
    assert (r.coverage, r.recall_at_k) == (g.coverage, g.recall_at_k), "the same items, another order"
    assert r.mrr is not None and r.mrr < 1.0 and r.citation_validity == 1.0


def by_id(report: EvaluationReport) -> dict[str, CaseResult]:
    return {case.id: case for case in report.cases}


# --- a fabricating chat, tampered evidence and a forged answer ------------------------


def fabricating(request: ChatRequest) -> str:
    """Cites a real evidence item with a quote that is not in it."""
    chunk_id, _ = parse_evidence(request.messages[-1].content)[0]
    quote = "Southwind Components of Bristol"
    return json.dumps({"answer": quote, "citations": [{"chunkId": chunk_id, "quote": quote}], "insufficient": None})


async def test_a_fabricating_chat_is_refused_and_moves_abstention_not_retrieval(corpus: Corpus) -> None:
    honest = await run_with(corpus, corpus.rag.retriever, ScriptedChat(first_sentence))
    fabricated = await run_with(corpus, corpus.rag.retriever, ScriptedChat(fabricating))
    h, f = honest.totals, fabricated.totals
    assert f.reasons == {"citation-not-found": 5}
    # The unanswerable case's refusal is a failed quote, not a decline: no abstention.
    assert (f.answered, f.wrongly_refused, f.abstained, f.wrongly_answered, f.failed_refusals) == (0, 4, 0, 0, 1)
    assert f.abstention == 0.0 and h.abstention is not None and f.abstention < h.abstention
    assert (f.citations, f.citation_validity) == (0, None), "a refused answer has no citation to check"
    assert (f.coverage, f.recall_at_k, f.mrr, f.document_recall) == (
        h.coverage,
        h.recall_at_k,
        h.mrr,
        h.document_recall,
    )


class Tampering:
    """A retriever whose items' text was altered after it was read: the answer quotes the altered text."""

    def __init__(self, inner: Retriever) -> None:
        self.inner, self.options = inner, inner.options

    async def retrieve(self, question: str, options: RetrievalOptions | None = None) -> Evidence:
        evidence = await self.inner.retrieve(question, options)
        items = tuple(item.model_copy(update={"text": item.text.replace("Leeds", "Derby")}) for item in evidence.items)
        return evidence.model_copy(update={"items": items})


async def test_the_stored_bytes_check_reads_the_database_not_the_answer(corpus: Corpus) -> None:
    report = await run_with(corpus, Tampering(corpus.rag.retriever), ExtractiveChat())
    supplier = by_id(report)["supplier"]
    # The answer passed its own check against the altered evidence, so it was answered ...
    assert supplier.outcome is CaseOutcome.ANSWERED and "Derby" in (supplier.answer or "")
    # ... but its quote is not what the database holds at that span.
    assert [check.status for check in supplier.citations] == [CitationStatus.QUOTE_DIFFERS]
    assert supplier.citation_validity == 0.0 and supplier.failing
    assert by_id(report)["quiet"].citation_validity == 1.0, "an untouched passage stays valid"


class Forging:
    """An answerer (the Protocol) returning the real answer, the supplier's first citation changed by ``forge``."""

    def __init__(self, inner: AnswersService, forge: Callable[[Any], Any]) -> None:
        self.inner, self.forge = inner, forge

    async def answer(self, question: str, *, retrieval: RetrievalOptions | None = None) -> Answer:
        answer = await self.inner.answer(question, retrieval=retrieval)
        if not answer.citations or "supplies" not in question:
            return answer
        return answer.model_copy(update={"citations": (self.forge(answer.citations[0]), *answer.citations[1:])})


@pytest.mark.parametrize(
    ("forge", "status"),
    [
        (lambda c: c.model_copy(update={"quote": c.quote.replace("Northwind", "Southwind")}), "quote-differs"),
        (lambda c: c.model_copy(update={"end_byte": c.end_byte + 500}), "outside-chunk"),
        (lambda c: c.model_copy(update={"chunk_id": "f" * 64}), "chunk-missing"),
    ],
)
async def test_a_forged_answer_through_the_protocol_fails_the_stored_bytes_check(
    corpus: Corpus, forge: Callable[[Any], Any], status: str
) -> None:
    assert corpus.rag.answers is not None
    report = await run_with(corpus, corpus.rag.retriever, ExtractiveChat(), Forging(corpus.rag.answers, forge))
    supplier = by_id(report)["supplier"]
    assert [check.status.value for check in supplier.citations] == [status]
    assert supplier.citation_validity == 0.0 and report.totals.citation_validity == 0.75
    assert supplier.outcome is CaseOutcome.ANSWERED and supplier.coverage == 1.0
