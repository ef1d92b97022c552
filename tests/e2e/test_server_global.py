"""``POST /ask`` with ``"mode": "global"`` over real HTTP: the community reports' answer as server-sent events.

The harbour sample (32 pages, an ontology) is ingested and its communities and reports built
offline on the suite's Neo4j; a fresh facade with the same ontology is then served by uvicorn
on its own loop, and the events are read with httpx-sse. The application scopes each caller
to one page: a global answer keeps to it and names nothing outside it.
"""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import Request
from httpx_sse import aconnect_sse

from examples.harbour.fleet import FLEET, extraction_reply
from graphrag_orm import GraphRag
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.communities import GLOBAL_NOTE, ReportOptions, ReportService
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.retrieval import DocumentsScope
from graphrag_orm.server import ServerOptions, create_app
from tests.e2e.test_server_http import serving
from tests.integration.test_community_reports import harbour  # noqa: F401 (the fixture)

QUESTION = "Which ships are owned by House Orrin?"


async def events_of(http: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]) -> list[tuple[str, Any]]:
    async with aconnect_sse(http, "POST", "/ask", json=body, headers=headers) as source:
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        return [(event.event, event.json()) async for event in source.aiter_sse()]


async def test_a_global_question_streams_the_verified_findings_inside_the_callers_scope(
    harbour: GraphRag,  # noqa: F811
) -> None:
    await ReportService(harbour.store, FLEET, ReportOptions(max_findings=20)).write()
    rows = await harbour.store.read("MATCH (d:Document) RETURN d.id AS id, d.sourceUri AS uri")
    pages = {row["uri"].rsplit("/", 1)[-1]: row["id"] for row in rows}

    def scope_for(request: Request) -> DocumentsScope | None:
        page = request.headers.get("x-page")
        return DocumentsScope(document_ids=(pages[page],)) if page else None

    served = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ScriptedChat(extraction_reply),
        ontology=FLEET,
    )
    with serving(create_app(served, ServerOptions(prefix="", scope_for=scope_for))) as url:
        async with httpx.AsyncClient(base_url=url, timeout=20, trust_env=False) as http:
            everywhere = await events_of(http, {"question": QUESTION, "mode": "global"}, {})
            gannet = await events_of(http, {"question": QUESTION, "mode": "global"}, {"x-page": "gannet-log"})
            house = await events_of(
                http, {"question": "Which ships called at Brinmoor?", "mode": "global"}, {"x-page": "house-orrin"}
            )
            history = await http.post(
                "/ask", json={"question": QUESTION, "mode": "global", "history": [{"question": "a", "answer": "b"}]}
            )

    assert [name for name, _ in everywhere] == ["retrieved", "verified"]
    retrieved, verified = everywhere[0][1], everywhere[1][1]
    assert retrieved["items"] == [] and retrieved["scope"] is None
    assert verified["answer"].endswith(GLOBAL_NOTE) and verified["receipt"]["chatCalls"] == 0
    assert len({c["documentId"] for c in verified["citations"]}) >= 2

    assert [name for name, _ in gannet] == ["retrieved", "verified"]
    inside = gannet[1][1]
    assert {c["documentId"] for c in inside["citations"]} == {pages["gannet-log"]}
    assert "Gannet owned by House Orrin." in inside["answer"] and "Skua" not in inside["answer"]
    assert gannet[0][1]["limitsReached"] == []
    for citation in inside["citations"]:
        (chunk,) = list(
            await harbour.store.read(
                "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.startByte AS start", {"id": citation["chunkId"]}
            )
        )
        span = chunk["text"].encode()[citation["startByte"] - chunk["start"] : citation["endByte"] - chunk["start"]]
        assert span.decode() == citation["quote"]

    assert [name for name, _ in house] == ["retrieved", "refused"]
    assert house[1][1]["reason"] == "no-relevant-finding" and house[1][1]["withdraws"] is False
    assert history.status_code == 400 and history.json()["code"] == "invalid-request"
