"""Two tenants in one graph against the real Neo4j (issue 31, item 1; docs/tenancy.md).

Both tenants ingest near-identical documents: the same source URIs and titles, a different
secret phrase each. Each is stored as its own document, every lexical node carries its
tenant, and retrieval (each route and the default hybrid), answers and the catalog of one
tenant return zero bytes of the other's text, ids or counts: what a tenant gets is the same
whether or not the other tenant's documents are in the graph.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from graphrag_orm import ConnectionSettings, GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import DocumentNotResolved, SchemaMismatch
from graphrag_orm.evidence import Evidence, Route, ScopeStrategy
from graphrag_orm.ingestion import ChunkedDocument
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, Migrator, next_revision
from graphrag_orm.retrieval import DocumentFilter, DocumentsScope, MetadataScope, RetrievalOptions
from graphrag_orm.sources import Source
from graphrag_orm.store import Store

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
TENANTED = Layout.DEFAULT.replace(tenancy="required")
SECRETS = {"acme": "PLUM-ORCHID-4411", "globex": "QUARTZ-HERON-9027"}
QUESTION = "What is the vault code? Is it QUARTZ-HERON-9027 or PLUM-ORCHID-4411?"
ROUTES = {
    "vector": RetrievalOptions(routes=frozenset({Route.VECTOR})),
    "full-text": RetrievalOptions(routes=frozenset({Route.FULL_TEXT})),
    "hybrid": RetrievalOptions(),
}


def sources(tenant: str, note: str = "") -> list[Source]:
    """The same URIs and titles for every tenant; the secret phrase is the tenant's own."""
    handbook = (
        "# Borrowing handbook\n\nMembers can borrow twelve items at once.\n\n"
        f"## Vault\n\nThe vault code is {SECRETS[tenant]}. Keep it private.{note}\n\n"
        "## Fines\n\nLate returns cost ten cents a day.\n"
    )
    hours = "# Opening hours\n\nThe library opens at nine and closes at six.\n"
    return [
        Sources.text("handbook", handbook, media_type="text/markdown").with_metadata(title="Borrowing handbook"),
        Sources.text("hours", hours, media_type="text/markdown").with_metadata(title="Opening hours"),
    ]


def rag(tenant: str | None) -> GraphRag:
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
        layout=TENANTED,
        tenant=tenant,
    )


