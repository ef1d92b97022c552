"""Reliability with real processes: concurrent workers, SIGKILL at random points, a server stopped mid-run,
and cancellation at random points of a run in this process.

Each check reads the graph with independent queries: every document present is whole
(its chunk count is what the chunker plans, every chunk has its vector and its edges),
nothing is duplicated, and leases are released.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from graphrag_orm.chunking import Chunker
from graphrag_orm.codes import HealthFinding
from graphrag_orm.embeddings import EmbeddingVectors, HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import DocumentStatus, IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.maintenance import MaintenanceOptions, MaintenanceService
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_store
from tests.database import wait_for_no_transactions, wipe_data
from tests.integration.ingest_worker import BASE_URI, CHUNKER

pytestmark = pytest.mark.slow
MODEL = for_layout(Layout.DEFAULT)
ROOT = Path(__file__).resolve().parents[2]

WORDS = [
    "caliper",
    "brake",
    "piston",
    "recall",
    "supplier",
    "frame",
    "wheel",
    "chain",
    "saddle",
    "gear",
    "spoke",
    "rim",
    "tyre",
    "valve",
    "pedal",
    "crank",
    "bearing",
    "cable",
    "lever",
    "fork",
    "stem",
    "headset",
    "hub",
    "cassette",
    "derailleur",
    "shifter",
    "grip",
    "bell",
    "light",
    "rack",
    "fender",
]


def write_corpus(folder: Path, documents: int, seed: int = 7) -> dict[str, int]:
    """``documents`` Markdown files; returns each document id's planned chunk count."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(documents):
        sections = []
        for section in range(rng.randint(1, 3)):
            paragraphs = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))).capitalize() + "."
                for _ in range(rng.randint(1, 4))
            ]
            sections.append(f"## Part {section + 1}\n\n" + "\n\n".join(paragraphs))
        (folder / f"doc-{number:04d}.md").write_text(f"# Document {number}\n\n" + "\n\n".join(sections) + "\n")
    return expected_chunks(folder)


def expected_chunks(folder: Path) -> dict[str, int]:
    chunker = Chunker(CHUNKER)
    planned: dict[str, int] = {}
    for source in Sources.folder(folder, base_uri=BASE_URI):
        assert source.path is not None
        from graphrag_orm.loaders import LoadedDocument

        loaded = LoadedDocument(source_uri=source.source_uri, media_type="text/markdown", utf8=source.path.read_bytes())
        planned[source.document_id] = len(chunker.plan(loaded).chunks)
    return planned


def worker(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.ingest_worker", str(folder), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or dict(os.environ),
    )


def receipt_of(process: subprocess.Popen[str], timeout: float = 240) -> dict[str, object]:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    body: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return body


async def graph_state(store: Store) -> dict[str, object]:
    """Independent reads of what is stored, document by document."""
    rows = await store.read(
        "MATCH (d:Document) OPTIONAL MATCH (c:Chunk {documentId: d.id}) "
        "WITH d, count(c) AS chunks, count(c.embedding) AS vectors, "
        "sum(CASE WHEN EXISTS { (c)-[:IN_DOCUMENT]->(d) } THEN 1 ELSE 0 END) AS linked "
        "RETURN d.id AS id, chunks, vectors, linked"
    )
    documents = {row["id"]: (row["chunks"], row["vectors"], row["linked"]) for row in rows}

    async def one(query: str) -> int:
        return int((await store.read(query)).value("n", 0))

    single = await one(
        "MATCH (c:Chunk) WHERE NOT EXISTS { MATCH (d:Document {id: c.documentId}) } RETURN count(c) AS n"
    )
    next_edges = await one("MATCH (:Chunk)-[r:NEXT_CHUNK]->(:Chunk) RETURN count(r) AS n")
    doubled = await one("MATCH (c:Chunk) WHERE COUNT { (c)-[:IN_DOCUMENT]->() } <> 1 RETURN count(c) AS n")
    leases = await one("MATCH (l:GraphRagLease) RETURN count(l) AS n")
    return {"documents": documents, "orphan_chunks": single, "next": next_edges, "doubled": doubled, "leases": leases}


def assert_whole(state: dict[str, object], planned: dict[str, int]) -> None:
    documents = state["documents"]
    assert isinstance(documents, dict)
    for document_id, (chunks, vectors, linked) in documents.items():
        assert chunks == planned[document_id] == vectors == linked, document_id
    assert state["orphan_chunks"] == 0
    assert state["doubled"] == 0
    assert state["next"] == sum(planned[d] - 1 for d in documents)


