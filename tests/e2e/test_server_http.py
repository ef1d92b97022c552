"""The HTTP endpoints over real HTTP: uvicorn on a loopback port, the suite's Neo4j, the loopback model.

Each test ingests two short documents (one paragraph a chunk), serves them from a
uvicorn server in a thread (its own event loop, as in production), and reads the
events with httpx and httpx-sse. The model is the scripted OpenAI-compatible server,
reached by the real SDK over HTTP; its replies quote what the evidence block of each
request holds. ``graphrag-orm serve`` is also run as a real subprocess.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import Depends, FastAPI, Header, HTTPException, Request
from httpx_sse import aconnect_sse, connect_sse

from graphrag_orm import GraphRag
from graphrag_orm.chat import ExtractiveChat, OpenAIChat
from graphrag_orm.chat.evidence_block import parse_evidence
from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionService, RunStatus
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import CypherScope, DocumentsScope, RetrievalOptions
from graphrag_orm.server import ServerOptions, add_problem_handlers, create_app, graphrag_router
from graphrag_orm.sources import Sources, document_id
from graphrag_orm.store import Store
from graphrag_orm.store.store import AccessMode, StatementEvent
from tests.support.openai_server import OpenAIServer
from tests.support.tracing import captured_spans

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")
PREFIX = "/graphrag"

# Paragraphs under a 160-byte budget: one paragraph per chunk.
LIGHTHOUSE = (
    "The Skerry Point lighthouse was first lit in 1857 and its lamp burned colza oil until 1904.\n\n"
    "Keepers climbed 132 steps to the lantern room, where the clockwork turned the lens every thirty seconds.\n\n"
    "Since 1989 the light has run unattended, watched from the coastguard station at Port Ellen.\n"
)
ORCHARD = (
    "The orchard at Hollins Farm grows eleven kinds of apple, among them the russet called Egremont.\n\n"
    "Picking starts in late September; the cider pressed in October is sold at the farm gate in spring.\n"
)
LIGHTHOUSE_ID = document_id("text:lighthouse")
ORCHARD_ID = document_id("text:orchard")
QUESTION = "When was the Skerry Point lighthouse first lit?"


async def ingest_two(store: Store) -> None:
    ingestion = IngestionService(
        store,
        for_layout(Layout.DEFAULT),
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=160, overlap_paragraphs=0)),
    )
    receipt = await ingestion.ingest([Sources.text("lighthouse", LIGHTHOUSE), Sources.text("orchard", ORCHARD)])
    assert receipt.status == RunStatus.COMPLETED and receipt.chunks_written == 5


@pytest.fixture
async def corpus(graph: None, store: Store) -> None:
    await ingest_two(store)


# --- scripted replies ------------------------------------------------------------------


def evidence_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    return parse_evidence(body["messages"][-1]["content"])


def citing(answer: str, quote: str) -> Callable[[dict[str, Any]], str]:
    """A reply answering ``answer`` and quoting ``quote`` from the evidence item that holds it."""

    def respond(body: dict[str, Any]) -> str:
        chunk = next((chunk_id for chunk_id, text in evidence_of(body) if quote in text), "not-evidence")
        return json.dumps({"answer": answer, "citations": [{"chunkId": chunk, "quote": quote}]})

    return respond


# --- a served application ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Served:
    url: str
    model: OpenAIServer
    statements: list[StatementEvent]


def application(rag: GraphRag, chat: OpenAIChat, options: ServerOptions, **include: Any) -> FastAPI:
    """What an application writes: its lifespan connects on the serving loop, and it mounts the router."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await rag.connect()
        try:
            yield
        finally:
            await rag.close()
            await chat.aclose()

    app = FastAPI(lifespan=lifespan)
    app.include_router(graphrag_router(rag, options), **include)
    return app


