"""Adoption per tenant against the real Neo4j (issue 31, item 3; docs/tenancy.md).

A graph neo4j-graphrag wrote (no tenant, no ids) sits in a tenanted graph beside a tenant,
``acme-eu``, that ingested its own documents through the toolkit, with a secret phrase. The
tenant ``acme`` adopts the foreign graph: its plan sees the unclaimed nodes and its own, never
``acme-eu``'s (which would otherwise block it as owned by a run and be listed by element id),
claims what it adopts, answers from it, and undoes it; ``acme-eu``'s nodes, links and runs
are byte-identical throughout, and every statement went out with ``$tenant`` = ``acme``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from graphrag_orm import GraphRag, Sources
from graphrag_orm.adoption import Adoption, adopted_chunk_id, adopted_uri
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.errors import AdoptionError, TenantError
from graphrag_orm.migrate import Chain, Migrator, Revision, write_revision
from graphrag_orm.schema import CreateStep, DropStep, VectorIndex
from graphrag_orm.sources import document_id
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.store.introspection import read_live_schema
from graphrag_orm.tenancy import Tenant
from tests.integration.test_adoption import (
    DIMENSIONS,
    EMBEDDING_SET,
    LAYOUT,
    LIGHTHOUSE,
    ORCHARD,
    QUESTION,
    VECTOR_INDEX,
    build_graph,
    shape,
    split,
)
from tests.support.tenancy import sent_tenants

TENANTED = LAYOUT.replace(tenancy="required")
SECRET = "PLUM-ORCHID-4411"
#: The other tenant's own lighthouse: the same path's words, and a secret.
THEIRS = f"The lighthouse keeper lights the lantern at dusk. The vault code is {SECRET}.\n"


def tenant_store(store: Store, tenant: str | None) -> Store:
    """A tenanted graph's store on the suite's driver, bound to ``tenant`` (or to none)."""
    tenanted = Store(store.driver if store.connected else None, database=store.database, tenanted=True)
    return tenanted.for_tenant(Tenant(tenant)) if tenant else tenanted


def facade(tenant: str) -> GraphRag:
    return GraphRag(
        embedding_set=EMBEDDING_SET,
        embedder=HashingEmbedder(DIMENSIONS),
        chat=ExtractiveChat(),
        layout=TENANTED,
        tenant=tenant,
    )


async def held_by(store: Store, tenant: str) -> str:
    """Every node ``tenant`` holds and every relationship touching one, all properties, as JSON."""
    nodes = await store.read(
        "MATCH (n) WHERE n.tenant = $owner RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props",
        {"owner": tenant},
    )
    links = await store.read(
        "MATCH (a)-[r]->(b) WHERE a.tenant = $owner OR b.tenant = $owner "
        "RETURN elementId(r) AS id, type(r) AS type, properties(r) AS props, elementId(a) AS a, elementId(b) AS b",
        {"owner": tenant},
    )
    rows = [dict(row) for row in (*nodes, *links)]
    return json.dumps(sorted(json.dumps(row, sort_keys=True, default=str) for row in rows))


async def foreign_shape(store: Store) -> list[tuple[Any, ...]]:
    """:func:`shape` of the foreign graph alone: nodes with a path or an index, and their links."""
    foreign = {
        row["id"] for row in await store.read("MATCH (n:__KGBuilder__) RETURN elementId(n) AS id", name="test.foreign")
    }
    links = await store.read(
        "MATCH (a:__KGBuilder__)-[r]->(b:__KGBuilder__) RETURN elementId(r) AS id", name="test.foreign.links"
    )
    foreign |= {row["id"] for row in links}
    return [item for item in await shape(store) if item[1] in foreign]


@pytest_asyncio.fixture
async def claimed(
    bare_database: None, store: Store, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> AsyncIterator[Store]:
    """The foreign graph and its index, the tenanted adoption's steps applied through the
    migration engine, and ``acme-eu``'s own documents ingested; yields the untenanted store."""
    await store.execute(
        f"CREATE VECTOR INDEX {VECTOR_INDEX} FOR (c:Chunk) ON (c.embedding) OPTIONS {{indexConfig: "
        f"{{`vector.dimensions`: {DIMENSIONS}, `vector.similarity_function`: 'cosine'}}}}"
    )
    await build_graph(store)
    await store.execute("CALL db.awaitIndexes(120)")
    plan = Adoption(tenant_store(store, "acme")).plan(TENANTED, EMBEDDING_SET)
    pending = await plan.preview()
    assert VECTOR_INDEX in pending.steps_pending and ErrorCode.SCHEMA_CONFLICT not in {b.code for b in pending.blockers}
    write_revision(tmp_path / "chain", Revision.new("0001_adopt", None, "adopt per tenant", plan.prepare_steps()))
    await Migrator(store, Chain.load(tmp_path / "chain")).apply()
    other = await facade("acme-eu").connect(neo4j_settings, neomodel=False)
    try:
        report = await other.ingestion.ingest([Sources.text("/data/lighthouse.txt", THEIRS)])
        assert report.ingested == 1
    finally:
        await other.close()
    yield store