@pytest_asyncio.fixture
async def tenants(tenanted_graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[dict[str, GraphRag]]:
    opened = {name: await rag(name).connect(neo4j_settings, neomodel=False) for name in SECRETS}
    yield opened
    for facade in opened.values():
        await facade.close()


def other(tenant: str) -> str:
    return next(name for name in SECRETS if name != tenant)


async def stored_ids(store: Store, tenant: str) -> list[str]:
    """Every id the tenant's lexical nodes hold (documents, sections, chunks, runs)."""
    result = await store.read(
        "MATCH (n) WHERE n.tenant = $owner AND (n:Document OR n:Section OR n:Chunk OR n:IngestionRun) "
        "RETURN n.id AS id ORDER BY id",
        {"owner": tenant},
    )
    return [str(value) for value in result.column("id")]


def assert_nothing_of(tenant: str, text: str, ids: list[str]) -> None:
    """Not the tenant's secret, nor any of its ids, in ``text`` (the question asked, which names
    both secrets, taken out: it is the asking tenant's own input)."""
    text = text.replace(QUESTION, "")
    assert SECRETS[tenant] not in text
    assert SECRETS[tenant].split("-")[0] not in text
    leaked = [value for value in ids if value in text]
    assert leaked == [], f"{len(leaked)} of {tenant}'s ids in another tenant's result"


async def test_the_same_uri_in_two_tenants_is_two_documents_and_every_node_carries_its_tenant(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    for name, facade in tenants.items():
        receipt = await facade.ingestion.ingest(sources(name))
        assert receipt.ingested == 2
    rows = await store.read(
        "MATCH (d:Document) RETURN d.sourceUri AS uri, d.tenant AS tenant, d.id AS id, d.title AS title "
        "ORDER BY uri, tenant"
    )
    documents = [dict(row) for row in rows]
    assert [(d["uri"], d["tenant"]) for d in documents] == [
        ("text:handbook", "acme"),
        ("text:handbook", "globex"),
        ("text:hours", "acme"),
        ("text:hours", "globex"),
    ]
    assert len({d["id"] for d in documents}) == 4
    assert {d["title"] for d in documents} == {"Borrowing handbook", "Opening hours"}
    untenanted = await store.read(
        "MATCH (n) WHERE (n:Document OR n:Section OR n:Chunk OR n:IngestionRun) AND n.tenant IS NULL "
        "RETURN count(n) AS n"
    )
    assert untenanted.value("n") == 0
    crossing = await store.read(
        "MATCH (a)-[:IN_DOCUMENT|SECTION_OF|IN_SECTION|NEXT_CHUNK|SUBSECTION_OF]->(b) "
        "WHERE a.tenant <> b.tenant RETURN count(*) AS n"
    )
    assert crossing.value("n") == 0
    for name in SECRETS:
        chunks = await store.read("MATCH (c:Chunk {tenant: $owner}) RETURN c.text AS text", {"owner": name})
        joined = " ".join(chunks.column("text"))
        assert SECRETS[name] in joined and SECRETS[other(name)] not in joined


async def test_chunked_documents_of_two_tenants_under_one_uri_are_two_documents(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    for name, facade in tenants.items():
        hours = sources(name)[1]
        chunked = ChunkedDocument.create(hours, ["The library opens at nine", "and closes at six."])
        receipt = await facade.ingestion.ingest_chunked([chunked], "test-splitter")
        assert receipt.ingested == 1
    rows = await store.read(
        "MATCH (c:Chunk)-[:IN_DOCUMENT]->(d:Document {sourceUri: 'text:hours'}) "
        "RETURN d.tenant AS tenant, count(c) AS chunks, collect(DISTINCT c.tenant) AS owners ORDER BY tenant"
    )
    assert [(row["tenant"], row["chunks"], row["owners"]) for row in rows] == [
        ("acme", 2, ["acme"]),
        ("globex", 2, ["globex"]),
    ]


async def test_a_lease_of_one_tenant_does_not_hold_another_tenants_document(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme, globex = tenants["acme"], tenants["globex"]
    handbook = sources("acme")[0]
    # globex holds a lease on its own handbook (same URI); acme's ingestion is not blocked by it.
    key = handbook.in_tenant("globex").document_id
    leases = globex.ingestion.leases
    await leases.acquire(key, "globex-run")
    receipt = await acme.ingestion.ingest([handbook])
    assert receipt.ingested == 1
    held = await store.read("MATCH (l:GraphRagLease) RETURN l.tenant AS tenant, l.key AS key")
    assert [(row["tenant"], row["key"]) for row in held] == [("globex", key)]


def shape(evidence: Evidence, route: str) -> dict[str, Any]:
    """The evidence as JSON; with the full-text route, without scores and in chunk order.

    BM25 scores are computed over the one shared full-text index, so they move with every
    tenant's term statistics (docs/tenancy.md says so): texts, ids, counts and limits must
    not move, scores may.
    """
    dumped = evidence.model_dump(mode="json")
    if route == "vector":
        return dumped
    items = []
    for item in dumped["items"]:
        item = {key: value for key, value in item.items() if key not in ("score", "routes")}
        items.append(item)
    dumped["items"] = sorted(items, key=lambda item: item["chunk_id"])
    return dumped


@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_retrieval_of_one_tenant_returns_nothing_of_the_other(
    tenants: dict[str, GraphRag], store: Store, route: str
) -> None:
    options = ROUTES[route]
    alone: dict[str, Any] = {}
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name))
        # What the tenant gets with only its own documents stored... (the other's are ingested next)
        if name == "acme":
            alone = shape(await facade.retriever.retrieve(QUESTION, options), route)
    for name, facade in tenants.items():
        evidence = await facade.retriever.retrieve(QUESTION, options)
        text = evidence.model_dump_json()
        assert_nothing_of(other(name), text, await stored_ids(store, other(name)))
        assert SECRETS[name] in text  # the tenant's own secret is found
    # ...and with the other tenant's documents in the graph: not one byte, id or count differs.
    assert shape(await tenants["acme"].retriever.retrieve(QUESTION, options), route) == alone


async def test_an_expansion_never_crosses_into_another_tenants_chunks(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    # Neighbours and shared votes follow NEXT_CHUNK; the toolkit writes it inside one document,
    # so a forged edge between tenants is what an expansion must still not cross.
    options = RetrievalOptions(neighbour_chunks=2, shared_votes=True)
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name))
    acme = tenants["acme"]
    before = shape(await acme.retriever.retrieve(QUESTION, options), "hybrid")
    await store.execute(
        "MATCH (a:Chunk {tenant: 'acme'}), (b:Chunk {tenant: 'globex'}) "
        "WHERE a.order = b.order AND a.text <> b.text CREATE (a)-[:NEXT_CHUNK {runId: 'forged'}]->(b) "
        "CREATE (b)-[:NEXT_CHUNK {runId: 'forged'}]->(a)"
    )
    assert (await store.read("MATCH ()-[r:NEXT_CHUNK {runId: 'forged'}]->() RETURN count(r) AS n")).value("n") > 0
    evidence = await acme.retriever.retrieve(QUESTION, options)
    assert_nothing_of("globex", evidence.model_dump_json(), await stored_ids(store, "globex"))
    assert shape(evidence, "hybrid") == before


SCOPES = {
    # Every document by metadata: exact scoring inside the scope.
    "metadata-exact": RetrievalOptions(scope=MetadataScope(filter=DocumentFilter(uri_prefix="text:"))),
    # The same, over-fetching the indexes (a scope over the exact bound).
    "metadata-over-fetch": RetrievalOptions(
        scope=MetadataScope(filter=DocumentFilter(uri_prefix="text:")), scope_exact_chunks=1
    ),
}


@pytest.mark.parametrize("scope", sorted(SCOPES))
async def test_a_scope_of_one_tenant_holds_only_its_own_documents(
    tenants: dict[str, GraphRag], store: Store, scope: str
) -> None:
    options = SCOPES[scope]
    acme = tenants["acme"]
    await acme.ingestion.ingest(sources("acme"))
    alone = shape(await acme.retriever.retrieve(QUESTION, options), "hybrid")
    await tenants["globex"].ingestion.ingest(sources("globex"))
    evidence = await acme.retriever.retrieve(QUESTION, options)
    assert_nothing_of("globex", evidence.model_dump_json(), await stored_ids(store, "globex"))
    assert SECRETS["acme"] in evidence.model_dump_json().replace(QUESTION, "")
    assert shape(evidence, "hybrid") == alone  # the scope's documents and chunks: the tenant's alone


async def test_a_scope_naming_another_tenants_documents_finds_nothing(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name))
    globex = await stored_ids(store, "globex")
    scope = DocumentsScope(document_ids=tuple(globex))
    evidence = await tenants["acme"].retriever.retrieve(QUESTION, RetrievalOptions(scope=scope))
    assert evidence.items == ()
    assert evidence.scope is not None and (evidence.scope.documents, evidence.scope.chunks) == (0, 0)
    assert_nothing_of("globex", evidence.model_dump_json(), globex)


