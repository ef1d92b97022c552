"""Scale on one machine: ingestion, indexes, retrieval, scope, store and reset at 20k, 100k and 1M chunks.

A generated corpus (``corpus.py``: 2,000 / 10,000 / 100,000 documents of about ten
chunks, in ten 10% slices) is ingested by each contender on a fresh database, one
ingest call per slice, so throughput per slice shows whether ingestion slows as the
indexes grow. After graphrag-orm's ingest the run also measures: index population to
ONLINE, the rebuild of the chunk vector index declaring ``documentId`` (the reviewed
``--vector-filter`` revision, applied through the migration API), hybrid retrieval
latency cold (right after a server restart) and warm, against the floor of the two
raw index queries, a five-document scope searched the three ways (exact, over-fetch,
in-index), the store's size on disk, the server's heap and page cache, and
``MaintenanceService.reset()``. The floor is ingested and deleted the hand-written way.

    .venv/bin/python benchmarks/scale/run.py --size 20k
    .venv/bin/python benchmarks/scale/run.py --size 100k --contenders ours,floor,neo4j-graphrag
    .venv/bin/python benchmarks/scale/run.py --size 1m            # 75 min for ours, about an hour for the floor
    .venv/bin/python benchmarks/scale/run.py --documents 200 --questions 20   # a quick look

The local server (port 7697, home ``home-bench`` unless --port/--home) is started with
a heap and page cache sized for the run and stopped at the end if this run started it.
Set NEO4J_URI (and NEO4J_PASSWORD) to use another server instead; the benchmark wipes it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    BASE_URI,
    BENCH_HOME,
    BENCH_PORT,
    SCRATCH,
    BenchServer,
    LoadProbe,
    generate_questions,
    machine_description,
    print_table,
    reset_database,
    server_version,
)
from corpus import SIZES, CorpusInfo, document_name, sample_corpus, slice_folder, write_corpus
from ingest.run import Outcome, ingest_floor, ingest_neo4j_graphrag, write_chunk_plan
from retrieve.run import Floor, Latencies, Question

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET, EmbeddingSet
from graphrag_orm.evidence import Route, ScopeStrategy
from graphrag_orm.ingestion import IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.maintenance import MaintenanceService
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.migrate.autogenerate import next_revision
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.retrieval import Retriever, Retrievers, to_query
from graphrag_orm.retrieval.scope import DocumentsScope
from graphrag_orm.sources import Sources, document_id
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_driver

LAYOUT = Layout.DEFAULT
MODEL: LexicalModel = for_layout(LAYOUT)
RESULTS = SCRATCH / "scale"
#: (heap, page cache) per size: see README.md, "Sizing the server".
SERVER_SIZES = {"20k": ("1g", "512m"), "100k": ("2g", "2g"), "1m": ("4g", "8g")}
FLOOR_RESET = "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
SCOPE_DOCUMENTS = 5


class Stopped(Exception):
    """SIGTERM arrived: unwind through every ``finally`` so the server and driver are closed."""


def _on_term(signum: int, frame: object) -> None:
    raise Stopped(f"signal {signum}")


# ------------------------------------------------------------------ the server


class ScaleServer:
    """The run's database: NEO4J_URI when set, else the local server started with the run's heap and page cache.

    A local server already running on the port is used as it is (and not stopped);
    one this run started is stopped on exit. ``restart()`` makes the next reads cold.
    """

    def __init__(self, port: int, home: str, heap: str, page_cache: str) -> None:
        self.bench = BenchServer(port=port, home=home)
        self.local: LocalDbSettings | None = None
        self.started = False
        if not self.bench.uri:
            base = LocalDbSettings.from_env(home_name=home, port=port)
            self.local = dataclasses.replace(base, heap=heap, page_cache=page_cache)

    def __enter__(self) -> ScaleServer:
        if self.local is not None:
            began = time.monotonic()
            result = start(self.local)
            self.started = not result.message.startswith("already")
            sized = f"heap {self.local.heap}, page cache {self.local.page_cache}" if self.started else "as it runs"
            print(f"neo4j: {result.message} ({time.monotonic() - began:.1f} s, {sized}, home {self.local.home})")
        self.bench.__enter__()  # finds the server running: only connects
        return self

    def __exit__(self, *exc: object) -> None:
        if self.local is not None and self.started:
            print(f"neo4j: {stop(self.local).message}")

    @property
    def settings(self) -> ConnectionSettings:
        return self.bench.settings

    @property
    def server_pid(self) -> int | None:
        return self.bench.server_pid

    @property
    def can_restart(self) -> bool:
        return self.local is not None and self.started

    def restart(self) -> float:
        assert self.local is not None
        began = time.monotonic()
        stop(self.local)
        start(self.local)
        return time.monotonic() - began

    def store_bytes(self) -> dict[str, int] | None:
        """``du`` of the database's store and transaction folders (None for an external server)."""
        if self.local is None:
            return None
        data = self.local.home / "data"
        sizes: dict[str, int] = {}
        for part, folder in (
            ("store", data / "databases" / "neo4j"),
            ("transactions", data / "transactions" / "neo4j"),
        ):
            out = subprocess.run(["du", "-sb", str(folder)], capture_output=True, text=True, check=False).stdout
            sizes[part] = int(out.split()[0]) if out else 0
        return sizes


