"""What an application decides about its endpoints: the prefix, the bounds and each request's scope.

Importing this module loads neither fastapi nor starlette: ``scope_for`` is typed with
starlette's ``Request`` for the type checker only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from pydantic import Field

from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retrieval.scope import Scope
from graphrag_orm.tenancy import Tenant
from graphrag_orm.values import Options

if TYPE_CHECKING:
    from starlette.requests import Request
else:  # pydantic resolves the annotation at run time; the callable's argument is not validated
    Request = Any

__all__ = ["MAX_HISTORY_TURNS", "ScopeFor", "ServerOptions", "TenantFor"]

#: The most earlier turns a follow-up may send.
MAX_HISTORY_TURNS: Final = 20

ScopeFor = Callable[[Request], Scope | Awaitable[Scope | None] | None]
"""The application's decision of a request's scope: a scope, or ``None`` for the base options' scope."""

TenantFor = Callable[[Request], Tenant | str | Awaitable[Tenant | str | None] | None]
"""The application's decision of a request's tenant: a tenant (or its id), or ``None`` for none."""


class ServerOptions(Options):
    """The endpoints' settings; every bound has a default and a maximum.

    - ``prefix``: where the endpoints live (``""`` or a path such as ``/graphrag``, no
      trailing slash).
    - ``max_history_turns``: earlier turns a follow-up may send (0..20, default 20).
    - ``scope_for``: called with each request (sync or async) before any work; what it
      returns is that request's scope, and ``None`` leaves the base options' scope. The
      caller can never choose a scope: a body with a ``scope`` field is refused.
      Whatever it raises (an ``HTTPException`` for a caller it does not know) is the
      application's response.
    - ``tenant_for``: called with each request (sync or async) before any work, after the
      router's dependencies; the request's services are a view of the graph bound to the
      tenant it returns (``GraphRag.for_tenant``), built for that request alone. No
      ``tenant_for`` leaves the graph's own tenant (a server of one tenant). In a tenanted
      graph, ``None`` from ``tenant_for`` (the application found no tenant for the caller),
      or no ``tenant_for`` and no tenant of the graph's own, refuses a request that reads
      the graph (403 ``tenant-required``) before any statement: never the served graph's
      own tenant instead. A value that is no tenant id is 403 ``invalid-tenant``. Whatever it
      raises is the application's response. See docs/tenancy.md.
    - ``retrieval``: the base retrieval options (the retriever's own when ``None``); their
      ``max_question_chars`` bounds a question, a query and each turn's question here, as
      it does in the tools, over MCP and in the adapters.
    - ``explorer``: ``create_app`` serves the explorer page at ``/``.
    """

    prefix: str = Field("/graphrag", max_length=200, pattern=r"^(/[A-Za-z0-9._~\-]+)*$")
    max_history_turns: int = Field(MAX_HISTORY_TURNS, ge=0, le=MAX_HISTORY_TURNS)
    scope_for: ScopeFor | None = None
    tenant_for: TenantFor | None = None
    retrieval: RetrievalOptions | None = None
    explorer: bool = True
