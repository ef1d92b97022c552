"""Ingestion against the real Neo4j: runs, one transaction per document, unchanged, leases, embedder failures."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import EmbeddingVectors, HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET, EmbeddingSet
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.ingestion import DocumentStatus, IngestionOptions, IngestionService, RunStatus
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retry import RetryOptions, RetryPolicy
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import AccessMode, Result, StatementEvent, Store, StoreTransaction
from graphrag_orm.tokens import ByteEstimateCounter

MODEL = for_layout(Layout.DEFAULT)
DIMS = OFFLINE_EMBEDDING_SET.dimensions

GUIDE = """# Brake recall

The BC-310 brake caliper is recalled because its piston can seize.

It was supplied by Acme Components.

## Affected bikes

The City 3 and the Trail 5 use the BC-310.

## What to do

Stop riding and book a free replacement. Émile's shop in Zürich has parts 🚲.
"""


def service(store: Store, embedder: object | None = None, **options: object) -> IngestionService:
    return IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        embedder or HashingEmbedder(DIMS),  # type: ignore[arg-type]
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=128)),
        options=IngestionOptions(**options),  # type: ignore[arg-type]
        retry=RetryPolicy(RetryOptions(initial_backoff_seconds=0.01, max_backoff_seconds=0.5)),
    )


def corpus(count: int = 3) -> list[Source]:
    return [
        Sources.text(f"doc-{i}", GUIDE.replace("BC-310", f"BC-{300 + i}"), media_type="text/markdown")
        for i in range(count)
    ]


async def scalar(store: Store, query: str, **params: object) -> object:
    return (await store.read(query, params)).value()


async def test_a_document_is_written_whole_with_exact_spans_vectors_and_run_ids(graph: None, store: Store) -> None:
    source = corpus(1)[0]
    receipt = await service(store).ingest([source])

    assert receipt.status == RunStatus.COMPLETED
    (outcome,) = receipt.documents
    assert outcome.status == DocumentStatus.INGESTED and outcome.error_code is None
    utf8 = GUIDE.replace("BC-310", "BC-300").encode()
    rows = (
        await store.read(
            "MATCH (c:Chunk {documentId: $doc}) RETURN c.text AS text, c.startByte AS start, c.endByte AS end, "
            "size(c.embedding) AS dims, c.embeddingSetId AS set_id, c.runId AS run_id ORDER BY c.order",
            {"doc": source.document_id},
        )
    ).records
    assert len(rows) == outcome.chunks == receipt.chunks_written > 1
    covered = bytearray(len(utf8))
    for row in rows:
        text, start, end, dims, set_id, run_id = (row[k] for k in ("text", "start", "end", "dims", "set_id", "run_id"))
        assert text.encode() == utf8[start:end]
        assert dims == DIMS and set_id == OFFLINE_EMBEDDING_SET.id and run_id == receipt.run_id
        covered[start:end] = b"\x01" * (end - start)
    assert all(covered), "every byte of the document is in a chunk"
    assert await scalar(store, "MATCH (s:Section {documentId: $doc}) RETURN count(s)", doc=source.document_id) == 3
    assert await scalar(store, "MATCH ()-[r]->() WHERE r.runId IS NULL RETURN count(r)") == 0
    assert (
        await scalar(
            store,
            "MATCH (n) WHERE (n:Document OR n:Chunk OR n:Section) AND n.runId <> $run RETURN count(n)",
            run=receipt.run_id,
        )
        == 0
    )
    edges = {
        row["type"]: row["edges"]
        for row in await store.read(
            "MATCH (:Chunk {documentId: $doc})-[r]->() RETURN type(r) AS type, count(r) AS edges",
            {"doc": source.document_id},
        )
    }
    assert edges["IN_DOCUMENT"] == len(rows) and edges["NEXT_CHUNK"] == len(rows) - 1
    assert await scalar(store, "MATCH (r:IngestionRun {id: $run}) RETURN r.status", run=receipt.run_id) == "Completed"
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0


async def test_every_statement_is_named_and_goes_through_the_store_and_a_document_is_one_write(
    graph: None, store: Store
) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        receipt = await service(store).ingest(corpus(1))
    finally:
        remove()
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    assert [e.name for e in events] == [
        "ingestion.run.start",
        "ingestion.state.prefetch",
        "ingestion.lease.insert",
        # the document's one write transaction: a new document is one statement, the lease renewed first
        "ingestion.document.write",
        # released after the commit
        "ingestion.lease.release",
        "ingestion.run.finish",
    ]
    assert [e.mode for e in events if e.name.startswith("ingestion.state.")] == [AccessMode.READ]
    assert all(e.mode is AccessMode.WRITE for e in events if not e.name.startswith("ingestion.state."))
    assert all(e.error is None for e in events)


async def content(store: Store) -> tuple[list[Any], list[Any]]:
    """The lexical graph by keys, without what differs between runs (run ids, times, the run node)."""
    volatile = {"runId", "ingestedAt"}
    nodes = await store.read(
        "MATCH (n) WHERE n:Document OR n:Section OR n:Chunk RETURN labels(n) AS labels, properties(n) AS props"
    )
    links = await store.read(
        "MATCH (a)-[r]->(b) WHERE NOT a:IngestionRun AND NOT b:IngestionRun "
        "RETURN type(r) AS type, a.id AS source, b.id AS target, properties(r) AS props"
    )
    return (
        sorted(repr((row["labels"], {k: v for k, v in row["props"].items() if k not in volatile})) for row in nodes),
        sorted(
            repr((row["type"], row["source"], row["target"], {k: v for k, v in row["props"].items() if k != "runId"}))
            for row in links
        ),
    )


async def test_a_new_document_in_one_statement_is_the_graph_its_sliced_statements_write(
    graph: None, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        await service(store).ingest(corpus(1))
        one = await content(store)
        await store.execute("MATCH (n) WHERE n:Document OR n:Section OR n:Chunk OR n:IngestionRun DETACH DELETE n")
        # One row per statement: every list is sliced, so the statements are those of a large document.
        monkeypatch.setattr("graphrag_orm.ingestion.writer.ROWS_PER_STATEMENT", 1)
        await service(store).ingest(corpus(1))
        sliced = await content(store)
    finally:
        remove()
    assert one == sliced and len(one[0]) > 5 and len(one[1]) > 5
    names = [e.name for e in events]
    assert names.count("ingestion.document.write") == 1
    assert names.count("ingestion.document.renew_lease") == 1
    # Several slices of sections and of each edge kind (chunks stay at their own bound, 50 or more).
    assert names.count("ingestion.document.sections") > 1 and names.count("ingestion.document.next_chunks") > 1


async def test_a_changed_document_is_replaced_by_the_sliced_statements(graph: None, store: Store) -> None:
    source = corpus(1)[0]
    await service(store).ingest([source])
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        changed = Sources.text(
            "doc-0", GUIDE.replace("BC-310", "BC-300") + "\n\nOne more paragraph.\n", media_type="text/markdown"
        )
        receipt = await service(store).ingest([changed])
    finally:
        remove()
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    written = [e.name for e in events if e.name.startswith("ingestion.document.")]
    assert written[:2] == ["ingestion.document.renew_lease", "ingestion.document.delete_previous"]
    assert "ingestion.document.write" not in written


async def test_unchanged_documents_are_not_rewritten_and_changed_ones_replace_their_chunks(
    graph: None, store: Store
) -> None:
    sources = corpus(2)
    first = await service(store).ingest(sources)
    again = await service(store).ingest(sources)
    assert [o.status for o in again.documents] == [DocumentStatus.UNCHANGED] * 2
    assert again.embedding_calls == 0
    assert await scalar(store, "MATCH (c:Chunk) WHERE c.runId = $run RETURN count(c)", run=again.run_id) == 0

    changed = [
        Sources.text("doc-0", GUIDE + "\nA new paragraph about the recall.\n", media_type="text/markdown"),
        sources[1],
    ]
    third = await service(store).ingest(changed)
    assert [o.status for o in third.documents] == [DocumentStatus.INGESTED, DocumentStatus.UNCHANGED]
    doc = sources[0].document_id
    assert (
        await scalar(
            store, "MATCH (c:Chunk {documentId: $doc}) WHERE c.runId <> $run RETURN count(c)", doc=doc, run=third.run_id
        )
        == 0
    )
    assert (
        await scalar(store, "MATCH (c:Chunk {documentId: $doc}) RETURN count(c)", doc=doc) == third.documents[0].chunks
    )
    assert (
        await scalar(store, "MATCH (c:Chunk) RETURN count(c)") == third.documents[0].chunks + first.documents[1].chunks
    )


async def test_the_same_text_under_new_settings_is_rewritten_under_the_same_keys(graph: None, store: Store) -> None:
    source = corpus(1)[0]
    await service(store).ingest([source])
    # Another embedding batch size does not change the fingerprint; another chunk size does.
    rechunked = IngestionService(
        store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS), chunker=Chunker(ChunkerOptions(max_utf8_bytes=256))
    )
    receipt = await rechunked.ingest([source])
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    again = await rechunked.ingest([source])
    assert again.documents[0].status == DocumentStatus.UNCHANGED


class _Scripted:
    """An embedder whose replies a test chooses: wrong count, wrong dimensions, NaN, zero."""

    def __init__(self, shape: str) -> None:
        self.shape = shape
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        good = [[1.0] + [0.0] * (DIMS - 1) for _ in texts]
        if self.shape == "good":
            return good
        if self.shape == "none":
            return None
        if self.shape == "none-vector":
            return [None, *good[1:]]
        if self.shape == "generator":
            return (vector for vector in good)
        if self.shape in ("tokens-text", "tokens-fraction", "tokens-infinite"):
            tokens = {"tokens-text": "many", "tokens-fraction": 1.5, "tokens-infinite": math.inf}[self.shape]
            vectors = EmbeddingVectors(good)
            vectors.input_tokens = tokens  # type: ignore[assignment]
            return vectors
        if self.shape == "count":
            return good[:-1] or [[1.0] * DIMS, [1.0] * DIMS]
        if self.shape == "dimensions":
            return [[1.0] * (DIMS - 1) for _ in texts]
        if self.shape == "nan":
            return [[math.nan] + [1.0] * (DIMS - 1) for _ in texts]
        if self.shape == "zero":
            return [[0.0] * DIMS for _ in texts]
        if self.shape == "huge":
            return [[1e39] + [1.0] * (DIMS - 1) for _ in texts]
        raise AssertionError(self.shape)


@pytest.mark.parametrize(
    ("shape", "code"),
    [
        ("count", "embedding-count"),
        ("dimensions", "embedding-dimensions"),
        ("nan", "invalid-embedding"),
        ("zero", "invalid-embedding"),
        ("huge", "invalid-embedding"),
        ("none", "embedding-count"),
        ("none-vector", "invalid-embedding"),
        ("generator", "embedding-count"),
        ("tokens-text", "embedding-failed"),
        ("tokens-fraction", "embedding-failed"),
        ("tokens-infinite", "embedding-failed"),
    ],
)
async def test_a_bad_vector_fails_its_document_with_a_code_and_writes_nothing(
    graph: None, store: Store, shape: str, code: str
) -> None:
    sources = corpus(2)
    receipt = await service(store, _Scripted(shape)).ingest(sources)
    assert receipt.status == RunStatus.FAILED, "a run whose every document failed is not Completed"
    assert [(o.status, o.error_code) for o in receipt.documents] == [(DocumentStatus.FAILED, code)] * 2
    assert await scalar(store, "MATCH (n) WHERE n:Document OR n:Chunk OR n:Section RETURN count(n)") == 0
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0


class _Flaky:
    """Fails ``failures`` times with a transient error (a ConnectionError), then embeds."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.inner = HashingEmbedder(DIMS)

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("dropped")
        return await self.inner.embed(texts)


