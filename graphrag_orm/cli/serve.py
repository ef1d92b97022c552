"""``graphrag-orm serve [--host 127.0.0.1] [--port 8000] [--prefix /graphrag] [--ontology NAME] [--no-explorer]``.

Builds a ``GraphRag`` from the environment (offline stand-ins unless ``GRAPHRAG_MODEL_MODE``
names another mode, as for ``ask``), binds the port, connects, and serves ``create_app``'s endpoints and
explorer page with uvicorn until SIGINT or SIGTERM, then closes and exits 0. The port
is bound and the database connected before the application starts, on the serving
event loop, so a taken port or an unreachable database is one line with its code,
never a stack trace (the application's lifespan then finds the graph connected).
fastapi and uvicorn are imported only here, when the command runs.
"""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING

import typer

from graphrag_orm.cli._common import OntologyOption, errors, fail, listen, load_ontology, require_extra, run
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["serve"]

#: Seconds open streams get to finish once a stop is asked for.
GRACEFUL_SECONDS = 10


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="The port to listen on."),
    prefix: str = typer.Option("/graphrag", "--prefix", help="Where the endpoints live (the explorer is at /)."),
    ontology: str | None = OntologyOption,
    no_explorer: bool = typer.Option(False, "--no-explorer", help="Serve the endpoints only, no explorer page."),
) -> None:
    """Serve POST /ask (streamed, verified answers), /search and /documents over HTTP, with the explorer page."""
    require_extra("serve", "server", "fastapi", "uvicorn")
    from graphrag_orm.server import ServerOptions

    chosen = load_ontology(ontology)
    try:
        options = ServerOptions(prefix=prefix, explorer=not no_explorer)
        rag, choice = graphrag_from_env(ontology=chosen)
    except GraphRagError as error:
        fail(error.message, error.code)
    listener = listen(host, port)

    async def work() -> None:
        from graphrag_orm.server import create_app

        await rag.connect()
        try:
            app = create_app(rag, options)
            where = f"http://{host}:{port}"
            errors.print(f"[dim]graphrag-orm serve: {where}{options.prefix}/ask; answers by {choice.chat_label}[/]")
            if options.explorer:
                errors.print(f"[dim]the explorer page: {where}/[/]")
            await _serve(app, listener)
        finally:
            await rag.close()

    try:
        run(work())
    except KeyboardInterrupt:  # stopped while connecting, before uvicorn took the signals over
        raise typer.Exit(130) from None
    finally:
        listener.close()


async def _serve(app: FastAPI, listener: socket.socket) -> None:
    import uvicorn

    class _Server(uvicorn.Server):
        """uvicorn's server, but a stop signal ends it with exit code 0 instead of being raised again."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            stops = (signal.SIGINT, signal.SIGTERM)
            previous = {stop: signal.signal(stop, self.handle_exit) for stop in stops}
            try:
                yield
            finally:
                for stop, handler in previous.items():
                    signal.signal(stop, handler)

    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=GRACEFUL_SECONDS)
    await _Server(config).serve(sockets=[listener])
