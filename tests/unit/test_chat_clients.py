"""Chat clients: OpenAIChat over loopback HTTP, ScriptedChat, and the request fingerprint."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
import pytest_asyncio

from graphrag_orm.answers import ANSWER_SCHEMA as REPLY_SCHEMA
from graphrag_orm.answers.followups import REWRITE_SCHEMA
from graphrag_orm.chat import (
    ChatChunk,
    ChatClient,
    ChatMessage,
    ChatReply,
    ChatRequest,
    ChatUsage,
    ExtractiveChat,
    OpenAIChat,
    ScriptedChat,
    ScriptMissing,
)
from graphrag_orm.chat.endpoint import ChatEndpoint, model_schema
from graphrag_orm.communities.writers import REPORT_SCHEMA
from graphrag_orm.errors import ConfigurationError, GraphRagError, ModelCallFailed
from graphrag_orm.retry import is_transient_default
from graphrag_orm.text2cypher import GRAPH_SCHEMA
from tests.support.openai_server import DEFAULT_CHAT_REPLY, OpenAIServer

COMPLETIONS = "/v1/chat/completions"
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def ask(text: str = "What is a chunk?", **fields: object) -> ChatRequest:
    return ChatRequest(
        messages=(ChatMessage(role="system", content="Answer from evidence."), ChatMessage(role="user", content=text)),
        **fields,
    )


@pytest_asyncio.fixture
async def chat(openai_server: OpenAIServer) -> AsyncIterator[OpenAIChat]:
    async with OpenAIChat("test-chat", base_url=openai_server.url, api_key="test-key", timeout=5) as client:
        yield client


async def collect(chunks: AsyncIterator[ChatChunk]) -> list[ChatChunk]:
    return [chunk async for chunk in chunks]


# ---------------------------------------------------------------- OpenAIChat


async def test_complete_returns_text_usage_finish_reason_and_model(
    openai_server: OpenAIServer, chat: OpenAIChat
) -> None:
    reply = await chat.complete(ask())
    assert reply == ChatReply(
        text=DEFAULT_CHAT_REPLY,
        usage=ChatUsage(input_tokens=11, output_tokens=7, reasoning_tokens=3),
        finish_reason="stop",
        model="test-chat",
    )
    assert not reply.truncated
    body = openai_server.requests_to(COMPLETIONS)[0].body
    assert body["messages"] == [
        {"role": "system", "content": "Answer from evidence."},
        {"role": "user", "content": "What is a chunk?"},
    ]
    assert body["temperature"] == 0.0
    assert "response_format" not in body
    assert "reasoning_effort" not in body


async def test_a_schema_is_sent_as_strict_structured_output(openai_server: OpenAIServer, chat: OpenAIChat) -> None:
    await chat.complete(ask(response_schema=ANSWER_SCHEMA, schema_name="answer", max_output_tokens=300))
    body = openai_server.requests_to(COMPLETIONS)[0].body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": ANSWER_SCHEMA, "strict": True},
    }
    assert body["max_completion_tokens"] == 300


async def test_a_long_length_bound_never_reaches_the_server_it_is_said_in_words(
    openai_server: OpenAIServer, chat: OpenAIChat
) -> None:
    # llama-cpp-python's grammar converter makes maxLength one nested rule per character and
    # fails on a long one, then drops the connection: no schema sent to a model carries one.
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 4_000, "description": "Words."}},
        "required": ["text"],
        "additionalProperties": False,
    }
    await chat.complete(ask(response_schema=schema, schema_name="text"))
    sent = openai_server.requests_to(COMPLETIONS)[0].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["text"] == {"type": "string", "description": "Words. (at most 4000 characters)"}
    assert schema["properties"]["text"]["maxLength"] == 4_000  # the caller's schema is left as it was
    for reply_schema in (REPLY_SCHEMA, REWRITE_SCHEMA, GRAPH_SCHEMA, REPORT_SCHEMA):
        assert model_schema(reply_schema) == reply_schema  # the toolkit's reply schemas carry no length bound


async def test_a_non_strict_schema_is_sent_without_the_flag(openai_server: OpenAIServer, chat: OpenAIChat) -> None:
    await chat.complete(ask(response_schema=ANSWER_SCHEMA, strict=False, temperature=None))
    body = openai_server.requests_to(COMPLETIONS)[0].body
    assert "strict" not in body["response_format"]["json_schema"]
    assert "temperature" not in body


async def test_reasoning_effort_is_sent_when_set(openai_server: OpenAIServer) -> None:
    async with OpenAIChat("m", base_url=openai_server.url, api_key="k", reasoning_effort="low") as chat:
        await chat.complete(ask())
    assert openai_server.requests[0].body["reasoning_effort"] == "low"


async def test_a_reply_cut_at_the_output_limit_is_truncated(openai_server: OpenAIServer, chat: OpenAIChat) -> None:
    openai_server.finish_reason = "length"
    assert (await chat.complete(ask())).truncated


async def test_streaming_yields_deltas_then_the_whole_reply_with_usage(
    openai_server: OpenAIServer, chat: OpenAIChat
) -> None:
    openai_server.chat_responder = lambda body: '{"answer": "streamed words"}'
    chunks = await collect(chat.stream(ask(response_schema=ANSWER_SCHEMA)))
    deltas = [chunk.delta for chunk in chunks[:-1]]
    assert len(deltas) > 3 and all(chunk.reply is None for chunk in chunks[:-1])
    final = chunks[-1]
    assert final.delta == "" and final.reply is not None
    assert "".join(deltas) == final.reply.text == '{"answer": "streamed words"}'
    assert final.reply.usage == ChatUsage(input_tokens=11, output_tokens=7, reasoning_tokens=3)
    assert final.reply.finish_reason == "stop"
    body = openai_server.requests_to(COMPLETIONS)[0].body
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["response_format"]["json_schema"]["strict"] is True
    assert openai_server.streams_completed == 1


async def test_closing_a_stream_stops_the_http_call(openai_server: OpenAIServer, chat: OpenAIChat) -> None:
    openai_server.chat_responder = lambda body: "word " * 200
    openai_server.stream_delay = 0.02
    async with contextlib.aclosing(chat.stream(ask())) as chunks:
        async for chunk in chunks:
            assert chunk.delta
            break
    assert await asyncio.to_thread(openai_server.stream_aborted.wait, 3)
    assert openai_server.streams_completed == 0


async def test_cancelling_the_reading_task_stops_the_http_call(openai_server: OpenAIServer, chat: OpenAIChat) -> None:
    openai_server.chat_responder = lambda body: "word " * 200
    openai_server.stream_delay = 0.02
    started = asyncio.Event()

    async def read() -> None:
        async for _chunk in chat.stream(ask()):
            started.set()

    task = asyncio.ensure_future(read())
    await asyncio.wait_for(started.wait(), 3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(openai_server.stream_aborted.wait, 3)
    assert openai_server.streams_completed == 0


async def test_a_stream_cut_off_mid_way_raises_a_coded_transient_failure(
    openai_server: OpenAIServer, chat: OpenAIChat
) -> None:
    openai_server.cut_stream(after_chunks=2)
    received: list[ChatChunk] = []
    with pytest.raises(ModelCallFailed) as failed:
        async for chunk in chat.stream(ask()):
            received.append(chunk)
    assert failed.value.code == "model-unavailable" and is_transient_default(failed.value)
    assert isinstance(failed.value.__cause__, openai.APIConnectionError)
    assert all(chunk.reply is None for chunk in received)


async def test_a_busy_server_is_a_coded_transient_failure_unretried_by_the_client(
    openai_server: OpenAIServer, chat: OpenAIChat
) -> None:
    openai_server.fail(503)
    with pytest.raises(ModelCallFailed) as failed:
        await chat.complete(ask())
    assert (failed.value.code, failed.value.status) == ("model-unavailable", 503)
    assert isinstance(failed.value.__cause__, openai.InternalServerError)
    assert is_transient_default(failed.value)
    assert len(openai_server.requests) == 1


async def test_a_request_the_server_refuses_is_model_request_rejected_without_its_message(
    openai_server: OpenAIServer, chat: OpenAIChat
) -> None:
    # llama-cpp-python's server answers a response_format it does not take with a 500.
    openai_server.fail(500, message="Internal Server Error: secret prompt text")
    with pytest.raises(ModelCallFailed) as failed:
        await chat.complete(ask(response_schema=ANSWER_SCHEMA))
    assert (failed.value.code, failed.value.status) == ("model-request-rejected", 500)
    assert "GRAPHRAG_STRUCTURED_OUTPUT=json_object" in str(failed.value)
    assert "secret" not in str(failed.value)
    assert not is_transient_default(failed.value)


async def test_a_model_slower_than_the_timeout_is_model_timeout(openai_server: OpenAIServer) -> None:
    openai_server.delay(5)
    async with OpenAIChat("m", base_url=openai_server.url, api_key="k", timeout=1) as slow:
        with pytest.raises(ModelCallFailed) as failed:
            await slow.complete(ask())
    assert failed.value.code == "model-timeout" and "within 1 s" in str(failed.value)
    assert is_transient_default(failed.value)


async def test_a_stream_slower_than_the_timeout_is_model_timeout(openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = lambda body: "word " * 50
    openai_server.stream_delay = 1.5
    async with OpenAIChat("m", base_url=openai_server.url, api_key="k", timeout=1) as slow:
        with pytest.raises(ModelCallFailed) as failed:
            await collect(slow.stream(ask()))
    assert failed.value.code == "model-timeout"


async def test_json_object_mode_sends_the_schema_inside_response_format(openai_server: OpenAIServer) -> None:
    endpoint = ChatEndpoint(structured_output="json_object", token_limit="max_tokens")
    async with OpenAIChat("m", base_url=openai_server.url, api_key="k", endpoint=endpoint) as local:
        await local.complete(ask(response_schema=ANSWER_SCHEMA, max_output_tokens=64))
    body = openai_server.requests_to(COMPLETIONS)[0].body
    assert body["response_format"] == {"type": "json_object", "schema": ANSWER_SCHEMA}
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body


async def test_both_limit_fields_and_no_response_format_and_no_stream_usage_when_asked(
    openai_server: OpenAIServer,
) -> None:
    endpoint = ChatEndpoint(structured_output="none", token_limit="both", stream_usage=False)
    async with OpenAIChat("m", base_url=openai_server.url, api_key="k", endpoint=endpoint) as plain:
        await plain.complete(ask(response_schema=ANSWER_SCHEMA, max_output_tokens=64))
        chunks = await collect(plain.stream(ask()))
    complete, streamed = (request.body for request in openai_server.requests_to(COMPLETIONS))
    assert "response_format" not in complete
    assert (complete["max_tokens"], complete["max_completion_tokens"]) == (64, 64)
    assert "stream_options" not in streamed
    assert chunks[-1].reply is not None and chunks[-1].reply.usage is None


@pytest.mark.parametrize(
    "fields",
    [{"timeout_seconds": 0.5}, {"timeout_seconds": 3_601}, {"structured_output": "grammar"}, {"token_limit": "n"}],
)
def test_an_endpoint_out_of_bounds_is_invalid_option(fields: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        ChatEndpoint(**fields)
    assert refused.value.code == "invalid-option"


def test_openai_chat_needs_a_key_or_an_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError) as refused:
        OpenAIChat("m")
    assert refused.value.code == "invalid-option"
    assert isinstance(OpenAIChat("m", api_key="k", base_url="http://127.0.0.1:9/v1"), ChatClient)


# ---------------------------------------------------------------- ChatRequest


def test_the_fingerprint_covers_messages_schema_name_and_strict_only() -> None:
    base = ask(response_schema=ANSWER_SCHEMA)
    assert base.fingerprint() == ask(response_schema=dict(reversed(ANSWER_SCHEMA.items()))).fingerprint()
    assert base.fingerprint() == ask(response_schema=ANSWER_SCHEMA, temperature=1.0, max_output_tokens=9).fingerprint()
    different = [
        ask("Another question?", response_schema=ANSWER_SCHEMA),
        ask(),
        ask(response_schema=ANSWER_SCHEMA, schema_name="other"),
        ask(response_schema=ANSWER_SCHEMA, strict=False),
    ]
    assert len({base.fingerprint(), *(request.fingerprint() for request in different)}) == 5
    assert len(base.fingerprint()) == 64


def test_requests_are_validated_values() -> None:
    with pytest.raises(ValueError):
        ChatRequest(messages=())
    with pytest.raises(ValueError):
        ask(schema_name="has spaces")
    with pytest.raises(ValueError):
        ChatMessage(role="tool", content="x")
    assert json.loads(ask(max_output_tokens=5).to_json())["maxOutputTokens"] == 5


# ---------------------------------------------------------------- ScriptedChat


async def test_scripted_chat_answers_from_its_responder_and_keeps_the_calls() -> None:
    chat = ScriptedChat(lambda request: request.messages[-1].content.upper())
    reply = await chat.complete(ask("hello"))
    assert reply.text == "HELLO" and reply.usage is None
    assert [call.messages[-1].content for call in chat.calls] == ["hello"]
    assert isinstance(chat, ChatClient)


async def test_scripted_replies_are_keyed_by_fingerprint() -> None:
    known = ask("known")
    chat = ScriptedChat.from_replies({known.fingerprint(): '{"answer": "yes"}'})
    assert (await chat.complete(known)).text == '{"answer": "yes"}'
    unknown = ask("unknown")
    with pytest.raises(ScriptMissing) as missing:
        await chat.complete(unknown)
    assert missing.value.code == "no-scripted-reply"
    assert unknown.fingerprint() in str(missing.value)
    fallback = ScriptedChat.from_replies({}, default='{"insufficient": "no"}')
    assert (await fallback.complete(unknown)).text == '{"insufficient": "no"}'


async def test_scripted_streams_come_in_small_pieces() -> None:
    text = '{"answer": "a reply long enough to split", "citations": []}'
    chunks = await collect(ScriptedChat(lambda request: text).stream(ask()))
    assert all(len(chunk.delta) <= 7 for chunk in chunks)
    assert "".join(chunk.delta for chunk in chunks) == text
    assert chunks[-1].reply is not None and chunks[-1].reply.text == text and chunks[-1].reply.usage is None


async def test_a_reader_of_a_stand_in_stream_can_be_cancelled_between_pieces() -> None:
    # A server cancels the stream of a client that left only if the stream gives the loop a turn.
    long_text = '{"answer": "' + "lantern " * 100 + '"}'
    for chat, request in (
        (ScriptedChat(lambda request: long_text), ask()),
        (ExtractiveChat(), ask(response_schema=ANSWER_SCHEMA, schema_name="other")),
    ):
        pieces: list[ChatChunk] = []

        async def read(chunks: AsyncIterator[ChatChunk], into: list[ChatChunk]) -> None:
            async for chunk in chunks:
                into.append(chunk)

        reader = asyncio.create_task(read(chat.stream(request), pieces))
        await asyncio.sleep(0)  # the reader starts, and must hand the loop back before its first piece
        assert not reader.done() and pieces == []
        await asyncio.sleep(0)
        assert len(pieces) == 1 and not reader.done()
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
        assert len(pieces) == 1


@pytest.mark.parametrize(
    "make", [lambda keep: ExtractiveChat(keep_calls=keep), lambda keep: ScriptedChat(str, keep_calls=keep)]
)
async def test_stand_ins_keep_only_their_latest_requests_and_count_them_all(make: Any) -> None:
    # A long-running server on a stand-in (graphrag-orm serve offline) must not grow with every question.
    chat = make(3)
    requests = [
        ChatRequest(messages=(ChatMessage(role="user", content=f"question {n}"),), schema_name="answer")
        for n in range(10)
    ]
    for request in requests:
        with contextlib.suppress(GraphRagError):  # the extractive stand-in refuses a prompt without evidence
            await chat.complete(request)
    assert chat.calls == requests[-3:]
    assert chat.call_count == 10
    assert ExtractiveChat().calls == [] and len(ExtractiveChat(keep_calls=0).calls) == 0


@pytest.mark.parametrize("keep", [-1, 10_001, True, 2.5])
def test_a_kept_call_bound_out_of_range_is_refused(keep: Any) -> None:
    with pytest.raises(ConfigurationError) as raised:
        ExtractiveChat(keep_calls=keep)
    assert raised.value.code == "invalid-option"
