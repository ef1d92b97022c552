"""``create_app(rag, options)``: a FastAPI application with the endpoints and the explorer page.

``add_problem_handlers(app)`` makes every error the framework raises a problem
(``application/problem+json``, ``Cache-Control: no-store``) with a stable code; an
application that mounts :func:`~graphrag_orm.server.graphrag_router` itself may call it too.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphrag_orm.facade import GraphRag
from graphrag_orm.server.options import ServerOptions
from graphrag_orm.server.problems import PROBLEM_MEDIA_TYPE, Problem, ProblemCode, problem
from graphrag_orm.server.reads import ServerReads
from graphrag_orm.server.router import NO_STORE, graphrag_router

__all__ = ["add_problem_handlers", "create_app"]

_log = logging.getLogger("graphrag_orm.server")


def _response(found: Problem, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        found.to_json(),
        status_code=found.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers={**(headers or {}), **NO_STORE},
    )


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


async def _http_problem(request: Request, error: Exception) -> Response:
    assert isinstance(error, StarletteHTTPException)
    status = error.status_code
    if status == 404:
        found = problem(ProblemCode.NOT_FOUND, "nothing is served at this path", status=404)
    elif status == 405:
        found = problem(ProblemCode.METHOD_NOT_ALLOWED, "this path is not served with this method", status=405)
    elif status < 400:  # not an error: no body to give
        return Response(status_code=status, headers={**(error.headers or {}), **NO_STORE})
    else:
        # The phrase of the status, never the exception's detail: that may hold the caller's input.
        found = problem(ProblemCode.HTTP_ERROR, f"HTTP {status} {_phrase(status)}", status=status)
    return _response(found, error.headers)


async def _validation_problem(request: Request, error: Exception) -> Response:
    found = problem(
        ProblemCode.INVALID_REQUEST, "the request's parameters are missing or of the wrong types", status=422
    )
    return _response(found)


async def _internal_problem(request: Request, error: Exception) -> Response:
    _log.error("%s: %s (%s)", ProblemCode.INTERNAL_ERROR.value, type(error).__name__, request.url.path)
    found = problem(ProblemCode.INTERNAL_ERROR, "the server failed; the application's log has the error", status=500)
    return _response(found)


def add_problem_handlers(app: FastAPI) -> None:
    """Answer the framework's errors on ``app`` as problems with ``Cache-Control: no-store``.

    An unknown path is 404 ``not-found``; a served path with another method is 405
    ``method-not-allowed`` (with ``Allow``); a request whose parameters FastAPI could not
    read is 422 ``invalid-request``; any other ``HTTPException`` is ``http-error`` with its
    status (its detail is replaced by the status phrase: it may hold the caller's input);
    an unhandled exception is 500 ``internal-error`` (logged by type, then raised on to the
    server as usual).
    """
    app.add_exception_handler(StarletteHTTPException, _http_problem)
    app.add_exception_handler(RequestValidationError, _validation_problem)
    app.add_exception_handler(Exception, _internal_problem)


def create_app(rag: GraphRag, options: ServerOptions | None = None) -> FastAPI:
    """The router of :func:`graphrag_router` and, with ``options.explorer``, the explorer page at ``/``.

    The lifespan connects ``rag`` when it is not connected yet (the NEO4J_* environment),
    on the serving event loop, and closes on shutdown what it connected (a tenanted graph
    without a tenant of its own connects without checking the vector index: its store
    sends nothing; each request is bound to ``options.tenant_for``'s tenant). No API pages
    are served (``/docs`` would load scripts from a CDN); ``/openapi.json`` is. Errors
    are problems (:func:`add_problem_handlers`).
    """
    options = options or ServerOptions()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = not rag.store.connected
        if opened:
            # A tenanted graph's store without a tenant sends nothing, the schema check included:
            # each request's view is bound to its tenant instead (docs/tenancy.md).
            await rag.connect(check_schema=not (rag.layout.tenanted and rag.tenant is None))
        try:
            yield
        finally:
            if opened:
                await rag.close()

    app = FastAPI(title="graphrag-orm", lifespan=lifespan, docs_url=None, redoc_url=None)
    add_problem_handlers(app)
    app.include_router(graphrag_router(rag, options))
    if options.explorer:
        from graphrag_orm.server.explorer import explorer_router

        app.include_router(explorer_router(options.prefix, ServerReads(rag, options).question_bound))
    return app
