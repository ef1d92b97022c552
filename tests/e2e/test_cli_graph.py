"""``graphrag-orm graph ask`` as a user runs it: a subprocess, the suite's Neo4j, and the loopback
OpenAI-compatible server (real HTTP) writing the query, as a live model would."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import pytest

from graphrag_orm.chat.evidence_block import parse_question
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from tests.e2e.test_cli import cli
from tests.support.openai_server import OpenAIServer

COMPLETIONS = "/v1/chat/completions"
#: What the loopback model writes for each question.
REPLIES = {
    "Which documents are there?": {
        "cypher": "MATCH (d:Document) RETURN d.title AS title, d.lengthBytes AS bytes ORDER BY title"
    },
    "Count to a hundred million.": {"cypher": "UNWIND range(1, 100000000) AS n RETURN n"},
    "Which labels exist?": {"cypher": "CALL/**/db.labels()"},
    "What does a tyre cost?": {"insufficient": "The graph stores no prices."},
}


def live(server: OpenAIServer) -> dict[str, str]:
    return {
        "GRAPHRAG_MODEL_MODE": "live",
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": server.url,
        "GRAPHRAG_CHAT_MODEL": "loopback-model",
    }


def write_cypher(body: dict[str, Any]) -> str:
    return json.dumps(REPLIES[parse_question(body["messages"][-1]["content"])])


@pytest.fixture
async def documents(store: Store, graph: None) -> AsyncIterator[None]:
    ingestion = IngestionService(
        store, for_layout(Layout.DEFAULT), OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    )
    pages = [
        Sources.text("tyres", "# Tyres\n\nCheck them weekly.", media_type="text/markdown"),
        Sources.text("brakes", "# Brakes\n\nBleed yearly.", media_type="text/markdown"),
    ]
    assert (await ingestion.ingest(pages)).failed == 0
    yield


def one_error_line(result: subprocess.CompletedProcess[str], code: str, exit_code: int) -> str:
    assert result.returncode == exit_code, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"({code})" in lines[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


async def test_it_prints_the_query_and_the_rows_as_a_table(documents: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = write_cypher
    result = cli("graph", "ask", "Which documents are there?", env=live(openai_server), check=True)
    out = result.stdout
    assert "MATCH (d:Document) RETURN d.title AS title" in out and "written by loopback-model" in out
    assert "title" in out and "bytes" in out and "Brakes" in out and "Tyres" in out
    assert out.index("Brakes") < out.index("Tyres"), "rows in the query's order"
    assert "the query returned 2 rows" in out and "1 chat call" in out
    (request,) = openai_server.requests_to(COMPLETIONS)
    response_format = request.body["response_format"]
    assert response_format["type"] == "json_schema" and response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["name"] == "graph_query"
    assert "(:Document {id: STRING" in request.body["messages"][-1]["content"]


async def test_json_prints_the_graph_answer(documents: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = write_cypher
    result = cli("graph", "ask", "Which documents are there?", "--json", env=live(openai_server), check=True)
    answer = json.loads(result.stdout)
    assert answer["columns"] == ["title", "bytes"] and [row["title"] for row in answer["rows"]] == ["Brakes", "Tyres"]
    assert answer["refusal"] is None and answer["limitsReached"] == []
    assert answer["query"] == REPLIES["Which documents are there?"]["cypher"]
    assert answer["receipt"]["chatCalls"] == 1 and answer["receipt"]["inputTokens"] is not None


def test_the_row_cap_is_reported(graph: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = write_cypher
    result = cli("graph", "ask", "Count to a hundred million.", "--max-rows", "3", env=live(openai_server), check=True)
    assert "limit reached GraphQueryRows (3)" in result.stdout and "(more were there)" in result.stdout
    answer = json.loads(
        cli("graph", "ask", "Count to a hundred million.", "--json", env=live(openai_server), check=True).stdout
    )
    assert len(answer["rows"]) == 50 and answer["limitsReached"] == [{"name": "GraphQueryRows", "value": 50}]


def test_a_refused_query_is_one_error_line_with_its_code_and_exit_2(graph: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = write_cypher
    refused = cli("graph", "ask", "Which labels exist?", env=live(openai_server))
    line = one_error_line(refused, "not-allowed", 2)
    assert "starts with CALL" in line and "CALL/**/db.labels()" in refused.stdout, "the refused query is shown"
    declined = cli("graph", "ask", "What does a tyre cost?", env=live(openai_server))
    assert "The graph stores no prices." in one_error_line(declined, "model-declined", 2)
    as_json = cli("graph", "ask", "Which labels exist?", "--json", env=live(openai_server))
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["refusal"] == "not-allowed"


def test_the_offline_stand_in_cannot_write_cypher(graph: None, openai_server: OpenAIServer) -> None:
    result = cli("graph", "ask", "Which documents are there?", env={"GRAPHRAG_MODEL_MODE": "offline"})
    assert "GRAPHRAG_MODEL_MODE" in one_error_line(result, "stand-in-unsupported", 1)
    assert openai_server.requests == []


def test_an_empty_question_and_a_bound_out_of_range_fail_with_their_codes(
    graph: None, openai_server: OpenAIServer
) -> None:
    one_error_line(cli("graph", "ask", "  ", env=live(openai_server)), "empty-question", 1)
    one_error_line(cli("graph", "ask", "q", "--max-rows", "0", env=live(openai_server)), "invalid-option", 1)
    assert openai_server.requests == []