def test_a_tenanted_plan_rebuilds_the_index_the_layout_names_with_the_tenant() -> None:
    steps = Adoption(tenant_store(Store(), "acme")).plan(TENANTED, EMBEDDING_SET).prepare_steps()
    named = [step for step in steps if step.definition.name == VECTOR_INDEX]
    assert [type(step) for step in named] == [DropStep, CreateStep]
    theirs, ours = named[0].definition, named[1].definition
    assert isinstance(theirs, VectorIndex) and isinstance(ours, VectorIndex)
    assert (theirs.filter_properties, ours.filter_properties) == ((), ("tenant",))
    assert (theirs.dimensions, theirs.property) == (ours.dimensions, ours.property) == (DIMENSIONS, "embedding")
    assert steps.index(named[0]) + 1 == steps.index(named[1])  # dropped, then created under the same name
    untenanted = Adoption(Store()).plan(LAYOUT, EMBEDDING_SET).prepare_steps()
    assert all(isinstance(step, CreateStep) for step in untenanted)
    assert VECTOR_INDEX not in {step.definition.name for step in untenanted}


async def test_a_plan_whose_layout_and_store_disagree_or_that_names_no_tenant_is_refused_unsent(
    monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    sent = sent_tenants(monkeypatch)
    cases = [
        (tenant_store(store, "acme"), LAYOUT, ErrorCode.TENANT_REFUSED),  # statements filtering by no tenant
        (store, TENANTED, ErrorCode.TENANT_REQUIRED),  # statements without their $tenant
        (tenant_store(store, None), TENANTED, ErrorCode.TENANT_REQUIRED),  # a tenanted store bound to none
    ]
    for bound, layout, code in cases:
        with pytest.raises(TenantError) as refused:
            Adoption(bound).plan(layout, EMBEDDING_SET)
        assert refused.value.code == code
    assert sent == []


async def test_a_tenant_adopts_the_unclaimed_graph_and_never_reads_another_tenants(
    claimed: Store, neo4j_settings: ConnectionSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = await read_live_schema(claimed)
    assert live[VECTOR_INDEX].signature == ("VECTOR", ("Chunk",), ("embedding", "tenant"))
    before, theirs = await foreign_shape(claimed), await held_by(claimed, "acme-eu")
    assert SECRET in theirs
    sent = sent_tenants(monkeypatch)
    plan = Adoption(tenant_store(claimed, "acme")).plan(TENANTED, EMBEDDING_SET)

    preview = await plan.preview()

    chunks = len(split(LIGHTHOUSE)) + len(split(ORCHARD))
    assert (preview.documents, preview.chunks, preview.document_links) == (2, chunks, chunks)
    assert preview.next_links == chunks - 2 and preview.chunks_without_embedding == 0
    # acme-eu's documents are owned by its run and its links stamped: unfiltered, they would block
    # acme's adoption and be listed by element id.
    assert preview.blockers == () and preview.indexes_adopted == (VECTOR_INDEX,)

    receipt = await plan.apply()

    assert (receipt.documents, receipt.chunks, receipt.links) == (2, chunks, 2 * chunks - 2)
    assert {value for _, value in sent} == {"acme"}
    assert await held_by(claimed, "acme-eu") == theirs
    lighthouse = document_id(adopted_uri("/data/lighthouse.txt"), "acme")
    assert lighthouse != document_id(adopted_uri("/data/lighthouse.txt"))  # qualified by the tenant
    rows = await claimed.read(
        "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) WHERE d.path IS NOT NULL "
        "RETURN DISTINCT d.tenant AS document, c.tenant AS chunk, d.id AS id, c.runId = $run AS owned",
        {"run": receipt.run_id},
    )
    assert {(r["document"], r["chunk"], r["owned"]) for r in rows} == {("acme", "acme", True)}
    assert lighthouse in {r["id"] for r in rows}
    run = (await claimed.read("MATCH (r:IngestionRun {id: $id}) RETURN r.tenant AS t", {"id": receipt.run_id})).single()
    assert run is not None and run["t"] == "acme"

    # Another tenant finds nothing left to claim, and nothing of acme's; it cannot undo acme's run.
    other = Adoption(tenant_store(claimed, "acme-eu")).plan(TENANTED, EMBEDDING_SET)
    seen = await other.preview()
    assert (seen.documents, seen.chunks) == (1, 1)  # its own ingested document
    assert ErrorCode.OWNED_BY_RUN in {b.code for b in seen.blockers}  # its own ingested document
    examples = {example for blocker in seen.blockers for example in blocker.examples}
    acme_elements = await claimed.read("MATCH (n) WHERE n.tenant = 'acme' RETURN elementId(n) AS id")
    assert not examples & {row["id"] for row in acme_elements}
    adopted = await held_by(claimed, "acme")
    with pytest.raises(AdoptionError) as refused:
        await other.undo(receipt.run_id)
    assert refused.value.code == ErrorCode.RUN_NOT_FOUND
    assert await held_by(claimed, "acme") == adopted

    acme = await facade("acme").connect(neo4j_settings, neomodel=False)
    eu = await facade("acme-eu").connect(neo4j_settings, neomodel=False)
    try:
        assert acme.answers is not None
        answer = await acme.answers.answer(QUESTION)
        assert answer.answered and answer.citations
        for citation in answer.citations:
            stored = (
                await claimed.read(
                    "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.tenant AS tenant", {"id": citation.chunk_id}
                )
            ).single()
            assert stored is not None and stored["tenant"] == "acme"
            assert stored["text"].encode()[citation.start_byte : citation.end_byte].decode() == citation.quote
        found = await acme.retriever.retrieve(f"vault code {SECRET}")
        assert all(SECRET not in item.text for item in found.items)
        assert found.items and {item.document_id for item in found.items} <= {
            lighthouse,
            document_id(adopted_uri("/data/orchard.txt"), "acme"),
        }
        mine = await eu.retriever.retrieve(QUESTION)
        assert mine.items and {item.text for item in mine.items} == {THEIRS}
    finally:
        await acme.close()
        await eu.close()

    undone = await plan.undo(receipt.run_id)

    assert (undone.documents, undone.chunks, undone.links) == (2, chunks, 2 * chunks - 2)
    assert await foreign_shape(claimed) == before  # unclaimed again, every key as it was
    assert await held_by(claimed, "acme-eu") == theirs
    assert await held_by(claimed, "acme") == "[]"
    assert adopted_chunk_id(lighthouse, 0) not in {
        row["id"] for row in await claimed.read("MATCH (c:Chunk) RETURN c.id AS id")
    }


async def test_a_named_index_that_is_neither_theirs_nor_the_tenanted_one_is_a_mismatch(
    bare_database: None, store: Store
) -> None:
    await store.execute(
        f"CREATE VECTOR INDEX {VECTOR_INDEX} FOR (c:Chunk) ON (c.embedding) OPTIONS {{indexConfig: "
        f"{{`vector.dimensions`: 32, `vector.similarity_function`: 'cosine'}}}}"
    )
    await store.execute("CALL db.awaitIndexes(120)")
    found = await Adoption(tenant_store(store, "acme")).plan(TENANTED, EMBEDDING_SET).preview()
    assert (ErrorCode.SCHEMA_MISMATCH, (VECTOR_INDEX,)) in {(b.code, b.examples) for b in found.blockers}
    assert VECTOR_INDEX not in found.indexes_adopted
