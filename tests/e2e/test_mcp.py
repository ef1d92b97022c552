"""``graphrag-orm mcp`` run as a client runs it, talked to with the MCP SDK's own client.

Over stdio the client spawns the real console script; over streamable HTTP the test
starts it on a free port. Either way it serves the suite's Neo4j with the offline
stand-ins (no model is named), after the three documents of the tools' integration
test are ingested with the bike ontology.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from graphrag_orm.ontology import entity_id
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.integration.test_tools import KIT, Library, library
from tests.support.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")
ONTOLOGY = "examples.recall.bikes:BIKES"
_MODEL_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS")


def server_environment() -> dict[str, str]:
    """The suite's Neo4j, and no model named: the command runs with the offline stand-ins."""
    environment = {key: value for key, value in os.environ.items() if key not in _MODEL_VARIABLES}
    environment["NO_PROXY"] = environment["no_proxy"] = "127.0.0.1,localhost"
    environment["GRAPHRAG_EMBEDDING_MODEL"] = "hashing"  # the stand-in, named: the suite's schema is its set
    return environment


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def books(
    graph: None, store: Store, neo4j_settings: ConnectionSettings, openai_server: OpenAIServer
) -> AsyncIterator[Library]:
    async with library(store, neo4j_settings, openai_server) as found:
        yield found


@pytest.fixture
def http_server() -> Iterator[str]:
    """The real command serving streamable HTTP on a free port; stopped after the test."""
    port = free_port()
    process = subprocess.Popen(
        [CLI, "mcp", "--transport", "http", "--port", str(port), "--ontology", ONTOLOGY],
        cwd=ROOT,
        env=server_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"graphrag-orm mcp exited: {process.communicate()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("graphrag-orm mcp never listened") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def stdio_server() -> StdioServerParameters:
    return StdioServerParameters(
        command=CLI, args=["mcp", "--ontology", ONTOLOGY], env=server_environment(), cwd=str(ROOT)
    )


def content(result: CallToolResult) -> dict[str, Any]:
    """The structured content, checked to be the same JSON as the one text block."""
    (block,) = result.content
    assert block.type == "text"
    structured: dict[str, Any] = result.structured_content
    assert json.loads(block.text) == structured
    return structured


async def exercise(client: Client, books: Library) -> None:
    """List the tools, call each one, a refusal and errors, as an MCP client would."""
    listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == [
        "answer_from_documents",
        "search_documents",
        "find_things",
        "related_facts",
        "answer_about_corpus",
    ]
    for tool in listed.tools:
        assert tool.input_schema["additionalProperties"] is False

    answered = await client.call_tool("answer_from_documents", {"question": "Who supplies the BL-20 lever?"})
    assert answered.is_error is False
    answer = content(answered)
    assert answer["answered"] is True
    (citation,) = answer["citations"]
    assert citation["documentId"] == books.documents["kit"]
    assert KIT.encode()[citation["startByte"] : citation["endByte"]].decode() == citation["quote"]
    assert "made and supplied" in citation["quote"]

    refused = await client.call_tool("answer_from_documents", {"question": "What is the capital of Peru?"})
    assert refused.is_error is False
    refusal = content(refused)
    assert (refusal["answered"], refusal["reason"], refusal["citations"]) == (False, "model-declined", [])

    searched = content(await client.call_tool("search_documents", {"query": "brake caliper recall", "limit": 2}))
    assert searched["label"] == "evidence to read and quote, not an answer"
    assert 1 <= len(searched["passages"]) <= 2

    things = content(await client.call_tool("find_things", {"name": "BC-310", "kind": "Part"}))
    assert [t["thingId"] for t in things["things"]] == [entity_id("Part", "BC-310")]
    facts = content(await client.call_tool("related_facts", {"thing_id": entity_id("Part", "BC-310")}))
    assert sorted(f["type"] for f in facts["facts"]) == ["COVERS", "HAS_PART", "SUPPLIED_BY"]
    # No community reports were built for this library: a refusal with its code, not an error.
    corpus = await client.call_tool("answer_about_corpus", {"question": "Which suppliers recur across the bulletins?"})
    assert corpus.is_error is False
    assert (content(corpus)["answered"], content(corpus)["reason"]) == (False, "no-reports")

    for name, arguments, code in (
        ("search_documents", {"query": "brakes", "limit": 50}, "invalid-arguments"),
        ("related_facts", {}, "invalid-arguments"),
        ("rm_rf", {"path": "/"}, "unknown-tool"),
    ):
        failed = await client.call_tool(name, arguments)
        assert failed.is_error is True
        assert content(failed)["error"]["code"] == code


async def test_the_mcp_command_serves_the_tools_over_stdio(books: Library) -> None:
    async with Client(stdio_server(), read_timeout_seconds=120) as client:
        assert client.instructions is not None and "answer_from_documents" in client.instructions
        await exercise(client, books)


async def test_the_mcp_command_serves_the_tools_over_streamable_http(books: Library, http_server: str) -> None:
    async with Client(http_server, read_timeout_seconds=120) as client:
        await exercise(client, books)


def test_a_port_in_use_fails_with_its_code_before_connecting() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [CLI, "mcp", "--transport", "http", "--port", str(port)],
            cwd=ROOT,
            env={**server_environment(), "NEO4J_URI": "bolt://127.0.0.1:9"},  # never reached
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 1
    assert "(port-in-use)" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_an_unknown_transport_is_refused_by_the_command_line() -> None:
    result = subprocess.run(
        [CLI, "mcp", "--transport", "carrier-pigeon"],
        cwd=ROOT,
        env=server_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "carrier-pigeon" in result.stderr and "Traceback" not in result.stderr
