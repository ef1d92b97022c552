"""Ingestion throughput: graphrag-orm against a hand-written floor and neo4j-graphrag, in one run.

Generates a deterministic corpus (2,000 Markdown documents, about 20,000 chunks with
the chunker's defaults), then ingests it three ways, each on a fresh database
(data deleted, indexes dropped and re-created from the toolkit's chain):

- **graphrag-orm**: ``IngestionService.ingest`` of the folder with ``HashingEmbedder(256)``:
  load, unchanged check, lease, chunk, embed, one transaction per document.
- **floor**: a hand-written writer doing the same work with the least machinery: the
  same chunk plans and the same vectors, computed the same way inside the timing, then
  one transaction per document of hand-written UNWIND statements writing the same
  nodes, properties, edges and vectors, at the same document concurrency. The two
  graphs are compared (labels, relationship types, property keys, chunk spans and
  vectors) and must be identical but for run ids and timestamps.
- **neo4j-graphrag** 1.22.0: its lexical graph pipeline (splitter, chunk embedder,
  ``LexicalGraphBuilder``, ``Neo4jWriter``), in its own venv as a subprocess, given our
  chunk texts and computing our HashingEmbedder vectors. See README.md for why its
  writer needs APOC and what is measured without it.

    .venv/bin/python benchmarks/ingest/run.py
    .venv/bin/python benchmarks/ingest/run.py --documents 200      # a quick look
    .venv/bin/python benchmarks/ingest/run.py --diagnose           # + where ours spends its time

Set NEO4J_URI (and NEO4J_PASSWORD) to use another server; the benchmark wipes it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import neo4j
from common import (
    BASE_URI,
    NEO4J_GRAPHRAG_PYTHON,
    SCRATCH,
    BenchServer,
    LoadProbe,
    LoadReport,
    StatementCounter,
    floor_chunk_rows,
    generate_corpus,
    machine_description,
    print_table,
    reset_database,
    server_version,
)

from graphrag_orm.chunking import Chunker, ChunkerOptions, section_id
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionOptions, IngestionService, settings_fingerprint
from graphrag_orm.ingestion.writer import PreparedDocument
from graphrag_orm.layout import Layout
from graphrag_orm.loaders.base import LoadedDocument
from graphrag_orm.loaders.markdown import first_title
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources, document_id
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.store.connection import ConnectionSettings, open_driver

HERE = Path(__file__).resolve().parent
NEO4J_GRAPHRAG_SIDE = HERE / "neo4j_graphrag_side.py"


def markdown_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.md"))


@dataclass
class Outcome:
    name: str
    seconds: float
    documents: int
    chunks: int
    load: LoadReport | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0


# ------------------------------------------------------------------ graphrag-orm


def _service(store: Store, options: IngestionOptions) -> IngestionService:
    return IngestionService(
        store,
        for_layout(Layout.DEFAULT),
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(ChunkerOptions()),
        options=options,
    )


async def ingest_ours(store: Store, folder: Path, options: IngestionOptions) -> Outcome:
    service = _service(store, options)  # a fresh embedder: every contender fills its word cache itself
    began = time.perf_counter()
    receipt = await service.ingest(Sources.folder(folder, base_uri=BASE_URI))
    seconds = time.perf_counter() - began
    if receipt.failed or receipt.unchanged:
        codes = sorted({o.error_code for o in receipt.documents if o.error_code})
        raise SystemExit(f"graphrag-orm: {receipt.failed} failed, {receipt.unchanged} unchanged ({codes})")
    return Outcome("graphrag-orm", seconds, receipt.ingested, receipt.chunks_written)


# ------------------------------------------------------------------ the floor

# One statement per node kind and per edge type, in one transaction per document: the
# natural hand-written form. Labels, types and property keys are the default layout's.
FLOOR_DOCUMENT = "CREATE (d:Document) SET d = $row"
FLOOR_SECTIONS = "UNWIND $rows AS row CREATE (s:Section) SET s = row"
FLOOR_CHUNKS = "UNWIND $rows AS row CREATE (c:Chunk) SET c = row"
FLOOR_EDGES = {
    "IN_DOCUMENT": "UNWIND $rows AS row MATCH (a:Chunk {id: row.a}) MATCH (b:Document {id: row.b}) "
    "CREATE (a)-[:IN_DOCUMENT {runId: $run}]->(b)",
    "IN_SECTION": "UNWIND $rows AS row MATCH (a:Chunk {id: row.a}) MATCH (b:Section {id: row.b}) "
    "CREATE (a)-[:IN_SECTION {runId: $run}]->(b)",
    "NEXT_CHUNK": "UNWIND $rows AS row MATCH (a:Chunk {id: row.a}) MATCH (b:Chunk {id: row.b}) "
    "CREATE (a)-[:NEXT_CHUNK {runId: $run}]->(b)",
    "SECTION_OF": "UNWIND $rows AS row MATCH (a:Section {id: row.a}) MATCH (b:Document {id: row.b}) "
    "CREATE (a)-[:SECTION_OF {runId: $run}]->(b)",
    "SUBSECTION_OF": "UNWIND $rows AS row MATCH (a:Section {id: row.a}) MATCH (b:Section {id: row.b}) "
    "CREATE (a)-[:SUBSECTION_OF {runId: $run}]->(b)",
}
FLOOR_RUN = (
    "CREATE (r:IngestionRun) SET r = $row, r.startedAt = $started, r.progressAt = $started, r.completedAt = datetime()"
)

# The diagnostic "compact" floor: the same graph in three statements, edges created
# with their nodes instead of found again by key.
COMPACT_DOCUMENT_AND_SECTIONS = (
    "CREATE (d:Document) SET d = $document "
    "WITH d UNWIND $sections AS row CREATE (s:Section) SET s = row.props "
    "CREATE (s)-[:SECTION_OF {runId: $run}]->(d) "
    "WITH s, row WHERE row.parent IS NOT NULL "
    "MATCH (p:Section {id: row.parent}) CREATE (s)-[:SUBSECTION_OF {runId: $run}]->(p)"
)
COMPACT_CHUNKS = (
    "MATCH (d:Document {id: $document}) "
    "UNWIND $chunks AS row CREATE (c:Chunk) SET c = row.props "
    "CREATE (c)-[:IN_DOCUMENT {runId: $run}]->(d) "
    "WITH c, row CALL (c, row) { WITH c, row WHERE row.section IS NOT NULL "
    "MATCH (s:Section {id: row.section}) CREATE (c)-[:IN_SECTION {runId: $run}]->(s) }"
)
COMPACT_NEXT = (
    "UNWIND $pairs AS pair MATCH (a:Chunk {id: pair[0]}) MATCH (b:Chunk {id: pair[1]}) "
    "CREATE (a)-[:NEXT_CHUNK {runId: $run}]->(b)"
)


@dataclass
class FloorRows:
    document: dict[str, Any]
    sections: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    edges: dict[str, list[dict[str, str]]]
    section_parents: dict[str, str | None]
    chunk_sections: dict[str, str | None]


async def _floor_rows(
    path: Path, uri: str, chunker: Chunker, embedder: HashingEmbedder, fingerprint: str, run: str
) -> FloorRows:
    """Load, chunk and embed one document and build its rows: the same values ours writes."""
    utf8 = await asyncio.to_thread(path.read_bytes)  # as ours reads: off the event loop
    loaded = LoadedDocument(source_uri=uri, media_type="text/markdown", title=first_title(utf8), utf8=utf8)
    plan = chunker.plan(loaded)
    texts = plan.texts(utf8)
    vectors = await embedder.embed(texts)
    doc = document_id(uri)
    content = loaded.content_hash
    document = {
        "id": doc,
        "sourceUri": uri,
        "title": loaded.title,
        "mediaType": loaded.media_type,
        "contentHash": content,
        "lengthBytes": len(utf8),
        "settingsFingerprint": fingerprint,
        "ingestedAt": datetime.now(UTC),
        "runId": run,
    }
    section_ids = {s.order: section_id(doc, content, plan.fingerprint, s.order) for s in plan.sections}
    sections = [
        {
            "id": section_ids[s.order],
            "documentId": doc,
            "title": s.title,
            "level": s.level,
            "order": s.order,
            "startByte": s.start_byte,
            "endByte": s.end_byte,
            "runId": run,
        }
        for s in plan.sections
    ]
    chunks = floor_chunk_rows(doc, content, plan, texts, vectors, run)
    ids = [row["id"] for row in chunks]
    chunk_sections = {
        ids[i]: (section_ids[c.section_order] if c.section_order is not None else None)
        for i, c in enumerate(plan.chunks)
    }
    section_parents = {
        section_ids[s.order]: (section_ids[s.parent_order] if s.parent_order is not None else None)
        for s in plan.sections
    }
    edges = {
        "IN_DOCUMENT": [{"a": i, "b": doc} for i in ids],
        "IN_SECTION": [{"a": c, "b": s} for c, s in chunk_sections.items() if s is not None],
        "NEXT_CHUNK": [{"a": ids[i], "b": ids[i + 1]} for i in range(len(ids) - 1)],
        "SECTION_OF": [{"a": s, "b": doc} for s in section_ids.values()],
        "SUBSECTION_OF": [{"a": s, "b": p} for s, p in section_parents.items() if p is not None],
    }
    return FloorRows(document, sections, chunks, edges, section_parents, chunk_sections)


# The floor is the baseline, not the toolkit: it runs on the plain driver, not on a Store.
async def _write_floor(tx: neo4j.AsyncManagedTransaction, rows: FloorRows, run: str) -> None:
    await tx.run(FLOOR_DOCUMENT, row=rows.document)
    if rows.sections:
        await tx.run(FLOOR_SECTIONS, rows=rows.sections)
    if rows.chunks:
        await tx.run(FLOOR_CHUNKS, rows=rows.chunks)
    for edge_type, edge_rows in rows.edges.items():
        if edge_rows:
            await tx.run(FLOOR_EDGES[edge_type], rows=edge_rows, run=run)


async def _write_compact(tx: neo4j.AsyncManagedTransaction, rows: FloorRows, run: str) -> None:
    sections = [{"props": s, "parent": rows.section_parents[s["id"]]} for s in rows.sections]
    chunks = [{"props": c, "section": rows.chunk_sections[c["id"]]} for c in rows.chunks]
    await tx.run(COMPACT_DOCUMENT_AND_SECTIONS, document=rows.document, sections=sections, run=run)
    await tx.run(COMPACT_CHUNKS, document=rows.document["id"], chunks=chunks, run=run)
    pairs = [[edge["a"], edge["b"]] for edge in rows.edges["NEXT_CHUNK"]]
    if pairs:
        await tx.run(COMPACT_NEXT, pairs=pairs, run=run)


async def ingest_floor(
    driver: neo4j.AsyncDriver, database: str | None, folder: Path, documents_in_flight: int, *, compact: bool = False
) -> Outcome:
    chunker = Chunker(ChunkerOptions())
    embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    fingerprint = settings_fingerprint(chunker, OFFLINE_EMBEDDING_SET)
    run = f"run-{uuid.uuid4().hex}"
    write = _write_compact if compact else _write_floor
    began = time.perf_counter()
    started = datetime.now(UTC)
    paths = markdown_files(folder)
    gate = asyncio.Semaphore(documents_in_flight)

    async def one(path: Path) -> int:
        async with gate:
            rows = await _floor_rows(path, BASE_URI + path.name, chunker, embedder, fingerprint, run)
            async with driver.session(database=database) as session:
                await session.execute_write(write, rows, run)
            return len(rows.chunks)

    chunks = sum(await asyncio.gather(*(one(path) for path in paths)))
    # The run node ours writes (one statement per run), so both graphs hold the same nodes.
    run_row = {
        "id": run,
        "status": "Completed",
        "settingsFingerprint": fingerprint,
        "documentsIngested": len(paths),
        "documentsUnchanged": 0,
        "documentsFailed": 0,
        "chunksWritten": chunks,
    }
    await driver.execute_query(FLOOR_RUN, row=run_row, started=started, database_=database)
    seconds = time.perf_counter() - began
    return Outcome("floor, 3 statements" if compact else "floor", seconds, len(paths), chunks)


# ------------------------------------------------------------------ neo4j-graphrag


def write_chunk_plan(folder: Path, target: Path) -> int:
    """Our chunk texts per file name, for neo4j-graphrag's splitter (computed outside timing)."""
    chunker = Chunker(ChunkerOptions())
    plan: dict[str, list[str]] = {}
    for path in markdown_files(folder):
        utf8 = path.read_bytes()
        loaded = LoadedDocument(source_uri=BASE_URI + path.name, media_type="text/markdown", utf8=utf8)
        plan[path.name] = chunker.plan(loaded).texts(utf8)
    target.write_text(json.dumps(plan), encoding="utf-8")
    return sum(len(texts) for texts in plan.values())


