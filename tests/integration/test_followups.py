"""Follow-up questions against the real Neo4j: the rewrite call, its outcomes, bounds, streaming and tracing."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from graphrag_orm.answers import AnswersService, Completed, Disposition, Retrieved, Turn
from graphrag_orm.chat import ChatRequest, ExtractiveChat, OpenAIChat, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_question
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.retrieval import QuestionRefused, RetrievalOptions
from graphrag_orm.store import Store
from tests.integration.test_answers import (
    SUPPLIER_QUESTION,
    Corpus,
    assert_no_text,
    captured_spans,
    chunk_holding,
    collect,
    ingest_corpus,
)
from tests.support.openai_server import OpenAIServer

FOLLOW_UP = "Who supplies it?"
HISTORY = (Turn(question="What do riders call the BC-310 brake caliper?", answer="The quiet one."),)


@pytest.fixture
async def corpus(graph: None, store: Store) -> Corpus:
    return await ingest_corpus(store)


def conversation(request: ChatRequest) -> list[dict[str, str | None]]:
    """The turns a rewrite request sends (its conversation block)."""
    lines = request.messages[-1].content.split("\n")
    turns: list[dict[str, str | None]] = json.loads(lines[lines.index("<conversation>") + 1])
    return turns


def scripted(rewrite_reply: str | Callable[[ChatRequest], str]) -> ScriptedChat:
    """Rewrites with ``rewrite_reply``; answers by citing the Northwind passage when it is evidence."""

    def respond(request: ChatRequest) -> str:
        if request.schema_name == "rewrite":
            return rewrite_reply(request) if callable(rewrite_reply) else rewrite_reply
        chunk = chunk_holding(request, "supplied by Northwind")
        return json.dumps({"answer": "Northwind.", "citations": [{"chunkId": chunk, "quote": "supplied by Northwind"}]})

    return ScriptedChat(respond)


def rewritten_to(question: str) -> str:
    return json.dumps({"question": question})


async def test_a_follow_up_is_rewritten_then_retrieved_and_answered(corpus: Corpus) -> None:
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    answer = await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=HISTORY)
    assert answer.disposition == Disposition.ANSWERED
    rewrite_call, answer_call = chat.calls
    assert rewrite_call.schema_name == "rewrite" and rewrite_call.strict
    assert rewrite_call.response_schema == {
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
        "additionalProperties": False,
    }
    assert parse_question(rewrite_call.messages[-1].content) == FOLLOW_UP
    assert conversation(rewrite_call) == [{"question": HISTORY[0].question, "answer": "The quiet one."}]
    assert parse_question(answer_call.messages[-1].content) == SUPPLIER_QUESTION
    assert (
        "quiet one" not in answer_call.messages[-1].content.split("<question>")[1]
    )  # earlier answers are not evidence
    evidence = answer.evidence
    assert evidence.question == SUPPLIER_QUESTION
    assert evidence.rewrite is not None
    assert evidence.rewrite.model_dump() == {
        "asked": FOLLOW_UP,
        "standalone": SUPPLIER_QUESTION,
        "turns_used": 1,
        "outcome": "rewritten",
    }
    assert answer.receipt.chat_calls == 2
    assert not any(limit.name == "HistoryTurns" for limit in evidence.limits_reached)


async def test_a_question_that_already_stands_alone_is_unchanged(corpus: Corpus) -> None:
    chat = scripted(rewritten_to(f"  {SUPPLIER_QUESTION} "))
    answer = await AnswersService(corpus.retriever, chat).answer(SUPPLIER_QUESTION, history=HISTORY)
    assert answer.evidence.rewrite is not None
    assert answer.evidence.rewrite.outcome == "unchanged"
    assert answer.evidence.rewrite.standalone == SUPPLIER_QUESTION == answer.evidence.question


@pytest.mark.parametrize(
    "reply",
    [
        "Who supplies the BC-310 brake caliper?",
        '{"standalone": "Who supplies the BC-310 brake caliper?"}',
        '{"question": "Who supplies the BC-310?", "confidence": 1}',
        '{"question": null}',
        '{"question": "   "}',
        '{"question": "Who supplies\\nthe BC-310 brake caliper?"}',
        '{"question": "Who supplies\\u2028the BC-310 brake caliper?"}',
        json.dumps({"question": "caliper " * 251}),
    ],
    ids=["not-json", "another-key", "extra-key", "null", "blank", "line-feed", "line-separator", "over-2000"],
)
async def test_an_unreadable_rewrite_falls_back_to_the_question_as_asked(corpus: Corpus, reply: str) -> None:
    chat = scripted(reply)
    answer = await AnswersService(corpus.retriever, chat).answer("Who supplies the caliper?", history=HISTORY)
    assert answer.evidence.rewrite is not None
    assert answer.evidence.rewrite.outcome == "unreadable"
    assert answer.evidence.question == answer.evidence.rewrite.standalone == "Who supplies the caliper?"
    assert answer.receipt.chat_calls == 2


async def test_a_rewrite_longer_than_the_question_bound_is_unreadable(corpus: Corpus) -> None:
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))  # 38 characters
    options = RetrievalOptions(max_question_chars=30)
    answer = await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=HISTORY, retrieval=options)
    assert answer.evidence.rewrite is not None and answer.evidence.rewrite.outcome == "unreadable"
    assert answer.evidence.question == FOLLOW_UP


async def test_fifty_turns_send_the_newest_six_and_report_history_turns(corpus: Corpus) -> None:
    history = tuple(Turn(question=f"Question {n}?", answer=f"Answer {n}.") for n in range(50))
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    answer = await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=history)
    sent = conversation(chat.calls[0])
    assert [turn["question"] for turn in sent] == [f"Question {n}?" for n in range(44, 50)]
    assert answer.evidence.rewrite is not None and answer.evidence.rewrite.turns_used == 6
    history_limits = [limit for limit in answer.evidence.limits_reached if limit.name == "HistoryTurns"]
    assert [limit.value for limit in history_limits] == [6]


async def test_each_earlier_answer_is_cut_to_1000_characters(corpus: Corpus) -> None:
    history = (
        Turn(question="Long?", answer="é" * 1_500),
        Turn(question="Short?", answer="Yes."),
        Turn(question="None?"),
    )
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=history)
    sent = conversation(chat.calls[0])
    assert sent[0]["answer"] == "é" * 1_000
    assert sent[1]["answer"] == "Yes." and sent[2]["answer"] is None


async def test_the_retriever_alone_takes_no_history(corpus: Corpus) -> None:
    with pytest.raises(ConfigurationError) as raised:
        RetrievalOptions(history=HISTORY)  # type: ignore[call-arg]
    assert raised.value.code == "invalid-option"
    with pytest.raises(TypeError):
        await corpus.retriever.retrieve(FOLLOW_UP, history=HISTORY)  # type: ignore[call-arg]


async def test_a_history_of_something_else_than_turns_is_refused_before_any_call(corpus: Corpus) -> None:
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    with pytest.raises(ConfigurationError) as raised:
        await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=["Who?"])  # type: ignore[list-item]
    assert raised.value.code == "invalid-option" and chat.calls == []


async def test_an_empty_follow_up_is_refused_before_the_rewrite_call(corpus: Corpus) -> None:
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    with pytest.raises(QuestionRefused):
        await AnswersService(corpus.retriever, chat).answer(" ", history=HISTORY)
    assert chat.calls == []


async def test_a_streamed_follow_up_retrieves_the_rewrite_first(corpus: Corpus) -> None:
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    service = AnswersService(corpus.retriever, chat)
    updates = await collect(service.stream(FOLLOW_UP, history=HISTORY))
    first, last = updates[0], updates[-1]
    assert isinstance(first, Retrieved) and first.evidence.rewrite is not None
    assert first.evidence.question == SUPPLIER_QUESTION
    assert isinstance(last, Completed) and last.answer.disposition == Disposition.ANSWERED
    assert last.answer.receipt.chat_calls == 2
    assert [call.schema_name for call in chat.calls] == ["rewrite", "answer"]


async def test_extractive_chat_leaves_a_follow_up_unchanged(corpus: Corpus) -> None:
    answer = await AnswersService(corpus.retriever, ExtractiveChat()).answer(SUPPLIER_QUESTION, history=HISTORY)
    assert answer.evidence.rewrite is not None and answer.evidence.rewrite.outcome == "unchanged"
    assert answer.disposition == Disposition.ANSWERED and answer.receipt.chat_calls == 2


async def test_the_receipt_sums_the_tokens_of_the_rewrite_and_the_answer(
    corpus: Corpus, openai_server: OpenAIServer
) -> None:
    def respond(body: dict[str, object]) -> str:
        if body["response_format"]["json_schema"]["name"] == "rewrite":  # type: ignore[index]
            return rewritten_to(SUPPLIER_QUESTION)
        return '{"insufficient": "Not said."}'

    openai_server.chat_responder = respond
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        answer = await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=HISTORY)
    assert answer.reason == "model-declined"
    assert answer.receipt.chat_calls == 2
    assert (answer.receipt.input_tokens, answer.receipt.output_tokens) == (22, 14)


async def test_the_rewrite_span_carries_turns_and_outcome_but_no_text(corpus: Corpus) -> None:
    history = (*HISTORY, Turn(question="And the brake pads?", answer="Secret answer words."))
    chat = scripted(rewritten_to(SUPPLIER_QUESTION))
    with captured_spans() as exporter:
        await AnswersService(corpus.retriever, chat).answer(FOLLOW_UP, history=history)
    spans = exporter.get_finished_spans()
    (rewrite_span,) = [s for s in spans if s.name == "GraphRag.Rewrite"]
    (answer_span,) = [s for s in spans if s.name == "GraphRag.Answer"]
    assert rewrite_span.attributes is not None
    assert rewrite_span.attributes["graphrag.turns"] == 2
    assert rewrite_span.attributes["graphrag.outcome"] == "rewritten"
    assert rewrite_span.parent is not None and rewrite_span.parent.span_id == answer_span.context.span_id
    assert answer_span.attributes is not None and answer_span.attributes["graphrag.calls"] == 2
    assert_no_text(spans, ["supplies", "BC-310", "quiet", "brake pads", "Secret", "Northwind"])
