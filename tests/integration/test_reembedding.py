"""Re-embedding against the real server: the whole cycle, a killed backfill resumed, health and
retrieval at every stage, bounds and refusals.

Set A is the stand-in at 128 dimensions, set B the stand-in at 96 with another seed: two
sets whose vectors cannot be compared, so a search that used the wrong one would fail.
The application keeps its own migration chain (written in a temporary folder): the
prepare and cleanup steps are applied as reviewed revisions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from graphrag_orm import GraphRag, GraphRagOptions
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.codes import HealthFinding, LimitName
from graphrag_orm.embeddings import EmbeddingSet, EmbeddingVectors, HashingEmbedder
from graphrag_orm.errors import EmbeddingRejected, ModelCallFailed, ReembeddingError, SchemaMismatch
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance.reports import HealthFindingItem
from graphrag_orm.migrate import Chain, Migrator, Revision, initial_revision, write_revision
from graphrag_orm.reembedding import (
    STAGED_SET_PROPERTY,
    BackfillOptions,
    PageOptions,
    Reembedding,
    ReembeddingPlan,
    ReembeddingStage,
)
from graphrag_orm.retrieval.options import Retrievers
from graphrag_orm.schema import MigrationStep
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tracing import SpanName
from tests.support.tracing import captured_spans

SET_A = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=128)
SET_B = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=96)
TOPICS = {
    "bikes": "The chain of the bike needs oil every month. Brakes squeal when the rims are wet.",
    "coffee": "Espresso wants finely ground beans. The grinder burrs are cleaned every week.",
    "rivers": "The river floods its banks in spring. Salmon swim upstream to spawn in gravel.",
    "stars": "A telescope mirror gathers starlight. Nebulae glow where young stars are born.",
    "bread": "Sourdough rises overnight in a cool kitchen. The crust browns in a hot oven.",
    "chess": "The knight jumps over pieces. Castling moves the king two squares toward a rook.",
}
QUESTIONS = {"bikes": "oil for the bike chain", "stars": "telescope mirror starlight", "bread": "sourdough crust oven"}


def embedder_a() -> HashingEmbedder:
    return HashingEmbedder(128)


def embedder_b() -> HashingEmbedder:
    return HashingEmbedder(96, seed=7)


def document(topic: str) -> str:
    # Several paragraphs, so each document makes several small chunks.
    body = TOPICS[topic]
    return "\n\n".join(f"{body} Part {part} of the {topic} notes." for part in range(4))


class Counting:
    """The new set's embedder, counting the texts it embeds; after ``fail_after`` calls it fails
    (an error the retry policy does not retry)."""

    def __init__(self, inner: HashingEmbedder, fail_after: int | None = None) -> None:
        self.inner = inner
        self.fail_after = fail_after
        self.calls = 0
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise RuntimeError("the model went away")
        self.calls += 1
        self.texts.extend(texts)
        return await self.inner.embed(texts)


class Blocking:
    """The new set's embedder that hangs on its call after ``block_after`` calls (until cancelled)."""

    def __init__(self, inner: HashingEmbedder, block_after: int) -> None:
        self.inner = inner
        self.block_after = block_after
        self.calls = 0
        self.blocked = asyncio.Event()

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        if self.calls >= self.block_after:
            self.blocked.set()
            await asyncio.Event().wait()
        self.calls += 1
        return await self.inner.embed(texts)


class Truncating:
    """An embedder without a ``dimensions`` attribute whose vectors are too short."""

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        vectors = await HashingEmbedder(16).embed(texts)
        return EmbeddingVectors(vectors)


async def apply_revision(store: Store, folder: Path, revision: str, steps: Sequence[MigrationStep]) -> None:
    chain = Chain.load(folder)
    write_revision(folder, Revision.new(revision, chain.head, revision, steps))
    await Migrator(store, Chain.load(folder)).apply()
    assert (await Migrator(store, Chain.load(folder)).check()).ok


def app(layout: Layout, embedding_set: EmbeddingSet, embedder: HashingEmbedder) -> GraphRag:
    chunking = ChunkerOptions(max_utf8_bytes=128, overlap_paragraphs=0)
    return GraphRag(
        embedding_set=embedding_set, embedder=embedder, layout=layout, options=GraphRagOptions(chunking=chunking)
    )


@pytest.fixture
async def chain(bare_database: None, store: Store, tmp_path: Path) -> Path:
    folder = tmp_path / "chain"
    write_revision(folder, initial_revision(Layout.DEFAULT, SET_A, revision="0001_app"))
    await Migrator(store, Chain.load(folder)).apply()
    return folder


