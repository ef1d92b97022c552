"""Answers against the real Neo4j: real ingestion and retrieval, scripted model replies, every refusal.

Each test ingests two short documents, one passage per chunk, so chunk ids come
from the graph and evidence from the real retriever. Scripted replies find the
chunk a quote comes from in the evidence block of the request they answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from graphrag_orm.answers import (
    Answer,
    AnswerExport,
    AnswersOptions,
    AnswersService,
    Completed,
    Delta,
    Disposition,
    Retrieved,
)
from graphrag_orm.chat import ChatChunk, ChatReply, ChatRequest, ExtractiveChat, OpenAIChat, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_evidence
from graphrag_orm.chat.extractive import NO_MODEL_NOTE
from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionService, RunStatus
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import DocumentsScope, QuestionRefused, RetrievalOptions, Retriever
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from tests.support.openai_server import OpenAIServer
from tests.support.tracing import captured_spans

MODEL = for_layout(Layout.DEFAULT)

# Paragraphs of 90 to 160 bytes under a 160-byte budget: one paragraph per chunk.
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
BIKES_SOURCE = Sources.text("bikes", BIKES)
ALICE_SOURCE = Sources.text("alice", ALICE)
SUPPLIER_QUESTION = "Who supplies the BC-310 brake caliper?"


@dataclass(frozen=True)
class Corpus:
    retriever: Retriever
    chunk_ids: dict[str, str]  # the first words of each passage -> its chunk id


async def ingest_corpus(store: Store) -> Corpus:
    ingestion = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=160, overlap_paragraphs=0)),
    )
    receipt = await ingestion.ingest([BIKES_SOURCE, ALICE_SOURCE])
    assert receipt.status == RunStatus.COMPLETED and receipt.chunks_written == 6
    retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    evidence = await retriever.retrieve("caliper Alice café riders", RetrievalOptions(max_items=16))
    chunk_ids = {" ".join(item.text.split()[:3]): item.chunk_id for item in evidence.items}
    assert len(chunk_ids) == 6, chunk_ids
    return Corpus(retriever, chunk_ids)


@pytest.fixture
async def corpus(graph: None, store: Store) -> Corpus:
    return await ingest_corpus(store)


# --- scripted replies -----------------------------------------------------------------


def evidence_items(request: ChatRequest) -> list[tuple[str, str]]:
    return parse_evidence(request.messages[-1].content)


def chunk_holding(request: ChatRequest, words: str) -> str:
    """The evidence item of ``request`` whose text holds ``words``; fails the test when none does."""
    for chunk_id, text in evidence_items(request):
        if words in text:
            return chunk_id
    raise AssertionError(f"no evidence item holds {words!r}")


def citing(
    answer: str, *quotes: str | tuple[str, str], insufficient: str | None = None
) -> Callable[[ChatRequest], str]:
    """A responder answering ``answer``, citing each quote from the item holding it (or the given words).

    ``insufficient`` fills the decline beside the answer, as small models under the strict schema do.
    """

    def respond(request: ChatRequest) -> str:
        citations = []
        for quote in quotes:
            text, where = (quote, quote) if isinstance(quote, str) else quote
            citations.append({"chunkId": chunk_holding(request, where), "quote": text})
        return json.dumps({"answer": answer, "citations": citations, "insufficient": insufficient})

    return respond


def replying(text: str) -> Callable[[ChatRequest], str]:
    return lambda request: text


def answers(corpus: Corpus, responder: Callable[[ChatRequest], str]) -> tuple[AnswersService, ScriptedChat]:
    chat = ScriptedChat(responder)
    return AnswersService(corpus.retriever, chat), chat


def refused(answer: Answer, reason: str) -> None:
    assert answer.disposition == Disposition.INSUFFICIENT_EVIDENCE
    assert answer.reason == reason
    assert answer.text is None and answer.citations == ()


# --- answered ---------------------------------------------------------------------------


async def test_an_answer_cites_the_stored_bytes_of_its_document(corpus: Corpus) -> None:
    service, chat = answers(corpus, citing("  Northwind Components of Leeds.\n", "supplied by Northwind Components"))
    answer = await service.answer(SUPPLIER_QUESTION)
    assert answer.disposition == Disposition.ANSWERED and answer.reason is None
    assert answer.text == "Northwind Components of Leeds."
    (citation,) = answer.citations
    assert citation.quote == "supplied by Northwind Components"
    assert BIKES.encode()[citation.start_byte : citation.end_byte].decode() == citation.quote
    assert citation.document_id == BIKES_SOURCE.document_id
    assert citation.chunk_id == corpus.chunk_ids["The BC-310 brake"]
    assert answer.evidence.question == SUPPLIER_QUESTION and answer.evidence.items
    assert len(chat.calls) == 1 and answer.receipt.chat_calls == 1
    assert answer.receipt.input_tokens is None and answer.receipt.output_tokens is None  # a script reports none
    assert answer.receipt.retrieval_seconds > 0 and answer.receipt.answer_seconds >= 0


async def test_forgiven_differences_cite_the_stored_text_not_the_models(corpus: Corpus) -> None:
    service, _chat = answers(
        corpus,
        citing(
            "About nine minutes; riders call it the quiet one.",
            ('the test takes "about nine minutes"', "about nine minutes"),
            ("call the BC-310 the quiet one because it never squeals", "the quiet one"),
            ("Riders call ... never squeals ... almost never", "Riders call"),
        ),
    )
    answer = await service.answer("How long does the caliper test take, and what do riders call it?")
    assert answer.disposition == Disposition.ANSWERED, answer.reason
    quotes = [c.quote for c in answer.citations]
    assert quotes == [
        "the test takes “about nine minutes”",
        "call the BC-310 _the quiet one_ because it never squeals",
        "Riders call the BC-310 _the quiet one_ because it never squeals... or almost never",
    ]
    for citation in answer.citations:
        assert BIKES.encode()[citation.start_byte : citation.end_byte].decode() == citation.quote


async def test_extractive_chat_answers_offline_with_a_checked_citation(corpus: Corpus) -> None:
    service = AnswersService(corpus.retriever, ExtractiveChat())
    answer = await service.answer(SUPPLIER_QUESTION)
    assert answer.disposition == Disposition.ANSWERED
    quote = answer.citations[0].quote
    assert quote.startswith("The BC-310 brake caliper is supplied by Northwind")
    assert answer.text == f"{quote}\n\n{NO_MODEL_NOTE}", "the quoted sentence, then the line saying no model wrote it"
    assert AnswerExport.check(answer) == []
    refused(await service.answer("What is the airspeed of an unladen swallow?"), "model-declined")


# --- each refusal -----------------------------------------------------------------------


async def test_an_empty_scope_refuses_no_evidence_without_a_model_call(corpus: Corpus) -> None:
    service, chat = answers(corpus, citing("Northwind.", "Northwind"))
    options = RetrievalOptions(scope=DocumentsScope(document_ids=("no-such-document",)))
    answer = await service.answer(SUPPLIER_QUESTION, retrieval=options)
    refused(answer, "no-evidence")
    assert chat.calls == [] and answer.receipt.chat_calls == 0
    assert answer.receipt.input_tokens is None and answer.evidence.items == ()


async def test_a_decline_is_model_declined(corpus: Corpus) -> None:
    service, _chat = answers(corpus, replying('{"answer": null, "citations": null, "insufficient": "Not said."}'))
    refused(await service.answer(SUPPLIER_QUESTION), "model-declined")


@pytest.mark.parametrize(
    "reply",
    [
        "Northwind Components supplies it.",
        '{"answer": "Northwind", "citations": [{"chunkId": "x", "quote": "Northwind"}]',
        '{"text": "Northwind", "sources": ["The BC-310 brake caliper"]}',
        '["Northwind"]',
    ],
    ids=["not-json", "cut-json", "another-shape", "an-array"],
)
async def test_a_reply_that_is_not_the_json_asked_for_is_unreadable(corpus: Corpus, reply: str) -> None:
    service, _chat = answers(corpus, replying(reply))
    refused(await service.answer(SUPPLIER_QUESTION), "unreadable-response")


async def test_a_reply_cut_at_the_output_limit_is_unreadable(corpus: Corpus, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = lambda body: json.dumps(
        {"answer": "Northwind.", "citations": [{"chunkId": "x", "quote": "Northwind"}], "insufficient": None}
    )
    openai_server.finish_reason = "length"
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        answer = await AnswersService(corpus.retriever, chat, AnswersOptions(max_output_tokens=64)).answer(
            SUPPLIER_QUESTION
        )
    refused(answer, "unreadable-response")
    assert (answer.receipt.input_tokens, answer.receipt.output_tokens) == (11, 7)
    assert openai_server.requests_to("/v1/chat/completions")[0].body["max_completion_tokens"] == 64


@pytest.mark.parametrize("citations", ["[]", "null"])
async def test_an_answer_without_citations_is_refused(corpus: Corpus, citations: str) -> None:
    reply = f'{{"answer": "Northwind Components.", "citations": {citations}, "insufficient": null}}'
    service, _chat = answers(corpus, replying(reply))
    refused(await service.answer(SUPPLIER_QUESTION), "no-citations")


async def test_a_citation_of_a_chunk_that_is_not_in_the_evidence_is_refused(corpus: Corpus) -> None:
    alice_chunk = corpus.chunk_ids["Alice was beginning"]  # in the graph, outside this scope's evidence
    reply = json.dumps({"answer": "Alice.", "citations": [{"chunkId": alice_chunk, "quote": "Alice was beginning"}]})
    service, _chat = answers(corpus, replying(reply))
    options = RetrievalOptions(scope=DocumentsScope(document_ids=(BIKES_SOURCE.document_id,)))
    answer = await service.answer("Who was getting tired?", retrieval=options)
    assert alice_chunk not in {item.chunk_id for item in answer.evidence.items}
    refused(answer, "citation-not-found")


async def test_a_citation_of_a_context_neighbour_is_refused(corpus: Corpus) -> None:
    def respond(request: ChatRequest) -> str:
        (only_item,) = evidence_items(request)
        assert "Northwind" in only_item[1]
        neighbour = corpus.chunk_ids["Each caliper is"]
        return json.dumps({"answer": "40 bar.", "citations": [{"chunkId": neighbour, "quote": "tested at 40 bar"}]})

    service, _chat = answers(corpus, respond)
    answer = await service.answer(SUPPLIER_QUESTION, retrieval=RetrievalOptions(max_items=1, neighbour_chunks=1))
    assert [c.chunk_id for c in answer.evidence.context] == [corpus.chunk_ids["Each caliper is"]]
    assert "tested at 40 bar" in answer.evidence.context[0].text
    refused(answer, "citation-not-found")


async def test_a_quote_spanning_two_chunks_is_refused(corpus: Corpus) -> None:
    spanning = "under a contract signed in 2024. Each caliper is tested"
    service, _chat = answers(corpus, citing("Since 2024.", (spanning, "signed in 2024")))
    answer = await service.answer("caliper contract signed and tested")
    assert {corpus.chunk_ids["The BC-310 brake"], corpus.chunk_ids["Each caliper is"]} <= {
        item.chunk_id for item in answer.evidence.items
    }
    refused(answer, "citation-not-found")


async def test_a_quote_that_differs_by_case_is_refused(corpus: Corpus) -> None:
    service, _chat = answers(corpus, citing("Northwind.", ("Supplied By Northwind Components", "supplied by")))
    refused(await service.answer(SUPPLIER_QUESTION), "citation-not-found")


def repaired_on_the_second_call(first: str, second: str) -> Callable[[ChatRequest], str]:
    """Cites ``first`` (which does not verify), then ``second`` once the repair note arrives."""

    def respond(request: ChatRequest) -> str:
        repairing = "<previous-reply>" in request.messages[-1].content
        quote = second if repairing else first
        chunk_id = chunk_holding(request, "supplied by")
        return json.dumps({"answer": "Northwind.", "citations": [{"chunkId": chunk_id, "quote": quote}]})

    return respond


async def test_a_citation_not_found_is_repaired_once_when_the_model_then_quotes_exactly(corpus: Corpus) -> None:
    service, chat = answers(corpus, repaired_on_the_second_call("Supplied By Northwind", "supplied by Northwind"))
    answer = await service.answer(SUPPLIER_QUESTION)
    assert answer.answered and answer.citations[0].quote == "supplied by Northwind"
    assert (answer.receipt.chat_calls, answer.receipt.repairs) == (2, 1)
    first, second = chat.calls
    assert second.messages[0] == first.messages[0] and second.response_schema == first.response_schema
    note = second.messages[-1].content
    assert first.messages[-1].content in note
    assert '"Supplied By Northwind"' in note and chunk_holding(first, "supplied by") in note


async def test_a_repair_that_fails_again_is_refused_and_no_third_call_is_made(corpus: Corpus) -> None:
    service, chat = answers(corpus, citing("Northwind.", ("Supplied By Northwind Components", "supplied by")))
    answer = await service.answer(SUPPLIER_QUESTION)
    refused(answer, "citation-not-found")
    assert (answer.receipt.chat_calls, answer.receipt.repairs, len(chat.calls)) == (2, 1, 2)


async def test_only_a_citation_not_found_is_repaired_and_the_repair_can_be_turned_off(corpus: Corpus) -> None:
    declined = '{"insufficient": "Nothing about it.", "answer": null, "citations": null}'
    service, chat = answers(corpus, replying(declined))
    assert (await service.answer(SUPPLIER_QUESTION)).receipt.repairs == 0 and len(chat.calls) == 1
    chat = ScriptedChat(repaired_on_the_second_call("Supplied By Northwind", "supplied by Northwind"))
    strict = AnswersService(corpus.retriever, chat, AnswersOptions(repair_citations=False))
    refused(await strict.answer(SUPPLIER_QUESTION), "citation-not-found")
    assert len(chat.calls) == 1


async def test_a_streamed_answer_repaired_after_its_deltas_completes_answered(corpus: Corpus) -> None:
    service, _chat = answers(corpus, repaired_on_the_second_call("Supplied By Northwind", "supplied by Northwind"))
    updates = await collect(service.stream(SUPPLIER_QUESTION))
    completed = updates[-1]
    assert any(isinstance(u, Delta) for u in updates)
    assert isinstance(completed, Completed) and completed.withdraws is False
    assert completed.answer.answered and completed.answer.receipt.repairs == 1


async def test_a_quote_with_three_elisions_is_refused(corpus: Corpus) -> None:
    quote = "Riders call ... the quiet one ... never squeals ... almost never"
    service, _chat = answers(corpus, citing("The quiet one.", (quote, "Riders call")))
    refused(await service.answer("What do riders call the BC-310?"), "citation-not-found")


async def test_one_bad_citation_refuses_the_whole_answer(corpus: Corpus) -> None:
    service, _chat = answers(
        corpus, citing("Northwind, tested at 50 bar.", "supplied by Northwind", ("tested at 50 bar", "tested at"))
    )
    refused(await service.answer("Who supplies the caliper and how is it tested?"), "citation-not-found")


async def test_an_empty_question_is_refused_before_any_call(corpus: Corpus) -> None:
    service, chat = answers(corpus, citing("x", "x"))
    with pytest.raises(QuestionRefused) as raised:
        await service.answer("   ")
    assert raised.value.code == "empty-question" and chat.calls == []
    with pytest.raises(QuestionRefused) as raised:
        await service.answer("caliper " * 10, retrieval=RetrievalOptions(max_question_chars=20))
    assert raised.value.code == "question-too-long"


# --- streaming --------------------------------------------------------------------------


async def collect(updates: AsyncIterator[Retrieved | Delta | Completed]) -> list[Retrieved | Delta | Completed]:
    return [update async for update in updates]


def same_answer(streamed: Answer, answered: Answer) -> None:
    assert streamed.model_dump(exclude={"receipt"}) == answered.model_dump(exclude={"receipt"})
    assert streamed.receipt.chat_calls == answered.receipt.chat_calls
    assert streamed.receipt.input_tokens == answered.receipt.input_tokens


async def test_a_streamed_answer_equals_answer_for_the_same_reply(corpus: Corpus) -> None:
    # Escapes (a dash, a surrogate pair, quotation marks) that the stream's small pieces split.
    reply_answer = r"Northwind Components \u2014 of Leeds \ud83d\udeb2, \"since 2024\"."
    quote = "supplied by Northwind Components of Leeds"

    def respond(request: ChatRequest) -> str:
        chunk = chunk_holding(request, quote)
        citations = json.dumps([{"chunkId": chunk, "quote": quote}])
        return f'{{"answer": "{reply_answer}", "citations": {citations}, "insufficient": null}}'

    service, chat = answers(corpus, respond)
    answered = await service.answer(SUPPLIER_QUESTION)
    updates = await collect(service.stream(SUPPLIER_QUESTION))
    assert chat.calls[0].fingerprint() == chat.calls[1].fingerprint()
    assert isinstance(updates[0], Retrieved) and isinstance(updates[-1], Completed)
    assert updates[0].evidence == answered.evidence
    deltas = [u for u in updates if isinstance(u, Delta)]
    assert len(deltas) == len(updates) - 2 and len(deltas) > 3
    assert all(d.provisional for d in deltas)
    assert "".join(d.text for d in deltas) == 'Northwind Components — of Leeds 🚲, "since 2024".'
    completed = updates[-1]
    assert completed.withdraws is False
    same_answer(completed.answer, answered)
    assert answered.disposition == Disposition.ANSWERED


async def test_a_refusal_after_deltas_withdraws_them(corpus: Corpus) -> None:
    service, _chat = answers(corpus, citing("Northwind, at 50 bar.", ("tested at 50 bar", "tested at")))
    answered = await service.answer("How is the caliper tested?")
    updates = await collect(service.stream("How is the caliper tested?"))
    deltas = [u.text for u in updates if isinstance(u, Delta)]
    assert "".join(deltas) == "Northwind, at 50 bar."
    completed = updates[-1]
    assert isinstance(completed, Completed) and completed.withdraws is True
    refused(completed.answer, "citation-not-found")
    same_answer(completed.answer, answered)


async def test_a_streamed_answer_beside_a_decline_stands_when_its_citation_verifies(corpus: Corpus) -> None:
    service, _chat = answers(corpus, citing("Northwind.", "supplied by Northwind", insufficient="Not sure."))
    answered = await service.answer(SUPPLIER_QUESTION)
    updates = await collect(service.stream(SUPPLIER_QUESTION))
    assert "".join(u.text for u in updates if isinstance(u, Delta)) == "Northwind."
    completed = updates[-1]
    assert isinstance(completed, Completed) and completed.withdraws is False
    assert completed.answer.answered and completed.answer.text == "Northwind."
    same_answer(completed.answer, answered)


async def test_a_streamed_answer_beside_a_decline_whose_quote_fails_is_withdrawn_as_declined(corpus: Corpus) -> None:
    service, _chat = answers(corpus, citing("Northwind.", ("tested at 50 bar", "tested at"), insufficient="Unsure."))
    updates = await collect(service.stream("How is the caliper tested?"))
    assert "".join(u.text for u in updates if isinstance(u, Delta)) == "Northwind."
    completed = updates[-1]
    assert isinstance(completed, Completed) and completed.withdraws is True
    refused(completed.answer, "model-declined")


async def test_a_reply_starting_with_insufficient_streams_no_deltas(corpus: Corpus) -> None:
    reply = '{"insufficient": "Nothing about prices.", "answer": null, "citations": null}'
    service, _chat = answers(corpus, replying(reply))
    updates = await collect(service.stream("What does the caliper cost?"))
    assert [u.kind for u in updates] == ["retrieved", "completed"]
    completed = updates[-1]
    assert isinstance(completed, Completed) and completed.withdraws is False
    refused(completed.answer, "model-declined")


async def test_a_stream_with_no_evidence_makes_no_call(corpus: Corpus) -> None:
    service, chat = answers(corpus, citing("x", "x"))
    options = RetrievalOptions(scope=DocumentsScope(document_ids=()))
    updates = await collect(service.stream(SUPPLIER_QUESTION, retrieval=options))
    assert [u.kind for u in updates] == ["retrieved", "completed"]
    assert isinstance(updates[-1], Completed)
    refused(updates[-1].answer, "no-evidence")
    assert chat.calls == []


@pytest.fixture
async def streaming_server(openai_server: OpenAIServer) -> AsyncIterator[tuple[OpenAIServer, OpenAIChat]]:
    openai_server.chat_responder = lambda body: json.dumps(
        {"answer": "Northwind " * 200, "citations": [{"chunkId": "x", "quote": "Northwind"}], "insufficient": None}
    )
    openai_server.stream_delay = 0.02
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        yield openai_server, chat


class ClosingSpy:
    """Delegates to a chat client and records when the stream it handed out was closed."""

    def __init__(self, chat: OpenAIChat) -> None:
        self.chat = chat
        self.closed = False

    async def complete(self, request: ChatRequest) -> ChatReply:
        return await self.chat.complete(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        try:
            async for chunk in self.chat.stream(request):
                yield chunk
        finally:
            self.closed = True


async def test_closing_the_stream_stops_the_model_call(
    corpus: Corpus, streaming_server: tuple[OpenAIServer, OpenAIChat]
) -> None:
    server, chat = streaming_server
    spy = ClosingSpy(chat)
    service = AnswersService(corpus.retriever, spy)
    kinds = []
    async with contextlib.aclosing(service.stream(SUPPLIER_QUESTION)) as updates:
        async for update in updates:
            kinds.append(update.kind)
            if update.kind == "delta":
                break
    # Closed by the time aclose() returns, not later by the event loop's finaliser.
    assert spy.closed
    assert kinds == ["retrieved", "delta"]
    assert await asyncio.to_thread(server.stream_aborted.wait, 5)
    assert server.streams_completed == 0


async def test_cancelling_the_reading_task_stops_the_model_call(
    corpus: Corpus, streaming_server: tuple[OpenAIServer, OpenAIChat]
) -> None:
    server, chat = streaming_server
    service = AnswersService(corpus.retriever, chat)
    first_delta = asyncio.Event()

    async def read() -> None:
        async for update in service.stream(SUPPLIER_QUESTION):
            if update.kind == "delta":
                first_delta.set()

    task = asyncio.ensure_future(read())
    await asyncio.wait_for(first_delta.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.stream_aborted.wait, 5)
    assert server.streams_completed == 0


class EagerChat:
    """A chat client whose stream never awaits: every piece is ready at once, as from a cache."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.closed = False

    async def complete(self, request: ChatRequest) -> ChatReply:
        return ChatReply(text=self.text)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        try:
            for start in range(0, len(self.text), 7):
                yield ChatChunk(delta=self.text[start : start + 7])
            yield ChatChunk(reply=ChatReply(text=self.text))
        finally:
            self.closed = True


