"""Maintenance, health and re-embedding of one tenant against the real Neo4j (issue 31, item 3; docs/tenancy.md).

Three tenants ingest near-identical documents: the same source URIs and titles, a different
secret phrase each. Whatever one tenant's maintenance does (a reset, a reset naming another
tenant's documents and runs, orphans, stale runs, a whole tenant removed, a re-embedding),
every node and relationship of the others, with all their properties, and the schema, are
byte-identical afterwards; its previews and health reports hold nothing of the others.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import pytest_asyncio

from graphrag_orm import ConnectionSettings, GraphRag, Sources
from graphrag_orm.codes import ErrorCode, HealthFinding
from graphrag_orm.embeddings import EmbeddingSet, EmbeddingVectors, HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import GraphRefused, RemovalConflict
from graphrag_orm.maintenance import RemovalProgress, ResetScope
from graphrag_orm.reembedding import Reembedding
from graphrag_orm.sources import Source
from graphrag_orm.store import Store, StoreTransaction
from tests.support.tenancy import TENANTED, sent_tenants, tenanted_rag

SECRETS = {"acme": "PLUM-ORCHID-4411", "globex": "QUARTZ-HERON-9027", "initech": "AMBER-FALCON-3158"}
#: Statements of the communities and their reports: a tenanted graph sends them with its tenant
#: (the settle statement only when a finding was retracted or trimmed).
COMMUNITIES = frozenset(
    {
        "maintenance.communities",
        "maintenance.remove.findings_retracted",
        "maintenance.remove.findings_trimmed",
        "maintenance.health.retracted_reports",
    }
)


def sources(tenant: str, extra: int = 0) -> list[Source]:
    """The same URIs and titles for every tenant; the secret phrase is the tenant's own."""
    handbook = (
        "# Borrowing handbook\n\nMembers can borrow twelve items at once.\n\n"
        f"## Vault\n\nThe vault code is {SECRETS[tenant]}. Keep it private.\n\n"
        "## Fines\n\nLate returns cost ten cents a day.\n"
    )
    hours = "# Opening hours\n\nThe library opens at nine and closes at six.\n"
    found = [
        Sources.text("handbook", handbook, media_type="text/markdown").with_metadata(title="Borrowing handbook"),
        Sources.text("hours", hours, media_type="text/markdown").with_metadata(title="Opening hours"),
    ]
    found += [Sources.text(f"note-{i}", f"# Note {i}\n\nNote {i} of {SECRETS[tenant]}.\n") for i in range(extra)]
    return found