class Session:
    """The driver and store on the server, reopened after a restart."""

    def __init__(self, server: ScaleServer) -> None:
        self.server = server
        self.store: Store | None = None

    async def open(self) -> Store:
        settings = self.server.settings
        self.store = Store(await open_driver(settings), database=settings.database)
        return self.store

    async def close(self) -> None:
        if self.store is not None:
            await self.store.driver.close()
            self.store = None


# ------------------------------------------------------------------ schema and measurement helpers


def embedding_set(dimensions: int) -> EmbeddingSet:
    return OFFLINE_EMBEDDING_SET.model_copy(update={"dimensions": dimensions})


async def fresh_database(store: Store, chosen: EmbeddingSet, layout: Layout = LAYOUT) -> Chain:
    """``common.reset_database``, then (another dimension) a revision moving the chunk index to ``chosen``.

    A tenanted ``layout`` (``tenants.py``) gets the tenanted chain (``Chain.load(tenanted=True)``) first.
    """
    await reset_database(store)
    chain = Chain.load(tenanted=layout.tenanted)
    if layout.tenanted:
        await Migrator(store, chain).apply()
    if chosen == OFFLINE_EMBEDDING_SET:
        return chain
    revision = next_revision(chain, layout, chosen, revision="9001_scale_dimensions", message="scale dimensions")
    assert revision is not None
    chain = Chain.from_revisions([*chain.revisions, revision])
    await Migrator(store, chain).apply()
    return chain


async def await_indexes(store: Store, limit_seconds: float) -> float:
    """Seconds until every index is ONLINE at 100% population (SHOW INDEXES), polled every 50 ms."""
    began = time.perf_counter()
    while time.perf_counter() - began < limit_seconds:
        rows = await store.read(
            "SHOW INDEXES YIELD name, state, populationPercent RETURN name, state, populationPercent",
            name="bench.index-state",
        )
        if all(row["state"] == "ONLINE" and row["populationPercent"] >= 100.0 for row in rows):
            return time.perf_counter() - began
        await asyncio.sleep(0.05)
    raise SystemExit(f"indexes not ONLINE after {limit_seconds:.0f} s (--index-timeout)")


async def apply_vector_filter(
    store: Store, chain: Chain, chosen: EmbeddingSet, limit_seconds: float
) -> tuple[Chain, float]:
    """The reviewed ``--vector-filter documentId`` revision, applied; seconds until the new index is ONLINE."""
    revision = next_revision(
        chain,
        LAYOUT,
        chosen,
        revision="9002_vector_filter",
        message="filter the vector index by document",
        vector_filter=("documentId",),
    )
    if revision is None:
        raise SystemExit("the vector-filter revision came out empty: the index already declares documentId")
    chain = Chain.from_revisions([*chain.revisions, revision])
    began = time.perf_counter()
    await Migrator(store, chain, index_timeout_seconds=limit_seconds).apply()
    await await_indexes(store, limit_seconds)
    return chain, time.perf_counter() - began