async def test_a_reader_is_cancelled_between_deltas_even_when_the_chat_client_never_awaits(corpus: Corpus) -> None:
    chat = EagerChat(json.dumps({"answer": "Northwind " * 500, "citations": [], "insufficient": None}))
    service = AnswersService(corpus.retriever, chat)
    kinds: list[str] = []
    first_delta = asyncio.Event()

    async def read() -> None:
        async for update in service.stream(SUPPLIER_QUESTION):
            kinds.append(update.kind)
            if update.kind == "delta":
                first_delta.set()

    task = asyncio.ensure_future(read())
    await asyncio.wait_for(first_delta.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Stopped within a delta or two of the first, of some 700, and the chat stream was closed.
    assert kinds[0] == "retrieved" and 1 <= kinds.count("delta") <= 3 and "completed" not in kinds
    assert chat.closed


async def test_a_streamed_answer_over_http_reports_tokens(corpus: Corpus, openai_server: OpenAIServer) -> None:
    def respond(body: dict[str, Any]) -> str:
        items = parse_evidence(body["messages"][-1]["content"])
        chunk = next(chunk_id for chunk_id, text in items if "Northwind" in text)
        return json.dumps({"answer": "Northwind.", "citations": [{"chunkId": chunk, "quote": "Northwind Components"}]})

    openai_server.chat_responder = respond
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        updates = await collect(AnswersService(corpus.retriever, chat).stream(SUPPLIER_QUESTION))
    completed = updates[-1]
    assert isinstance(completed, Completed) and completed.answer.disposition == Disposition.ANSWERED
    assert (completed.answer.receipt.input_tokens, completed.answer.receipt.output_tokens) == (11, 7)
    assert openai_server.requests_to("/v1/chat/completions")[0].body["response_format"]["json_schema"]["strict"]


# --- export -----------------------------------------------------------------------------


async def test_a_real_answer_and_refusal_round_trip_through_export_and_check_clean(corpus: Corpus) -> None:
    service, _chat = answers(corpus, citing("Northwind.", "supplied by Northwind Components of Leeds"))
    answer = await service.answer(SUPPLIER_QUESTION)
    refusal = await service.answer(SUPPLIER_QUESTION, retrieval=RetrievalOptions(scope=DocumentsScope(document_ids=())))
    for original in (answer, refusal):
        read = AnswerExport.from_json(AnswerExport.to_json(original))
        assert read == original
        assert AnswerExport.check(read) == []
    forged = answer.model_copy(
        update={"citations": (answer.citations[0].model_copy(update={"quote": "supplied by Southwind Components"}),)}
    )
    assert len(AnswerExport.check(forged)) == 1


# --- tracing ----------------------------------------------------------------------------


def assert_no_text(spans: Sequence[ReadableSpan], forbidden: Sequence[str]) -> None:
    for recorded in spans:
        assert not recorded.events, recorded.name
        for key, value in (recorded.attributes or {}).items():
            assert key.startswith("graphrag."), key
            for word in forbidden:
                assert word.lower() not in str(value).lower(), (recorded.name, key, value)
        if recorded.status.description is not None:
            assert all(word.lower() not in recorded.status.description.lower() for word in forbidden)


async def test_answer_spans_carry_codes_and_counts_but_no_question_text_or_quotes(corpus: Corpus) -> None:
    question = "Who supplies the BC-310 brake caliper, quietly?"
    service, _chat = answers(corpus, citing("Northwind Components.", "supplied by Northwind"))
    declined, _ = answers(corpus, replying('{"insufficient": "Nothing about prices."}'))
    with captured_spans() as exporter:
        await service.answer(question)
        await collect(service.stream(question))
        await declined.answer(question)
    spans = exporter.get_finished_spans()
    answer_spans = [s for s in spans if s.name == "GraphRag.Answer"]
    assert len(answer_spans) == 3
    first, streamed, refusal = answer_spans
    assert first.attributes is not None and streamed.attributes is not None and refusal.attributes is not None
    assert first.attributes["graphrag.disposition"] == "Answered"
    assert first.attributes["graphrag.citations"] == 1 and first.attributes["graphrag.calls"] == 1
    assert "graphrag.deltas" not in first.attributes
    assert isinstance(streamed.attributes["graphrag.deltas"], int) and streamed.attributes["graphrag.deltas"] > 0
    assert refusal.attributes["graphrag.reason"] == "model-declined"
    retrieve_spans = [s for s in spans if s.name == "GraphRag.Retrieve"]
    assert len(retrieve_spans) == 3
    for child in retrieve_spans:  # retrieval is traced inside its answer
        assert child.parent is not None and child.parent.span_id in {s.context.span_id for s in answer_spans}
    assert_no_text(spans, ["BC-310", "supplies", "quietly", "Northwind", "prices", "caliper"])


async def test_a_cancelled_stream_is_traced_as_cancelled(
    corpus: Corpus, streaming_server: tuple[OpenAIServer, OpenAIChat]
) -> None:
    _server, chat = streaming_server
    with captured_spans() as exporter:
        async with contextlib.aclosing(AnswersService(corpus.retriever, chat).stream(SUPPLIER_QUESTION)) as updates:
            async for update in updates:
                if update.kind == "delta":
                    break
    (answer_span,) = [s for s in exporter.get_finished_spans() if s.name == "GraphRag.Answer"]
    assert answer_span.attributes is not None
    assert answer_span.attributes["graphrag.error_code"] == "cancelled"
    deltas = answer_span.attributes["graphrag.deltas"]
    assert isinstance(deltas, int) and deltas >= 1


async def test_closing_the_stream_after_completed_is_not_a_cancellation(corpus: Corpus) -> None:
    service, _chat = answers(corpus, citing("Northwind.", "supplied by Northwind"))
    with captured_spans() as exporter:
        async with contextlib.aclosing(service.stream(SUPPLIER_QUESTION)) as updates:
            async for update in updates:
                if isinstance(update, Completed):
                    assert update.answer.disposition == Disposition.ANSWERED
                    break
    (answer_span,) = [s for s in exporter.get_finished_spans() if s.name == "GraphRag.Answer"]
    assert answer_span.attributes is not None
    assert "graphrag.error_code" not in answer_span.attributes
    assert answer_span.attributes["graphrag.disposition"] == "Answered"