async def test_a_scope_filtered_inside_the_vector_index_is_the_tenants(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    # The vector index declares the document id too (an application's reviewed revision):
    # a scope of whole documents is filtered by tenant and document inside the index.
    chain = Chain.load(MIGRATIONS, tenanted=True)
    revision = next_revision(
        chain, TENANTED, OFFLINE_EMBEDDING_SET, revision="0006_vector_filter", message="-", vector_filter=["documentId"]
    )
    assert revision is not None
    await Migrator(store, Chain.from_revisions([*chain.revisions, revision])).apply()
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name))
    acme = await stored_ids(store, "acme")
    scope = DocumentsScope(document_ids=tuple(acme))
    options = RetrievalOptions(routes=frozenset({Route.VECTOR}), scope=scope, scope_exact_chunks=1)
    evidence = await tenants["acme"].retriever.retrieve(QUESTION, options)
    assert evidence.scope is not None
    assert [route.strategy for route in evidence.scope.routes] == [ScopeStrategy.IN_INDEX]
    assert SECRETS["acme"] in evidence.model_dump_json().replace(QUESTION, "")
    assert_nothing_of("globex", evidence.model_dump_json(), await stored_ids(store, "globex"))


FULL_TEXT_TWO = RetrievalOptions(routes=frozenset({Route.FULL_TEXT}), candidates_per_route=2, max_items=2)


