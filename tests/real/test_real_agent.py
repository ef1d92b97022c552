"""The tool-calling agent with a real model: whatever it asks the tools, what comes back is checked.

An agent loop on the openai SDK offers the toolkit's tools (:meth:`GraphRagTools.definitions`,
the model-facing schemas) to the served model, runs each call it makes through
:meth:`GraphRagTools.call` and sends the results back, for at most :data:`TURNS` turns. The
first turn names the tool (``tool_choice``): llama.cpp's server with Qwen2.5's own chat
template returns a call as ``tool_calls`` only then (with ``"auto"`` the call comes back as
plain text, docs/local-models.md), so the model writes the call's arguments under the
tool's schema; later turns are ``"auto"``, and the model answers from the results. Each
turn is recorded (``tests/support/agent_turns.py``, kind ``agent-turn``) beside the
toolkit's own replies, so ``make test`` replays it at zero model calls. The assertions are
about the toolkit: a call with bad arguments is a coded error, never an exception; an answer
the tool returns cites only the stored bytes at the spans it names; a refusal carries its
reason.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from openai import AsyncOpenAI

from graphrag_orm import GraphRag, GraphRagOptions, Sources
from graphrag_orm.chat import ChatClient, Recorder
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.codes import ErrorCode, RefusalReason
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import RunStatus
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tools import INSTRUCTIONS, GraphRagTools, ToolResult
from tests.real.conftest import MODEL, live_url
from tests.real.test_real_model import ANSWERS, RECALL, RETRIEVAL
from tests.support.agent_turns import agent_turn

#: The most turns the agent loop takes (a call, the result read back, an answer).
TURNS = 3
#: What the model may write in one turn: a call's arguments or a short answer.
TURN_TOKENS = 200
QUESTIONS = ("Which supplier makes the BC-310 brake caliper?", "What is the warranty on a frame?")


@pytest.fixture
async def recall_rag(
    graph: None, store: Store, neo4j_settings: ConnectionSettings, real_chat: ChatClient
) -> AsyncIterator[GraphRag]:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=real_chat,
        options=GraphRagOptions(
            chunking=ChunkerOptions(max_utf8_bytes=700, overlap_paragraphs=0), retrieval=RETRIEVAL, answers=ANSWERS
        ),
    )
    await rag.connect(neo4j_settings, neomodel=False)
    try:
        receipt = await rag.ingestion.ingest([Sources.file(path, uri=f"wiki:{path.stem}") for path in RECALL])
        assert receipt.status == RunStatus.COMPLETED and receipt.failed == 0
        yield rag
    finally:
        await rag.close()


async def checked_result(store: Store, result: ToolResult) -> dict[str, Any]:
    """The tool result's payload, after holding it to the toolkit's promises."""
    payload = result.to_payload()
    if result.is_error:
        assert payload["error"]["code"] in set(ErrorCode), payload
        assert "\n" not in payload["error"]["message"]
        return payload
    if payload.get("kind") == "answer":
        if payload["answered"]:
            assert payload["text"] and payload["citations"]
            for citation in payload["citations"]:
                row = (
                    await store.read(
                        "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start",
                        {"id": citation["chunkId"]},
                    )
                ).single()
                assert row is not None, "a citation names a stored chunk"
                stored = row["text"].encode("utf-8")[
                    citation["startByte"] - row["start"] : citation["endByte"] - row["start"]
                ]
                assert stored.decode("utf-8") == citation["quote"], "the quote is the stored bytes"
        else:
            assert payload["reason"] in set(RefusalReason) and payload["citations"] == [] and payload["note"]
    return payload


@pytest.mark.parametrize("tool", ["search_documents", "answer_from_documents"])
@pytest.mark.parametrize("question", QUESTIONS)
async def test_the_agent_calls_the_tools_and_every_result_holds_the_toolkits_promises(
    recall_rag: GraphRag, store: Store, recorder: Recorder, question: str, tool: str
) -> None:
    tools = GraphRagTools(recall_rag)
    url = live_url()
    sdk = AsyncOpenAI(base_url=url, api_key="local", max_retries=0, timeout=900) if url else None
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": question},
    ]
    calls: list[str] = []
    payloads: list[dict[str, Any]] = []
    try:
        for number in range(TURNS):
            choice: Any = {"type": "function", "function": {"name": tool}} if number == 0 else "auto"
            turn = await agent_turn(
                recorder, sdk, MODEL, messages, tools.definitions(), tool_choice=choice, max_tokens=TURN_TOKENS
            )
            if not turn.calls:  # the model answered in words from the results
                break
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.text,  # a string: llama.cpp's server refuses null beside tool_calls
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                        for c in turn.calls
                    ],
                }
            )
            for call in turn.calls:
                calls.append(call.name)
                payload = await checked_result(store, await tools.call(call.name, call.arguments))
                payloads.append(payload)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(payload)})
    finally:
        if sdk is not None:
            await sdk.close()
    # The named tool was called first, with arguments the model wrote under its schema.
    assert calls and calls[0] == tool, calls
    assert len(payloads) == len(calls)
