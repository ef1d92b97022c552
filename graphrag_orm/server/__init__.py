"""HTTP endpoints with streamed, verified answers and the explorer page (extra ``server``).

``graphrag_router(rag, options)`` is a FastAPI router an application mounts (with its
own authentication and rate limits); ``create_app(rag, options)`` is a whole
application with the explorer page, whose errors are all problems
(``add_problem_handlers(app)`` does that for an application of your own). Importing this
package loads neither fastapi nor uvicorn: the functions import them when first named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphrag_orm.server.bodies import AskBody, HistoryTurn, SearchBody
from graphrag_orm.server.events import (
    DeltaEvent,
    ErrorEvent,
    EventName,
    RefusedEvent,
    RetrievedEvent,
    StreamErrorCode,
    VerifiedEvent,
)
from graphrag_orm.server.options import ScopeFor, ServerOptions
from graphrag_orm.server.problems import Problem, ProblemCode
from graphrag_orm.server.views import ChunkEntry, DocumentEntry, DocumentsPage, DocumentView, Passage, SearchResult

if TYPE_CHECKING:
    from graphrag_orm.server.app import add_problem_handlers, create_app
    from graphrag_orm.server.router import graphrag_router

__all__ = [
    "AskBody",
    "ChunkEntry",
    "DeltaEvent",
    "DocumentEntry",
    "DocumentView",
    "DocumentsPage",
    "ErrorEvent",
    "EventName",
    "HistoryTurn",
    "Passage",
    "Problem",
    "ProblemCode",
    "RefusedEvent",
    "RetrievedEvent",
    "ScopeFor",
    "SearchBody",
    "SearchResult",
    "ServerOptions",
    "StreamErrorCode",
    "VerifiedEvent",
    "add_problem_handlers",
    "create_app",
    "graphrag_router",
]


def __getattr__(name: str) -> Any:
    # fastapi is imported only when an application asks for the router or the app.
    if name == "graphrag_router":
        from graphrag_orm.server.router import graphrag_router

        return graphrag_router
    if name == "create_app":
        from graphrag_orm.server.app import create_app

        return create_app
    if name == "add_problem_handlers":
        from graphrag_orm.server.app import add_problem_handlers

        return add_problem_handlers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
