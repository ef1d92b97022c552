"""The leak suite's corpus, stored once for the whole package (every test only reads it)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from graphrag_orm import GraphRag
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.conftest import tenanted_chain
from tests.leaks.corpus import DOCUMENTS, OTHER, TENANTS, CarryingChat, Leaks, sources
from tests.support.tenancy import tenanted_rag


@pytest_asyncio.fixture(scope="package")
async def leaks(store: Store, neo4j_settings: ConnectionSettings) -> AsyncIterator[Leaks]:
    """The tenanted chain applied and each tenant's documents ingested by a facade of its own;
    what of the other tenant must never show. The toolkit's own chain is restored afterwards."""
    async with tenanted_chain(store):
        for tenant in TENANTS:
            # Each tenant's own facade (GraphRag(tenant=...)), not a view: the suite also checks
            # that a view (for_tenant) is bound, and its corpus must not depend on that.
            async with await tenanted_rag(tenant).connect(neo4j_settings, neomodel=False) as rag:
                receipt = await rag.ingestion.ingest(sources(tenant))
            assert receipt.ingested == DOCUMENTS[tenant], receipt
        yield await Leaks.read(store)


@pytest_asyncio.fixture(scope="package")
async def unbound(leaks: Leaks, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    """The tenanted graph's facade, bound to no tenant (connected without the schema check, which it would refuse)."""
    rag = tenanted_rag(chat=CarryingChat())
    await rag.connect(neo4j_settings, check_schema=False, neomodel=False)
    yield rag
    await rag.close()


@pytest_asyncio.fixture(scope="package")
async def at_hand(leaks: Leaks, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    """The facade at hand is the other tenant's: a surface told to serve OWN that ignored its
    tenant would serve OTHER's documents (a leak), not a refusal."""
    rag = tenanted_rag(OTHER, chat=CarryingChat())
    await rag.connect(neo4j_settings, neomodel=False)
    yield rag
    await rag.close()