async def crowd(tenant: str, neo4j_settings: ConnectionSettings, documents: int = 30) -> None:
    """``documents`` short documents of ``tenant`` that match "vault" better than acme's handbook."""
    facade = await rag(tenant).connect(neo4j_settings, neomodel=False)
    try:
        await facade.ingestion.ingest(
            [Sources.text(f"v{i}", f"Vault {i}: the vault, the vault.") for i in range(documents)]
        )
    finally:
        await facade.close()


async def test_a_small_tenant_finds_its_own_text_among_many_better_matches_of_another(
    tenants: dict[str, GraphRag], neo4j_settings: ConnectionSettings
) -> None:
    # Fails with a full-text index that cannot filter by tenant: 30 of globex's chunks outrank
    # acme's one, so the index's best 20 (ten times the 2 candidates) held none of acme's.
    await crowd("globex", neo4j_settings)
    await tenants["acme"].ingestion.ingest(sources("acme"))
    evidence = await tenants["acme"].retriever.retrieve("vault", FULL_TEXT_TWO)
    assert SECRETS["acme"] in evidence.model_dump_json()
    assert evidence.limits_reached == ()


async def test_a_fetch_filled_by_a_tenant_id_sharing_the_tenants_words_is_reported(
    tenants: dict[str, GraphRag], neo4j_settings: ConnectionSettings, store: Store
) -> None:
    # "acme-eu" is the words acme, eu: it passes the index's clause for "acme", the exact check drops it.
    await crowd("acme-eu", neo4j_settings)
    await tenants["acme"].ingestion.ingest(sources("acme"))
    evidence = await tenants["acme"].retriever.retrieve("vault", FULL_TEXT_TWO)
    assert LimitName.FULL_TEXT_TENANT_OVER_FETCH in {limit.name for limit in evidence.limits_reached}
    text = evidence.model_dump_json()
    leaked = [value for value in await stored_ids(store, "acme-eu") if value in text]
    assert leaked == [] and "Vault 1" not in text
    # A tenant with fewer matches than its candidates, and no such neighbour, reports nothing.
    await tenants["globex"].ingestion.ingest(sources("globex"))
    alone = await tenants["globex"].retriever.retrieve("vault", ROUTES["full-text"])
    assert alone.items and alone.limits_reached == ()


async def test_answers_of_one_tenant_cite_nothing_of_the_other(tenants: dict[str, GraphRag], store: Store) -> None:
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name))
    for name, facade in tenants.items():
        answer = await facade.answers.answer(QUESTION)
        text = json.dumps(answer.model_dump(mode="json"))
        assert_nothing_of(other(name), text, await stored_ids(store, other(name)))
        assert SECRETS[name] in text.replace(QUESTION, "")  # the tenant's own evidence answers
        for citation in answer.citations:
            assert citation.document_id not in await stored_ids(store, other(name))