@pytest.mark.parametrize("workers", [2, 4, 6])
async def test_concurrent_workers_ingest_each_document_exactly_once(
    graph: None, store: Store, tmp_path: Path, workers: int
) -> None:
    planned = write_corpus(tmp_path / "corpus", 200)
    processes = [worker(tmp_path / "corpus") for _ in range(workers)]
    receipts = [receipt_of(p) for p in processes]

    state = await graph_state(store)
    assert set(state["documents"]) == set(planned)  # type: ignore[arg-type]
    assert_whole(state, planned)
    assert state["leases"] == 0
    ingested: dict[str, int] = {}
    for receipt in receipts:
        for outcome in receipt["documents"]:  # type: ignore[attr-defined]
            assert outcome["status"] in ("Ingested", "Unchanged") or outcome["errorCode"] == "lease-held"
            if outcome["status"] == "Ingested":
                ingested[outcome["documentId"]] = ingested.get(outcome["documentId"], 0) + 1
    assert ingested == dict.fromkeys(planned, 1), "every document written by exactly one worker"


async def test_workers_sharing_one_manifest_finish_what_a_killed_worker_held(
    graph: None, store: Store, tmp_path: Path
) -> None:
    planned = write_corpus(tmp_path / "corpus", 120, seed=17)
    # Short leases, a wait longer than a lease, the same manifest in the same order for all three.
    args = ("--lease", "2", "--wait", "60", "--delay", "0.1")
    first = worker(tmp_path / "corpus", *args)
    doomed = await _first_run_with_documents(store)
    others = [worker(tmp_path / "corpus", *args) for _ in range(2)]
    await _runs_running(store, 3)
    first.send_signal(signal.SIGKILL)  # mid-run: it holds the leases of the documents in flight
    first.wait(timeout=30)
    receipts = [receipt_of(p) for p in others]

    status = await store.read("MATCH (r:IngestionRun {id: $id}) RETURN r.status AS status", {"id": doomed})
    assert status.value("status") == "Running", "the killed run never finished"
    for receipt in receipts:
        outcomes = receipt["documents"]
        assert isinstance(outcomes, list)
        assert [o for o in outcomes if o["status"] not in ("Ingested", "Unchanged")] == []
        assert receipt["limitsReached"] == []
    state = await graph_state(store)
    assert set(state["documents"]) == set(planned)  # type: ignore[arg-type]
    assert_whole(state, planned)
    assert state["leases"] == 0, "the dead worker's leases were taken over and released"


async def _first_run_with_documents(store: Store) -> str:
    """The id of the one Running run once it has committed a document (at most a minute)."""
    try:
        async with asyncio.timeout(60):
            while True:
                rows = await store.read(
                    "MATCH (r:IngestionRun {status: 'Running'}) WHERE EXISTS { (:Document {runId: r.id}) } "
                    "RETURN r.id AS id"
                )
                if rows.records:
                    return str(rows.records[0]["id"])
                await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError("the first worker committed nothing in time") from None


async def _runs_running(store: Store, count: int) -> None:
    """Returns once ``count`` runs are Running (at most a minute)."""
    query = "MATCH (r:IngestionRun {status: 'Running'}) RETURN count(r) AS n"
    try:
        async with asyncio.timeout(60):
            while True:
                if (await store.read(query)).value("n", 0) >= count:
                    return
                await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"{count} runs did not start in time") from None


async def test_a_worker_killed_at_random_points_leaves_documents_whole_or_absent(
    graph: None, store: Store, tmp_path: Path
) -> None:
    planned = write_corpus(tmp_path / "corpus", 60, seed=11)
    rng = random.Random(2026)
    # Short leases for the worker that is killed; the rerun (in this process, to spare a
    # second start-up per trial) takes over what expired.
    lease = 1.0
    stale = MaintenanceService(store, MODEL, OFFLINE_EMBEDDING_SET, options=MaintenanceOptions(stale_run_seconds=lease))
    rerun = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(CHUNKER),
        options=IngestionOptions(embedding_batch_size=4),
    )
    for trial in range(20):
        await wipe_data(store)
        # About 0.15 s per embedding call, two lanes: a run lasts five seconds or more.
        process = worker(tmp_path / "corpus", "--lease", str(lease), "--delay", "0.15")
        await asyncio.sleep(rng.uniform(1.0, 4.0))  # imports and connecting take about a second
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)

        # The server may still be applying a commit the worker sent just before it died.
        await wait_for_no_transactions(store)
        killed = await graph_state(store)
        assert_whole(killed, planned)
        assert len(killed["documents"]) < len(planned), f"trial {trial}: the kill came after the run ended"  # type: ignore[arg-type]

        await asyncio.sleep(lease + 0.5)  # the killed worker's leases expire and are taken over
        # The killed run (if it had begun) stays Running: stale, until marked Failed.
        running = await store.read("MATCH (r:IngestionRun {status: 'Running'}) RETURN count(r) AS n")
        assert (await stale.check()).count(HealthFinding.STALE_RUNS) == running.value("n", 0), f"trial {trial}"
        assert len((await stale.fail_stale_runs()).runs) == running.value("n", 0)
        receipt = await rerun.ingest(Sources.folder(tmp_path / "corpus", base_uri=BASE_URI))
        assert all(o.status in (DocumentStatus.INGESTED, DocumentStatus.UNCHANGED) for o in receipt.documents), receipt
        final = await graph_state(store)
        assert set(final["documents"]) == set(planned)  # type: ignore[arg-type]
        assert_whole(final, planned)
        assert final["leases"] == 0


