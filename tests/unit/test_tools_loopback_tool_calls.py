"""The loopback OpenAI-compatible server scripts tool calls, whole and streamed, as the openai SDK reads them."""

from __future__ import annotations

import json
from typing import Any

from openai import AsyncOpenAI

from tests.support.openai_server import OpenAIServer, ScriptedReply, ScriptedToolCall

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "search_documents",
            "description": "search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "additionalProperties": False,
            },
        },
    }
]
ARGUMENTS = json.dumps({"query": "who supplies the BC-310 “caliper”?"})


def client(server: OpenAIServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0)


def calling(body: dict[str, Any]) -> str | ScriptedReply:
    if body["messages"][-1]["role"] == "tool":
        return "done"
    return ScriptedReply(tool_calls=[ScriptedToolCall("search_documents", ARGUMENTS, id="call_7")])


async def test_a_scripted_tool_call_arrives_whole_with_the_finish_reason_tool_calls(
    openai_server: OpenAIServer,
) -> None:
    openai_server.chat_responder = calling
    async with client(openai_server) as sdk:
        reply = await sdk.chat.completions.create(
            model="agent", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
        )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls or []
    assert call.id == "call_7" and call.type == "function"
    assert call.function.name == "search_documents" and call.function.arguments == ARGUMENTS
    assert openai_server.requests[0].body["tools"] == TOOLS


async def test_a_scripted_tool_call_streams_its_arguments_in_pieces(openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = calling
    openai_server.stream_piece = 4
    names: list[str] = []
    pieces: list[str] = []
    finish: str | None = None
    async with client(openai_server) as sdk:
        stream = await sdk.chat.completions.create(
            model="agent", messages=[{"role": "user", "content": "hi"}], tools=TOOLS, stream=True
        )
        async for chunk in stream:
            for choice in chunk.choices:
                for delta in choice.delta.tool_calls or []:
                    assert delta.index == 0
                    if delta.function is not None and delta.function.name:
                        names.append(delta.function.name)
                    if delta.function is not None and delta.function.arguments:
                        pieces.append(delta.function.arguments)
                finish = choice.finish_reason or finish
    assert names == ["search_documents"]
    assert len(pieces) > 5 and "".join(pieces) == ARGUMENTS
    assert finish == "tool_calls"


async def test_a_text_reply_keeps_its_old_shape_whole_and_streamed(openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = lambda body: "plain text"
    async with client(openai_server) as sdk:
        whole = await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        stream = await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        streamed = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
    assert whole.choices[0].message.content == "plain text" and whole.choices[0].finish_reason == "stop"
    assert whole.choices[0].message.tool_calls is None
    assert "".join(streamed) == "plain text"


async def test_a_reply_may_carry_text_and_a_tool_call_together(openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = lambda body: ScriptedReply(
        content="Let me look.", tool_calls=[ScriptedToolCall("search_documents", "{}")]
    )
    async with client(openai_server) as sdk:
        reply = await sdk.chat.completions.create(
            model="agent", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
        )
    assert reply.choices[0].message.content == "Let me look."
    assert [c.function.name for c in reply.choices[0].message.tool_calls or []] == ["search_documents"]
