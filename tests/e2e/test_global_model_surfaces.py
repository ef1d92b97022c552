"""A chat model's global answers where users meet them: HTTP ``/ask`` mode global, ``ask --global`` and MCP.

The harbour sample's reports are written offline on the suite's Neo4j; the model is the loopback
OpenAI-compatible server (real HTTP), scripted as in ``tests/integration/test_global_model.py``.
Each surface takes the model's path because the application has a chat model, and a failed
model call is a code on each, never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from mcp import Client, StdioServerParameters

from examples.harbour.fleet import FLEET
from graphrag_orm import GraphRag
from graphrag_orm.chat import OpenAIChat
from graphrag_orm.communities import GLOBAL_NOTE
from graphrag_orm.server import ServerOptions, create_app
from tests.e2e.test_cli import ROOT, cli
from tests.e2e.test_cli_graph import live as live_model
from tests.e2e.test_mcp import CLI, content, server_environment
from tests.e2e.test_server_global import events_of
from tests.e2e.test_server_http import serving
from tests.integration.test_community_reports import harbour  # noqa: F401 (the fixture)
from tests.integration.test_global_model import CHAT, QUESTION, Model, sent, write_reports
from tests.support.openai_server import OpenAIServer

ONTOLOGY = "examples.harbour.fleet:FLEET"


def live(server: OpenAIServer) -> dict[str, str]:
    """The loopback model, live, and the sample's ontology importable from the repository's root."""
    return {**live_model(server), "PYTHONPATH": str(ROOT)}


async def test_http_streams_the_models_verified_answer_its_refusal_and_its_failure(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    model = Model()
    openai_server.chat_responder = lambda body: model.reply(body)
    # Used on the server's own loop only (as tests/e2e/test_server_http.py's served app does).
    chat = OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key")
    served = GraphRag(embedding_set=harbour.embedding_set, embedder=harbour.embedder, chat=chat, ontology=FLEET)
    body = {"question": QUESTION, "mode": "global"}
    with serving(create_app(served, ServerOptions(prefix=""))) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60, trust_env=False) as http:
            answered = await events_of(http, body, {})
            calls = len(openai_server.requests_to(CHAT))
            model.raw_map = json.dumps({"points": []})
            declined = await events_of(http, body, {})
            openai_server.fail(400)
            failed = await events_of(http, body, {})

    assert [name for name, _ in answered] == ["retrieved", "verified"]
    verified = answered[1][1]
    assert "Gannet owned by House Orrin." in verified["answer"] and not verified["answer"].endswith(GLOBAL_NOTE)
    assert verified["receipt"]["chatCalls"] == calls >= 2 and verified["citations"]
    assert len({c["documentId"] for c in verified["citations"]}) >= 2
    assert [name for name, _ in declined] == ["retrieved", "refused"]
    assert declined[1][1]["reason"] == "model-declined"
    assert [name for name, _ in failed] == ["error"] and failed[0][1]["code"] == "model-failed"


async def test_ask_global_and_mcp_answer_by_the_environments_model(
    harbour: GraphRag,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    await write_reports(harbour)
    openai_server.chat_responder = Model().reply
    asked = cli("ask", QUESTION, "--global", "--ontology", ONTOLOGY, "--json", env=live(openai_server))
    assert asked.returncode == 0, asked.stderr
    answer: dict[str, Any] = json.loads(asked.stdout)
    assert answer["writer"] == "loopback-model" and answer["calls"] == len(openai_server.requests_to(CHAT))
    assert "Skua owned by House Orrin." in answer["answer"] and answer["citations"]
    shown = cli("ask", QUESTION, "--global", "--ontology", ONTOLOGY, env=live(openai_server))
    assert shown.returncode == 0 and "by loopback-model" in shown.stdout

    openai_server.requests.clear()
    environment = {**server_environment(), **live(openai_server)}
    parameters = StdioServerParameters(
        command=CLI, args=["mcp", "--ontology", ONTOLOGY], env=environment, cwd=str(ROOT)
    )
    async with Client(parameters, read_timeout_seconds=120) as client:
        result = content(await client.call_tool("answer_about_corpus", {"question": QUESTION}))
    assert result["answered"] is True and "Petrel owned by House Orrin." in result["text"]
    assert GLOBAL_NOTE not in result["text"] and len(sent(openai_server, "partial_answers")) == 1

    openai_server.fail(400)
    failed = cli("ask", QUESTION, "--global", "--ontology", ONTOLOGY, env=live(openai_server))
    assert failed.returncode == 1 and "model-request-rejected" in failed.stderr and "Traceback" not in failed.stderr