async def test_a_transient_embedding_failure_is_retried_and_counted(graph: None, store: Store) -> None:
    receipt = await service(store, _Flaky(2), embedding_batch_size=256).ingest(corpus(1))
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    assert receipt.retries.retries == 2


async def test_exhausted_retries_fail_the_document_with_embedding_failed(graph: None, store: Store) -> None:
    receipt = await service(store, _Flaky(50), embedding_batch_size=256).ingest(corpus(1))
    assert receipt.documents[0].error_code == "embedding-failed"
    assert receipt.retries.retries == 4


async def test_a_held_lease_refuses_a_second_run_and_an_expired_one_is_taken_over(graph: None, store: Store) -> None:
    source = corpus(1)[0]
    # The other run's lease lasts 3 s; this run's own lease is the default, so a slow first
    # write (statements compiled on a busy machine) never outlives it.
    await service(store, lease_duration_seconds=3.0).leases.acquire(source.document_id, "run-other")
    holder = service(store)
    refused = await holder.ingest([source])
    assert refused.documents[0].error_code == "lease-held"
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN l.runId") == "run-other"
    await asyncio.sleep(3.2)
    taken = await holder.ingest([source])
    assert taken.documents[0].status == DocumentStatus.INGESTED
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0


async def test_waiting_for_leases_finishes_a_document_whose_holder_died_and_reports_each_outcome_once(
    graph: None, store: Store
) -> None:
    sources = corpus(3)
    # A dead holder: its lease on the second document expires after 1.5 s and is never released.
    await service(store, lease_duration_seconds=1.5).leases.acquire(sources[1].document_id, "run-dead")
    seen: list[str] = []
    worker = service(store, wait_for_leases_seconds=20.0)
    began = asyncio.get_running_loop().time()
    receipt = await worker.ingest(sources, progress=lambda outcome: seen.append(outcome.document_id))
    assert asyncio.get_running_loop().time() - began >= 1.2  # it waited for the expiry
    assert [o.status for o in receipt.documents] == [DocumentStatus.INGESTED] * 3
    assert [o.document_id for o in receipt.documents] == [s.document_id for s in sources]  # source order
    assert receipt.limits_reached == ()
    assert sorted(seen) == sorted(s.document_id for s in sources)  # the held try is not reported
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0


