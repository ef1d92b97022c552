"""HTTP and the explorer page bound to one tenant: ``/ask`` (server-sent events, with history from the
other tenant's turn), ``/search``, ``/documents`` and ``/documents/{id}`` return nothing of the other.

Served by ``create_app`` (as ``graphrag-orm serve``) on uvicorn, on a loopback port. The
served facade is the other tenant's (a server of one tenant) and the application's
``tenant_for`` names OWN for every request: a router that ignored ``tenant_for`` would
serve the other tenant. The explorer page reads only through these endpoints; its calls
are made here as the page makes them (``tests/e2e/test_explorer.py`` drives the page itself).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import Request

from graphrag_orm import GraphRag
from graphrag_orm.retrieval import DocumentsScope
from graphrag_orm.server import ServerOptions, create_app
from graphrag_orm.store import Store
from graphrag_orm.store.neomodel import attach_neomodel
from tests.e2e.test_server_http import PREFIX, serving
from tests.leaks.corpus import DOCUMENTS, OTHER, OWN, PROBES, SECRETS, VAULT, CarryingChat, Leaks, handbook_id
from tests.support.tenancy import sent_tenants, tenanted_rag

#: A request with this header is scoped by the application to the other tenant's documents.
SCOPED_TO_THEIRS = "x-scope-theirs"


@contextlib.contextmanager
def server(rag: GraphRag, options: ServerOptions) -> Iterator[str]:
    with serving(create_app(rag, options)) as url:
        yield url


@pytest_asyncio.fixture(scope="module")
async def own_url(leaks: Leaks, store: Store) -> AsyncIterator[str]:
    """A server of the other tenant whose application binds every request to OWN."""

    def tenant_for(request: Request) -> str:
        return OWN

    def scope_for(request: Request) -> DocumentsScope | None:
        return DocumentsScope(document_ids=leaks.other_documents) if SCOPED_TO_THEIRS in request.headers else None

    options = ServerOptions(tenant_for=tenant_for, scope_for=scope_for)
    try:
        with server(tenanted_rag(tenant=OTHER, chat=CarryingChat()), options) as url:
            yield url
    finally:
        await attach_neomodel(store.driver, store.database)  # the lifespan pointed neomodel at its own driver


@contextlib.asynccontextmanager
async def client(url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=url, timeout=30, trust_env=False) as opened:
        yield opened


def events(body: str) -> list[tuple[str, Any]]:
    """The server-sent events of a whole ``/ask`` response: (name, data) each."""
    found = re.findall(r"^event: (\S+)\ndata: (.*)$", body, flags=re.MULTILINE)
    assert found and body.count("\n\n") == len(found), body
    return [(name, json.loads(data)) for name, data in found]


async def ask(
    http: httpx.AsyncClient,
    question: str,
    history: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> str:
    """The whole ``/ask`` stream, as the explorer asks (its headers and body)."""
    response = await http.post(
        f"{PREFIX}/ask",
        json={"question": question, "history": history or []},
        headers={"Accept": "text/event-stream", **(headers or {})},
    )
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    return response.text


def verified(body: str) -> str:
    """The verified answer's text of a stream (or fails with the stream's last event)."""
    name, data = events(body)[-1]
    assert name == "verified", (name, data)
    return str(data["answer"])


async def test_ask_streams_nothing_of_the_other_tenant(own_url: str, leaks: Leaks) -> None:
    async with client(own_url) as http:
        for probe in PROBES:
            body = await ask(http, probe)
            leaks.assert_none(body, asked=[probe])
            if probe == VAULT:
                assert SECRETS[OWN] in verified(body)


async def test_search_returns_nothing_of_the_other_tenant(own_url: str, leaks: Leaks) -> None:
    async with client(own_url) as http:
        for probe in PROBES:
            response = await http.post(f"{PREFIX}/search", json={"query": probe, "limit": 20})
            assert response.status_code == 200, response.text
            leaks.assert_none(response.text, asked=[probe])
            passages = response.json()["passages"]
            assert {passage["chunkId"] for passage in passages} <= leaks.own_ids
            if probe == VAULT:
                assert SECRETS[OWN] in response.text


async def test_documents_and_each_document_are_its_own(own_url: str, leaks: Leaks) -> None:
    async with client(own_url) as http:
        # As the explorer lists them, then opens each; and a limit of one counts only its own.
        listed = await http.get(f"{PREFIX}/documents?limit=50", headers={"Accept": "application/json"})
        first = await http.get(f"{PREFIX}/documents?limit=1")
        ids = [entry["documentId"] for entry in listed.json()["documents"]]
        views = [await http.get(f"{PREFIX}/documents/{document}") for document in ids]
    assert set(ids) <= leaks.own_ids and handbook_id(OWN) in ids
    assert len(ids) == DOCUMENTS[OWN] and listed.json()["more"] == 0
    assert first.json()["more"] == DOCUMENTS[OWN] - 1
    for response in (listed, first, *views):
        assert response.status_code == 200, response.text
        leaks.assert_none(response.text)


async def test_the_other_tenants_document_is_not_found(own_url: str, leaks: Leaks) -> None:
    async with client(own_url) as http:
        for document in leaks.other_documents:
            response = await http.get(f"{PREFIX}/documents/{document}")
            assert response.status_code == 404, response.text
            assert response.json()["code"] == "document-not-found"
            leaks.assert_none(response.text, asked=[document])


async def test_a_scope_naming_the_other_tenants_documents_finds_nothing(own_url: str, leaks: Leaks) -> None:
    scoped = {SCOPED_TO_THEIRS: "1"}
    async with client(own_url) as http:
        searched = await http.post(f"{PREFIX}/search", json={"query": VAULT}, headers=scoped)
        listed = await http.get(f"{PREFIX}/documents", headers=scoped)
        asked = await ask(http, VAULT, headers=scoped)
    assert searched.json()["passages"] == [] and listed.json() == {"documents": [], "more": 0}
    assert events(asked)[-1][0] == "refused"
    for output in (searched.text, listed.text, asked):
        leaks.assert_none(output)


async def test_the_explorer_pages_calls_return_only_its_own(own_url: str, at_hand: GraphRag, leaks: Leaks) -> None:
    # The page's own calls, to the API its page names: list, open each document (and one of
    # the other tenant's ids), then a follow-up whose kept turn is another tenant's.
    assert at_hand.answers is not None
    theirs = await at_hand.answers.answer(VAULT)
    assert theirs.text is not None and SECRETS[OTHER] in theirs.text
    async with client(own_url) as http:
        page = await http.get("/")
        found = re.search(r'<meta name="graphrag-api" content="([^"]*)">', page.text)
        assert page.status_code == 200 and found is not None
        api = found.group(1)
        listed = await http.get(f"{api}/documents?limit=50", headers={"Accept": "application/json"})
        ids = [entry["documentId"] for entry in listed.json()["documents"]]
        opened = [
            await http.get(f"{api}/documents/{document}", headers={"Accept": "application/json"})
            for document in [*ids, handbook_id(OTHER)]
        ]
        body = await ask(http, "And what is it here?", [{"question": VAULT, "answer": theirs.text}])
    assert set(ids) <= leaks.own_ids and len(ids) == DOCUMENTS[OWN]
    assert [response.status_code for response in opened] == [200] * len(ids) + [404]
    for output in (page.text, listed.text, *(response.text for response in opened[:-1]), body):
        leaks.assert_none(output)  # the stream echoes neither the question nor its rewrite
    leaks.assert_none(opened[-1].text, asked=[handbook_id(OTHER)])
    assert SECRETS[OWN] in verified(body)


async def test_unbound_every_endpoint_is_refused_before_any_statement(
    leaks: Leaks, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def tenant_for(request: Request) -> None:
        return None  # the application found no tenant for this caller

    sent = sent_tenants(monkeypatch)
    try:
        with server(tenanted_rag(chat=CarryingChat()), ServerOptions(tenant_for=tenant_for)) as url:
            async with client(url) as http:
                page = await http.get("/")
                refused = [
                    await http.post(f"{PREFIX}/ask", json={"question": VAULT, "history": []}),
                    await http.post(f"{PREFIX}/search", json={"query": VAULT}),
                    await http.get(f"{PREFIX}/documents?limit=50"),
                    await http.get(f"{PREFIX}/documents/{handbook_id(OWN)}"),
                ]
    finally:
        await attach_neomodel(store.driver, store.database)
    assert page.status_code == 200  # the page itself reads nothing
    for response in refused:
        assert response.status_code == 403 and response.json()["code"] == "tenant-required", response.text
    assert sent == []
