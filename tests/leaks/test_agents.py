"""The agent tools, the MCP server (through the MCP SDK's own client, in process and over stdio) and the
LangChain and LlamaIndex retrievers bound to one tenant return nothing of the other.

Each is built from the other tenant's facade and given ``tenant=OWN``: a surface that
ignored its tenant would serve the other tenant's documents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from graphrag_orm import GraphRag
from graphrag_orm.adapters import langchain as lc
from graphrag_orm.adapters import llamaindex as li
from graphrag_orm.retrieval import DocumentsScope
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tenancy import TENANCY_ENV, TENANT_ENV
from graphrag_orm.tools import GraphRagTools
from graphrag_orm.tools.mcp import build_mcp_server
from tests.e2e.test_mcp import CLI, ROOT
from tests.e2e.test_tenancy_mcp import environment
from tests.integration import test_tenancy_surfaces as surfaces
from tests.leaks.corpus import OTHER, OWN, PROBES, SECRETS, VAULT, Leaks, serialised
from tests.support.tenancy import refused_unsent, tenanted_rag

#: Each tool and the name of the argument that carries the words asked.
TOOLS = {"search_documents": "query", "answer_from_documents": "question"}


def their_documents(leaks: Leaks) -> DocumentsScope:
    return DocumentsScope(document_ids=leaks.other_documents)


async def test_the_tools_return_nothing_of_the_other_tenant(at_hand: GraphRag, leaks: Leaks) -> None:
    tools = GraphRagTools(at_hand, tenant=OWN)
    for tool, argument in TOOLS.items():
        for probe in PROBES:
            result = await tools.call(tool, {argument: probe})
            assert not result.is_error, result
            leaks.assert_none(result.to_payload(), asked=[probe])
            if probe == VAULT:
                assert SECRETS[OWN] in serialised(result.to_payload()), (tool, result)
    # The application's scope names the other tenant's documents: nothing is found.
    scoped = GraphRagTools(at_hand, tenant=OWN, scope=their_documents(leaks))
    for tool, argument in TOOLS.items():
        result = await scoped.call(tool, {argument: VAULT})
        assert not result.is_error and SECRETS[OWN] not in serialised(result.to_payload()), result
        leaks.assert_none(result.to_payload(), asked=[VAULT])


async def call_every_tool(client: Client, leaks: Leaks) -> None:
    """Every tool with every probe, through an MCP client; the whole result scanned."""
    for tool, argument in TOOLS.items():
        for probe in PROBES:
            result = await client.call_tool(tool, {argument: probe})
            assert result.is_error is False, result
            dumped = result.model_dump_json()
            leaks.assert_none(dumped, asked=[probe])
            if probe == VAULT:
                assert SECRETS[OWN] in dumped, (tool, dumped)


async def test_an_mcp_server_returns_nothing_of_the_other_tenant(at_hand: GraphRag, leaks: Leaks) -> None:
    async with Client(build_mcp_server(at_hand, tenant=OWN)) as client:
        await call_every_tool(client, leaks)
    async with Client(build_mcp_server(at_hand, tenant=OWN, scope=their_documents(leaks))) as client:
        result = await client.call_tool("search_documents", {"query": VAULT})
    assert result.is_error is False and result.structured_content is not None
    assert result.structured_content["passages"] == []
    leaks.assert_none(result.model_dump_json(), asked=[VAULT])


async def test_the_mcp_command_returns_nothing_of_the_other_tenant(leaks: Leaks) -> None:
    bound = environment(**{TENANCY_ENV: "required", TENANT_ENV: OWN})
    parameters = StdioServerParameters(command=CLI, args=["mcp"], env=bound, cwd=str(ROOT))
    async with Client(parameters, read_timeout_seconds=120) as client:
        await call_every_tool(client, leaks)


def documents_as_data(found: list[Any]) -> list[Any]:
    """LangChain documents or LlamaIndex nodes, text and metadata, as JSON data."""
    return [item.model_dump(mode="json") for item in found]


async def test_the_langchain_and_llamaindex_retrievers_return_nothing_of_the_other_tenant(
    at_hand: GraphRag, leaks: Leaks
) -> None:
    retrievers: dict[str, Callable[[str], Any]] = {
        "langchain": lc.GraphRagRetriever(rag=at_hand, tenant=OWN).ainvoke,
        "llamaindex": li.GraphRagRetriever(at_hand, tenant=OWN).aretrieve,
    }
    # The application's scope names the other tenant's documents: nothing is found.
    scope = their_documents(leaks)
    assert await lc.GraphRagRetriever(rag=at_hand, tenant=OWN, scope=scope).ainvoke(VAULT) == []
    assert await li.GraphRagRetriever(at_hand, tenant=OWN, scope=scope).aretrieve(VAULT) == []
    for name, retrieve in retrievers.items():
        for probe in PROBES:
            found = await retrieve(probe)
            leaks.assert_none(documents_as_data(found), asked=[probe])
            if probe == VAULT:
                assert SECRETS[OWN] in serialised(documents_as_data(found)), name


def test_a_retriever_on_a_blocking_twin_returns_nothing_of_the_other_tenant(
    leaks: Leaks, neo4j_settings: ConnectionSettings
) -> None:
    twin = tenanted_rag().sync()
    twin.connect(neo4j_settings, check_schema=False, neomodel=False)
    try:
        theirs = twin.for_tenant(OTHER)
        for probe in PROBES:
            documents = lc.GraphRagRetriever(rag=theirs, tenant=OWN).invoke(probe)
            nodes = li.GraphRagRetriever(theirs, tenant=OWN).retrieve(probe)
            output = [documents_as_data(documents), documents_as_data(nodes)]
            leaks.assert_none(output, asked=[probe])
            if probe == VAULT:
                assert all(SECRETS[OWN] in serialised(found) for found in output)
    finally:
        twin.close()


UNBOUND: dict[str, Callable[[GraphRag], object]] = {**surfaces.UNBOUND, "mcp": lambda rag: build_mcp_server(rag)}


@pytest.mark.parametrize("surface", sorted(UNBOUND))
async def test_unbound_it_is_not_built_and_sends_nothing(
    unbound: GraphRag, monkeypatch: pytest.MonkeyPatch, surface: str
) -> None:
    await refused_unsent(monkeypatch, lambda: UNBOUND[surface](unbound))