class _PacedEmbedder:
    """The offline embedder with a short pause per call, so cancels land at every stage of a document."""

    def __init__(self, rng: random.Random) -> None:
        self.inner = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
        self.rng = rng

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        await asyncio.sleep(self.rng.uniform(0.02, 0.08))
        return await self.inner.embed(texts)


async def test_cancels_at_random_points_of_a_run_leave_no_lease_and_the_next_run_completes(
    graph: None, store: Store, tmp_path: Path
) -> None:
    planned = write_corpus(tmp_path / "corpus", 200, seed=13)
    sources = list(Sources.folder(tmp_path / "corpus", base_uri=BASE_URI))
    rng = random.Random(1212)
    ingestion = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        _PacedEmbedder(rng),
        chunker=Chunker(CHUNKER),
        options=IngestionOptions(embedding_batch_size=4, documents_in_flight=8),
    )
    cancelled = 0
    for trial in range(20):
        run = asyncio.create_task(ingestion.ingest(sources))
        await asyncio.sleep(rng.uniform(0.05, 0.6))
        if run.done():  # the run finished first: nothing left to cancel
            break
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        cancelled += 1
        state = await graph_state(store)
        assert state["leases"] == 0, f"trial {trial}: {state['leases']} leases left"
        assert_whole(state, planned)
    assert cancelled >= 15, "most trials cancelled a run in progress"

    receipt = await ingestion.ingest(sources)
    assert all(o.status in (DocumentStatus.INGESTED, DocumentStatus.UNCHANGED) for o in receipt.documents), receipt
    final = await graph_state(store)
    assert set(final["documents"]) == set(planned)  # type: ignore[arg-type]
    assert_whole(final, planned)
    assert final["leases"] == 0
    statuses = await store.read("MATCH (r:IngestionRun) RETURN r.status AS status, count(*) AS runs")
    assert {row["status"]: row["runs"] for row in statuses} == {"Failed": cancelled, "Completed": 1}


@pytest.fixture
def restartable_server() -> Iterator[LocalDbSettings]:
    """A server of its own (the suite's connection stays on the shared one)."""
    port = int(os.environ.get("GRAPHRAG_TEST_NEO4J_PORT", "7688")) + 100
    settings = LocalDbSettings.from_env(home_name=f"home-restart-{port}", port=port)
    start(settings)
    try:
        yield settings
    finally:
        stop(settings)


async def _on(settings: LocalDbSettings, cypher: str, *, write: bool = False) -> int:
    """One statement on the restartable server through a store of its own (opened per call: it restarts)."""
    store = await open_store(ConnectionSettings(uri=settings.uri, password=settings.password))
    try:
        result = await (store.execute(cypher, name="test.restart") if write else store.read(cypher, name="test.count"))
        return int(result.value("n", 0))
    finally:
        await store.driver.close()


async def _count_documents(settings: LocalDbSettings) -> int:
    return await _on(settings, "MATCH (d:Document) RETURN count(d) AS n")


async def _wipe(settings: LocalDbSettings) -> None:
    # IN TRANSACTIONS needs an auto-commit statement.
    await _on(
        settings,
        "MATCH (n) WHERE NOT n:GraphRagMigration CALL (n) { DETACH DELETE n } IN TRANSACTIONS",
        write=True,
    )


async def test_a_server_stopped_mid_run_fails_documents_with_codes_and_a_rerun_finishes(
    restartable_server: LocalDbSettings, tmp_path: Path
) -> None:
    settings = restartable_server
    planned = write_corpus(tmp_path / "corpus", 60, seed=5)
    env = dict(os.environ, NEO4J_URI=settings.uri, NEO4J_PASSWORD=settings.password)
    prepared = worker(tmp_path / "corpus", "--migrate", "--delay", "0", env=env)
    receipt_of(prepared)  # applies the schema on this server and ingests once
    await _wipe(settings)

    # Short leases: the documents in flight when the server stops keep theirs until they expire.
    process = worker(tmp_path / "corpus", "--delay", "0.05", "--lease", "2", env=env)
    deadline = time.monotonic() + 120
    while await _count_documents(settings) < 5:
        assert time.monotonic() < deadline, "the worker wrote nothing"
        await asyncio.sleep(0.2)
    await asyncio.to_thread(stop, settings)
    receipt = receipt_of(process)
    outcomes = receipt["documents"]
    assert isinstance(outcomes, list) and len(outcomes) == len(planned)
    failed = [o for o in outcomes if o["status"] == "Failed"]
    assert failed, "documents after the stop fail"
    assert all(o["errorCode"] for o in failed), "every failure has a code"
    assert receipt["status"] in ("Completed", "Failed")

    await asyncio.to_thread(start, settings)
    await asyncio.sleep(2.5)  # the stopped run's leases expire and are taken over
    again = receipt_of(worker(tmp_path / "corpus", "--lease", "600", env=env))
    assert all(o["status"] in ("Ingested", "Unchanged") for o in again["documents"]), again  # type: ignore[attr-defined]
    assert await _count_documents(settings) == len(planned)