async def test_the_catalog_of_one_tenant_lists_and_finds_only_its_own(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    await tenants["acme"].ingestion.ingest(sources("acme"))
    await tenants["globex"].ingestion.ingest([*sources("globex"), Sources.text("extra", "Only globex has this.")])
    acme = tenants["acme"].catalog
    listed = await acme.documents()
    assert listed.total == 2
    own = await stored_ids(store, "acme")
    assert all(item.id in own for item in listed.documents)
    globex_ids = await stored_ids(store, "globex")
    text = listed.model_dump_json()
    assert_nothing_of("globex", text, globex_ids)
    assert (await acme.runs()).total == 1
    # The URI names the tenant's own document; the other's id is not found, nor is a prefix of it.
    resolved = await acme.resolve("text:handbook")
    assert resolved in own
    detail = await acme.document("text:handbook")
    assert detail.id == resolved
    assert_nothing_of("globex", detail.model_dump_json(), globex_ids)
    globex_document = next(value for value in globex_ids if value not in own)
    for reference in (globex_document, globex_document[:12], "text:extra"):
        with pytest.raises(DocumentNotResolved) as refused:
            await acme.document(reference)
        assert refused.value.code == ErrorCode.DOCUMENT_NOT_FOUND


async def snapshot(store: Store, tenant: str) -> list[Any]:
    """Every property of the tenant's nodes and of the edges among them, in a stable order."""
    nodes = await store.read(
        "MATCH (n {tenant: $owner}) RETURN labels(n) AS labels, properties(n) AS props ORDER BY n.id, n.key",
        {"owner": tenant},
    )
    edges = await store.read(
        "MATCH (a {tenant: $owner})-[r]->(b) RETURN a.id AS a, type(r) AS type, properties(r) AS props, b.id AS b "
        "ORDER BY a, type, b",
        {"owner": tenant},
    )
    return [[dict(row) for row in nodes], [dict(row) for row in edges]]


async def test_reingesting_one_tenants_document_leaves_the_others_byte_identical(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    for name, facade in tenants.items():
        await facade.ingestion.ingest(sources(name))
    before = await snapshot(store, "globex")
    receipt = await tenants["acme"].ingestion.ingest(sources("acme", note=" It changed in May."))
    assert receipt.ingested == 1 and receipt.unchanged == 1
    assert await snapshot(store, "globex") == before
    # The same sources again are unchanged for their own tenant only.
    again = await tenants["globex"].ingestion.ingest(sources("globex"))
    assert again.unchanged == 2


async def test_a_tenanted_graph_needs_the_vector_index_filtering_by_tenant(
    graph: None, neo4j_settings: ConnectionSettings
) -> None:
    # The toolkit's untenanted chain: its vector index declares no tenant.
    with pytest.raises(SchemaMismatch) as refused:
        await rag("acme").connect(neo4j_settings, neomodel=False)
    assert refused.value.code == ErrorCode.SCHEMA_MISSING


async def test_a_tenanted_graph_needs_the_full_text_index_covering_the_tenant(
    tenanted_graph: None, neo4j_settings: ConnectionSettings, store: Store
) -> None:
    # The chain up to 0004 only: the text index covers the text alone, so the route's tenant
    # clause would match nothing; the facade refuses before any retrieval.
    chain = Chain.load(MIGRATIONS, tenanted=True)
    assert chain.head == "0005_tenant_full_text"
    await Migrator(store, chain).downgrade("0004_tenancy")
    with pytest.raises(SchemaMismatch) as refused:
        await rag("acme").connect(neo4j_settings, neomodel=False)
    assert refused.value.code == ErrorCode.SCHEMA_MISSING and "full-text index" in str(refused.value)
    await Migrator(store, chain).apply()
    await (await rag("acme").connect(neo4j_settings, neomodel=False)).close()
