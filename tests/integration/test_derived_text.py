"""Derived text (OCR, transcripts) end to end: the document stores its origin, and everything that
cites it names it: evidence items, citations, the agent tools' results and the HTTP stream's events.

The quote is still the stored bytes: the origin says how far those bytes are from the original.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions
from graphrag_orm.server import graphrag_router
from graphrag_orm.sources import SourceMetadata
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tools import GraphRagTools

ORIGIN = "ocr: Tesseract 5.3"
MINUTES = (
    "Minutes of the harbour board, 3 May.\n\n"
    "The board agreed to repaint the lighthouse lantern room before the winter storms.\n\n"
    "The keeper reported that the foghorn failed twice during the April gales.\n"
)
LOG = "The orchard log notes that the pear trees flowered early this spring.\n"
QUESTION = "What did the board agree about the lighthouse lantern room?"
SCAN = Sources.text("derived/minutes-scan", MINUTES, metadata=SourceMetadata(text_origin=ORIGIN))
BORN_DIGITAL = Sources.text("derived/orchard-log", LOG)


@pytest.fixture
async def rag(graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    facade = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
    )
    await facade.connect(neo4j_settings, neomodel=False)
    receipt = await facade.ingestion.ingest([SCAN, BORN_DIGITAL])
    assert receipt.ingested == 2
    yield facade
    await facade.close()


def only_the_scan() -> RetrievalOptions:
    return RetrievalOptions(scope=DocumentsScope(document_ids=(SCAN.document_id,)))


async def test_the_document_stores_its_origin_and_every_evidence_item_and_citation_names_it(
    rag: GraphRag, store: Store
) -> None:
    stored = await store.read(
        "MATCH (d:Document) RETURN d.id AS id, d.textOrigin AS origin ORDER BY id", name="test.derived.documents"
    )
    assert {row["id"]: row["origin"] for row in stored} == {SCAN.document_id: ORIGIN, BORN_DIGITAL.document_id: None}

    evidence = await rag.retriever.retrieve(QUESTION, only_the_scan())
    assert evidence.items and all(item.text_origin == ORIGIN for item in evidence.items)
    assert all(item.model_dump(mode="json", by_alias=True)["textOrigin"] == ORIGIN for item in evidence.items)
    everything = await rag.retriever.retrieve("lighthouse lantern pear trees")
    assert {item.document_id: item.text_origin for item in everything.items} == {
        SCAN.document_id: ORIGIN,
        BORN_DIGITAL.document_id: None,
    }
    assert all(
        "textOrigin" not in item.model_dump(mode="json", by_alias=True)
        for item in everything.items
        if item.document_id == BORN_DIGITAL.document_id
    )

    assert rag.answers is not None
    answer = await rag.answers.answer(QUESTION, retrieval=only_the_scan())
    assert answer.answered and answer.citations
    for citation in answer.citations:
        assert citation.text_origin == ORIGIN
        assert MINUTES.encode()[citation.start_byte : citation.end_byte].decode() == citation.quote


async def test_the_agent_tools_name_the_origin_in_citations_and_passages(rag: GraphRag) -> None:
    tools = GraphRagTools(rag, scope=DocumentsScope(document_ids=(SCAN.document_id,)))
    answered = (await tools.call("answer_from_documents", {"question": QUESTION})).to_payload()
    assert answered["answered"] and answered["citations"]
    assert all(citation["textOrigin"] == ORIGIN for citation in answered["citations"])
    passages = (await tools.call("search_documents", {"query": QUESTION})).to_payload()["passages"]
    assert passages and all(passage["textOrigin"] == ORIGIN for passage in passages)

    plain = GraphRagTools(rag, scope=DocumentsScope(document_ids=(BORN_DIGITAL.document_id,)))
    found = (await plain.call("search_documents", {"query": "pear trees flowered"})).to_payload()["passages"]
    assert found and all("textOrigin" not in passage for passage in found)


async def events(http: httpx.AsyncClient, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    response = await http.post("/graphrag/ask", json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    found = []
    for block in response.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


async def test_the_http_stream_and_search_name_the_origin(rag: GraphRag) -> None:
    app = FastAPI()
    app.include_router(graphrag_router(rag))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        streamed = await events(http, {"question": QUESTION})
        searched = (await http.post("/graphrag/search", json={"query": QUESTION, "limit": 5})).json()
        scan_view = (await http.get(f"/graphrag/documents/{SCAN.document_id}")).json()
        plain_view = (await http.get(f"/graphrag/documents/{BORN_DIGITAL.document_id}")).json()

    names = [name for name, _ in streamed]
    assert names[0] == "retrieved" and names[-1] == "verified"
    retrieved, verified = streamed[0][1], streamed[-1][1]
    scan_items = [item for item in retrieved["items"] if item["documentId"] == SCAN.document_id]
    assert scan_items and all(item["textOrigin"] == ORIGIN for item in scan_items)
    assert all("textOrigin" not in item for item in retrieved["items"] if item["documentId"] != SCAN.document_id)
    assert verified["citations"]
    for citation in verified["citations"]:
        assert citation["documentId"] == SCAN.document_id and citation["textOrigin"] == ORIGIN

    assert scan_view["textOrigin"] == ORIGIN and "textOrigin" not in plain_view  # the explorer's document view
    scan_passages = [p for p in searched["passages"] if p["documentId"] == SCAN.document_id]
    assert scan_passages and all(p["textOrigin"] == ORIGIN for p in scan_passages)
    assert all("textOrigin" not in p for p in searched["passages"] if p["documentId"] != SCAN.document_id)
