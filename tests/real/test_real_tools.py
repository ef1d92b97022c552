"""The tool-calling agent with the real model: offered the toolkit's tools, it calls one, and the
tool's result is verified (every citation the stored bytes) or a coded refusal or error.

llama-cpp-python's server with the GGUF's own chat template (Qwen2.5's) returns
``tool_calls`` when ``tool_choice`` names a function; with ``"auto"`` the 0.5B model writes
its call as plain text (docs/local-models.md), so the agent's turn names the tool. The
agent's turn is recorded with the suite's recorder (``tests/support/agent_turns.py``), the
tool's own answer call too; ``make test`` replays both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from graphrag_orm import GraphRag, GraphRagOptions
from graphrag_orm.chat import ChatClient, Recorder
from graphrag_orm.codes import ErrorCode, RefusalReason, ToolErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.store import ConnectionSettings, Store
from graphrag_orm.tools import INSTRUCTIONS, GraphRagTools
from graphrag_orm.tools.values import ToolAnswer
from tests.real.conftest import MODEL, live_url
from tests.real.test_real_model import ANSWERS, NOVEL_QUESTIONS, RETRIEVAL, chapter  # noqa: F401
from tests.support.agent_turns import agent_turn

#: The agent's turn writes only a call: a few dozen tokens.
AGENT_MAX_TOKENS = 128
ANSWER_TOOL = "answer_from_documents"


@pytest_asyncio.fixture
async def tools(
    chapter: None,  # noqa: F811  (the fixture, imported)
    real_chat: ChatClient,
    neo4j_settings: ConnectionSettings,
) -> AsyncIterator[GraphRagTools]:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=real_chat,
        options=GraphRagOptions(answers=ANSWERS, retrieval=RETRIEVAL),
    )
    await rag.connect(neo4j_settings, neomodel=False)
    try:
        yield GraphRagTools(rag)
    finally:
        await rag.close()


async def stored(store: Store, chunk_id: str, start: int, end: int) -> str:
    row = (
        await store.read("MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start", {"id": chunk_id})
    ).single()
    assert row is not None, chunk_id
    return str(row["text"].encode("utf-8")[start - row["start"] : end - row["start"]].decode("utf-8"))


async def test_the_model_calls_the_answer_tool_and_its_result_is_verified_or_refused(
    tools: GraphRagTools, recorder: Recorder, store: Store
) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": NOVEL_QUESTIONS[0]},
    ]
    choice = {"type": "function", "function": {"name": ANSWER_TOOL}}
    url = live_url()
    sdk = None
    if url is not None:
        from openai import AsyncOpenAI

        sdk = AsyncOpenAI(base_url=url, api_key="local", max_retries=0, timeout=900)
    try:
        turn = await agent_turn(
            recorder, sdk, MODEL, messages, tools.definitions(), tool_choice=choice, max_tokens=AGENT_MAX_TOKENS
        )
    finally:
        if sdk is not None:
            await sdk.close()
    assert turn.calls, f"a named tool_choice gives tool_calls (the model wrote {turn.text[:80]!r})"
    for call in turn.calls:
        assert call.name == ANSWER_TOOL
        result = await tools.call(call.name, call.arguments)
        if result.error is not None:
            assert result.error.code in set(ToolErrorCode) | set(ErrorCode), result.error
            continue
        answer = result.value
        assert isinstance(answer, ToolAnswer)
        if answer.answered:
            assert answer.text and answer.citations
            for citation in answer.citations:
                located = await stored(store, citation.chunk_id, citation.start_byte, citation.end_byte)
                assert located == citation.quote, "the tool's citation is the stored bytes"
        else:
            assert answer.reason in set(RefusalReason) and answer.text is None and answer.note
