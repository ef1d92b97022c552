"""``graphrag_router(rag, options)``: the endpoints as a FastAPI router an application mounts.

Authentication, authorization and rate limits are the application's: pass them as the
router's dependencies when including it (``app.include_router(router, dependencies=[...])``).
Every request is checked before any work: the application's ``tenant_for`` decides its
tenant (a tenanted graph refuses a request without one, 403), the request is read (a 400
problem), the application's ``scope_for`` decides its scope, then the graph is read
through a view bound to the request's tenant; nothing is cached or written.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterable
from typing import Any, Final

import anyio
from fastapi import APIRouter, Request, Response
from starlette.responses import StreamingResponse
from starlette.types import Receive, Send
from starlette.types import Scope as AsgiScope

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError, TenantError
from graphrag_orm.facade import GraphRag
from graphrag_orm.retrieval.scope import CypherScope, DocumentsScope, MetadataScope, Scope, SectionsScope
from graphrag_orm.server.asking import MAX_CLOSE_SECONDS, ask_events, global_events, request_context
from graphrag_orm.server.bodies import MAX_BODY_BYTES, is_json, read_ask, read_documents_limit, read_search, too_large
from graphrag_orm.server.openapi import DOCUMENT_OPERATION, Described
from graphrag_orm.server.options import ServerOptions
from graphrag_orm.server.problems import PROBLEM_MEDIA_TYPE, Problem, ProblemCode, problem
from graphrag_orm.server.reads import ServerReads
from graphrag_orm.tenancy import Tenant
from graphrag_orm.values import Value

__all__ = ["EventStream", "graphrag_router"]

_log = logging.getLogger("graphrag_orm.server")

#: Nothing these endpoints return may be kept by a cache: each answer is read afresh.
NO_STORE: Final = {"Cache-Control": "no-store"}


class EventStream(StreamingResponse):
    """``text/event-stream`` whose body generator is always closed when the response ends.

    Starlette cancels a stream whose client disconnected (it listens for
    ``http.disconnect`` beside the stream and cancels the stream's task when it comes);
    the body generator hands control to the event loop between events, so the disconnect
    is seen and nothing is written after it. Closing the generator here as well (shielded,
    bounded) closes the model call even when the cancellation came while the generator was
    waiting at a ``yield`` (a write) rather than inside it.
    """

    media_type = "text/event-stream"

    def __init__(self, content: AsyncIterable[bytes]) -> None:
        super().__init__(content, headers={**NO_STORE, "X-Accel-Buffering": "no"})

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            closer = getattr(self.body_iterator, "aclose", None)
            if closer is not None:
                with anyio.move_on_after(MAX_CLOSE_SECONDS, shield=True):
                    await closer()


def _json(value: Value, status: int = 200) -> Response:
    return Response(value.to_json(), status_code=status, media_type="application/json", headers=NO_STORE)


def _problem(found: Problem) -> Response:
    return Response(found.to_json(), status_code=found.status, media_type=PROBLEM_MEDIA_TYPE, headers=NO_STORE)


async def _body(request: Request) -> bytes | Problem:
    """The body, when it is JSON and at most ``MAX_BODY_BYTES``; read no further than that."""
    if not is_json(request.headers.get("content-type")):
        return problem(ProblemCode.INVALID_REQUEST, "the body must be JSON (Content-Type: application/json)")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return too_large()
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > MAX_BODY_BYTES:
            return too_large()
        parts.append(part)
    return b"".join(parts)


def _failed(code: ProblemCode, error: Exception) -> Response:
    given = getattr(error, "code", None)
    _log.error("%s: %s (%s)", code.value, type(error).__name__, given if isinstance(given, str) else "-")
    return _problem(problem(code, "the graph could not be read; the application's log has the error", status=500))


_SCOPES: Final = (DocumentsScope, SectionsScope, MetadataScope, CypherScope)


def graphrag_router(rag: GraphRag, options: ServerOptions | None = None) -> APIRouter:
    """``POST /ask`` (server-sent events), ``POST /search``, ``GET /documents`` and
    ``GET /documents/{id}`` under ``options.prefix``.

    ``rag`` must have a chat client (``rag.answers``), else ``ConfigurationError``
    (``invalid-option``). It must be connected before the first request, on the event
    loop that serves them (``create_app`` connects it in its lifespan).
    """
    options = options or ServerOptions()
    if rag.answers is None:
        raise ConfigurationError(ErrorCode.INVALID_OPTION, "graphrag_router needs a GraphRag with a chat client")
    reads = ServerReads(rag, options)
    bound = reads.question_bound
    tenanted = rag.layout.tenanted
    described = Described(bound, options.max_history_turns, global_mode=rag.ontology is not None, tenanted=tenanted)
    router = APIRouter(prefix=options.prefix, tags=["graphrag"])

    async def graph_of(request: Request) -> GraphRag | Problem:
        """The request's view of the graph: bound to ``tenant_for``'s tenant, built for it alone."""
        chosen: Any = None
        if options.tenant_for is not None:
            chosen = options.tenant_for(request)
            if inspect.isawaitable(chosen):
                chosen = await chosen
        if chosen is None:
            # Fail closed: an application that decides each request's tenant and found none for
            # this one never gets the served graph's own tenant instead.
            if tenanted and (rag.tenant is None or options.tenant_for is not None):
                return problem(
                    ProblemCode.TENANT_REQUIRED, "this graph is tenanted and the request has no tenant", status=403
                )
            return rag
        if not isinstance(chosen, Tenant | str):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "tenant_for must return a Tenant, a str or None")
        try:
            tenant = Tenant.of(chosen)
        except TenantError:
            return problem(ProblemCode.INVALID_TENANT, "the request's tenant is not a tenant id", status=403)
        assert tenant is not None
        return rag.for_tenant(tenant)

    async def scope_of(request: Request) -> Scope | None:
        if options.scope_for is None:
            return None
        chosen: Any = options.scope_for(request)
        if inspect.isawaitable(chosen):
            chosen = await chosen
        if chosen is not None and not isinstance(chosen, _SCOPES):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "scope_for must return a Scope or None")
        scope: Scope | None = chosen
        return scope

    @router.post(
        "/ask",
        summary="Answer with checked citations, streamed as server-sent events",
        operation_id="ask",
        # No media type of its own: the stream's description (itemSchema) is the only one listed.
        response_class=Response,
        responses=described.ask_responses,
        openapi_extra=described.ask_extra,
    )
    async def ask(request: Request) -> Response:
        graph = await graph_of(request)
        if isinstance(graph, Problem):
            return _problem(graph)
        raw = await _body(request)
        if isinstance(raw, Problem):
            return _problem(raw)
        corpus = graph.global_answers
        body = read_ask(raw, options, bound, global_mode=corpus is not None)
        if isinstance(body, Problem):
            return _problem(body)
        scope = await scope_of(request)
        context, trace_id = request_context(request.headers)
        if body.mode == "global":
            assert corpus is not None  # read_ask refuses the mode without it
            inside = reads.retrieval_options(scope).scope  # the request's, else the application's own
            return EventStream(global_events(corpus, body.question, inside, context, trace_id))
        asked = graph.answers
        assert asked is not None  # a view has its graph's chat client
        events = ask_events(asked, body.question, body.turns(), reads.retrieval_options(scope), context, trace_id)
        return EventStream(events)

    @router.post(
        "/search",
        summary="Passages to read and quote, not an answer",
        operation_id="search",
        responses=described.search_responses,
        openapi_extra=described.search_extra,
    )
    async def search(request: Request) -> Response:
        graph = await graph_of(request)
        if isinstance(graph, Problem):
            return _problem(graph)
        raw = await _body(request)
        if isinstance(raw, Problem):
            return _problem(raw)
        body = read_search(raw, bound)
        if isinstance(body, Problem):
            return _problem(body)
        scope = await scope_of(request)
        try:
            found = await ServerReads(graph, options).search(body.query, body.limit, scope)
        except Exception as error:
            return _failed(ProblemCode.RETRIEVAL_FAILED, error)
        return _json(found)

    @router.get(
        "/documents",
        summary="Documents inside the application's scope, by source URI",
        operation_id="documents",
        responses=described.documents_responses,
        openapi_extra=described.documents_extra,
    )
    async def documents(request: Request) -> Response:
        graph = await graph_of(request)
        if isinstance(graph, Problem):
            return _problem(graph)
        limit = read_documents_limit(request.query_params.getlist("limit"))
        if isinstance(limit, Problem):
            return _problem(limit)
        scope = await scope_of(request)
        try:
            page = await ServerReads(graph, options).documents(limit, scope)
        except Exception as error:
            return _failed(ProblemCode.READ_FAILED, error)
        return _json(page)

    @router.get(
        "/documents/{document_id}",
        summary="A document's metadata and chunk spans, never its text",
        operation_id=DOCUMENT_OPERATION,
        responses=described.document_responses,
        openapi_extra=described.document_extra,
    )
    async def document(request: Request) -> Response:
        # Read here, not as an argument: FastAPI would describe a 422 that is never sent.
        document_id: str = request.path_params["document_id"]
        graph = await graph_of(request)
        if isinstance(graph, Problem):
            return _problem(graph)
        scope = await scope_of(request)
        try:
            view = await ServerReads(graph, options).document(document_id, scope)
        except Exception as error:
            return _failed(ProblemCode.READ_FAILED, error)
        if view is None:
            return _problem(
                problem(ProblemCode.DOCUMENT_NOT_FOUND, "no document has this id (a full, 64-digit id)", status=404)
            )
        return _json(view)

    return router