def ingest_neo4j_graphrag(
    folder: Path, plan: Path, settings: ConnectionSettings, mode: str, documents_in_flight: int
) -> Outcome:
    if not NEO4J_GRAPHRAG_PYTHON.is_file():
        raise SystemExit("neo4j-graphrag's venv is missing: run `bash benchmarks/setup-neo4j-graphrag.sh` first")
    env = dict(os.environ, NEO4J_URI=settings.uri, NEO4J_USER=settings.user, NEO4J_PASSWORD=settings.password)
    command = [
        str(NEO4J_GRAPHRAG_PYTHON),
        str(NEO4J_GRAPHRAG_SIDE),
        "--corpus",
        str(folder),
        "--plan",
        str(plan),
        "--base-uri",
        BASE_URI,
        "--writer",
        mode,
        "--documents-in-flight",
        str(documents_in_flight),
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"neo4j-graphrag side failed ({result.returncode}):\n{result.stderr[-4000:]}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    name = "neo4j-graphrag (stock writer)" if mode == "stock" else "neo4j-graphrag (APOC-free edges)"
    return Outcome(
        name,
        report["seconds"],
        report["documents"],
        report["chunks"],
        note=f"writer statuses {report['writer_statuses']}",
        extra=report,
    )


# ------------------------------------------------------------------ the graph, compared


async def census(store: Store) -> dict[str, Any]:
    """Nodes per label, edges per type, property keys per label and type, and a chunk digest."""

    async def counted(query: str) -> dict[str, int]:
        return {row["part"]: row["n"] for row in await store.read(query, name="bench.census")}

    nodes = await counted("MATCH (n) UNWIND labels(n) AS part RETURN part, count(*) AS n ORDER BY part")
    edges = await counted("MATCH ()-[r]->() RETURN type(r) AS part, count(*) AS n ORDER BY part")
    keys = await counted(
        "MATCH (n) UNWIND labels(n) AS label UNWIND keys(n) AS key RETURN label + '.' + key AS part, count(*) AS n "
        "ORDER BY part"
    )
    edge_keys = await counted(
        "MATCH ()-[r]->() UNWIND keys(r) AS key RETURN type(r) + '.' + key AS part, count(*) AS n ORDER BY part"
    )
    digest = hashlib.sha256()
    chunks = await store.read(
        "MATCH (c:Chunk) RETURN c.id AS id, c.startByte AS start, c.endByte AS end, c.text AS text, "
        "c.embedding AS embedding ORDER BY c.id",
        name="bench.census",
    )
    for row in chunks:
        values = [row["id"], row["start"], row["end"], row["text"], row["embedding"]]
        digest.update(json.dumps(values, separators=(",", ":")).encode("utf-8"))
    return {
        "nodes": nodes,
        "edges": edges,
        "node_keys": keys,
        "edge_keys": edge_keys,
        "chunk_digest": digest.hexdigest()[:16],
    }


def compare(ours: dict[str, Any], floor: dict[str, Any]) -> list[str]:
    differences = []
    for part in ("nodes", "edges", "node_keys", "edge_keys", "chunk_digest"):
        if ours[part] != floor[part]:
            differences.append(f"{part}: graphrag-orm {ours[part]} vs floor {floor[part]}")
    return differences


# ------------------------------------------------------------------ diagnosis


# Statement names (graphrag_orm.ingestion.statements): those of a document's write
# transaction, and the statements of their own (the run node, the leases, the state reads).
IN_TRANSACTION = ("ingestion.document.", "extraction.", "ontology.")
OF_THEIR_OWN = ("ingestion.run.", "ingestion.lease.", "ingestion.state.")


DIAGNOSE_UNCHANGED = "MATCH (d:Document {id: $id}) RETURN d.contentHash AS hash, d.settingsFingerprint AS fingerprint"
DIAGNOSE_LEASE = (
    "CREATE (l:GraphRagLease) SET l.key = $key, l.runId = $run, l.claims = 0, "
    "l.expiresAt = datetime() + duration({milliseconds: $ms})"
)
DIAGNOSE_RUN_START = "CREATE (r:IngestionRun) SET r = $row, r.startedAt = datetime()"
DIAGNOSE_RUN_FINISH = "MATCH (r:IngestionRun {id: $id}) SET r.status = 'Completed', r.completedAt = datetime()"


@dataclass(frozen=True)
class Variant:
    """The floor plus some of the steps graphrag-orm adds, for one document at a time."""

    name: str
    compact: bool = False
    run_node: bool = False
    unchanged: bool = False
    lease: bool = False
    delete_previous: bool = False


VARIANTS = (
    Variant("floor"),
    Variant("floor, 3 statements", compact=True),
    Variant("floor + run node", run_node=True),
    Variant("  + 2 unchanged checks", run_node=True, unchanged=True),
    Variant("  + lease (insert; renew and release in the transaction)", run_node=True, lease=True),
    Variant("  + delete of the previous version", run_node=True, delete_previous=True),
    Variant("  + all three", run_node=True, unchanged=True, lease=True, delete_previous=True),
)


@dataclass(frozen=True)
class Bench:
    """The benchmark's connection: ours runs on ``store``; the floors on the plain ``driver`` beneath it."""

    store: Store
    driver: neo4j.AsyncDriver
    database: str | None


async def _one_variant(
    bench: Bench, variant: Variant, path: Path, service: IngestionService, embedder: HashingEmbedder, chunker: Chunker
) -> float:
    """Ingest one document as ``variant`` does; returns the wall seconds."""
    driver, database = bench.driver, bench.database
    leases, templates = service.leases.statements, service.writer.templates
    uri = f"{BASE_URI}{variant.name.strip().replace(' ', '-')}/{path.name}"
    run = f"run-{uuid.uuid4().hex}"
    began = time.perf_counter()
    if variant.run_node:
        await driver.execute_query(DIAGNOSE_RUN_START, row={"id": run}, database_=database)
    rows = await _floor_rows(path, uri, chunker, embedder, service.fingerprint, run)
    doc = rows.document["id"]
    if variant.unchanged:
        await driver.execute_query(DIAGNOSE_UNCHANGED, id=doc, database_=database)
    if variant.lease:
        await driver.execute_query(DIAGNOSE_LEASE, key=doc, run=run, ms=600_000, database_=database)
    if variant.unchanged:
        await driver.execute_query(DIAGNOSE_UNCHANGED, id=doc, database_=database)

    async def write(tx: neo4j.AsyncManagedTransaction) -> None:
        if variant.lease:
            await tx.run(leases.renew_in_write.cypher, dict(service.leases.parameters(doc, run)))
        if variant.delete_previous:
            await tx.run(templates.delete_previous.cypher, document=doc)
        await (_write_compact if variant.compact else _write_floor)(tx, rows, run)
        if variant.lease:
            await tx.run(leases.release.cypher, key=doc, run=run)

    async with driver.session(database=database) as session:
        await session.execute_write(write)
    if variant.run_node:
        await driver.execute_query(DIAGNOSE_RUN_FINISH, id=run, database_=database)
    return time.perf_counter() - began


async def step_costs(store: Store, server_pid: int | None, repeat: int = 300) -> None:
    """Wall time and server CPU of each kind of step ours adds, alone, in blocks of ``repeat``, through the store.

    Blocks run twice in turn and the lower figure of each is kept (the less disturbed).
    """

    async def read() -> None:
        await store.read(DIAGNOSE_UNCHANGED, {"id": uuid.uuid4().hex}, name="bench.read")

    async def write() -> None:
        await store.execute(
            DIAGNOSE_LEASE, {"key": uuid.uuid4().hex, "run": "run-x", "ms": 600_000}, name="bench.write"
        )

    async def transaction(statements: int) -> None:
        async def work(tx: StoreTransaction) -> None:
            for _ in range(statements):
                await tx.run("MATCH (d:Document {id: $id}) RETURN d.id AS id", {"id": "none"}, name="bench.tx")

        await store.write(work)

    steps = {
        "read transaction (the unchanged check)": read,
        "auto-commit write (the lease insert: a commit)": write,
        "write transaction of 1 statement": lambda: transaction(1),
        "write transaction of 4 statements": lambda: transaction(4),
    }
    best: dict[str, tuple[float, float]] = {}
    for _ in range(2):
        for name, step in steps.items():
            with LoadProbe(server_pid) as probe:
                for _ in range(repeat):
                    await step()
            load = probe.report()
            wall, cpu = load.seconds / repeat * 1000, load.server_cpu / repeat * 1000
            previous = best.get(name)
            best[name] = (min(wall, previous[0]), min(cpu, previous[1])) if previous else (wall, cpu)
    await store.execute("MATCH (l:GraphRagLease) DELETE l", name="bench.clean")
    print(f"\nCost of each kind of step, alone ({repeat} in a row, lower of two blocks):\n")
    print_table(
        ["Step", "Wall per step", "Server CPU per step"],
        [[name, f"{wall:.2f} ms", f"{cpu:.2f} ms"] for name, (wall, cpu) in best.items()],
    )
    extra = (best["write transaction of 4 statements"][0] - best["write transaction of 1 statement"][0]) / 3
    extra_cpu = (best["write transaction of 4 statements"][1] - best["write transaction of 1 statement"][1]) / 3
    print(f"\n(one more statement inside a transaction: {extra:.2f} ms wall, {extra_cpu:.2f} ms server CPU)")


@contextlib.contextmanager
def timing_steps(service: IngestionService) -> Iterator[dict[str, list[float]]]:
    """Wall time of each step of ``service``'s per-document path. Yields step name to [seconds, calls].

    Python steps are timed by wrapping this one service's own parts (the loader, the
    lease insert, the chunker, ``DocumentWriter.statements`` and the whole document
    write); statements are timed through the store's hook, split into those of the
    document's transaction and those of their own.
    """
    steps: dict[str, list[float]] = {}
    originals: list[tuple[Any, str]] = []

    def record(name: str, seconds: float, calls: int = 1) -> None:
        entry = steps.setdefault(name, [0.0, 0.0])
        entry[0] += seconds
        entry[1] += calls

    def wrap(owner: Any, attribute: str, name: str, *, is_async: bool = True) -> None:
        original = getattr(owner, attribute)
        originals.append((owner, attribute))

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                record(name, time.perf_counter() - began)

        def timed_sync(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                record(name, time.perf_counter() - began)

        setattr(owner, attribute, timed_async if is_async else timed_sync)

    wrap(service.loaders, "load", "load (worker thread)")
    wrap(service.leases, "acquire", "lease insert (its statement included)")
    wrap(service.chunker, "plan", "chunk", is_async=False)
    wrap(service.writer, "statements", "DocumentWriter.statements (Python)", is_async=False)
    wrap(service.writer, "write", "document transaction (BEGIN, statements, COMMIT, retries)")
    try:
        with StatementCounter(service.store) as counted:
            yield steps
    finally:
        for owner, attribute in reversed(originals):
            delattr(owner, attribute)  # back to the class's method
    for label, prefixes in (
        ("statements in the document's transaction", IN_TRANSACTION),
        ("statements of their own (run, lease, state reads)", OF_THEIR_OWN),
    ):
        record(label, counted.time(*prefixes), counted.total(*prefixes))


async def attribute_time(bench: Bench, folder: Path, sample: int) -> None:
    """graphrag-orm's per-document wall time split by step, one document at a time, vs the floor."""
    sample_folder = SCRATCH / "ingest-diagnose"
    sample_folder.mkdir(parents=True, exist_ok=True)
    for old in markdown_files(sample_folder):
        old.unlink()
    for path in markdown_files(folder)[:sample]:
        (sample_folder / path.name).write_bytes(path.read_bytes())
    await reset_database(bench.store)
    floor = await ingest_floor(bench.driver, bench.database, sample_folder, 1)
    await reset_database(bench.store)
    service = _service(bench.store, IngestionOptions(documents_in_flight=1))
    with timing_steps(service) as steps:
        began = time.perf_counter()
        receipt = await service.ingest(Sources.folder(sample_folder, base_uri=BASE_URI))
        total = time.perf_counter() - began
    documents = receipt.ingested
    print(
        f"\ngraphrag-orm's time per document, one at a time ({documents} documents): "
        f"{total / documents * 1000:.2f} ms; the floor's {floor.seconds / floor.documents * 1000:.2f} ms\n"
    )
    rows = [
        [name, f"{seconds / documents * 1000:.2f} ms", f"{calls / documents:.1f}"]
        for name, (seconds, calls) in sorted(steps.items(), key=lambda item: -item[1][0])
    ]
    print_table(["Step (wall time, one document at a time)", "Per document", "Calls per document"], rows)
    await reset_database(bench.store)


async def diagnose(bench: Bench, folder: Path, sample: int, server_pid: int | None) -> None:
    """Where graphrag-orm spends its time per document against the floor, one document at a time.

    For each of ``sample`` documents, every variant and ``IngestionService.ingest([source])``
    ingest it (under their own URIs) in a rotating order, so machine load hits all alike;
    medians per document are reported. Also counts ours' statements and times the
    Python work of building a document's statements. Statements are counted through
    the store's hook, by name.
    """
    print(f"\n## Diagnosis: {sample} documents, one at a time, every variant in turn (medians per document)\n")
    paths = markdown_files(folder)[:sample]
    service = _service(bench.store, IngestionOptions(documents_in_flight=1))
    embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    chunker = Chunker(ChunkerOptions())
    await reset_database(bench.store)
    names = [v.name for v in VARIANTS] + ["graphrag-orm: ingest([source])"]
    times: dict[str, list[float]] = {name: [] for name in names}
    counts = {"in_transaction": 0, "of_their_own": 0}
    for index, path in enumerate(paths):
        order = list(range(len(names)))
        order = order[index % len(order) :] + order[: index % len(order)]
        for position in order:
            if position < len(VARIANTS):
                seconds = await _one_variant(bench, VARIANTS[position], path, service, embedder, chunker)
            else:
                source = Sources.file(path, uri=f"{BASE_URI}graphrag-orm/{path.name}")
                with StatementCounter(bench.store) as counted:
                    began = time.perf_counter()
                    await service.ingest([source])
                    seconds = time.perf_counter() - began
                counts["in_transaction"] += counted.total(*IN_TRANSACTION)
                counts["of_their_own"] += counted.total(*OF_THEIR_OWN)
            times[names[position]].append(seconds)
    base = statistics.median(times["floor + run node"])
    rows = []
    for name in names:
        median = statistics.median(times[name])
        delta = "" if name in ("floor", "floor + run node") else f"{(median - base) * 1000:+.2f} ms"
        rows.append([name, f"{median * 1000:.2f} ms", delta])
    print_table(["Variant (one document, alone)", "Median", "Against floor + run node"], rows)
    print(
        f"\ngraphrag-orm's statements per ingest([source]) call: {counts['of_their_own'] / sample:.1f} of their own "
        f"+ {counts['in_transaction'] / sample:.1f} in the document's transaction (floor: 0 + 8; "
        "floor + run node: 2 + 8)"
    )
    await step_costs(bench.store, server_pid)
    await attribute_time(bench, folder, sample)
    source = Sources.file(paths[0], uri=f"{BASE_URI}statements/{paths[0].name}")
    loaded = await service.loaders.load(source)
    plan = service.chunker.plan(loaded)
    vectors = [[0.0] * OFFLINE_EMBEDDING_SET.dimensions for _ in plan.chunks]
    prepared = PreparedDocument(source, loaded, plan, vectors, OFFLINE_EMBEDDING_SET.id, service.fingerprint)
    repeat = 200
    began = time.perf_counter()
    for _ in range(repeat):
        service.writer.rows(prepared, "run-x")
    statements_ms = (time.perf_counter() - began) / repeat * 1000
    rows_built = await _floor_rows(paths[0], source.source_uri, chunker, embedder, service.fingerprint, "run-x")
    began = time.perf_counter()
    for _ in range(repeat):
        await _floor_rows(paths[0], source.source_uri, chunker, embedder, service.fingerprint, "run-x")
    floor_ms = (time.perf_counter() - began) / repeat * 1000
    print(
        f"Python work for one document of {len(rows_built.chunks)} chunks: `DocumentWriter.rows` "
        f"{statements_ms:.2f} ms; the floor's load + chunk + embed + rows, all together, {floor_ms:.2f} ms "
        "(embeddings cached after the first call)"
    )
    await reset_database(bench.store)


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    print(f"machine: {machine_description()}")
    began = time.perf_counter()
    corpus = generate_corpus(args.seed, args.documents)
    folder = corpus.write(SCRATCH / f"ingest-corpus-s{args.seed}-n{args.documents}")
    plan = SCRATCH / f"ingest-plan-s{args.seed}-n{args.documents}.json"
    planned_chunks = write_chunk_plan(folder, plan)
    print(
        f"corpus: {len(corpus.documents):,} documents, {corpus.utf8_bytes / 1e6:.1f} MB, {planned_chunks:,} chunks "
        f"(seed {args.seed}, made in {time.perf_counter() - began:.1f} s, in {folder.relative_to(SCRATCH.parent)})"
    )
    in_flight = IngestionOptions().documents_in_flight
    contenders = args.contenders.split(",")
    with BenchServer() as server:
        settings = server.settings
        driver = await open_driver(settings)
        store = Store(driver, database=settings.database)
        bench = Bench(store, driver, settings.database)
        try:
            print(f"server: Neo4j {await server_version(store)} at {settings.uri}")
            print(f"load before: load average {os.getloadavg()[0]:.2f}\n")

            async def ingest(contender: str, where: Path, chunk_plan: Path) -> Outcome:
                if contender == "ours":
                    return await ingest_ours(store, where, IngestionOptions())
                if contender == "floor":
                    return await ingest_floor(driver, settings.database, where, in_flight)
                if contender in ("neo4j-graphrag", "neo4j-graphrag-stock"):
                    mode = "stock" if contender.endswith("stock") else "apoc-free"
                    return ingest_neo4j_graphrag(where, chunk_plan, settings, mode, in_flight)
                raise SystemExit(f"unknown contender {contender!r}")

            # Warm-up: each contender ingests other documents first, so the server has compiled
            # every statement and its JIT has warmed up for all of them alike.
            warm = generate_corpus(args.seed + 1, args.warmup_documents)
            warm_folder = warm.write(SCRATCH / "ingest-warmup")
            warm_plan = SCRATCH / "ingest-warmup-plan.json"
            write_chunk_plan(warm_folder, warm_plan)
            for contender in contenders:
                await reset_database(store)
                await ingest(contender, warm_folder, warm_plan)
            print(f"warm-up: each contender ingested {args.warmup_documents} other documents first\n")

            rounds: dict[str, list[Outcome]] = {contender: [] for contender in contenders}
            graphs: dict[str, dict[str, Any]] = {}
            for number in range(args.rounds):
                # Every other round runs the contenders in reverse, so none always goes first.
                for contender in contenders if number % 2 == 0 else reversed(contenders):
                    await reset_database(store)
                    with LoadProbe(server.server_pid) as probe:
                        outcome = await ingest(contender, folder, plan)
                    outcome.load = probe.report()
                    if contender not in graphs:
                        graphs[contender] = await census(store)
                    rounds[contender].append(outcome)
                    print(
                        f"round {number + 1}, {outcome.name}: {outcome.chunks:,} chunks in {outcome.seconds:.1f} s "
                        f"= {outcome.chunks_per_second:,.0f} chunks/s; {outcome.load.describe()}"
                        + (f"; {outcome.note}" if outcome.note else "")
                    )
            report(rounds, graphs)
            if args.diagnose:
                await diagnose(bench, folder, args.diagnose_documents, server.server_pid)
            await reset_database(store)
        finally:
            await driver.close()


def report(rounds: dict[str, list[Outcome]], graphs: dict[str, dict[str, Any]]) -> None:
    """The best round of each contender (the least disturbed by other work), and every round."""
    best = {contender: max(outcomes, key=lambda o: o.chunks_per_second) for contender, outcomes in rounds.items()}
    ours = best.get("ours")
    print(f"\nBest of {max(len(o) for o in rounds.values())} rounds per contender:\n")
    rows = []
    for contender, o in best.items():
        ratio = f"{ours.chunks_per_second / o.chunks_per_second:.2f}x" if ours and o is not ours else ""
        each = " / ".join(f"{r.chunks_per_second:,.0f}" for r in rounds[contender])
        rows.append(
            [
                o.name,
                f"{o.chunks:,}",
                f"{o.seconds:.1f} s",
                f"{o.chunks_per_second:,.0f}",
                each,
                ratio,
                f"{o.load.client_cpu:.1f} s" if o.load else "",
                f"{o.load.server_cpu:.1f} s" if o.load else "",
                f"{o.load.machine_busy:.0%} ({o.load.others_busy:.0%})" if o.load else "",
            ]
        )
    print_table(
        [
            "Contender",
            "Chunks",
            "Time",
            "Chunks/s",
            "Each round",
            "graphrag-orm / this",
            "Client CPU",
            "Server CPU",
            "Machine busy (others)",
        ],
        rows,
    )
    print()
    for name, graph in graphs.items():
        print(f"graph after {name}: nodes {graph['nodes']}, edges {graph['edges']}")
    if "ours" in graphs and "floor" in graphs:
        differences = compare(graphs["ours"], graphs["floor"])
        if differences:
            print("\nTHE FLOOR'S GRAPH DIFFERS FROM OURS:\n  " + "\n  ".join(differences))
            raise SystemExit(1)
        print(
            "\ngraphrag-orm's and the floor's graphs are identical: nodes per label, edges per type, property keys "
            f"per label and type, chunk ids, spans, texts and vectors (digest {graphs['ours']['chunk_digest']})"
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument(
        "--contenders",
        default="ours,floor,neo4j-graphrag,neo4j-graphrag-stock",
        help="comma-separated, in order: ours, floor, neo4j-graphrag (APOC-free edges), neo4j-graphrag-stock",
    )
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds; every other one in reverse order")
    parser.add_argument(
        "--warmup-documents", type=int, default=1000, help="each contender first ingests this many other documents"
    )
    parser.add_argument("--diagnose", action="store_true", help="also measure where ours spends its time")
    parser.add_argument("--diagnose-documents", type=int, default=100)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
