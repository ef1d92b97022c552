"""Caller Cypher in a tenanted graph against the real Neo4j (issue 31, item 2; docs/tenancy.md).

A Cypher scope or expansion runs only when the application vouches for it per tenant; a
vouched query's rows that hold another tenant's node, a relationship whose ends the row does
not show, or another tenant's key are dropped and counted, and nothing of the other tenant
reaches the evidence.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from graphrag_orm import ConnectionSettings, GraphRag
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import RetrievalFailed, ScopeError, TenantError
from graphrag_orm.evidence import Evidence
from graphrag_orm.retrieval import CypherExpansion, CypherScope, RetrievalOptions
from graphrag_orm.store import StatementEvent, Store
from graphrag_orm.store.fence import TenantFence, foreign_keys
from graphrag_orm.store.sandbox import CypherSandbox
from graphrag_orm.tenancy import Tenant
from tests.integration.test_tenancy_isolation import SECRETS, rag, sources, stored_ids

QUESTION = "What is the vault code?"


@pytest_asyncio.fixture
async def written(tenanted_graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[dict[str, GraphRag]]:
    opened = {name: await rag(name).connect(neo4j_settings, neomodel=False) for name in SECRETS}
    for name, facade in opened.items():
        await facade.ingestion.ingest(sources(name))
    yield opened
    for facade in opened.values():
        await facade.close()


def expansion(cypher: str, vouched: str | None = "acme") -> RetrievalOptions:
    return RetrievalOptions(expansion=CypherExpansion(cypher=cypher, vouched_tenant=vouched, max_rows=100))


def limit(evidence: Evidence, name: str) -> int | None:
    return next((int(lim.value) for lim in evidence.limits_reached if lim.name == name), None)


async def assert_nothing_of_globex(evidence: Evidence, store: Store) -> None:
    shown = json.dumps(evidence.model_dump(mode="json"))
    assert SECRETS["globex"] not in shown
    assert [value for value in await stored_ids(store, "globex") if value in shown] == []


async def test_unvouched_caller_cypher_is_refused_before_it_is_sent(written: dict[str, GraphRag], store: Store) -> None:
    acme = written["acme"]
    events: list[StatementEvent] = []
    remove = acme.store.add_hook(events.append)
    try:
        with pytest.raises(TenantError) as unvouched:
            await acme.retriever.retrieve(QUESTION, expansion("MATCH (c:Chunk) RETURN c", vouched=None))
        with pytest.raises(TenantError) as scope:
            await acme.retriever.retrieve(
                QUESTION, RetrievalOptions(scope=CypherScope(cypher="MATCH (d:Document) RETURN d.id AS documentId"))
            )
        with pytest.raises(TenantError) as other:
            await acme.retriever.retrieve(QUESTION, expansion("MATCH (c:Chunk) RETURN c", vouched="globex"))
    finally:
        remove()
    assert unvouched.value.code == scope.value.code == ErrorCode.TENANT_REFUSED
    assert other.value.code == ErrorCode.TENANT_MISMATCH
    assert [event.name for event in events if "expansion" in event.name or "scope" in event.name] == []


async def test_a_vouched_query_that_filters_by_the_tenant_keeps_every_row(
    written: dict[str, GraphRag], store: Store
) -> None:
    evidence = await written["acme"].retriever.retrieve(
        QUESTION,
        expansion(
            "MATCH (c:Chunk {tenant: $tenant}) WHERE c.text CONTAINS 'vault' RETURN c.id AS chunkId, c.text AS t"
        ),
    )
    rows = [item for item in evidence.context if item.reason == "cypher-expansion"]
    assert len(rows) == 1 and SECRETS["acme"] in rows[0].text
    assert limit(evidence, LimitName.EXPANSION_OUTSIDE_TENANT) is None
    await assert_nothing_of_globex(evidence, store)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'vault' RETURN c",
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'vault' RETURN {inner: [c]} AS nested",
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'vault' RETURN c.id AS chunkId, 'the vault chunk' AS what",
        "MATCH (d:Document)-[r]-(c:Chunk) WHERE c.text CONTAINS 'vault' RETURN r, d.title AS title",
        "MATCH p = (d:Document)-[]-(c:Chunk) WHERE c.text CONTAINS 'vault' RETURN p",
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'vault' RETURN c.documentId AS document, size(c.text) AS bytes",
    ],
    ids=["node", "nested-node", "chunk-key", "bare-relationship", "path", "document-key"],
)
async def test_a_vouched_query_that_ignores_the_tenant_loses_the_other_tenants_rows(
    written: dict[str, GraphRag], store: Store, cypher: str
) -> None:
    evidence = await written["acme"].retriever.retrieve(QUESTION, expansion(cypher))
    rows = [item for item in evidence.context if item.reason == "cypher-expansion"]
    await assert_nothing_of_globex(evidence, store)
    dropped = limit(evidence, LimitName.EXPANSION_OUTSIDE_TENANT)
    if "RETURN r," in cypher:
        # A bare relationship's ends come without properties: no row can be checked, none is kept.
        assert rows == [] and dropped == 2
    else:
        assert dropped == 1 and len(rows) == 1
        if "size(" not in cypher and "chunkId" not in cypher:
            assert SECRETS["acme"] in rows[0].text


async def test_a_node_without_a_tenant_is_outside_every_tenant(written: dict[str, GraphRag], store: Store) -> None:
    await store.execute("CREATE (:Note {text: 'an application note about the vault'})")
    evidence = await written["acme"].retriever.retrieve(
        QUESTION, expansion("MATCH (n:Note) WHERE n.text CONTAINS 'vault' RETURN n")
    )
    assert [item for item in evidence.context if item.reason == "cypher-expansion"] == []
    assert limit(evidence, LimitName.EXPANSION_OUTSIDE_TENANT) == 1


async def test_a_vouched_scope_that_ignores_the_tenant_keeps_the_tenants_documents(
    written: dict[str, GraphRag], store: Store
) -> None:
    scope = CypherScope(cypher="MATCH (d:Document) RETURN d.id AS documentId", vouched_tenant=Tenant("acme"))
    evidence = await written["acme"].retriever.retrieve(QUESTION, RetrievalOptions(scope=scope))
    assert limit(evidence, LimitName.SCOPE_OUTSIDE_TENANT) == 2  # globex's two documents
    assert evidence.scope is not None and evidence.scope.documents == 2
    assert any(SECRETS["acme"] in item.text for item in evidence.items)
    await assert_nothing_of_globex(evidence, store)


async def test_refusals_of_a_vouched_query_keep_their_codes(written: dict[str, GraphRag]) -> None:
    acme = written["acme"]
    with pytest.raises(RetrievalFailed) as write:
        await acme.retriever.retrieve(QUESTION, expansion("MATCH (c:Chunk {tenant: $tenant}) DETACH DELETE c"))
    assert write.value.code in {ErrorCode.NOT_READ_ONLY, ErrorCode.NOT_ALLOWED}
    with pytest.raises(ScopeError) as missing:
        await acme.retriever.retrieve(
            QUESTION,
            RetrievalOptions(scope=CypherScope(cypher="RETURN 1 AS one", vouched_tenant="acme")),
        )
    assert missing.value.code == ErrorCode.INVALID_SCOPE
    with pytest.raises(TenantError) as invalid:
        CypherExpansion(cypher="RETURN 1 AS one", vouched_tenant="acme' OR 1=1")
    assert invalid.value.code == ErrorCode.INVALID_TENANT


async def test_the_fence_reads_keys_in_the_querys_transaction(written: dict[str, GraphRag], store: Store) -> None:
    acme = written["acme"]
    globex_ids = await stored_ids(store, "globex")
    fence = TenantFence(Tenant("acme"), foreign_keys(acme.retriever.statements.names))
    result = await CypherSandbox().run(
        acme.store, "UNWIND $ids AS id RETURN id", {"ids": [*globex_ids, "not-a-key"]}, fence=fence
    )
    assert result.rows == ({"id": "not-a-key"},) and result.outside_tenant == len(globex_ids)
    untenanted = await CypherSandbox().run(store, "RETURN 1 AS one", fence=fence)  # no tenancy: no fence
    assert untenanted.rows == ({"one": 1},) and untenanted.outside_tenant == 0
