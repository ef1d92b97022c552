"""The agent tools and the LangChain and LlamaIndex adapters of a tenanted graph (docs/tenancy.md):
built bound to one tenant, or refused with ``tenant-required`` before any statement.

What these tests read is the ``$tenant`` every statement carried
(``tests.support.tenancy.sent_tenants``) and, where a document is stored for each tenant,
that each surface finds its own tenant's document and never the other's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from langchain_text_splitters import RecursiveCharacterTextSplitter
from llama_index.core import Document as LlamaDocument
from llama_index.core.node_parser import SentenceSplitter

from graphrag_orm import GraphRag
from graphrag_orm.adapters import langchain as lc
from graphrag_orm.adapters import llamaindex as li
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import TenantError
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.sync import SyncGraphRag
from graphrag_orm.tenancy import Tenant
from graphrag_orm.tools import GraphRagTools
from tests.support.tenancy import refused_unsent, sent_tenants, tenanted_rag

QUESTION = "How long does the espresso shot take?"


@pytest.fixture
async def corpus(tenanted_graph: None) -> list[Source]:
    """The tenanted chain applied and nothing stored: these tests are about what is sent."""
    return []


@pytest.fixture
async def tenanted(corpus: list[Source], neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    """A tenanted graph's facade, bound to no tenant, connected without the schema check (it would be refused)."""
    rag = tenanted_rag()
    await rag.connect(neo4j_settings, check_schema=False, neomodel=False)
    yield rag
    await rag.close()


ESPRESSO = "The espresso shot takes twenty-five seconds. The {tenant} grinder sits beside the machine."


@pytest.fixture
async def stored(tenanted: GraphRag) -> GraphRag:
    """One espresso document for each of acme and globex, under the same URI."""
    for tenant in ("acme", "globex"):
        receipt = await tenanted.for_tenant(tenant).ingestion.ingest(
            [Sources.text("espresso", ESPRESSO.format(tenant=tenant))]
        )
        assert receipt.ingested == 1, receipt
    return tenanted


UNBOUND: dict[str, Callable[[GraphRag], object]] = {
    "tools": lambda rag: GraphRagTools(rag),
    "langchain": lambda rag: lc.GraphRagRetriever(rag=rag),
    "llamaindex": lambda rag: li.GraphRagRetriever(rag),
}


@pytest.mark.parametrize("surface", sorted(UNBOUND))
async def test_a_surface_of_a_tenanted_graph_is_not_built_without_a_tenant(
    tenanted: GraphRag, monkeypatch: pytest.MonkeyPatch, surface: str
) -> None:
    await refused_unsent(monkeypatch, lambda: UNBOUND[surface](tenanted))


async def test_the_tools_bound_to_a_tenant_send_it_with_every_statement(
    tenanted: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)
    tools = GraphRagTools(tenanted, tenant="acme")
    searched = await tools.call("search_documents", {"query": QUESTION})
    answered = await tools.call("answer_from_documents", {"question": QUESTION})
    assert not searched.is_error and not answered.is_error, (searched, answered)
    assert sent and {tenant for _, tenant in sent} == {"acme"}
    # A facade bound when built serves the tools as it is.
    bound = tenanted.for_tenant("globex")
    assert not (await GraphRagTools(bound).call("search_documents", {"query": QUESTION})).is_error
    assert {tenant for _, tenant in sent} == {"acme", "globex"}
    assert tenanted.tenant is None  # the views left the facade they came from unbound


async def test_the_adapters_bound_to_a_tenant_send_it_with_every_statement(
    stored: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)
    documents = await lc.GraphRagRetriever(rag=stored, tenant="acme").ainvoke(QUESTION)
    assert documents and {tenant for _, tenant in sent} == {"acme"}
    assert all("acme grinder" in document.page_content for document in documents)
    sent.clear()
    nodes = await li.GraphRagRetriever(stored, tenant="globex").aretrieve(QUESTION)
    assert nodes and {tenant for _, tenant in sent} == {"globex"}
    assert all("globex grinder" in node.node.get_content() for node in nodes)


async def test_the_ingestion_helpers_take_the_tenant(tenanted: GraphRag, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "The grinder is cleaned every Friday. The burrs are replaced each spring."
    source = Sources.text("grinder", text)
    splitter = RecursiveCharacterTextSplitter(chunk_size=160, chunk_overlap=0)
    with pytest.raises(TenantError) as refused:
        await lc.ingest_langchain(tenanted, [(source, splitter.create_documents([text]))], splitter)
    assert refused.value.code == ErrorCode.TENANT_REQUIRED
    sent = sent_tenants(monkeypatch)
    receipt = await lc.ingest_langchain(
        tenanted, [(source, splitter.create_documents([text]))], splitter, tenant="acme"
    )
    assert receipt.ingested == 1 and {tenant for _, tenant in sent} == {"acme"}
    sent.clear()
    parser = SentenceSplitter(chunk_size=200, chunk_overlap=0)
    other = Sources.text("grinder-li", text)
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=text)])
    receipt = await li.ingest_llamaindex(tenanted, [(other, nodes)], parser, tenant="globex")
    assert receipt.ingested == 1 and {tenant for _, tenant in sent} == {"globex"}


def test_a_blocking_twins_view_runs_on_its_loop_with_its_tenant(
    corpus: list[Source], neo4j_settings: ConnectionSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The documents are written on a loop of their own: this test's twin runs its own.
    async def store_both() -> None:
        rag = tenanted_rag()
        await rag.connect(neo4j_settings, check_schema=False, neomodel=False)
        try:
            for tenant in ("acme", "globex"):
                source = Sources.text("espresso", ESPRESSO.format(tenant=tenant))
                assert (await rag.for_tenant(tenant).ingestion.ingest([source])).ingested == 1
        finally:
            await rag.close()

    asyncio.run(store_both())
    twin = tenanted_rag().sync()
    twin.connect(neo4j_settings, check_schema=False, neomodel=False)
    try:
        with pytest.raises(TenantError) as refused:
            li.GraphRagRetriever(twin)
        assert refused.value.code == ErrorCode.TENANT_REQUIRED
        sent = sent_tenants(monkeypatch)
        retriever = lc.GraphRagRetriever(rag=twin, tenant="acme")
        assert isinstance(retriever.rag, SyncGraphRag) and retriever.rag.rag.tenant == Tenant("acme")
        found = retriever.invoke(QUESTION)
        assert found and {tenant for _, tenant in sent} == {"acme"}
        assert all("acme grinder" in document.page_content for document in found)
        sent.clear()
        view = twin.for_tenant("globex")
        nodes = li.GraphRagRetriever(view).retrieve(QUESTION)
        assert nodes and {tenant for _, tenant in sent} == {"globex"}
        assert all("globex grinder" in node.node.get_content() for node in nodes)
        view.close()  # the view's: the loop and the driver stay the twin's
        assert not twin.closed and twin.rag.store.connected
    finally:
        twin.close()
    assert twin.closed
