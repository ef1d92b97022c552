"""The MCP server in process, through the SDK's own client: its listing and its error results.

No database: every call here is refused before any read (tests/e2e/test_mcp.py runs the
real command over stdio and streamable HTTP against Neo4j).
"""

from __future__ import annotations

import json

from mcp import Client

from examples.recall.bikes import BIKES
from graphrag_orm import GraphRag
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.chat.endpoint import model_schema
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.tools import INSTRUCTIONS, GraphRagTools
from graphrag_orm.tools.mcp import build_mcp_server


def rag() -> GraphRag:
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
        ontology=BIKES,
    )


async def test_the_server_lists_the_same_tools_with_the_full_input_schemas_the_openai_definitions_derive_from() -> None:
    facade = rag()
    async with Client(build_mcp_server(facade)) as client:
        listed = await client.list_tools()
        assert client.instructions == INSTRUCTIONS
    tools = GraphRagTools(facade)
    expected = {d["function"]["name"]: d["function"] for d in tools.definitions()}
    full = {spec.name: spec.input_schema for spec in tools.specs()}
    assert [tool.name for tool in listed.tools] == list(expected)
    for tool in listed.tools:
        # MCP clients validate, so MCP lists the full schema (length bounds included); a model
        # is offered the same schema without them (model_schema), the bound in words.
        assert tool.input_schema == full[tool.name]
        assert model_schema(tool.input_schema) == expected[tool.name]["parameters"]
        assert tool.description == expected[tool.name]["description"]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True


async def test_invalid_arguments_and_an_unknown_tool_are_error_results_with_their_code() -> None:
    async with Client(build_mcp_server(rag())) as client:
        for name, arguments, code in (
            ("search_documents", {"query": "brakes", "limit": 99}, "invalid-arguments"),
            ("answer_from_documents", {}, "invalid-arguments"),
            ("find_things", {"name": "BC-310", "kind": "Planet"}, "invalid-arguments"),
            ("drop_database", {}, "unknown-tool"),
        ):
            result = await client.call_tool(name, arguments)
            assert result.is_error is True, name
            assert result.structured_content is not None
            assert result.structured_content["error"]["code"] == code
            (block,) = result.content
            assert block.type == "text" and json.loads(block.text) == result.structured_content