async def invariants(store: Store, planned_documents: int, planned_chunks: int) -> dict[str, Any]:
    """Documents and chunks against the plan, duplicate chunk ids and leases left."""

    async def number(query: str) -> int:
        return int((await store.read(query, name="bench.invariant")).records[0]["n"])

    found = {
        "documents": await number(f"MATCH (d:{LAYOUT.document_label}) RETURN count(d) AS n"),
        "chunks": await number(f"MATCH (c:{LAYOUT.chunk_label}) RETURN count(c) AS n"),
        "duplicate_chunk_ids": await number(
            f"MATCH (c:{LAYOUT.chunk_label}) WITH c.id AS id, count(*) AS k WHERE k > 1 RETURN count(id) AS n"
        ),
        "leases": await number(f"MATCH (l:{LAYOUT.lease_label}) RETURN count(l) AS n"),
    }
    found["held"] = (
        found["documents"] == planned_documents
        and found["chunks"] == planned_chunks
        and found["duplicate_chunk_ids"] == 0
        and found["leases"] == 0
    )
    return found


async def our_nodes(store: Store) -> int:
    labels = " OR ".join(f"n:{label}" for label in LAYOUT.labels)
    return int((await store.read(f"MATCH (n) WHERE {labels} RETURN count(n) AS n", name="bench.left")).records[0]["n"])


async def server_memory(store: Store) -> dict[str, Any]:
    """Heap used and committed (JMX through ``dbms.queryJmx``) and the page cache configured (SHOW SETTINGS)."""
    memory: dict[str, Any] = {"source": "dbms.queryJmx java.lang:type=Memory"}
    try:
        rows = await store.read(
            "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
            "RETURN attributes.HeapMemoryUsage.value.properties AS heap",
            name="bench.jmx",
        )
        heap = rows.records[0]["heap"]
        memory["heap_used"], memory["heap_committed"] = int(heap["used"]), int(heap["committed"])
    except Exception as error:  # the procedure may be off or restricted: say so, keep going
        memory["source"] = f"unavailable ({type(error).__name__})"
    rows = await store.read(
        "SHOW SETTINGS YIELD name, value WHERE name = 'server.memory.pagecache.size' RETURN value",
        name="bench.settings",
    )
    memory["page_cache_configured"] = rows.records[0]["value"] if rows.records else None
    return memory


def progress_printer(label: str, total_documents: int) -> Callable[[Any], None]:
    """A ``reset(progress=...)`` callback printing the totals each time another ~10% of the documents is gone."""
    shown = [0]

    def report(progress: Any) -> None:
        done = getattr(progress, "documents", None)
        if isinstance(done, int) and total_documents:
            tenth = done * 10 // total_documents
            if tenth <= shown[0] and done < total_documents:
                return
            shown[0] = tenth
        print(f"  {label} progress: {progress}")

    return report


async def reset_ours(store: Store, chosen: EmbeddingSet, documents: int) -> dict[str, Any]:
    """``MaintenanceService.reset()`` (with a progress callback when it takes one), timed and verified."""
    service = MaintenanceService(store, MODEL, chosen)
    kwargs: dict[str, Any] = {}
    if "progress" in inspect.signature(service.reset).parameters:
        kwargs["progress"] = progress_printer("reset", documents)
    began = time.perf_counter()
    await service.reset(**kwargs)
    seconds = time.perf_counter() - began
    left = await our_nodes(store)
    if left:
        raise SystemExit(f"graphrag-orm's reset left {left} nodes of the layout's labels")
    return {"seconds": seconds, "left": left, "progress": bool(kwargs)}


async def reset_floor(store: Store) -> dict[str, Any]:
    began = time.perf_counter()
    await store.execute(FLOOR_RESET, name="bench.floor-reset")
    seconds = time.perf_counter() - began
    left = await our_nodes(store)
    if left:
        raise SystemExit(f"the floor's delete left {left} nodes of the layout's labels")
    return {"seconds": seconds, "left": left, "progress": False}


