"""``graphrag-orm mcp [--transport stdio|http] [--host 127.0.0.1] [--port 8001] [--ontology NAME]``.

Builds a ``GraphRag`` from the environment (as ``ask`` does: offline stand-ins unless
``GRAPHRAG_MODEL_MODE`` names another mode), connects, and serves its agent tools over MCP until stopped: on stdin
and stdout, or as streamable HTTP at ``http://HOST:PORT/mcp``. Nothing is written to
stdout but the protocol; status lines go to stderr. The ``mcp`` package (and uvicorn)
are imported only here, when the command runs.
"""

from __future__ import annotations

from enum import StrEnum
from importlib import metadata

import typer

from graphrag_orm.cli._common import OntologyOption, errors, fail, listen, load_ontology, require_extra, run
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError

__all__ = ["MCP_PATH", "Transport", "mcp"]

MCP_PATH = "/mcp"


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"


def mcp(
    transport: Transport = typer.Option(
        Transport.STDIO, "--transport", help="stdio (for a client that starts this command) or http (streamable HTTP)."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on (http only)."),
    port: int = typer.Option(8001, "--port", min=1, max=65535, help="The port to listen on (http only)."),
    ontology: str | None = OntologyOption,
) -> None:
    """Serve the agent tools (answer_from_documents, search_documents, and with an ontology
    find_things and related_facts) over MCP."""
    require_extra("mcp", "mcp", "mcp", *(("uvicorn",) if transport == Transport.HTTP else ()))
    chosen = load_ontology(ontology)
    try:
        rag = graphrag_from_env(ontology=chosen)[0]
    except GraphRagError as error:
        fail(error.message, error.code)
    listener = listen(host, port) if transport == Transport.HTTP else None

    async def serve() -> None:
        from graphrag_orm.tools.mcp import build_mcp_server

        await rag.connect(neomodel=False)
        try:
            server = build_mcp_server(rag, version=_version())
            if listener is None:
                from mcp.server.stdio import stdio_server

                errors.print("[dim]graphrag-orm mcp: serving the agent tools on stdio[/]")
                async with stdio_server() as (read_stream, write_stream):
                    await server.run(read_stream, write_stream, server.create_initialization_options())
            else:
                import uvicorn

                app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
                config = uvicorn.Config(app, log_level="warning", lifespan="on")
                errors.print(f"[dim]graphrag-orm mcp: serving on http://{host}:{port}{MCP_PATH}[/]")
                await uvicorn.Server(config).serve(sockets=[listener])
        finally:
            await rag.close()

    try:
        run(serve())
    finally:
        if listener is not None:
            listener.close()


def _version() -> str:
    try:
        return metadata.version("graphrag-orm")
    except metadata.PackageNotFoundError:
        return "unknown"
