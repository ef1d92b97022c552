"""The MCP server of a tenanted graph (docs/tenancy.md), talked to with the MCP SDK's own client:
bound to one tenant (``build_mcp_server(..., tenant=)``, or GRAPHRAG_TENANT for ``graphrag-orm mcp``),
or not built at all (``tenant-required``).
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from graphrag_orm import GraphRag
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import TenantError
from graphrag_orm.store import StatementEvent, Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tenancy import TENANCY_ENV, TENANT_ENV
from graphrag_orm.tools.mcp import build_mcp_server
from tests.e2e.test_mcp import CLI, ROOT, content, server_environment
from tests.support.tenancy import sent_tenants, tenanted_rag

QUESTION = "Who may borrow twelve items?"


@pytest.fixture
async def tenanted(tenanted_graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    rag = tenanted_rag()
    await rag.connect(neo4j_settings, check_schema=False, neomodel=False)
    yield rag
    await rag.close()


def environment(**extra: str) -> dict[str, str]:
    found = {k: v for k, v in server_environment().items() if k not in (TENANT_ENV, TENANCY_ENV)}
    return {**found, "PYTHONPATH": str(ROOT), **extra}


async def test_a_server_of_a_tenanted_graph_is_not_built_without_a_tenant(
    tenanted: GraphRag, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        with pytest.raises(TenantError) as refused:
            build_mcp_server(tenanted)
    finally:
        remove()
    assert refused.value.code == ErrorCode.TENANT_REQUIRED
    assert sent == [] and events == []


async def test_a_bound_server_sends_its_tenant_with_every_statement(
    tenanted: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_tenants(monkeypatch)
    async with Client(build_mcp_server(tenanted, tenant="acme")) as client:
        searched = await client.call_tool("search_documents", {"query": QUESTION})
        answered = await client.call_tool("answer_from_documents", {"question": QUESTION})
    assert searched.is_error is False and answered.is_error is False
    assert content(searched)["passages"] == []  # the graph is empty: an empty result, not an error
    assert sent and {tenant for _, tenant in sent} == {"acme"}


def test_the_command_without_a_tenant_fails_with_one_coded_line(graph: None) -> None:
    result = subprocess.run(
        [CLI, "mcp"],
        cwd=ROOT,
        env=environment(**{TENANCY_ENV: "required"}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("(tenant-required)"), result.stderr
    assert result.stdout == ""  # nothing on the protocol's stream


async def test_the_command_serves_the_tenant_of_graphrag_tenant_over_stdio(tenanted_graph: None) -> None:
    parameters = StdioServerParameters(
        command=CLI, args=["mcp"], env=environment(**{TENANCY_ENV: "required", TENANT_ENV: "acme"}), cwd=str(ROOT)
    )
    async with Client(parameters, read_timeout_seconds=120) as client:
        searched = await client.call_tool("search_documents", {"query": QUESTION})
        found: Any = content(searched)
    # Unbound, the first statement would have been refused (an error result, tenant-required).
    assert searched.is_error is False, found
    assert found["passages"] == []