@pytest.fixture
async def old_app(chain: Path, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    rag = app(Layout.DEFAULT, SET_A, embedder_a())
    await rag.connect(neo4j_settings, neomodel=False)
    receipt = await rag.ingestion.ingest([Sources.text(topic, document(topic)) for topic in TOPICS])
    assert receipt.ingested == len(TOPICS)
    yield rag
    await rag.close()


async def chunk_count(store: Store) -> int:
    return int((await store.read("MATCH (c:Chunk) RETURN count(c) AS n")).value("n"))


async def top_topic(rag: GraphRag, question: str) -> tuple[str, tuple[str, ...]]:
    evidence = await rag.retriever.retrieve(question, Retrievers.vector())
    source = evidence.items[0].source_uri
    assert evidence.provenance is not None
    return next(topic for topic in TOPICS if topic in source), evidence.provenance.indexes


async def assert_answers(rag: GraphRag, index: str) -> None:
    for topic, question in QUESTIONS.items():
        found, indexes = await top_topic(rag, question)
        assert (found, indexes) == (topic, (index,))


def mixed(findings: Sequence[HealthFindingItem]) -> dict[str, int]:
    return {item.code: item.count for item in findings}


async def test_the_whole_cycle_keeps_retrieval_and_health_right_at_every_stage(
    old_app: GraphRag, store: Store, chain: Path, neo4j_settings: ConnectionSettings
) -> None:
    total = await chunk_count(store)
    plan = Reembedding(old_app.store).plan(Layout.DEFAULT, SET_A, SET_B, staging_property="embeddingNext")
    assert total >= 18

    # Planned: nothing written; the old set answers; the graph is healthy.
    preview = await plan.preview()
    assert (preview.stage, preview.chunks, preview.to_do, preview.backfilled) == (
        ReembeddingStage.PLANNED,
        total,
        total,
        0,
    )
    assert preview.prepare_cypher[0].startswith(f"CREATE VECTOR INDEX {plan.new_index.name} IF NOT EXISTS")
    assert (
        "ON (n.embeddingNext)" in preview.prepare_cypher[0] and "`vector.dimensions`: 96" in preview.prepare_cypher[0]
    )
    assert preview.cleanup_cypher == (f"DROP INDEX {plan.old_index.name} IF EXISTS",)
    await assert_answers(old_app, plan.old_index.name)
    assert (await old_app.maintenance.check()).healthy

    # Prepared through the application's chain: still one set's vectors, healthy.
    await apply_revision(store, chain, "0002_reembed_prepare", plan.prepare_steps())
    preview = await plan.preview()
    assert (preview.stage, preview.new_index_state) == (ReembeddingStage.PREPARED, "ONLINE")
    assert (await old_app.maintenance.check()).healthy

    # Backfill killed after two pages (3 chunks a page): two whole pages are staged.
    options = BackfillOptions(page_size=3, embedding_batch_size=3)
    failing = Counting(embedder_b(), fail_after=2)
    with pytest.raises(ModelCallFailed) as failed:
        await plan.backfill(failing, options)
    assert failed.value.code == "embedding-failed"
    preview = await plan.preview()
    assert (preview.stage, preview.backfilled, preview.to_do) == (ReembeddingStage.BACKFILLING, 6, total - 6)
    report = await old_app.maintenance.check()
    assert mixed(report.findings) == {HealthFinding.MIXED_EMBEDDING_SETS: 6}
    assert f"{SET_B.id} (staged): 6" in (report.findings[0].detail or "")
    await assert_answers(old_app, plan.old_index.name)  # the old set still answers mid-backfill

    # Resumed: only the chunks still to do are embedded, none twice.
    resumed = Counting(embedder_b())
    receipt = await plan.backfill(resumed, options)
    assert len(resumed.texts) == total - 6 == receipt.chunks_embedded
    assert not set(resumed.texts) & set(failing.texts)
    assert (receipt.chunks_left, receipt.limits_reached, receipt.pages) == (0, (), -(-(total - 6) // 3))
    assert receipt.embedding_calls == resumed.calls and receipt.to_set_id == SET_B.id
    again = await plan.backfill(Counting(embedder_b()), options)
    assert (again.chunks_embedded, again.embedding_calls) == (0, 0)
    assert (await plan.preview()).stage == ReembeddingStage.BACKFILLED
    assert mixed((await old_app.maintenance.check()).findings) == {HealthFinding.MIXED_EMBEDDING_SETS: total}
    await assert_answers(old_app, plan.old_index.name)

    # Cut-over: the new layout and set search the new index; health flags the sets until complete.
    new_app = app(plan.new_layout, SET_B, embedder_b())
    await new_app.connect(neo4j_settings, neomodel=False)
    try:
        assert plan.new_layout == Layout.DEFAULT.replace(chunk_embedding_property="embeddingNext")
        await assert_answers(new_app, plan.new_index.name)
        report = await new_app.maintenance.check()
        assert mixed(report.findings) == {HealthFinding.MIXED_EMBEDDING_SETS: total}
        assert f"expected {SET_B.id}; found {SET_A.id}: {total}" == report.findings[0].detail

        completed = await plan.complete(PageOptions(page_size=5))
        assert (completed.chunks_completed, completed.pages, completed.chunks_not_backfilled) == (
            total,
            -(-total // 5),
            0,
        )
        assert (await new_app.maintenance.check()).healthy
        assert (await plan.preview()).stage == ReembeddingStage.COMPLETED
        assert (
            await store.read(f"MATCH (c:Chunk) WHERE c.{STAGED_SET_PROPERTY} IS NOT NULL RETURN count(c) AS n")
        ).value("n") == 0
        # The old configuration now sees another set's vectors under its property.
        assert mixed((await old_app.maintenance.check()).findings) == {HealthFinding.MIXED_EMBEDDING_SETS: total}

        # New documents after cut-over are written on the new property, already complete.
        await new_app.ingestion.ingest([Sources.text("chess-2", document("chess"))])
        assert (await plan.preview()).to_do == 0

        cleaned = await plan.cleanup(PageOptions(page_size=4))
        assert (cleaned.old_vectors_removed, cleaned.chunks_not_completed) == (total, 0)
        await apply_revision(store, chain, "0003_reembed_cleanup", plan.cleanup_steps())
        preview = await plan.preview()
        assert (preview.stage, preview.old_vectors, preview.old_index_state) == (ReembeddingStage.CLEANED_UP, 0, None)
        assert (await new_app.maintenance.check()).healthy
        await assert_answers(new_app, plan.new_index.name)
        with pytest.raises(SchemaMismatch):  # the old configuration cannot connect any more
            await old_app.check_vector_index()
    finally:
        await new_app.close()


async def test_the_next_reembedding_swaps_the_properties_back(old_app: GraphRag, store: Store, chain: Path) -> None:
    first = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", first.prepare_steps())
    await first.backfill(embedder_b())
    await first.complete()
    await first.cleanup()
    await apply_revision(store, chain, "0003_cleanup", first.cleanup_steps())

    back = Reembedding(store).plan(first.new_layout, SET_B, SET_A, staging_property="embedding")
    assert back.new_layout == Layout.DEFAULT and back.new_index.name == first.old_index.name
    await apply_revision(store, chain, "0004_prepare", back.prepare_steps())
    assert (await back.backfill(embedder_a())).chunks_embedded == await chunk_count(store)
    await back.complete()
    await back.cleanup()
    await apply_revision(store, chain, "0005_cleanup", back.cleanup_steps())
    assert (await back.preview()).stage == ReembeddingStage.CLEANED_UP
    assert (await old_app.maintenance.check()).healthy
    await old_app.check_vector_index()
    await assert_answers(old_app, first.old_index.name)


async def test_max_pages_stops_the_backfill_and_reports_it(old_app: GraphRag, store: Store, chain: Path) -> None:
    plan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", plan.prepare_steps())
    total = await chunk_count(store)
    progress: list[int] = []

    receipt = await plan.backfill(
        embedder_b(), BackfillOptions(page_size=2, max_pages=3), progress=lambda p: progress.append(p.chunks_embedded)
    )

    assert (receipt.chunks_embedded, receipt.pages, receipt.chunks_left) == (6, 3, total - 6)
    assert [(limit.name, limit.value) for limit in receipt.limits_reached] == [(LimitName.MAX_PAGES, 3)]
    assert progress == [2, 4, 6]
    assert '"limitsReached":[{"name":"MaxPages","value":3}]' in receipt.to_json()
    rest = await plan.backfill(embedder_b(), BackfillOptions(page_size=1000))
    assert (rest.chunks_embedded, rest.limits_reached) == (total - 6, ())


async def test_complete_before_a_full_backfill_counts_what_is_left(
    old_app: GraphRag, store: Store, chain: Path
) -> None:
    plan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", plan.prepare_steps())
    total = await chunk_count(store)
    await plan.backfill(embedder_b(), BackfillOptions(page_size=4, max_pages=1))

    completed = await plan.complete()
    cleaned = await plan.cleanup()

    assert (completed.chunks_completed, completed.chunks_not_backfilled) == (4, total - 4)
    assert (cleaned.old_vectors_removed, cleaned.chunks_not_completed) == (4, total - 4)
    assert (await plan.preview()).stage == ReembeddingStage.BACKFILLING  # backfill is the next step


async def test_a_backfill_before_prepare_is_refused_before_any_model_call(old_app: GraphRag, store: Store) -> None:
    plan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    counting = Counting(embedder_b())
    with pytest.raises(SchemaMismatch) as refused:
        await plan.backfill(counting)
    assert refused.value.code == "schema-missing" and counting.calls == 0


async def test_vectors_of_other_dimensions_are_refused_and_nothing_is_written(
    old_app: GraphRag, store: Store, chain: Path
) -> None:
    plan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", plan.prepare_steps())

    with pytest.raises(ReembeddingError) as declared:
        await plan.backfill(HashingEmbedder(16))
    with pytest.raises(EmbeddingRejected) as returned:
        await plan.backfill(Truncating())

    assert declared.value.code == returned.value.code == "embedding-dimensions"
    assert (await plan.preview()).backfilled == 0
    # A plan to a third set whose index would have other dimensions than the prepared one.
    other = Reembedding(store).plan(Layout.DEFAULT, SET_A, EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=48))
    with pytest.raises(SchemaMismatch) as mismatch:
        await other.backfill(HashingEmbedder(48))
    assert mismatch.value.code == "embedding-dimensions"


async def test_the_plan_reads_keys_texts_and_counts_never_a_vector(
    old_app: GraphRag, store: Store, chain: Path
) -> None:
    plan: ReembeddingPlan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", plan.prepare_steps())
    await plan.backfill(embedder_b(), BackfillOptions(page_size=5, max_pages=1))
    parameters = {"to": SET_B.id, "after": "", "page": 3}
    for cypher in (plan.statements.page, plan.statements.progress, plan.statements.to_do):
        for row in (await store.read(cypher, parameters, name="test.read")).records:
            assert all(isinstance(value, str | int) for value in row.values()), row
    rows = (await store.read(plan.statements.page, parameters, name="test.page")).records
    assert [sorted(row) for row in rows] == [["id", "text"]] * 3


async def test_a_cancelled_backfill_keeps_whole_pages_and_resumes_after_them(
    old_app: GraphRag, store: Store, chain: Path
) -> None:
    plan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", plan.prepare_steps())
    total = await chunk_count(store)
    # Two calls a page; the fourth call hangs, so the second page is cut off mid-way.
    options = BackfillOptions(page_size=4, embedding_batch_size=2, lanes=2)
    blocking = Blocking(embedder_b(), block_after=3)
    task = asyncio.create_task(plan.backfill(blocking, options))
    await asyncio.wait_for(blocking.blocked.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    staged = await store.read(f"MATCH (c:Chunk) WHERE c.{STAGED_SET_PROPERTY} IS NOT NULL RETURN count(c) AS n")
    assert staged.value("n") == (await plan.preview()).backfilled == 4
    resumed = Counting(embedder_b())
    assert (await plan.backfill(resumed, options)).chunks_embedded == len(resumed.texts) == total - 4


async def test_each_page_and_step_is_a_reembed_span_with_counts_only(
    old_app: GraphRag, store: Store, chain: Path
) -> None:
    plan = Reembedding(store).plan(Layout.DEFAULT, SET_A, SET_B)
    await apply_revision(store, chain, "0002_prepare", plan.prepare_steps())
    total = await chunk_count(store)
    with captured_spans() as exporter:
        await plan.backfill(embedder_b(), BackfillOptions(page_size=10))
        await plan.complete()
        await plan.cleanup()
    spans = [span for span in exporter.get_finished_spans() if span.name == SpanName.REEMBED.value]
    phases = [(span.attributes or {}).get("graphrag.phase") for span in spans]
    assert phases == ["backfill"] * -(-total // 10) + ["complete", "cleanup"]
    assert sum(int(str((span.attributes or {}).get("graphrag.chunks", 0))) for span in spans[:-2]) == total
    for span in spans:
        assert set(span.attributes or {}) <= {"graphrag.phase", "graphrag.chunks", "graphrag.retries", "graphrag.pages"}
