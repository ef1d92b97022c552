"""``create_app(rag, options)``: a FastAPI application with the endpoints and the explorer page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from graphrag_orm.facade import GraphRag
from graphrag_orm.server.options import ServerOptions
from graphrag_orm.server.router import graphrag_router

__all__ = ["create_app"]


def create_app(rag: GraphRag, options: ServerOptions | None = None) -> FastAPI:
    """The router of :func:`graphrag_router` and, with ``options.explorer``, the explorer page at ``/``.

    The lifespan connects ``rag`` when it is not connected yet (the NEO4J_* environment),
    on the serving event loop, and closes on shutdown what it connected. No API pages
    are served (``/docs`` would load scripts from a CDN); ``/openapi.json`` is.
    """
    options = options or ServerOptions()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = not rag.store.connected
        if opened:
            await rag.connect()
        try:
            yield
        finally:
            if opened:
                await rag.close()

    app = FastAPI(title="graphrag-orm", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.include_router(graphrag_router(rag, options))
    if options.explorer:
        from graphrag_orm.server.explorer import explorer_router

        app.include_router(explorer_router(options.prefix))
    return app