async def test_waiting_for_leases_gives_up_after_its_time_and_names_the_limit(graph: None, store: Store) -> None:
    sources = corpus(2)
    await service(store).leases.acquire(sources[0].document_id, "run-alive")  # held for 600 s
    seen: list[str | None] = []
    receipt = await service(store, wait_for_leases_seconds=1.0).ingest(
        sources, progress=lambda outcome: seen.append(outcome.error_code)
    )
    assert receipt.documents[0].error_code == "lease-held"
    assert receipt.documents[1].status == DocumentStatus.INGESTED
    assert [(limit.name, limit.value) for limit in receipt.limits_reached] == [("LeaseWait", 1)]
    assert sorted(seen, key=str) == sorted([None, "lease-held"], key=str)
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN l.runId") == "run-alive"


async def test_a_waiting_run_neither_loads_nor_asks_for_a_document_another_run_holds(graph: None, store: Store) -> None:
    sources = corpus(3)
    await service(store).leases.acquire(sources[1].document_id, "run-alive")  # held for 600 s
    worker = service(store, wait_for_leases_seconds=0.6)
    loaded: list[str] = []
    load = worker.loaders.load

    async def counting(source: Source) -> Any:
        loaded.append(source.document_id)
        return await load(source)

    worker.loaders.load = counting  # type: ignore[method-assign]
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        receipt = await worker.ingest(sources)
    finally:
        remove()
    assert [o.error_code for o in receipt.documents] == [None, "lease-held", None]
    assert sources[1].document_id not in loaded and len(loaded) == 2
    names = [event.name for event in events]
    # Only the two free documents asked for a lease; the held one was read as held, pass and tries alike.
    assert names.count("ingestion.lease.insert") == 2 and "ingestion.lease.takeover" not in names
    assert names.count("ingestion.state.window") >= 2  # the pass, then each try again reads afresh
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN l.runId") == "run-alive"