# ------------------------------------------------------------------ ingestion, per slice


async def warm_up_ingest(
    name: str,
    store: Store,
    chosen: EmbeddingSet,
    args: argparse.Namespace,
    one_slice: Callable[[Path], Awaitable[Outcome]],
    layout: Layout = LAYOUT,
) -> None:
    """Ingest ``--warmup-documents`` other documents (seed + 1), untimed, then empty the database again
    (a fresh database of ``layout``).

    The server's JIT and statement caches are then warm for every contender alike: a
    cold server on this machine needs about a thousand documents before its throughput
    settles (benchmarks/ingest/README.md, Method), which would otherwise be read as the
    cost of a small graph in the first slices.
    """
    if not args.warmup_documents:
        return
    folder = RESULTS / f"corpus-s{args.seed + 1}-n{args.warmup_documents}"
    write_corpus(folder, args.warmup_documents, args.seed + 1, args.processes)
    began = time.monotonic()
    for index in range(10):
        await one_slice(slice_folder(folder, index))
    await fresh_database(store, chosen, layout)
    print(f"  {name}: warm-up of {args.warmup_documents:,} other documents in {time.monotonic() - began:.1f} s")


async def ingest_sliced(
    name: str, folder: Path, one_slice: Callable[[Path], Awaitable[Outcome]], server_pid: int | None
) -> dict[str, Any]:
    """Ten ingest calls, one per slice, under one LoadProbe: chunks/s per slice and over the run."""
    slices: list[dict[str, Any]] = []
    with LoadProbe(server_pid) as probe:
        for index in range(10):
            outcome = await one_slice(slice_folder(folder, index))
            slices.append({"seconds": outcome.seconds, "documents": outcome.documents, "chunks": outcome.chunks})
            print(
                f"  {name}, slice {index}: {outcome.chunks:,} chunks in {outcome.seconds:.1f} s "
                f"= {outcome.chunks / outcome.seconds:,.0f} chunks/s"
            )
    load = probe.report()
    seconds = sum(s["seconds"] for s in slices)
    chunks = sum(s["chunks"] for s in slices)
    print(f"  {name}: {load.describe()}")
    return {
        "slices": slices,
        "seconds": seconds,
        "chunks": chunks,
        "documents": sum(s["documents"] for s in slices),
        "chunks_per_second": chunks / seconds if seconds else 0.0,
        "load": dataclasses.asdict(load) | {"others_busy": load.others_busy},
    }


def slice_ingester(
    contender: str, store: Store, chosen: EmbeddingSet, settings: ConnectionSettings
) -> Callable[[Path], Awaitable[Outcome]]:
    """One contender's ingest of one slice folder."""
    in_flight = IngestionOptions().documents_in_flight

    async def ours(where: Path) -> Outcome:
        service = IngestionService(
            store, MODEL, chosen, HashingEmbedder(chosen.dimensions), chunker=Chunker(ChunkerOptions())
        )
        began = time.perf_counter()
        receipt = await service.ingest(Sources.folder(where, base_uri=BASE_URI))
        if receipt.failed or receipt.unchanged:
            raise SystemExit(f"graphrag-orm: {receipt.failed} failed, {receipt.unchanged} unchanged in {where}")
        return Outcome("graphrag-orm", time.perf_counter() - began, receipt.ingested, receipt.chunks_written)

    async def floor(where: Path) -> Outcome:
        return await ingest_floor(store.driver, store.database, where, in_flight)

    async def theirs(where: Path) -> Outcome:
        plan = where / "neo4j-graphrag-plan.json"
        if not plan.is_file():
            write_chunk_plan(where, plan)  # outside the timing, kept with the corpus
        return await asyncio.to_thread(ingest_neo4j_graphrag, where, plan, settings, "apoc-free", in_flight)

    return {"ours": ours, "floor": floor, "neo4j-graphrag": theirs}[contender]


# ------------------------------------------------------------------ retrieval


def percentiles(latencies: Latencies) -> dict[str, float]:
    return {"p50": latencies.p50, "p95": latencies.p95, "p99": latencies.percentile(99)}


