"""The agent tools over MCP, on the official SDK's low-level server (``mcp`` 2.x).

``build_mcp_server(rag)`` lists the same tools, with the same closed input schemas, as
:meth:`GraphRagTools.definitions`, and answers ``tools/call`` with
:meth:`GraphRagTools.call`'s result: the JSON object as structured content and as one
text block. A refusal is a normal result (``isError`` false, ``answered`` false, its
reason); an unknown tool, invalid arguments or a failed call is an error result
(``isError`` true) with ``{"error": {"code", "message"}}``. No protocol error is raised
for what an agent sends. The tools only read, and say so in their annotations.

This module imports ``mcp``; nothing imports it eagerly (``graphrag-orm mcp`` does, when run).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext

from graphrag_orm.retrieval import Scope
from graphrag_orm.tenancy import Tenant
from graphrag_orm.tools.instructions import INSTRUCTIONS
from graphrag_orm.tools.service import GraphRagTools, ToolOptions
from graphrag_orm.tools.trail import TrailRecorder
from graphrag_orm.tools.values import ToolResult

if TYPE_CHECKING:
    from graphrag_orm.facade import GraphRag

__all__ = ["SERVER_NAME", "build_mcp_server", "mcp_result"]

SERVER_NAME = "graphrag-orm"


def build_mcp_server(
    rag: GraphRag,
    options: ToolOptions | None = None,
    *,
    trail: TrailRecorder | None = None,
    scope: Scope | None = None,
    tenant: Tenant | str | None = None,
    name: str = SERVER_NAME,
    version: str = "",
) -> Server[Any]:
    """An MCP server of ``rag``'s tools (``rag`` connected by the caller, on the loop that serves).

    ``options``, ``trail``, ``scope`` and ``tenant`` are :class:`GraphRagTools`'; the scope
    and the tenant are the application's, and no client can change them. A server of a
    tenanted graph is bound to one tenant (``tenant``, or ``rag``'s own: ``graphrag-orm mcp``
    reads ``GRAPHRAG_TENANT``) or not built (``TenantError("tenant-required")``).
    """
    tools = GraphRagTools(rag, options, trail=trail, scope=scope, tenant=tenant)
    listed = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema,
            annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
        )
        for spec in tools.specs()
    ]
    schemas = {spec.name: spec.input_schema for spec in tools.specs()}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        return mcp_result(await tools.call(params.name, params.arguments or {}))

    return Server(
        name,
        version=version,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def mcp_result(result: ToolResult) -> types.CallToolResult:
    """A tool result as MCP's: structured content, the same JSON as text."""
    payload = result.to_payload()
    text = json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=payload, is_error=result.is_error
    )