async def test_the_lease_wait_is_bounded() -> None:
    with pytest.raises(ConfigurationError) as refused:
        IngestionOptions(wait_for_leases_seconds=-1)
    assert refused.value.code == "invalid-option"
    with pytest.raises(ConfigurationError):
        IngestionOptions(wait_for_leases_seconds=86_401)


async def test_a_lease_taken_over_before_the_write_fails_the_document_with_lease_lost(
    graph: None, store: Store
) -> None:
    source = corpus(1)[0]
    ingestion = service(store, lease_duration_seconds=30.0)

    class _TakeOverDuringEmbedding:
        async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
            # Another run takes the lease while this document is being embedded.
            await store.execute("MATCH (l:GraphRagLease) SET l.runId = 'run-thief'")
            return await HashingEmbedder(DIMS).embed(texts)

    ingestion.embedder = _TakeOverDuringEmbedding()
    receipt = await ingestion.ingest([source])
    assert receipt.documents[0].error_code == "lease-lost"
    assert await scalar(store, "MATCH (n:Document) RETURN count(n)") == 0
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN l.runId") == "run-thief"


async def test_preview_writes_nothing_and_equals_the_receipt_when_the_client_counts_like_the_counter(
    graph: None, store: Store
) -> None:
    counter = ByteEstimateCounter()

    class _Counting:
        async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
            vectors = await HashingEmbedder(DIMS).embed(texts)
            return EmbeddingVectors(list(vectors), input_tokens=sum(counter.count(t) for t in texts))

    ingestion = service(store, _Counting(), embedding_batch_size=2)
    ingestion.token_counter = counter
    sources = corpus(3)
    preview = await ingestion.preview(sources)
    assert (
        await scalar(store, "MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:GraphRagTestDatabase RETURN count(n)")
        == 0
    )
    receipt = await ingestion.ingest(sources)
    assert preview.tokens_counted
    assert preview.chunks == receipt.chunks_written
    assert preview.embedding_calls == receipt.embedding_calls
    assert preview.input_tokens == receipt.input_tokens
    assert [d.status.value for d in (await ingestion.preview(sources)).documents] == ["Unchanged"] * 3


