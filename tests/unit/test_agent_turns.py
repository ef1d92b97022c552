"""An agent's turn with tools is recorded (the loopback server's tool call) and replayed at zero calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from graphrag_orm.chat import Recorder, RecordingMissing
from tests.support.agent_turns import AgentCall, agent_turn
from tests.support.openai_server import OpenAIServer, ScriptedReply, ScriptedToolCall

TOOLS = [{"type": "function", "function": {"name": "search_documents", "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "user", "content": "Who supplies the BC-310?"}]
ARGUMENTS = json.dumps({"query": "BC-310 supplier"})


async def test_a_tool_call_is_recorded_then_replayed_without_the_model(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.chat_responder = lambda body: ScriptedReply(
        tool_calls=[ScriptedToolCall("search_documents", ARGUMENTS, id="call_3")]
    )
    path = tmp_path / "turns.json"
    recorder = Recorder(path, "record")
    async with AsyncOpenAI(base_url=openai_server.url, api_key="sk-test", max_retries=0) as sdk:
        recorded = await agent_turn(recorder, sdk, "agent", MESSAGES, TOOLS)
        again = await agent_turn(recorder, sdk, "agent", MESSAGES, TOOLS)
    assert recorded.calls == (AgentCall("call_3", "search_documents", ARGUMENTS),)
    assert recorded.finish_reason == "tool_calls" and again == recorded
    assert recorder.model_calls == 1 and len(openai_server.requests) == 1
    assert openai_server.requests[0].body["tools"] == TOOLS

    replay = Recorder(path, "replay")
    assert await agent_turn(replay, None, "agent", MESSAGES, TOOLS) == recorded
    with pytest.raises(RecordingMissing):
        await agent_turn(replay, None, "agent", MESSAGES, TOOLS, tool_choice="required")
    assert replay.model_calls == 0
