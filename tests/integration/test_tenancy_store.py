"""The tenancy enforcement point against the real Neo4j: a tenanted graph's store sends nothing
without a tenant, binds ``$tenant`` itself, and refuses caller Cypher (docs/tenancy.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from graphrag_orm import ConnectionSettings, GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import TenantError
from graphrag_orm.layout import Layout
from graphrag_orm.store import StatementEvent, Store, StoreTransaction
from graphrag_orm.store.neomodel import attach_neomodel
from graphrag_orm.store.sandbox import CypherSandbox
from graphrag_orm.tenancy import Tenant
from graphrag_orm.text2cypher import Text2CypherOptions


def tenanted(store: Store, tenant: str | None = None) -> Store:
    """The suite's store as a tenanted graph's (the same driver and hooks)."""
    view = store.for_tenant(tenant) if tenant else store.for_tenant("unused")
    view.tenanted = True
    if tenant is None:
        view.tenant = None
    return view


async def _write(store: Store) -> None:
    async def work(tx: StoreTransaction) -> None:
        await tx.run("RETURN 1 AS one")

    await store.write(work)


async def _read_work(store: Store) -> None:
    async def work(tx: StoreTransaction) -> None:
        await tx.run("RETURN 1 AS one")

    await store.read_work(work)


CALLS: dict[str, Callable[[Store], Awaitable[Any]]] = {
    "read": lambda s: s.read("RETURN 1 AS one"),
    "read-no-retry": lambda s: s.read("RETURN 1 AS one", retry=False),
    "execute": lambda s: s.execute("RETURN 1 AS one"),
    "write": _write,
    "read_work": _read_work,
    "reader": lambda s: s.reader.run("RETURN 1 AS one"),
}


@pytest.mark.parametrize("call", sorted(CALLS))
async def test_a_tenanted_store_without_a_tenant_sends_nothing(store: Store, call: str) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        with pytest.raises(TenantError) as refused:
            await CALLS[call](tenanted(store))
    finally:
        remove()
    assert refused.value.code == ErrorCode.TENANT_REQUIRED
    assert events == []


@pytest.mark.parametrize("call", sorted(CALLS))
async def test_an_untenanted_store_is_unchanged(store: Store, call: str) -> None:
    await CALLS[call](store)


async def test_the_store_binds_tenant_as_a_parameter_and_refuses_another(store: Store) -> None:
    acme = tenanted(store, "acme")
    assert acme.tenant == Tenant("acme") and store.tenant is None
    assert (await acme.read("RETURN $tenant AS tenant")).value("tenant") == "acme"

    async def work(tx: StoreTransaction) -> str:
        return str((await tx.run("RETURN $tenant AS tenant")).value("tenant"))

    assert await acme.write(work) == "acme"
    with pytest.raises(TenantError) as refused:
        await acme.read("MATCH (d:Document {tenant: $tenant}) RETURN d", {"tenant": "globex"})
    assert refused.value.code == ErrorCode.TENANT_MISMATCH


async def test_caller_cypher_is_refused_in_a_tenanted_graph(store: Store) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        with pytest.raises(TenantError) as refused:
            await CypherSandbox().run(tenanted(store, "acme"), "MATCH (c:Chunk) RETURN c.text AS text")
    finally:
        remove()
    assert refused.value.code == ErrorCode.TENANT_REFUSED
    assert events == []
    assert (await CypherSandbox().run(store, "RETURN 1 AS one")).rows == ({"one": 1},)


def tenanted_rag(tenant: str | None, **extra: Any) -> GraphRag:
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
        layout=Layout.DEFAULT.replace(tenancy="required"),
        tenant=tenant,
        **extra,
    )


async def test_a_tenanted_facade_without_a_tenant_refuses_before_any_statement(
    graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    facade = tenanted_rag(None)
    with pytest.raises(TenantError) as refused:
        await facade.connect(neo4j_settings)
    assert refused.value.code == ErrorCode.TENANT_REQUIRED
    facade = tenanted_rag(None)
    await facade.connect(neo4j_settings, check_schema=False)
    try:
        with pytest.raises(TenantError) as retrieval:
            await facade.retriever.retrieve("Who may borrow?")
        assert retrieval.value.code == ErrorCode.TENANT_REQUIRED
        with pytest.raises(TenantError) as ingestion:
            await facade.ingestion.ingest([Sources.text("a", "Members can borrow twelve items.")])
        assert ingestion.value.code == ErrorCode.TENANT_REQUIRED
    finally:
        await facade.close()
        await attach_neomodel(store.driver, store.database)
    assert (await store.read("MATCH (d:Document) RETURN count(d) AS n")).value("n") == 0


def test_text2cypher_is_refused_on_a_tenanted_layout() -> None:
    with pytest.raises(TenantError) as refused:
        tenanted_rag("acme", text2cypher=Text2CypherOptions())
    assert refused.value.code == ErrorCode.TENANT_REFUSED