@pytest_asyncio.fixture
async def tenants(tenanted_graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[dict[str, GraphRag]]:
    opened = {name: await tenanted_rag(name).connect(neo4j_settings, neomodel=False) for name in SECRETS}
    yield opened
    for facade in opened.values():
        await facade.close()


def _plain(value: Any) -> Any:
    """A stored value as JSON can hold it, every type kept apart (a datetime is not its string)."""
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return {type(value).__name__: str(value)}


async def everything_but(store: Store, tenant: str) -> str:
    """Every node and relationship not of ``tenant`` (element ids, labels, types, all properties),
    and the schema, as one JSON text in a stable order."""
    nodes = await store.read(
        "MATCH (n) WHERE coalesce(n.tenant, '') <> $owner "
        "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props",
        {"owner": tenant},
    )
    links = await store.read(
        "MATCH (a)-[r]->(b) WHERE coalesce(a.tenant, '') <> $owner OR coalesce(b.tenant, '') <> $owner "
        "RETURN elementId(r) AS id, elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b",
        {"owner": tenant},
    )
    indexes = await store.read(
        "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options, state "
        "RETURN name, type, entityType, labelsOrTypes, properties, options, state"
    )
    constraints = await store.read(
        "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties "
        "RETURN name, type, entityType, labelsOrTypes, properties"
    )
    dumped = [
        sorted(json.dumps(_plain(dict(row)), sort_keys=True) for row in rows)
        for rows in (nodes, links, indexes, constraints)
    ]
    assert dumped[0] and dumped[1]  # the others hold something
    return json.dumps(dumped)


async def held(store: Store, tenant: str) -> int:
    """How many nodes carry ``tenant``."""
    return int((await store.read("MATCH (n {tenant: $owner}) RETURN count(n) AS n", {"owner": tenant})).value("n"))


async def stored_ids(store: Store, tenant: str) -> list[str]:
    """The ids of the tenant's documents, sections, chunks and runs, and the keys of its leases."""
    found = await store.read(
        "MATCH (n {tenant: $owner}) RETURN coalesce(n.id, n.key) AS id ORDER BY id", {"owner": tenant}
    )
    return [str(value) for value in found.column("id")]


def assert_nothing_of(tenant: str, text: str, ids: Sequence[str]) -> None:
    assert SECRETS[tenant] not in text and SECRETS[tenant].split("-")[0] not in text
    leaked = [value for value in ids if value in text]
    assert leaked == [], f"{len(leaked)} of {tenant}'s ids in another tenant's output"


async def ingest_all(tenants: dict[str, GraphRag], extra: int = 0) -> dict[str, str]:
    """Every tenant's sources; the run id of each tenant's ingestion."""
    runs = {}
    for name, facade in tenants.items():
        receipt = await facade.ingestion.ingest(sources(name, extra))
        assert receipt.ingested == 2 + extra
        runs[name] = receipt.run_id
    return runs


async def test_a_reset_of_one_tenant_leaves_the_others_byte_identical(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    await ingest_all(tenants, extra=1)
    # The knowledge graph's nodes are no tenant's (a tenanted graph writes none): a reset leaves them.
    await store.execute("CREATE (:Community {id: 'community-0', level: 0}), (:CommunityReport {id: 'report-0'})")
    before = await everything_but(store, "acme")
    acme = tenants["acme"].maintenance
    planned = await acme.preview()
    assert (planned.documents, planned.findings_retracted, planned.reports) == (3, 0, 0)
    report = await acme.reset()
    assert (report.documents, report.sections, report.chunks) == (planned.documents, planned.sections, planned.chunks)
    assert report.runs == 1 and report.communities == 0
    assert await held(store, "acme") == 0
    assert await everything_but(store, "acme") == before
    # The others still answer from their own documents.
    evidence = await tenants["globex"].retriever.retrieve("What is the vault code?")
    assert SECRETS["globex"] in evidence.model_dump_json()


async def test_a_reset_naming_another_tenants_documents_and_runs_removes_nothing_of_it(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    runs = await ingest_all(tenants)
    before = await everything_but(store, "acme")
    own = await held(store, "acme")
    globex = await stored_ids(store, "globex")
    documents = [handbook.in_tenant("globex").document_id for handbook in sources("globex")]
    acme = tenants["acme"].maintenance
    scope = ResetScope(document_ids=tuple(documents), run_ids=(runs["globex"], runs["initech"]))
    preview = await acme.preview(scope)
    assert (preview.documents, preview.sections, preview.chunks) == (0, 0, 0)
    report = await acme.reset(scope)
    assert (report.documents, report.sections, report.chunks, report.runs) == (0, 0, 0, 0)
    assert report.not_found == tuple(sorted(documents))  # the caller's own input, as it gave it
    assert (await acme.remove_source(documents[0])).not_found == (documents[0],)
    assert await everything_but(store, "acme") == before and await held(store, "acme") == own
    assert_nothing_of("globex", report.model_dump_json().replace(",".join(documents), ""), [])
    assert set(globex) == set(await stored_ids(store, "globex"))


async def test_previews_of_a_tenant_hold_nothing_of_another(tenants: dict[str, GraphRag], store: Store) -> None:
    acme = tenants["acme"]
    first = await acme.ingestion.ingest(sources("acme"))

    async def previews() -> str:
        service = acme.maintenance
        return json.dumps(
            [
                (await service.preview()).model_dump(mode="json"),
                (await service.preview(ResetScope(run_ids=(first.run_id,)))).model_dump(mode="json"),
                (await service.preview_tenant()).model_dump(mode="json"),
                (await service.check()).model_dump(mode="json"),
            ]
        )

    alone = await previews()
    # Near-identical documents of two more tenants (same URIs and titles, a secret each, and more of them).
    for name in ("globex", "initech"):
        await tenants[name].ingestion.ingest(sources(name, extra=2))
    shown = await previews()
    assert shown == alone  # not one count moved
    for name in ("globex", "initech"):
        assert_nothing_of(name, shown, await stored_ids(store, name))
    counts = await acme.maintenance.preview_tenant()
    assert (counts.documents, counts.runs, counts.leases) == (2, 1, 0)


async def break_tenant(store: Store, tenant: str, run: str) -> None:
    """Every finding a tenant's health can have: an orphan group, a chunk without a vector, one of
    another set, one that does not read back, an expired lease and a stale run."""
    await store.execute(
        "MATCH (d:Document {tenant: $owner, sourceUri: 'text:hours'}) DETACH DELETE d", {"owner": tenant}
    )
    await store.execute(
        "MATCH (c:Chunk {tenant: $owner}) WHERE c.text CONTAINS 'vault' "
        "WITH c LIMIT 1 REMOVE c.embedding SET c.text = c.text + '!'",
        {"owner": tenant},
    )
    await store.execute(
        "MATCH (c:Chunk {tenant: $owner}) WHERE c.text CONTAINS 'twelve' SET c.embeddingSetId = 'other:3:cosine'",
        {"owner": tenant},
    )
    await store.execute(
        "CREATE (:GraphRagLease {key: 'lease-' + $owner, tenant: $owner, runId: $run, claims: 1, "
        "acquiredAt: datetime() - duration('PT2H'), expiresAt: datetime() - duration('PT1H')}) "
        "CREATE (:IngestionRun {id: 'run-stale-' + $owner, tenant: $owner, status: 'Running', "
        "startedAt: datetime() - duration('P1D')})",
        {"owner": tenant, "run": run},
    )


async def test_health_orphans_and_stale_runs_of_a_tenant_are_its_own(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme, globex = tenants["acme"].maintenance, tenants["globex"].maintenance
    runs = {}
    for name in ("acme", "globex"):
        runs[name] = (await tenants[name].ingestion.ingest(sources(name))).run_id
    await store.execute(  # acme: one chunk without a vector, nothing else
        "MATCH (c:Chunk {tenant: 'acme'}) WHERE c.text CONTAINS 'nine' REMOVE c.embedding"
    )
    alone = await acme.check()
    assert alone.codes == (HealthFinding.MISSING_EMBEDDING,) and alone.count(HealthFinding.MISSING_EMBEDDING) == 1
    await break_tenant(store, "globex", runs["globex"])
    broken = await globex.check()
    assert set(broken.codes) == {
        HealthFinding.MISSING_EMBEDDING,
        HealthFinding.MIXED_EMBEDDING_SETS,
        HealthFinding.ORPHANS,
        HealthFinding.READBACK_MISMATCH,
        HealthFinding.EXPIRED_LEASES,
        HealthFinding.STALE_RUNS,
    }
    # acme's report is what it was: no count, id or finding of globex's.
    report = await acme.check()
    assert report == alone
    assert_nothing_of("globex", report.model_dump_json(), await stored_ids(store, "globex"))
    # acme's clean-ups touch nothing of globex's orphans, lease or stale run.
    before = await everything_but(store, "acme")
    orphans = await acme.remove_orphans()
    assert (orphans.sections, orphans.chunks, orphans.leases, orphans.batches) == (0, 0, 0, 0)
    assert (await acme.fail_stale_runs()).runs == ()
    assert await everything_but(store, "acme") == before
    # globex's own do.
    cleaned = await globex.remove_orphans()
    assert cleaned.sections + cleaned.chunks > 0 and cleaned.leases == 1
    assert (await globex.fail_stale_runs()).runs == ("run-stale-globex",)


async def test_a_tenant_is_removed_whole_in_batches_with_progress(tenants: dict[str, GraphRag], store: Store) -> None:
    runs = await ingest_all(tenants, extra=3)
    acme = tenants["acme"]
    await acme.ingestion.ingest([Sources.text("late", "A late note.")])  # a second run
    await break_tenant(store, "acme", runs["acme"])  # an orphan group, an expired lease, a stale run
    before = await everything_but(store, "acme")
    planned = await acme.maintenance.preview_tenant()
    assert (planned.documents, planned.runs, planned.leases) == (5, 3, 1)
    seen: list[RemovalProgress] = []
    report = await acme.maintenance.remove_tenant(batch_documents=2, progress=seen.append)
    assert [done.documents for done in seen] == [2, 4, 5, 5]  # then the orphan group, alone
    assert report.batches == 4 and report.documents == 5
    assert (report.sections, report.chunks) == (planned.sections, planned.chunks)
    assert (report.runs, report.leases, report.stale_runs_failed) == (3, 1, 1)
    assert report.complete and report.left.empty
    assert await held(store, "acme") == 0
    assert await everything_but(store, "acme") == before
    again = await acme.maintenance.remove_tenant()
    assert (again.documents, again.batches, again.runs) == (0, 0, 0) and again.complete


async def test_a_tenant_being_written_is_refused_untouched(tenants: dict[str, GraphRag], store: Store) -> None:
    runs = await ingest_all(tenants)
    acme = tenants["acme"]
    key = sources("acme")[0].in_tenant("acme").document_id
    await acme.ingestion.leases.acquire(key, runs["acme"])
    everything = await everything_but(store, "nobody")
    with pytest.raises(RemovalConflict) as refused:
        await acme.maintenance.remove_tenant()
    assert refused.value.code == ErrorCode.CONCURRENT_WRITE
    assert "1 unexpired lease," in refused.value.message
    assert await everything_but(store, "nobody") == everything


class Stopped(Exception):
    """The process stopping midway (a deploy, a signal handled as an exception)."""


async def document_shapes(store: Store, tenant: str) -> dict[str, tuple[int, int]]:
    """Each of the tenant's documents: its sections and chunks."""
    rows = await store.read(
        "MATCH (d:Document {tenant: $owner}) RETURN d.id AS id, "
        "COUNT { MATCH (s:Section {documentId: d.id}) } AS sections, "
        "COUNT { MATCH (c:Chunk {documentId: d.id}) } AS chunks",
        {"owner": tenant},
    )
    return {str(row["id"]): (int(row["sections"]), int(row["chunks"])) for row in rows}


async def test_a_tenant_removal_stopped_midway_leaves_whole_documents_and_a_second_call_finishes(
    tenants: dict[str, GraphRag], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await ingest_all(tenants, extra=4)
    acme = tenants["acme"].maintenance
    before = await everything_but(store, "acme")
    shapes = await document_shapes(store, "acme")

    def stop(done: RemovalProgress) -> None:
        raise Stopped  # after the first batch committed

    with pytest.raises(Stopped):
        await acme.remove_tenant(batch_documents=1, progress=stop)
    left = await document_shapes(store, "acme")
    assert len(left) == len(shapes) - 1 and all(left[key] == shapes[key] for key in left)
    # A batch failing inside its transaction rolls back whole: its links were deleted, then undone.
    original, rounds = StoreTransaction.run, [0]

    async def failing(self: StoreTransaction, cypher: str, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("name") == "maintenance.remove.round":
            rounds[0] += 1
            if rounds[0] == 4:  # the second batch's node round, after its link round
                raise Stopped
        return await original(self, cypher, *args, **kwargs)

    monkeypatch.setattr(StoreTransaction, "run", failing)
    with pytest.raises(Stopped):
        await acme.remove_tenant(batch_documents=1)
    monkeypatch.setattr(StoreTransaction, "run", original)
    after = await document_shapes(store, "acme")
    assert len(after) == len(left) - 1 and all(after[key] == shapes[key] for key in after)
    assert (await acme.check()).count(HealthFinding.ORPHANS) == 0  # only whole documents went
    assert await everything_but(store, "acme") == before
    finished = await acme.remove_tenant()
    assert finished.complete and finished.documents == len(after)
    assert await held(store, "acme") == 0
    assert await everything_but(store, "acme") == before


async def test_a_tenanted_graphs_maintenance_sends_every_statement_with_its_tenant_the_communities_too(
    tenants: dict[str, GraphRag], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await ingest_all(tenants)
    acme = tenants["acme"]
    names: list[str] = []
    remove = acme.store.add_hook(lambda event: names.append(event.name))
    sent = sent_tenants(monkeypatch)
    try:
        service = acme.maintenance
        await service.check()
        await service.preview()
        await service.remove_orphans()
        await service.fail_stale_runs()
        await service.reset(ResetScope(document_ids=(sources("acme")[1].in_tenant("acme").document_id,)))
        await service.preview_tenant()
        await service.remove_tenant()
        await service.reset()
    finally:
        remove()
    assert names and set(names) >= COMMUNITIES  # the tenant's communities and reports (docs/tenancy.md)
    assert {tenant for _, tenant in sent} == {"acme"}


class Recording:
    """The new set's embedder, keeping every text it was given."""

    def __init__(self, dimensions: int) -> None:
        self.inner = HashingEmbedder(dimensions, seed=7)
        self.dimensions = dimensions
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        self.texts.extend(texts)
        return await self.inner.embed(texts)


async def test_a_tenants_reembedding_reads_and_writes_only_its_own_chunks(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    await ingest_all(tenants, extra=1)
    to_set = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=96)
    acme = tenants["acme"]
    plan = Reembedding(acme.store).plan(TENANTED, OFFLINE_EMBEDDING_SET, to_set)
    for step in plan.prepare_steps():  # the application's reviewed revision, applied here directly
        await store.execute(step.cypher())
    await store.execute("CALL db.awaitIndexes(300)")
    before = await everything_but(store, "acme")  # the new index is in the schema from here on
    chunks = int((await store.read("MATCH (c:Chunk {tenant: 'acme'}) RETURN count(c) AS n")).value("n"))
    preview = await plan.preview()
    assert (preview.chunks, preview.to_do) == (chunks, chunks)
    embedder = Recording(96)
    receipt = await plan.backfill(embedder)
    assert receipt.chunks_embedded == chunks
    embedded = " ".join(embedder.texts)
    assert SECRETS["acme"] in embedded
    for name in ("globex", "initech"):
        assert_nothing_of(name, embedded, [])
    completed = await plan.complete()
    assert completed.chunks_completed == chunks and completed.chunks_not_backfilled == 0
    cleaned = await plan.cleanup()
    assert cleaned.old_vectors_removed == chunks and cleaned.chunks_not_completed == 0
    assert await everything_but(store, "acme") == before


async def test_a_removal_never_reaches_another_tenants_node_even_under_the_same_keys(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    # The toolkit never writes one tenant's key on another's node; a forged globex chunk under an
    # acme document id is still globex's, and an acme node stamped with a globex run is not acme's.
    runs = await ingest_all(tenants)
    handbook = sources("acme")[0].in_tenant("acme").document_id
    await store.execute(
        "CREATE (:Chunk {id: 'forged', tenant: 'globex', documentId: $document, runId: $run, text: 'x'})",
        {"document": handbook, "run": runs["globex"]},
    )
    before = await everything_but(store, "acme")
    acme = tenants["acme"].maintenance
    assert (await acme.preview(ResetScope(document_ids=(handbook,)))).chunks == 3
    report = await acme.reset(ResetScope(document_ids=(handbook,)))
    assert (report.documents, report.chunks) == (1, 3)
    assert await everything_but(store, "acme") == before  # the forged chunk stayed
    hours = sources("acme")[1].in_tenant("acme").document_id
    await store.execute("MATCH (d:Document {id: $id}) SET d.runId = $run", {"id": hours, "run": runs["globex"]})
    with pytest.raises(GraphRefused) as refused:
        await acme.reset(ResetScope(document_ids=(hours,)))
    assert refused.value.code == ErrorCode.FOREIGN_GRAPH
    assert await everything_but(store, "acme") == before