async def test_more_sources_than_max_documents_is_reported(graph: None, store: Store) -> None:
    receipt = await service(store, max_documents=2).ingest(corpus(3))
    assert len(receipt.documents) == 2
    assert [(limit.name, limit.value) for limit in receipt.limits_reached] == [("MaxDocuments", 2)]


@pytest.mark.parametrize(
    "options",
    [
        {"embedding_batch_size": 0},
        {"embedding_batch_size": 257},
        {"lanes": 9},
        {"max_documents": 0},
        {"max_document_bytes": 10},
        {"max_chunks_per_document": 0},
        {"max_chunks_per_document": 15_001},
    ],
)
def test_options_outside_their_bounds_are_refused(options: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        IngestionOptions(**options)  # type: ignore[arg-type]
    assert refused.value.code == "invalid-option"


async def test_unreadable_sources_fail_with_their_load_codes(graph: None, store: Store, tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "bad.md").write_bytes(b"# Title\n\n\xff\xfe broken")
    (folder / "big.md").write_bytes(b"x" * 5000)
    (folder / "data.csv").write_text("a,b\n")
    sources = [
        Sources.file(folder / "bad.md"),
        Sources.file(folder / "big.md"),
        Sources.file(folder / "data.csv"),
    ]
    receipt = await service(store, max_document_bytes=4096).ingest(sources)
    assert [o.error_code for o in receipt.documents] == ["invalid-utf8", "document-too-large", "unsupported-media-type"]
    assert await scalar(store, "MATCH (n:Document) RETURN count(n)") == 0


async def test_spans_carry_ids_counts_and_codes_but_no_text_paths_or_uris(
    graph: None, store: Store, tmp_path: object
) -> None:
    from pathlib import Path

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = trace._TRACER_PROVIDER  # the proxy is not a provider to put back
    trace._TRACER_PROVIDER = provider  # the global provider can only be set once per process
    try:
        path = Path(str(tmp_path)) / "secret-folder" / "guide.md"
        path.parent.mkdir()
        path.write_text(GUIDE)
        await service(store, _Scripted("nan")).ingest([Sources.file(path)])
        await service(store).ingest([Sources.file(path)])
    finally:
        trace._TRACER_PROVIDER = previous
    spans = exporter.get_finished_spans()
    names = {s.name for s in spans}
    assert {"GraphRag.Ingest", "GraphRag.Document", "GraphRag.Embed", "GraphRag.Write"} <= names
    assert any(s.attributes.get("graphrag.error_code") == "invalid-embedding" for s in spans)
    forbidden = ["secret-folder", "guide.md", "file:", "BC-310", "brake", "Zürich"]
    for recorded in spans:
        for key, value in (recorded.attributes or {}).items():
            assert key.startswith("graphrag."), key
            for word in forbidden:
                assert word not in str(value), (recorded.name, key)
        assert all(word not in recorded.name for word in forbidden)


# --------------------------------------------------------------------------- bounds


async def test_a_document_of_more_chunks_than_the_bound_fails_document_too_large_before_any_model_call(
    graph: None, store: Store
) -> None:
    embedder = _Scripted("good")
    small, large = corpus(1)[0], Sources.text("large", GUIDE * 8, media_type="text/markdown")
    ingestion = service(store, embedder, max_chunks_per_document=12)
    planned = len(ingestion.chunker.plan(await ingestion.loaders.load(large)).chunks)
    assert planned > 12 >= len(ingestion.chunker.plan(await ingestion.loaders.load(small)).chunks)

    preview = await ingestion.preview([small, large])
    receipt = await ingestion.ingest([large, small])

    assert [(p.status.value, p.error_code) for p in preview.documents] == [
        ("New", None),
        ("Failed", "document-too-large"),
    ]
    assert [(o.status, o.error_code) for o in receipt.documents] == [
        (DocumentStatus.FAILED, "document-too-large"),
        (DocumentStatus.INGESTED, None),
    ]
    assert embedder.calls == receipt.embedding_calls == receipt.documents[1].embedding_calls
    limits = [(limit.name, limit.value) for limit in receipt.limits_reached]
    assert limits == [("MaxChunksPerDocument", 12)] == [(limit.name, limit.value) for limit in preview.limits_reached]
    assert await scalar(store, "MATCH (d:Document) RETURN count(d)") == 1
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0


async def test_the_chunk_bound_shrinks_with_the_dimensions_to_at_most_six_million_coordinates(
    graph: None, store: Store
) -> None:
    wide = EmbeddingSet(model="wide", dimensions=4_000)  # 6,000,000 // 4,000 = 1,500 chunks
    ingestion = IngestionService(
        store, MODEL, wide, _Scripted("good"), chunker=Chunker(ChunkerOptions(max_utf8_bytes=128))
    )
    assert ingestion.options.max_chunks_per_document == 5_000 and ingestion.chunk_bound == 1_500
    large = Sources.text("wide", GUIDE * 510, media_type="text/markdown")  # 1,530 chunks

    preview = await ingestion.preview([large])

    assert [(p.status.value, p.error_code) for p in preview.documents] == [("Failed", "document-too-large")]
    assert [(limit.name, limit.value) for limit in preview.limits_reached] == [("MaxChunksPerDocument", 1_500)]


# --------------------------------------------------------------------------- cancellation


class _CancellingStore(Store):
    """The suite's database, with the ingest task cancelled once at one stage of a document.

    ``insert-in-flight`` cancels while the lease insert is on its way and lets the insert
    commit (the case that leaked); ``release-in-flight`` likewise for the release.
    """

    def __init__(self, store: Store, stage: str) -> None:
        super().__init__(store.driver, database=store.database)
        self.stage = stage
        self.victim: asyncio.Task[Any] | None = None
        self.fired = False
        if stage == "write-transaction":
            self.add_hook(self._during_write)

    def cancel(self, stage: str) -> None:
        if self.stage == stage and not self.fired and self.victim is not None:
            self.fired = True
            self.victim.cancel()

    def _during_write(self, event: StatementEvent) -> None:
        if event.name in ("ingestion.document.write", "ingestion.document.chunks"):
            self.cancel("write-transaction")

    async def execute(
        self, cypher: str, parameters: Mapping[str, Any] | None = None, *, name: str = "execute"
    ) -> Result:
        in_flight = {"ingestion.lease.insert": "insert-in-flight", "ingestion.lease.release": "release-in-flight"}
        if name in in_flight and self.stage == in_flight[name] and not self.fired:
            statement = asyncio.ensure_future(super().execute(cypher, parameters, name=name))
            self.cancel(in_flight[name])
            return await asyncio.shield(statement)
        result = await super().execute(cypher, parameters, name=name)
        if name == "ingestion.lease.insert":
            self.cancel("after-lease-insert")
        return result

    async def write(self, work: Callable[[StoreTransaction], Awaitable[Any]], **options: Any) -> Any:
        value = await super().write(work, **options)
        self.cancel("after-commit")
        return value


class _CancelsWhileEmbedding:
    def __init__(self, cancelling: _CancellingStore) -> None:
        self.cancelling = cancelling

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        self.cancelling.cancel("embedding")
        await asyncio.sleep(0)
        return await HashingEmbedder(DIMS).embed(texts)


STAGES = [
    "insert-in-flight",
    "after-lease-insert",
    "embedding",
    "write-transaction",
    "after-commit",
    "release-in-flight",
]


@pytest.mark.parametrize("stage", STAGES)
async def test_a_cancel_at_any_stage_of_a_document_leaves_no_lease_and_the_next_run_completes(
    graph: None, store: Store, stage: str
) -> None:
    cancelling = _CancellingStore(store, stage)
    ingestion = service(cancelling, _CancelsWhileEmbedding(cancelling), documents_in_flight=1)
    sources = corpus(3)
    cancelling.victim = asyncio.create_task(ingestion.ingest(sources))

    with pytest.raises(asyncio.CancelledError):
        await cancelling.victim

    assert cancelling.fired
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0
    assert await scalar(store, "MATCH (r:IngestionRun) RETURN collect(r.status)") == ["Failed"]
    receipt = await service(store).ingest(sources)
    assert receipt.status == RunStatus.COMPLETED
    assert all(o.status in (DocumentStatus.INGESTED, DocumentStatus.UNCHANGED) for o in receipt.documents), receipt
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0