@contextlib.contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` on uvicorn in a thread (its own event loop) on a free loopback port."""
    config = uvicorn.Config(app, host="127.0.0.1", port=free_port(), lifespan="on", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        assert not thread.is_alive()


@contextlib.contextmanager
def served(openai_server: OpenAIServer, options: ServerOptions | None = None, **include: Any) -> Iterator[Served]:
    chat = OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key")
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions), chat=chat
    )
    statements: list[StatementEvent] = []
    rag.store.add_hook(statements.append)
    with serving(application(rag, chat, options or ServerOptions(), **include)) as url:
        statements.clear()  # the reads of connecting (the schema check) are not the endpoints'
        yield Served(url, openai_server, statements)


@contextlib.asynccontextmanager
async def client(url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=url, timeout=20, trust_env=False) as opened:
        yield opened


async def ask(
    http: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str] | None = None
) -> list[tuple[str, Any]]:
    async with aconnect_sse(http, "POST", f"{PREFIX}/ask", json=body, headers=dict(headers or {})) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        assert source.response.headers["cache-control"] == "no-store"
        return [(event.event, event.json()) async for event in source.aiter_sse()]


def names(events: list[tuple[str, Any]]) -> list[str]:
    return [name for name, _ in events]


def chat_calls(model: OpenAIServer) -> int:
    return len(model.requests_to("/v1/chat/completions"))


ITEM_KEYS = {"chunkId", "documentId", "sourceUri", "title", "text", "startByte", "endByte", "score", "routes"}
RECEIPT_KEYS = {"chatCalls", "inputTokens", "outputTokens", "retrievalSeconds", "answerSeconds", "repairs"}
PROBLEM_KEYS = {"type", "title", "status", "detail", "code"}


# --- /ask ------------------------------------------------------------------------------


async def test_an_answer_streams_evidence_then_provisional_deltas_then_the_verified_answer(
    corpus: None, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = citing("  It was first lit in 1857.", "first lit in 1857")
    with served(openai_server) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": QUESTION})

    assert names(events)[0] == "retrieved" and names(events)[-1] == "verified"
    deltas = [data for name, data in events if name == "delta"]
    assert len(deltas) >= 2 and names(events) == ["retrieved", *["delta"] * len(deltas), "verified"]

    retrieved = events[0][1]
    assert set(retrieved) == {
        "items",
        "contextItems",
        "utf8Bytes",
        "omittedItems",
        "limitsReached",
        "scope",
        "traceId",
    }
    assert retrieved["scope"] is None and retrieved["traceId"] is None
    assert retrieved["utf8Bytes"] > 0 and retrieved["items"]
    for item in retrieved["items"]:
        assert ITEM_KEYS <= set(item) <= ITEM_KEYS | {"pages", "grounding", "textOrigin"}
        assert item["grounding"] == "Source"
        assert len(item["text"].encode()) == item["endByte"] - item["startByte"]
        for rank in item["routes"]:
            assert set(rank) == {"route", "rank", "nativeScore", "rankScore"}
    for context in retrieved["contextItems"]:
        assert set(context) <= {"chunkId", "text", "reason"}

    # The deltas are the reply's answer string as it arrived, untrimmed and provisional.
    assert all(set(delta) == {"text", "provisional"} and delta["provisional"] is True for delta in deltas)
    assert "".join(delta["text"] for delta in deltas) == "  It was first lit in 1857."

    verified = events[-1][1]
    assert set(verified) == {"answer", "citations", "receipt"}
    assert verified["answer"] == "It was first lit in 1857."
    [citation] = verified["citations"]
    assert set(citation) == {"documentId", "chunkId", "startByte", "endByte", "quote", "grounding"}
    assert citation["documentId"] == LIGHTHOUSE_ID and citation["quote"] == "first lit in 1857"
    item = next(item for item in retrieved["items"] if item["chunkId"] == citation["chunkId"])
    stored = item["text"].encode()[citation["startByte"] - item["startByte"] : citation["endByte"] - item["startByte"]]
    assert stored.decode() == citation["quote"]
    assert LIGHTHOUSE.encode()[citation["startByte"] : citation["endByte"]].decode() == citation["quote"]
    assert set(verified["receipt"]) == RECEIPT_KEYS
    assert verified["receipt"]["chatCalls"] == 1 and verified["receipt"]["inputTokens"] == 11

    [request] = openai_server.requests_to("/v1/chat/completions")
    assert request.body["stream"] is True  # one streamed model call
    assert app.statements and {event.mode for event in app.statements} == {AccessMode.READ}


async def test_a_refusal_after_deltas_withdraws_them(corpus: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = citing(
        "It was lit in 1901 by the harbour board.", "lit in 1901 by the harbour board"
    )
    with served(openai_server) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": QUESTION})
    assert names(events)[0] == "retrieved" and "delta" in names(events)
    name, refused = events[-1]
    assert name == "refused" and "verified" not in names(events)
    assert set(refused) == {"reason", "withdraws", "receipt"}
    assert refused["reason"] == "citation-not-found" and refused["withdraws"] is True
    # The first reply and its one repair turn, which quoted no better.
    assert (refused["receipt"]["chatCalls"], refused["receipt"]["repairs"]) == (2, 1)


async def test_a_declined_reply_is_refused_without_deltas_to_withdraw(
    corpus: None, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = lambda body: json.dumps({"insufficient": "the passages do not say"})
    with served(openai_server) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": QUESTION})
    assert names(events) == ["retrieved", "refused"]
    assert events[-1][1]["reason"] == "model-declined" and events[-1][1]["withdraws"] is False


async def test_an_empty_scope_is_refused_for_no_evidence_without_a_model_call(
    corpus: None, openai_server: OpenAIServer
) -> None:
    async def nothing(request: Request) -> DocumentsScope:  # scope_for may be async
        return DocumentsScope(document_ids=())

    with served(openai_server, ServerOptions(scope_for=nothing)) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": QUESTION})
    assert names(events) == ["retrieved", "refused"]
    assert events[0][1]["items"] == [] and events[0][1]["scope"]["kind"] == "documents"
    refused = events[1][1]
    assert (refused["reason"], refused["withdraws"], refused["receipt"]["chatCalls"]) == ("no-evidence", False, 0)
    assert chat_calls(openai_server) == 0


async def test_a_model_failure_after_the_evidence_is_an_error_event_with_only_its_code(
    corpus: None, openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.fail(500)
    with caplog.at_level(logging.ERROR, logger="graphrag_orm.server"), served(openai_server) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": QUESTION})
    assert names(events) == ["retrieved", "error"]
    assert events[-1][1] == {"code": "model-failed"}
    logged = [record.getMessage() for record in caplog.records if record.name == "graphrag_orm.server"]
    assert logged == ["ask stream failed [model-failed]: ModelCallFailed (model-request-rejected)"]
    assert not any("scripted failure" in line for line in logged)


async def test_a_retrieval_failure_is_an_error_event_before_any_evidence(
    corpus: None, openai_server: OpenAIServer, store: Store
) -> None:
    # A scope whose query would write: the sandbox refuses it, so retrieval fails.
    refused_scope = CypherScope(cypher="MATCH (d:Document) DETACH DELETE d RETURN d.id AS documentId")
    with served(openai_server, ServerOptions(scope_for=lambda request: refused_scope)) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": QUESTION})
    assert events == [("error", {"code": "retrieval-failed"})]
    assert chat_calls(openai_server) == 0
    assert (await store.read("MATCH (d:Document) RETURN count(d) AS n")).value() == 2


async def test_a_client_that_disconnects_stops_the_model_call(corpus: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = citing("Skerry Point " * 200, "first lit in 1857")
    openai_server.stream_delay = 0.05  # about 550 pieces: half a minute if it were read to the end
    seen: list[str] = []
    with served(openai_server) as app:
        async with (
            client(app.url) as http,
            aconnect_sse(http, "POST", f"{PREFIX}/ask", json={"question": QUESTION}) as source,
        ):
            async for event in source.aiter_sse():
                seen.append(event.event)
                if event.event == "delta":
                    break  # leaving the block closes the response: the client is gone
        assert seen == ["retrieved", "delta"]
        # The model server saw its streamed response's connection closed mid-reply.
        assert await asyncio.to_thread(openai_server.stream_aborted.wait, 10)
        assert openai_server.streams_completed == 0


async def test_a_follow_up_sends_its_history_to_the_rewrite_only(corpus: None, openai_server: OpenAIServer) -> None:
    def respond(body: dict[str, Any]) -> str:
        if body["response_format"]["json_schema"]["name"] == "rewrite":
            return json.dumps({"question": QUESTION})
        return citing("In 1857.", "first lit in 1857")(body)

    openai_server.chat_responder = respond
    history = [{"question": "Tell me about Skerry Point.", "answer": "It is a lighthouse."}]
    with served(openai_server) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": "When was it first lit?", "history": history})
    assert names(events)[-1] == "verified" and events[-1][1]["receipt"]["chatCalls"] == 2
    assert chat_calls(openai_server) == 2


# --- refusals before any work --------------------------------------------------------------

TURN = {"question": "And then?", "answer": "Then it was lit."}
BAD_REQUESTS: list[tuple[str, str, Any, str]] = [
    ("POST", "/ask", {"question": ""}, "empty-question"),
    ("POST", "/ask", {"question": " \n\t "}, "empty-question"),
    ("POST", "/ask", {"question": "x" * 4_001}, "question-too-long"),
    ("POST", "/ask", {"question": "When?", "history": [TURN] * 21}, "too-many-turns"),
    (
        "POST",
        "/ask",
        {"question": "When?", "scope": {"kind": "documents", "documentIds": [ORCHARD_ID]}},
        "invalid-request",
    ),
    ("POST", "/ask", {"question": "When?", "history": [{**TURN, "scope": "all"}]}, "invalid-request"),
    ("POST", "/ask", {"question": "When?", "history": [{**TURN, "answer": None}]}, "invalid-request"),
    ("POST", "/ask", {"question": "When?", "history": [{"question": "And then?"}]}, "invalid-request"),
    ("POST", "/ask", {"question": 42}, "invalid-request"),
    ("POST", "/ask", {"question": "Which themes recur?", "mode": "everything"}, "invalid-request"),
    # No ontology here, so no community reports: the mode is refused before any work.
    ("POST", "/ask", {"question": "Which themes recur?", "mode": "global"}, "mode-not-available"),
    ("POST", "/ask", ["When?"], "invalid-request"),
    ("POST", "/ask", b"{not json", "invalid-request"),
    ("POST", "/ask", {"question": "x" * 1_100_000}, "invalid-request"),
    ("POST", "/search", {"query": "lighthouse", "limit": 0}, "invalid-limit"),
    ("POST", "/search", {"query": "lighthouse", "limit": 21}, "invalid-limit"),
    ("POST", "/search", {"query": "lighthouse", "limit": "5"}, "invalid-limit"),
    ("POST", "/search", {"query": "   "}, "empty-question"),
    ("POST", "/search", {"query": "q" * 4_001}, "question-too-long"),
    ("POST", "/search", {"query": "lighthouse", "limit": 2.5}, "invalid-limit"),
    ("POST", "/search", {"query": "lighthouse", "scope": None}, "invalid-request"),
    ("GET", "/documents?limit=0", None, "invalid-limit"),
    ("GET", "/documents?limit=1001", None, "invalid-limit"),
    ("GET", "/documents?limit=ten", None, "invalid-limit"),
]


async def test_every_bad_request_is_a_400_problem_before_any_work(corpus: None, openai_server: OpenAIServer) -> None:
    with served(openai_server) as app:
        async with client(app.url) as http:
            for method, path, body, code in BAD_REQUESTS:
                content = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
                headers = {"content-type": "application/json"} if content is not None else {}
                response = await http.request(method, PREFIX + path, content=content, headers=headers)
                assert response.status_code == 400, (path, code, response.text[:200])
                assert response.headers["content-type"] == "application/problem+json"
                found = response.json()
                assert set(found) == PROBLEM_KEYS and (found["code"], found["status"]) == (code, 400), found
                assert found["type"].endswith(code) and "Traceback" not in response.text
            # A form post or text/plain (what a page on another origin can send unasked) is refused too.
            plain = await http.post(
                f"{PREFIX}/ask", content=b'{"question": "When?"}', headers={"content-type": "text/plain"}
            )
            assert (plain.status_code, plain.json()["code"]) == (400, "invalid-request")
    assert chat_calls(openai_server) == 0
    assert app.statements == []  # not one read: every refusal came before any work


async def test_a_question_at_the_bound_is_accepted_and_the_bound_is_the_retrievals_too(
    corpus: None, openai_server: OpenAIServer
) -> None:
    openai_server.chat_responder = lambda body: json.dumps({"insufficient": "the passages do not say"})
    at_bound = ("lighthouse lantern " * 300)[:5_000]  # over the retriever's default of 4,000 characters
    with served(openai_server, ServerOptions(retrieval=RetrievalOptions(max_question_chars=5_000))) as app:
        async with client(app.url) as http:
            events = await ask(http, {"question": at_bound})
            over = await http.post(f"{PREFIX}/ask", json={"question": at_bound + "?"})
    assert names(events) == ["retrieved", "refused"] and events[0][1]["items"]
    assert over.status_code == 400 and over.json()["code"] == "question-too-long"


def assert_problem(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, (status, code, response.text[:200])
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["cache-control"] == "no-store"
    found = response.json()
    assert set(found) == PROBLEM_KEYS and (found["code"], found["status"]) == (code, status), found
    assert found["type"].endswith(f":{code}") and "\n" not in found["detail"]


async def test_unknown_paths_and_wrong_methods_of_the_app_are_problems(corpus: None) -> None:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
    )
    with serving(create_app(rag)) as url:
        async with client(url) as http:
            unknown = await http.get("/graphrag/nothing-here")
            outside = await http.post("/nowhere", json={"question": QUESTION})
            asset = await http.get("/explorer/index.html")
            got_ask = await http.get(f"{PREFIX}/ask")
            deleted = await http.delete(f"{PREFIX}/documents/{LIGHTHOUSE_ID}")
            served_still = await http.get(f"{PREFIX}/documents")
    for response in (unknown, outside, asset):
        assert_problem(response, 404, "not-found")
    assert "content-security-policy" in asset.headers  # the explorer's headers stay
    assert_problem(got_ask, 405, "method-not-allowed")
    assert got_ask.headers["allow"] == "POST"
    assert_problem(deleted, 405, "method-not-allowed")
    assert deleted.headers["allow"] == "GET"
    assert served_still.status_code == 200


async def test_an_application_with_the_problem_handlers_answers_its_errors_as_problems(
    corpus: None, openai_server: OpenAIServer
) -> None:
    def keyed(x_api_key: str = Header()) -> None:  # required: FastAPI refuses a request without it
        if x_api_key not in API_KEYS:
            raise HTTPException(status_code=401, detail=f"unknown API key {x_api_key}")

    chat = OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key")
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions), chat=chat
    )
    app = application(rag, chat, ServerOptions(), dependencies=[Depends(keyed)])
    add_problem_handlers(app)

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("a bug with a secret in its message")

    with serving(app) as url:
        async with client(url) as http:
            missing_key = await http.get(f"{PREFIX}/documents")
            wrong_key = await http.get(f"{PREFIX}/documents", headers={"x-api-key": "guess<script>"})
            fine = await http.get(f"{PREFIX}/documents", headers={"x-api-key": "key-orchard"})
            failed = await http.get("/broken")  # last: the server closes the connection after it
    assert_problem(missing_key, 422, "invalid-request")
    assert_problem(wrong_key, 401, "http-error")
    assert wrong_key.json()["detail"] == "HTTP 401 Unauthorized" and "guess" not in wrong_key.text
    assert_problem(failed, 500, "internal-error")
    assert "secret" not in failed.text
    assert fine.status_code == 200 and fine.headers["content-type"] == "application/json"


# --- /search and /documents -----------------------------------------------------------------


async def test_search_returns_passages_labelled_as_evidence(corpus: None, openai_server: OpenAIServer) -> None:
    with served(openai_server) as app:
        async with client(app.url) as http:
            response = await http.post(f"{PREFIX}/search", json={"query": "lighthouse lantern keepers", "limit": 2})
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    found = response.json()
    assert set(found) == {"label", "passages", "limitsReached"}
    assert found["label"] == "evidence to read and quote, not an answer"
    assert len(found["passages"]) == 2
    assert found["limitsReached"] == [{"name": "MaxItems", "value": 2}]
    for passage in found["passages"]:
        assert set(passage) == {
            "documentId",
            "chunkId",
            "sourceUri",
            "title",
            "startByte",
            "endByte",
            "score",
            "text",
        }
        source = LIGHTHOUSE if passage["documentId"] == LIGHTHOUSE_ID else ORCHARD
        assert source.encode()[passage["startByte"] : passage["endByte"]].decode() == passage["text"]
    assert chat_calls(openai_server) == 0


async def test_documents_list_and_show_spans_in_order_never_text(corpus: None, openai_server: OpenAIServer) -> None:
    with served(openai_server) as app:
        async with client(app.url) as http:
            listed = (await http.get(f"{PREFIX}/documents")).json()
            first = (await http.get(f"{PREFIX}/documents", params={"limit": 1})).json()
            shown = await http.get(f"{PREFIX}/documents/{LIGHTHOUSE_ID}")
            missing = await http.get(f"{PREFIX}/documents/{'0' * 64}")
            not_an_id = await http.get(f"{PREFIX}/documents/{LIGHTHOUSE_ID[:12]}")
    assert listed["more"] == 0 and [d["documentId"] for d in listed["documents"]] == [LIGHTHOUSE_ID, ORCHARD_ID]
    assert set(listed["documents"][0]) == {"documentId", "sourceUri", "title", "mediaType", "utf8Length", "chunks"}
    assert listed["documents"][0]["utf8Length"] == len(LIGHTHOUSE.encode()) and listed["documents"][0]["chunks"] == 3
    assert first["more"] == 1 and len(first["documents"]) == 1

    assert shown.status_code == 200
    view = shown.json()
    assert set(view) == {
        "documentId",
        "sourceUri",
        "title",
        "mediaType",
        "published",
        "publisher",
        "url",
        "utf8Length",
        "contentHash",
        "runId",
        "chunks",
        "limitsReached",
    }
    assert (view["documentId"], view["sourceUri"], view["mediaType"]) == (
        LIGHTHOUSE_ID,
        "text:lighthouse",
        "text/plain",
    )
    assert [set(chunk) for chunk in view["chunks"]] == [{"chunkId", "startByte", "endByte"}] * 3
    starts = [chunk["startByte"] for chunk in view["chunks"]]
    assert starts == sorted(starts) and starts[0] == 0 and view["chunks"][-1]["endByte"] <= len(LIGHTHOUSE.encode())
    assert "Skerry" not in shown.text  # spans, never text

    for response in (missing, not_an_id):
        assert response.status_code == 404 and response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "document-not-found"


# --- the application's scope ------------------------------------------------------------------

API_KEYS = {"key-lighthouse": LIGHTHOUSE_ID, "key-orchard": ORCHARD_ID}


def require_key(x_api_key: str = Header(default="")) -> None:
    """The application's authentication: a known API key, or 401."""
    if x_api_key not in API_KEYS:
        raise HTTPException(status_code=401, detail="unknown API key")


def scope_by_key(request: Request) -> DocumentsScope:
    """Each caller sees only its own document; the key was checked by the dependency."""
    return DocumentsScope(document_ids=(API_KEYS[request.headers["x-api-key"]],))


async def test_the_application_scopes_every_request_and_a_caller_cannot_leave_it(
    corpus: None, openai_server: OpenAIServer
) -> None:
    prompts: list[list[tuple[str, str]]] = []

    def respond(body: dict[str, Any]) -> str:
        prompts.append(evidence_of(body))
        return json.dumps({"insufficient": "the passages do not say"})

    openai_server.chat_responder = respond
    options = ServerOptions(scope_for=scope_by_key)
    lighthouse = {"x-api-key": "key-lighthouse"}
    with served(openai_server, options, dependencies=[Depends(require_key)]) as app:
        async with client(app.url) as http:
            unknown = await http.post(f"{PREFIX}/search", json={"query": "apple"})
            # Asked about the orchard by a caller scoped to the lighthouse.
            events = await ask(http, {"question": "Which apples grow at Hollins Farm orchard?"}, headers=lighthouse)
            searched = (
                await http.post(f"{PREFIX}/search", json={"query": "orchard apple cider"}, headers=lighthouse)
            ).json()
            listed = (await http.get(f"{PREFIX}/documents", headers=lighthouse)).json()
            own = await http.get(f"{PREFIX}/documents/{LIGHTHOUSE_ID}", headers=lighthouse)
            other = await http.get(f"{PREFIX}/documents/{ORCHARD_ID}", headers=lighthouse)
            asked_out = await http.post(
                f"{PREFIX}/ask",
                json={"question": "Which apples?", "scope": {"kind": "documents", "documentIds": [ORCHARD_ID]}},
                headers=lighthouse,
            )
            theirs = (await http.get(f"{PREFIX}/documents", headers={"x-api-key": "key-orchard"})).json()

    assert unknown.status_code == 401  # the application's dependency, before the toolkit's work
    retrieved = events[0][1]
    assert retrieved["items"] and {item["documentId"] for item in retrieved["items"]} == {LIGHTHOUSE_ID}
    assert retrieved["scope"]["kind"] == "documents" and retrieved["scope"]["documents"] == 1
    assert all("orchard" not in text.lower() for prompt in prompts for _, text in prompt)
    assert searched["passages"] and {p["documentId"] for p in searched["passages"]} == {LIGHTHOUSE_ID}
    assert [d["documentId"] for d in listed["documents"]] == [LIGHTHOUSE_ID] and listed["more"] == 0
    assert own.status_code == 200
    assert other.status_code == 404 and other.json()["code"] == "document-not-found"
    assert asked_out.status_code == 400 and asked_out.json()["code"] == "invalid-request"
    assert [d["documentId"] for d in theirs["documents"]] == [ORCHARD_ID]


# --- tracing ----------------------------------------------------------------------------------


async def test_the_answer_joins_the_callers_trace_and_reports_its_id(corpus: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = citing("In 1857.", "first lit in 1857")
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    with captured_spans() as exporter, served(openai_server) as app:
        async with client(app.url) as http:
            events = await ask(
                http, {"question": QUESTION}, headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
            )
    assert events[0][1]["traceId"] == trace_id and names(events)[-1] == "verified"
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert {"GraphRag.Answer", "GraphRag.Retrieve"} <= set(spans)
    for name in ("GraphRag.Answer", "GraphRag.Retrieve"):
        assert spans[name].context is not None and f"{spans[name].context.trace_id:032x}" == trace_id
        assert all("Skerry" not in str(value) for value in (spans[name].attributes or {}).values())


# --- graphrag-orm serve -------------------------------------------------------------------------


def test_graphrag_orm_serve_answers_over_http_and_stops_cleanly(corpus: None, openai_server: OpenAIServer) -> None:
    openai_server.chat_responder = citing("In 1857.", "first lit in 1857")
    port = free_port()
    environment = {**os.environ, "COLUMNS": "160"}
    for name in ("GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS"):
        environment.pop(name, None)
    environment.update(
        GRAPHRAG_EMBEDDING_MODEL="hashing",
        GRAPHRAG_MODEL_MODE="live",
        GRAPHRAG_PROVIDER="openai-compatible",
        OPENAI_BASE_URL=openai_server.url,
        OPENAI_API_KEY="test-key",
        GRAPHRAG_CHAT_MODEL="test-model",
    )
    process = subprocess.Popen(
        [CLI, "serve", "--port", str(port), "--prefix", "/api", "--no-explorer"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20, trust_env=False) as http:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, process.communicate()
                with contextlib.suppress(httpx.TransportError):
                    if http.get("/api/documents").status_code == 200:
                        break
                assert time.monotonic() < deadline, "graphrag-orm serve did not answer"
                time.sleep(0.2)
            with connect_sse(http, "POST", "/api/ask", json={"question": QUESTION}) as source:
                events = [(event.event, event.json()) for event in source.iter_sse()]
            explorer = http.get("/")
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert names(events)[0] == "retrieved" and events[-1][0] == "verified"
    assert events[-1][1]["citations"][0]["quote"] == "first lit in 1857"
    assert explorer.status_code == 404  # --no-explorer
    assert process.returncode == 0, out + err
    assert "Traceback" not in out + err
