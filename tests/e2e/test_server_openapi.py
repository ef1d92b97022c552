"""The served OpenAPI schema drives a client: schemathesis against a real server finds nothing.

``create_app`` on uvicorn (a loopback port, a thread, its own loop) over the suite's
Neo4j with two ingested documents and the offline answerer; schemathesis (its CLI, as a
user runs it) reads ``/openapi.json`` from that server and sends what it generates from
it: examples, boundary values, fuzzed and negative data, and the stateful phase, which
follows the documents list's link to ``/documents/{document_id}`` with the real ids it
listed. Every check runs; a bounded number of examples keeps the run short.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphrag_orm import GraphRag
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.server import ServerOptions, create_app
from graphrag_orm.store import Store
from tests.e2e.test_server_http import LIGHTHOUSE_ID, PREFIX, ingest_two, serving

SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")


@pytest.fixture
def app_url(graph: None) -> Iterator[str]:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
    )
    with serving(create_app(rag, ServerOptions(explorer=False))) as url:
        yield url


@pytest.fixture
async def corpus(graph: None, store: Store) -> None:
    await ingest_two(store)


def served_schema(url: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{url}/openapi.json", trust_env=False).json()
    return found


def test_every_route_documents_its_body_parameters_and_responses(corpus: None, app_url: str) -> None:
    paths = served_schema(app_url)["paths"]
    ask, search = paths[f"{PREFIX}/ask"]["post"], paths[f"{PREFIX}/search"]["post"]
    documents, document = paths[f"{PREFIX}/documents"]["get"], paths[f"{PREFIX}/documents/{{document_id}}"]["get"]
    question = ask["requestBody"]["content"]["application/json"]["schema"]["properties"]["question"]
    assert (question["type"], question["minLength"], question["maxLength"]) == ("string", 1, 4_000)
    limit = search["requestBody"]["content"]["application/json"]["schema"]["properties"]["limit"]
    assert (limit["type"], limit["minimum"], limit["maximum"], limit["default"]) == ("integer", 1, 20, 5)
    assert [(p["name"], p["in"], p["schema"]["type"]) for p in documents["parameters"]] == [
        ("limit", "query", "integer")
    ]
    # Only the statuses each route sends; problems as problem+json, never FastAPI's 422.
    assert set(ask["responses"]) == {"200", "400"}
    assert set(search["responses"]) == set(documents["responses"]) == {"200", "400", "500"}
    assert set(document["responses"]) == {"200", "404", "500"}
    for operation in (ask, search, documents, document):
        for status, response in operation["responses"].items():
            media = "application/json" if status == "200" else "application/problem+json"
            if operation is not ask or status != "200":
                assert response["content"][media]["schema"]["properties"], (status, operation["operationId"])
    events = ask["responses"]["200"]["content"]["text/event-stream"]["itemSchema"]["oneOf"]
    assert [event["properties"]["event"]["const"] for event in events] == [
        "retrieved",
        "delta",
        "verified",
        "refused",
        "error",
    ]
    assert all(event["properties"]["data"]["contentSchema"]["properties"] for event in events)
    passages = search["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["passages"]
    assert {"documentId", "chunkId", "startByte", "endByte", "score", "text"} <= set(passages["items"]["properties"])


def test_the_question_bound_in_the_schema_is_the_retrievals() -> None:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
    )
    options = ServerOptions(retrieval=RetrievalOptions(max_question_chars=300))
    paths = create_app(rag, options).openapi()["paths"]
    body = paths[f"{PREFIX}/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["query"]["maxLength"] == 300


def test_schemathesis_finds_no_failure_in_the_served_schema(corpus: None, app_url: str, tmp_path: Path) -> None:
    # The stateful phase needs a document to follow the link to: the list holds real ids.
    listed = httpx.get(f"{app_url}{PREFIX}/documents", trust_env=False).json()
    assert LIGHTHOUSE_ID in [entry["documentId"] for entry in listed["documents"]]
    report = tmp_path / "report"
    run = subprocess.run(
        [
            SCHEMATHESIS,
            "run",
            f"{app_url}/openapi.json",
            "--checks",
            "all",
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--max-examples",
            "25",
            "--workers",
            "1",
            "--seed",
            "29",
            "--generation-database",
            "none",
            "--request-timeout",
            "20",
            "--report",
            "ndjson",
            "--report-dir",
            str(report),
            "--no-color",
        ],
        cwd=tmp_path,  # it keeps nothing in the checkout
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    summary = run.stdout[-6_000:]
    print(summary[-1_200:])  # shown with -s: the phases, the cases generated, the time
    assert run.returncode == 0, summary
    assert "✅ Stateful" in summary and "⏭  Stateful" not in summary, summary
    events = [json.loads(line) for path in report.glob("*.ndjson") for line in path.read_text().splitlines() if line]
    assert events, "schemathesis wrote no report"


async def test_one_question_bound_on_every_surface() -> None:
    from graphrag_orm.errors import QuestionRefused
    from graphrag_orm.tools import GraphRagTools

    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
    )
    bound = RetrievalOptions().max_question_chars
    http = create_app(rag).openapi()["paths"]
    ask = http[f"{PREFIX}/ask"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    search = http[f"{PREFIX}/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    tools = {spec.name: spec.input_schema["properties"] for spec in GraphRagTools(rag).specs()}
    assert {
        ask["properties"]["question"]["maxLength"],
        ask["properties"]["history"]["items"]["properties"]["question"]["maxLength"],
        search["properties"]["query"]["maxLength"],
        tools["answer_from_documents"]["question"]["maxLength"],  # the same schemas go to MCP
        tools["search_documents"]["query"]["maxLength"],
    } == {bound}
    # The adapters go through the retriever, which refuses past the same bound before any read.
    with pytest.raises(QuestionRefused) as refused:
        await rag.retriever.retrieve("q" * (bound + 1))
    assert refused.value.code == "question-too-long"
