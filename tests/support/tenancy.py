"""What the tenancy tests of every surface share: a tenanted GraphRag, and the tenant each statement carried.

The store sends every statement's parameters through ``Store.parameters`` (the one
enforcement point); :func:`sent_tenants` wraps it, so a test sees the ``$tenant`` of every
statement that went out, with the label of the request (a context variable) that sent it.
A statement the store refused is not sent, so it is not recorded.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.chat import ChatClient, ExtractiveChat
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import TenantError
from graphrag_orm.layout import Layout
from graphrag_orm.ontologies import generic, novel
from graphrag_orm.store import Store
from graphrag_orm.tenancy import TENANT_PARAMETER, Tenant

TENANTED = Layout.DEFAULT.replace(tenancy="required")
#: The tenanted layouts and ontologies whose knowledge statements the unit tests render (ids beside).
TENANTED_ONTOLOGIES = pytest.mark.parametrize(
    ("layout", "ontology"),
    [
        (TENANTED, generic.ONTOLOGY),
        (TENANTED, novel.ONTOLOGY),
        (Layout.NEO4J_GRAPHRAG.replace(tenancy="required"), generic.ONTOLOGY.with_neo4j_graphrag_entities()),
    ],
    ids=["generic", "novel", "neo4j-graphrag"],
)

#: Which request (or call) is running: set by a test's ``tenant_for`` or around a call.
request_label: ContextVar[str | None] = ContextVar("request_label", default=None)


def tenanted_rag(tenant: Tenant | str | None = None, chat: ChatClient | None = None, **extra: Any) -> GraphRag:
    """A GraphRag of a tenanted graph with the offline stand-ins (the suite's schema is their set)."""
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=chat or ExtractiveChat(),
        layout=TENANTED,
        tenant=tenant,
        **extra,
    )


def sent_tenants(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str | None, object]]:
    """``(request label, $tenant)`` of every statement the store sends from now on (this process)."""
    seen: list[tuple[str | None, object]] = []
    original = Store.parameters

    def recording(self: Store, parameters: Mapping[str, Any] | None) -> dict[str, Any]:
        sent = original(self, parameters)
        seen.append((request_label.get(), sent.get(TENANT_PARAMETER)))
        return sent

    monkeypatch.setattr(Store, "parameters", recording)
    return seen


async def refused_unsent(monkeypatch: pytest.MonkeyPatch, action: Callable[[], object]) -> None:
    """``action()`` (awaited when it returns an awaitable) is refused with ``tenant-required``, and
    not one statement went out."""
    sent = sent_tenants(monkeypatch)
    with pytest.raises(TenantError) as refused:
        done = action()
        if inspect.isawaitable(done):
            await done
    assert refused.value.code == ErrorCode.TENANT_REQUIRED
    assert sent == []
