"""The HTTP endpoints of a tenanted graph (docs/tenancy.md): each request bound to the tenant the
application's ``tenant_for`` returns, and refused (403) without one, before any statement.

Served by uvicorn on a loopback port as in ``test_server_http.py``, against the suite's
Neo4j, with the offline stand-ins. The same two documents are written for each of two
tenants (so each has its own document ids); what these tests read is what each request got
back and the ``$tenant`` every statement of a request carried
(``tests.support.tenancy.sent_tenants``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from httpx_sse import aconnect_sse

from graphrag_orm import GraphRag
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.server import ServerOptions, create_app, graphrag_router
from graphrag_orm.server.openapi import Described
from graphrag_orm.sources import Sources, document_id
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.store.store import StatementEvent
from tests.e2e.test_server_http import LIGHTHOUSE, LIGHTHOUSE_ID, ORCHARD, PREFIX, QUESTION, serving
from tests.support.tenancy import request_label, sent_tenants, tenanted_rag

TENANTS = ("acme", "globex")

ENDPOINTS: tuple[tuple[str, str, dict[str, Any] | None], ...] = (
    ("POST", f"{PREFIX}/search", {"query": "lighthouse lamp"}),
    ("POST", f"{PREFIX}/ask", {"question": QUESTION}),
    ("GET", f"{PREFIX}/documents", None),
    ("GET", f"{PREFIX}/documents/{LIGHTHOUSE_ID}", None),
)


@pytest.fixture
async def corpus(tenanted_graph: None, neo4j_settings: ConnectionSettings) -> None:
    """The two documents of ``test_server_http`` (chunked as there) for each tenant."""
    rag = tenanted_rag(options=GraphRagOptions(chunking=ChunkerOptions(max_utf8_bytes=160, overlap_paragraphs=0)))
    await rag.connect(neo4j_settings, check_schema=False, neomodel=False)
    try:
        for tenant in TENANTS:
            view = rag.for_tenant(tenant)
            receipt = await view.ingestion.ingest(
                [Sources.text("lighthouse", LIGHTHOUSE), Sources.text("orchard", ORCHARD)]
            )
            assert receipt.ingested == 2 and receipt.chunks_written == 5, receipt
    finally:
        await rag.close()


def lighthouse(tenant: str) -> str:
    """The path of the lighthouse document of ``tenant`` (its id is qualified by the tenant)."""
    return f"{PREFIX}/documents/{document_id('text:lighthouse', tenant)}"


def application(rag: GraphRag, options: ServerOptions) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A tenanted graph's store without a tenant sends nothing, the schema check included.
        await rag.connect(check_schema=False, neomodel=False)
        try:
            yield
        finally:
            await rag.close()

    app = FastAPI(lifespan=lifespan)
    app.include_router(graphrag_router(rag, options))
    return app


@contextlib.contextmanager
def served(rag: GraphRag, options: ServerOptions, statements: list[StatementEvent]) -> Iterator[str]:
    rag.store.add_hook(statements.append)
    with serving(application(rag, options)) as url:
        yield url


@contextlib.asynccontextmanager
async def client(url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=url, timeout=30, trust_env=False) as opened:
        yield opened


async def send(http: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None, **headers: str) -> Any:
    return await http.request(method, path, json=body, headers=headers)


def no_tenant(request: Request) -> None:
    return None


def bad_tenant(request: Request) -> str:
    return "acme' OR 1=1"


@pytest.mark.parametrize(
    ("tenant_for", "own"),
    [(None, None), (no_tenant, None), (no_tenant, "globex"), (bad_tenant, None)],
    ids=["no-tenant-for", "none", "none-beside-a-tenant-of-its-own", "invalid"],
)
async def test_a_tenanted_graph_refuses_a_request_without_a_tenant_before_any_statement(
    corpus: None, monkeypatch: pytest.MonkeyPatch, tenant_for: Any, own: str | None
) -> None:
    # A served graph bound to a tenant of its own is not that tenant's when tenant_for found
    # none for the caller (fails closed: before, it fell back to globex).
    sent = sent_tenants(monkeypatch)
    statements: list[StatementEvent] = []
    expected = "invalid-tenant" if tenant_for is bad_tenant else "tenant-required"
    with served(tenanted_rag(own), ServerOptions(tenant_for=tenant_for), statements) as url:
        async with client(url) as http:
            answers = [await send(http, method, path, body) for method, path, body in ENDPOINTS]
    for response in answers:
        assert response.status_code == 403, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == expected
        assert "acme'" not in response.text  # the refused value is never echoed
    assert statements == [] and sent == []


async def test_each_request_is_bound_to_its_own_tenant_even_when_they_run_at_once(
    corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)
    together = asyncio.Barrier(len(TENANTS))

    async def tenant_for(request: Request) -> str:
        # Both requests of a pair are inside the router before either reads the graph.
        tenant = request.headers["x-tenant"]
        request_label.set(tenant)
        await asyncio.wait_for(together.wait(), timeout=20)
        return tenant

    statements: list[StatementEvent] = []
    with served(tenanted_rag(), ServerOptions(tenant_for=tenant_for), statements) as url:
        async with client(url) as http:
            for method, path, body in ENDPOINTS:
                if path.endswith("/ask"):
                    streams = await asyncio.gather(*(events(http, body or {}, tenant) for tenant in TENANTS))
                    assert all(names and names[0] == "retrieved" and "error" not in names for names in streams)
                    continue
                if path.startswith(f"{PREFIX}/documents/"):
                    pair = await asyncio.gather(
                        *(send(http, method, lighthouse(tenant), body, **{"x-tenant": tenant}) for tenant in TENANTS)
                    )
                else:
                    pair = await asyncio.gather(
                        *(send(http, method, path, body, **{"x-tenant": tenant}) for tenant in TENANTS)
                    )
                assert [response.status_code for response in pair] == [200, 200], [r.text for r in pair]
                if path.endswith("/documents"):
                    for tenant, response in zip(TENANTS, pair, strict=True):
                        ids = {item["documentId"] for item in response.json()["documents"]}
                        assert ids == {document_id(f"text:{name}", tenant) for name in ("lighthouse", "orchard")}
            # Another tenant's document is not found, as a document that does not exist.
            crossed = await asyncio.gather(
                *(
                    send(http, "GET", lighthouse(other), None, **{"x-tenant": tenant})
                    for tenant, other in zip(TENANTS, TENANTS[::-1], strict=True)
                )
            )
            assert [response.status_code for response in crossed] == [404, 404]
            assert all(response.json()["code"] == "document-not-found" for response in crossed)
    labels = {label for label, _ in sent}
    assert labels == {"acme", "globex"}
    assert all(tenant == label for label, tenant in sent), sent
    assert statements and all(event.error is None for event in statements)


async def events(http: httpx.AsyncClient, body: dict[str, Any], tenant: str) -> list[str]:
    async with aconnect_sse(http, "POST", f"{PREFIX}/ask", json=body, headers={"x-tenant": tenant}) as source:
        assert source.response.status_code == 200
        return [event.event async for event in source.aiter_sse()]


def test_the_403_is_described_only_where_it_can_be_sent() -> None:
    tenanted = Described(100, 2, tenanted=True)
    plain = Described(100, 2)
    for responses in (tenanted.ask_responses, tenanted.search_responses, tenanted.documents_responses):
        assert 403 in responses
    assert 403 in tenanted.document_responses
    for responses in (plain.ask_responses, plain.search_responses, plain.documents_responses, plain.document_responses):
        assert 403 not in responses


async def test_create_app_serves_a_tenanted_graph_without_a_tenant_of_its_own(
    corpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)

    def tenant_for(request: Request) -> str | None:
        return request.headers.get("x-tenant")

    # The lifespan connects it: the vector index check would be refused without a tenant.
    app = create_app(tenanted_rag(), ServerOptions(tenant_for=tenant_for, explorer=False))
    with serving(app) as url:
        async with client(url) as http:
            bound = await http.get(f"{PREFIX}/documents", headers={"x-tenant": "acme"})
            unbound = await http.get(f"{PREFIX}/documents")
    assert bound.status_code == 200, bound.text
    assert unbound.status_code == 403 and unbound.json()["code"] == "tenant-required"
    assert sent and {tenant for _, tenant in sent} == {"acme"}