async def hybrid_latency(
    store: Store, chosen: EmbeddingSet, questions: list[Question], rounds: int
) -> dict[str, dict[str, float]]:
    """Ours and the floor, interleaved question by question (alternating who goes first)."""
    options = Retrievers.hybrid()
    retriever = Retriever(store, MODEL, chosen, HashingEmbedder(chosen.dimensions), options)
    floor = Floor(store, retriever, options)
    ours, raw = Latencies("ours", []), Latencies("floor", [])

    async def ask_ours(question: Question) -> None:
        await retriever.retrieve(question.text, options)

    pair = [(ours, ask_ours), (raw, floor.ask)]
    for _ in range(rounds):
        for index, question in enumerate(questions):
            for into, ask in pair if index % 2 == 0 else reversed(pair):
                began = time.perf_counter()
                await ask(question)
                into.seconds.append(time.perf_counter() - began)
    return {"ours": percentiles(ours), "floor": percentiles(raw)}


def scope_documents(documents: int) -> tuple[str, ...]:
    """Five documents spread over the corpus (one per fifth), by the ids ingestion gives them."""
    step = max(1, documents // SCOPE_DOCUMENTS)
    return tuple(document_id(BASE_URI + document_name(n)) for n in range(0, documents, step)[:SCOPE_DOCUMENTS])


async def scoped(
    store: Store,
    chosen: EmbeddingSet,
    questions: list[Question],
    scope: DocumentsScope,
    strategy: ScopeStrategy,
    exact_chunks: int | None,
) -> tuple[Latencies, list[list[str]]]:
    """Vector retrieval inside ``scope`` with a fresh retriever, after one untimed question.

    Fails unless the trace says the vector route used ``strategy``; returns the
    latencies and each question's chunk ids.
    """
    options = Retrievers.vector().with_scope(scope)
    if exact_chunks is not None:
        options = options.model_copy(update={"scope_exact_chunks": exact_chunks})
    retriever = Retriever(store, MODEL, chosen, HashingEmbedder(chosen.dimensions), options)
    latencies = Latencies(strategy.value, [])
    found: list[list[str]] = []
    await retriever.retrieve(questions[0].text, options)  # untimed: the statement compiled, the index read once
    for question in questions:
        began = time.perf_counter()
        evidence = await retriever.retrieve(question.text, options)
        latencies.seconds.append(time.perf_counter() - began)
        ran = [r.strategy for r in (evidence.scope.routes if evidence.scope else ()) if r.route == Route.VECTOR]
        if ran != [strategy]:
            raise SystemExit(f"scoped retrieval: wanted the {strategy.value} strategy, the trace says {ran}")
        found.append([item.chunk_id for item in evidence.items])
    return latencies, found


def recall(exact: list[list[str]], other: list[list[str]]) -> float:
    """Share of exact's items (over all questions) that the other strategy returned too."""
    wanted = sum(len(items) for items in exact)
    kept = sum(len(set(a) & set(b)) for a, b in zip(exact, other, strict=True))
    return kept / wanted if wanted else 1.0


# ------------------------------------------------------------------ the contenders


async def run_ours(
    session: Session, server: ScaleServer, args: argparse.Namespace, info: CorpusInfo, questions: list[Question]
) -> dict[str, Any]:
    """Ingest, indexes, hybrid latency cold and warm, scope three ways, store, memory, reset."""
    chosen = embedding_set(args.dimensions)
    store = session.store
    assert store is not None
    chain = await fresh_database(store, chosen)
    ingester = slice_ingester("ours", store, chosen, server.settings)
    await warm_up_ingest("graphrag-orm", store, chosen, args, ingester)
    result: dict[str, Any] = {"ingest": await ingest_sliced("graphrag-orm", args.corpus, ingester, server.server_pid)}
    result["invariants"] = await invariants(store, info.documents, info.chunks)
    result["indexes_online_seconds"] = await await_indexes(store, args.index_timeout)
    print(f"  indexes ONLINE at 100% {result['indexes_online_seconds']:.2f} s after the last slice")
    cold_questions, timed = questions[: args.cold_questions], questions
    if args.cold_questions and server.can_restart:
        await session.close()
        print(f"  server restarted for cold reads in {server.restart():.1f} s")
        store = await session.open()
        await await_indexes(store, args.index_timeout)
        result["cold"] = await hybrid_latency(store, chosen, cold_questions, 1)
    else:
        why = "--cold-questions 0" if not args.cold_questions else "the server is not this run's to restart"
        print(f"  cold latency skipped: {why}")
    await hybrid_latency(store, chosen, timed, 1)  # warm-up pass
    result["warm"] = await hybrid_latency(store, chosen, timed, args.rounds)
    scope = DocumentsScope(document_ids=scope_documents(info.documents))
    sample = questions[: args.scope_questions]
    exact, exact_items = await scoped(store, chosen, sample, scope, ScopeStrategy.EXACT, None)
    over, over_items = await scoped(store, chosen, sample, scope, ScopeStrategy.OVER_FETCH, 1)
    chain, result["vector_filter_seconds"] = await apply_vector_filter(store, chain, chosen, args.index_timeout)
    print(f"  vector index rebuilt declaring documentId: ONLINE in {result['vector_filter_seconds']:.2f} s")
    inside, inside_items = await scoped(store, chosen, sample, scope, ScopeStrategy.IN_INDEX, 1)
    result["scoped"] = {
        s.name: {"p50": s.p50, "p95": s.p95, "recall_of_exact": recall(exact_items, items), "questions": len(items)}
        for s, items in ((exact, exact_items), (over, over_items), (inside, inside_items))
    }
    result["store_bytes"] = server.store_bytes()
    result["memory"] = await server_memory(store)
    result["reset"] = await reset_ours(store, chosen, info.documents)
    return result


async def run_other(
    contender: str, session: Session, server: ScaleServer, args: argparse.Namespace, info: CorpusInfo
) -> dict[str, Any]:
    """The floor (and its hand-written delete) or neo4j-graphrag: sliced ingest, invariants, store size."""
    chosen = embedding_set(args.dimensions)
    store = session.store
    assert store is not None
    await fresh_database(store, chosen)
    name = "floor" if contender == "floor" else "neo4j-graphrag"
    ingester = slice_ingester(contender, store, chosen, server.settings)
    await warm_up_ingest(name, store, chosen, args, ingester)
    result: dict[str, Any] = {"ingest": await ingest_sliced(name, args.corpus, ingester, server.server_pid)}
    result["invariants"] = await invariants(store, info.documents, info.chunks)
    result["store_bytes"] = server.store_bytes()
    if contender == "floor":
        result["reset"] = await reset_floor(store)
    return result


# ------------------------------------------------------------------ main


def chosen_contenders(args: argparse.Namespace) -> list[str]:
    """The contenders asked for, less those this size or dimension cannot run (said out loud)."""
    wanted = args.contenders.split(",") if args.contenders else ["ours", "floor"]
    if not args.contenders and args.size == "100k":
        wanted.append("neo4j-graphrag")
    unknown = set(wanted) - {"ours", "floor", "neo4j-graphrag"}
    if unknown:
        raise SystemExit(f"unknown contenders {sorted(unknown)}")
    if args.dimensions != OFFLINE_EMBEDDING_SET.dimensions:
        # benchmarks/ingest/run.py's floor and neo4j-graphrag side embed at the offline set's 256.
        skipped = [c for c in wanted if c != "ours"]
        if skipped:
            print(f"note: {', '.join(skipped)} skipped at {args.dimensions} dimensions: their writers embed at 256")
        wanted = [c for c in wanted if c == "ours"]
    return wanted


async def main(args: argparse.Namespace) -> dict[str, Any]:
    print(f"machine: {machine_description()}")
    info = write_corpus(args.corpus, args.documents, args.seed, args.processes)
    print(
        f"corpus: {info.documents:,} documents, {info.chunks:,} chunks (the chunker's plan), "
        f"{info.utf8_bytes / 1e6:.1f} MB; slices of {', '.join(map(str, info.slice_chunks))} chunks"
    )
    embedder = HashingEmbedder(args.dimensions)
    texts = generate_questions_for(args, info)
    questions = [Question(text, to_query(text), embedder.embed_one(text)[0]) for text in texts]
    contenders = chosen_contenders(args)
    print(f"server: heap {args.heap}, page cache {args.page_cache} ({args.sizing}); contenders {contenders}")
    results: dict[str, Any] = {"size": args.label, "dimensions": args.dimensions, "corpus": dataclasses.asdict(info)}
    results |= {"machine": machine_description(), "heap": args.heap, "page_cache": args.page_cache}
    with ScaleServer(args.port, args.home, args.heap, args.page_cache) as server:
        session = Session(server)
        store = await session.open()
        try:
            results["server"] = f"Neo4j {await server_version(store)} at {server.settings.uri}"
            print(results["server"])
            for contender in contenders:
                print(f"\n## {contender}")
                if contender == "ours":
                    results["ours"] = await run_ours(session, server, args, info, questions)
                else:
                    results[contender] = await run_other(contender, session, server, args, info)
            if session.store is not None:
                await reset_database(session.store)
        finally:
            await session.close()
    report(results)
    return results


def generate_questions_for(args: argparse.Namespace, info: CorpusInfo, among: Sequence[int] | None = None) -> list[str]:
    """The questions, drawn from 500 documents spread over the corpus (not all of it in memory),
    or over the document numbers ``among`` (one tenant's, ``tenants.py``)."""
    sample = sample_corpus(args.seed, info.documents, min(info.documents, 500), among)
    return generate_questions(sample, args.questions, seed=args.seed)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def ingest_cells(ingest: dict[str, Any]) -> list[str]:
    """An ingest table's cells from ``ingest_sliced``'s figures: chunks, time, chunks/s, per slice, CPU, others."""
    return [
        f"{ingest['chunks']:,}",
        f"{ingest['seconds']:.1f} s",
        f"{ingest['chunks_per_second']:,.0f}",
        " / ".join(f"{s['chunks'] / s['seconds']:,.0f}" for s in ingest["slices"]),
        f"{ingest['load']['client_cpu']:.1f} s",
        f"{ingest['load']['server_cpu']:.1f} s",
        f"{ingest['load']['others_busy']:.0%}",
    ]


def report(results: dict[str, Any]) -> None:
    """The Markdown tables: ingest per contender, retrieval, scope, and the store."""
    names = [c for c in ("ours", "floor", "neo4j-graphrag") if c in results]
    print(f"\n## {results['size']}, {results['dimensions']} dimensions: ingest, one call per 10% slice\n")
    rows = []
    for name in names:
        ingest, held = results[name]["ingest"], results[name]["invariants"]
        reset = results[name].get("reset")
        rows.append(
            [
                name,
                *ingest_cells(ingest),
                "held" if held["held"] else f"BROKEN {held}",
                f"{reset['seconds']:.2f} s" if reset else "",
            ]
        )
    print_table(
        [
            "Contender",
            "Chunks",
            "Time",
            "Chunks/s",
            "Per slice",
            "Client CPU",
            "Server CPU",
            "Others",
            "Invariants",
            "Reset",
        ],
        rows,
    )
    ours = results.get("ours")
    if not ours:
        return
    print("\n## Hybrid retrieval: graphrag-orm against the two raw index queries\n")
    rows = []
    for phase in ("cold", "warm"):
        if phase in ours:
            o, f = ours[phase]["ours"], ours[phase]["floor"]
            rows.append(
                [
                    phase,
                    _ms(o["p50"]),
                    _ms(o["p95"]),
                    _ms(o["p99"]),
                    _ms(f["p50"]),
                    _ms(f["p95"]),
                    _ms(f["p99"]),
                    f"{o['p95'] / f['p95']:.2f}x",
                ]
            )
    print_table(
        ["Phase", "Ours p50", "Ours p95", "Ours p99", "Floor p50", "Floor p95", "Floor p99", "Ours p95 / floor p95"],
        rows,
    )
    print(f"\n## Vector retrieval inside {SCOPE_DOCUMENTS} documents, the three strategies\n")
    print_table(
        ["Strategy", "p50", "p95", "Recall of exact's items"],
        [[k, _ms(v["p50"]), _ms(v["p95"]), f"{v['recall_of_exact']:.0%}"] for k, v in ours["scoped"].items()],
    )
    print("\n## Indexes, store and server\n")
    store, memory = ours["store_bytes"] or {}, ours["memory"]
    print_table(
        ["Figure", "Value"],
        [
            ["indexes ONLINE after the last slice", f"{ours['indexes_online_seconds']:.2f} s"],
            ["vector index rebuilt with documentId, to ONLINE", f"{ours['vector_filter_seconds']:.2f} s"],
            ["store on disk (data + transactions)", " + ".join(f"{v / 1e6:,.1f} MB" for v in store.values()) or "n/a"],
            [
                "heap used / committed",
                f"{memory.get('heap_used', 0) / 1e6:,.0f} MB / "
                f"{memory.get('heap_committed', 0) / 1e6:,.0f} MB ({memory['source']})",
            ],
            ["page cache configured", str(memory["page_cache_configured"])],
        ],
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_scale_flags(parser)
    parser.add_argument(
        "--contenders",
        help="comma-separated: ours, floor, neo4j-graphrag (default: ours,floor; and neo4j-graphrag at 100k)",
    )
    parser.add_argument(
        "--cold-questions", type=int, default=50, help="questions right after a restart (0: no restart)"
    )
    parser.add_argument("--scope-questions", type=int, default=50, help="questions per scope strategy")
    parser.add_argument("--clean", action="store_true", help="remove the corpus folder (the cache) at the end")
    args = parser.parse_args(argv)
    settle_size(args)
    return args


def add_scale_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of the corpus, the server, the warm-up and warm retrieval (shared with ``tenants.py``)."""
    parser.add_argument("--size", choices=sorted(SIZES), default="20k", help="20k, 100k or 1m chunks")
    parser.add_argument("--documents", type=int, help="this many documents instead of --size (dev runs)")
    parser.add_argument("--dimensions", type=int, choices=(256, 384), default=256)
    parser.add_argument("--port", type=int, default=BENCH_PORT)
    parser.add_argument("--home", default=BENCH_HOME)
    parser.add_argument("--heap", help="the local server's heap (default by size, see README)")
    parser.add_argument("--page-cache", help="the local server's page cache (default by size)")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--processes", type=int, default=2, help="processes writing the corpus")
    parser.add_argument(
        "--warmup-documents", type=int, default=1000, help="other documents each contender ingests first, untimed"
    )
    parser.add_argument("--questions", type=int, default=200, help="warm questions (per round)")
    parser.add_argument("--rounds", type=int, default=2, help="warm rounds over the questions")
    parser.add_argument("--index-timeout", type=float, default=3600.0, help="seconds to wait for ONLINE indexes")


def settle_size(args: argparse.Namespace) -> None:
    """From ``--size`` or ``--documents``: the run's label, documents, server sizing and corpus folder (in place)."""
    args.label = f"{args.documents}-documents" if args.documents else args.size
    args.documents = args.documents or SIZES[args.size]
    sizing = next(
        name for name, count in sorted(SIZES.items(), key=lambda kv: kv[1]) if args.documents <= count or name == "1m"
    )
    heap, page_cache = SERVER_SIZES[sizing]
    args.sizing = "flags" if args.heap or args.page_cache else f"the {sizing} default"
    args.heap, args.page_cache = args.heap or heap, args.page_cache or page_cache
    args.corpus = RESULTS / f"corpus-s{args.seed}-n{args.documents}"


def run(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    try:
        results = asyncio.run(main(args))
    finally:
        if args.clean and args.corpus.exists():
            shutil.rmtree(args.corpus)
            print(f"corpus: removed {args.corpus}")
    target = RESULTS / f"result-{args.label}-{args.dimensions}.json"
    target.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    print(f"\nresults: {target.relative_to(SCRATCH.parent)}")


if __name__ == "__main__":
    run()
