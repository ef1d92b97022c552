"""Removal against a floor of hand-written batched deletes of the same elements.

Run from the repository root::

    .venv/bin/python benchmarks/maintain/run.py [--documents 4000] [--of 1000] [--remove 100] [--repeats 3]

Starts (or reuses) the local test server on ``--port`` (7692, its own home
``tools/neo4j/home-test-7692``), installs the toolkit's schema, and times two
scenarios, each ``--repeats`` times with a freshly written corpus, alternating
the toolkit and the floor:

- **reset**: ``MaintenanceService.reset()`` of a corpus of ``--documents`` documents
  of five chunks each (every document, and the run);
- **remove**: ``reset(ResetScope(document_ids=...))`` of ``--remove`` documents spread
  evenly over a corpus of ``--of`` documents.

The floor deletes exactly the same elements the way one would by hand: batches of
100 documents (the toolkit's default), one transaction each, links then chunks,
sections and documents by their indexed ids, with no checks, no pages and no
counting; for the reset it first reads every document id (one query), as a
hand-written reset must. The script checks that both leave the same counts behind,
and counts the statements each sends through the store's statement hook
(:meth:`Store.add_hook`): every statement of both ways goes through one
:class:`~graphrag_orm.store.Store`.

The corpus is written with the lexical model's own batched statements (the same the
ingestion writer uses), so every node and link carries its run id and chunks carry
256-dimensional vectors in the vector index: per document one document node, two
sections (one a subsection), five chunks of about 400 bytes and 17 links.
Stop the server afterwards with
``.venv/bin/python -m graphrag_orm.localdb stop --home home-test-7692 --port 7692``
(or pass ``--stop``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.layout import Layout
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.maintenance import MaintenanceService, ResetScope
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.models import for_layout
from graphrag_orm.store import StatementEvent, Store, StoreTransaction
from graphrag_orm.store.batches import EdgeWrites
from graphrag_orm.store.connection import ConnectionSettings, open_store, server_version

MODEL = for_layout(Layout.DEFAULT)
CHUNKS_PER_DOCUMENT = 5
FLOOR_BATCH = 100
WRITE_BATCH = 250
_WORDS = ("wheel", "chain", "brake", "spoke", "rim", "hub", "tyre", "saddle", "pedal", "crank", "gear", "lever")


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def _unit(rng: random.Random, dimensions: int) -> list[float]:
    vector = [rng.uniform(-1.0, 1.0) for _ in range(dimensions)]
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector]


class Corpus:
    """Writes documents as the ingestion writer does, in large UNWIND transactions."""

    def __init__(self, store: Store) -> None:
        self.store = store
        names = MODEL.names
        self.documents, self.sections, self.chunks, self.runs = names.document, names.section, names.chunk, names.run
        self.edges: dict[str, EdgeWrites] = {
            "chunk_document": names.chunk_document,
            "chunk_section": names.chunk_section,
            "next_chunk": names.next_chunk,
            "section_document": names.section_document,
            "subsection": names.subsection,
        }

    async def write(self, count: int, seed: int) -> list[str]:
        rng = random.Random(seed)
        run_id = f"run-bench-{seed}"
        now = datetime.now(UTC)
        await self.store.execute(
            self.runs.create_statement(),
            {
                "rows": [
                    self.runs.row(
                        {
                            "uid": run_id,
                            "started_at": now,
                            "completed_at": now,
                            "status": "Completed",
                            "settings_fingerprint": "bench",
                            "documents_ingested": count,
                            "chunks_written": count * CHUNKS_PER_DOCUMENT,
                        }
                    )
                ]
            },
            name="bench.corpus.run",
        )
        ids = [f"{seed:04d}-{i:06d}-{rng.getrandbits(128):032x}" for i in range(count)]
        for first in range(0, count, WRITE_BATCH):
            await self._write_batch(ids[first : first + WRITE_BATCH], run_id, rng, now)
        await self.store.execute("CALL db.awaitIndexes(600)", name="bench.await_indexes")
        return ids

    async def _write_batch(self, ids: list[str], run_id: str, rng: random.Random, now: datetime) -> None:
        stamp = {"run_id": run_id}
        docs, sections, chunks = [], [], []
        edges: dict[str, list[dict[str, Any]]] = {name: [] for name in self.edges}
        for doc_id in ids:
            texts = [_text(rng, 400) for _ in range(CHUNKS_PER_DOCUMENT)]
            length = sum(len(t) + 2 for t in texts)
            docs.append(
                self.documents.row(
                    {
                        "uid": doc_id,
                        "source_uri": f"text:{doc_id}",
                        "media_type": "text/markdown",
                        "content_hash": doc_id,
                        "length_bytes": length,
                        "settings_fingerprint": "bench",
                        "ingested_at": now,
                        "run_id": run_id,
                    }
                )
            )
            top, sub = f"{doc_id}-s0", f"{doc_id}-s1"
            for order, (sid, level) in enumerate(((top, 1), (sub, 2))):
                sections.append(
                    self.sections.row(
                        {
                            "uid": sid,
                            "document_id": doc_id,
                            "title": f"Section {order}",
                            "level": level,
                            "order": order,
                            "start_byte": 0,
                            "end_byte": length,
                            "run_id": run_id,
                        }
                    )
                )
                edges["section_document"].append(self.edges["section_document"].row(sid, doc_id, stamp))
            edges["subsection"].append(self.edges["subsection"].row(sub, top, stamp))
            position = 0
            chunk_ids = [f"{doc_id}-c{i}" for i in range(CHUNKS_PER_DOCUMENT)]
            for order, (cid, text) in enumerate(zip(chunk_ids, texts, strict=True)):
                chunks.append(
                    self.chunks.row(
                        {
                            "uid": cid,
                            "document_id": doc_id,
                            "order": order,
                            "text": text,
                            "start_byte": position,
                            "end_byte": position + len(text),
                            "embedding": _unit(rng, OFFLINE_EMBEDDING_SET.dimensions),
                            "embedding_set_id": OFFLINE_EMBEDDING_SET.id,
                            "run_id": run_id,
                        }
                    )
                )
                position += len(text) + 2
                edges["chunk_document"].append(self.edges["chunk_document"].row(cid, doc_id, stamp))
                edges["chunk_section"].append(self.edges["chunk_section"].row(cid, top if order < 2 else sub, stamp))
            for a, b in itertools.pairwise(chunk_ids):
                edges["next_chunk"].append(self.edges["next_chunk"].row(a, b, stamp))

        async def work(tx: StoreTransaction) -> None:
            await tx.run(self.documents.create_statement(), {"rows": docs}, name="bench.corpus.documents")
            await tx.run(self.sections.create_statement(), {"rows": sections}, name="bench.corpus.sections")
            await tx.run(self.chunks.create_statement(), {"rows": chunks}, name="bench.corpus.chunks")
            for name, rows in edges.items():
                await tx.run(self.edges[name].create_statement(), {"rows": rows}, name=f"bench.corpus.{name}")

        await self.store.write(work)


FLOOR = (
    "MATCH (c:Chunk) WHERE c.documentId IN $ids MATCH (c)-[r]->() DELETE r",
    "MATCH (s:Section) WHERE s.documentId IN $ids MATCH (s)-[r]->() DELETE r",
    "MATCH (c:Chunk) WHERE c.documentId IN $ids DELETE c",
    "MATCH (s:Section) WHERE s.documentId IN $ids DELETE s",
    "MATCH (d:Document) WHERE d.id IN $ids DELETE d",
)


async def floor_delete(store: Store, ids: list[str] | None, *, runs: bool) -> None:
    """The floor: the same elements, batches of 100 documents, one transaction each, no checks.

    Without ``ids`` (a reset) it first reads every document id, as a hand-written reset must.
    """
    if ids is None:
        ids = (await store.read("MATCH (d:Document) RETURN d.id AS id", name="floor.ids")).column("id")
    ordered = sorted(ids)
    for first in range(0, len(ordered), FLOOR_BATCH):
        batch = ordered[first : first + FLOOR_BATCH]

        async def work(tx: StoreTransaction, batch: list[str] = batch) -> None:
            for statement in FLOOR:
                await tx.run(statement, {"ids": batch}, name="floor.delete")

        await store.write(work)
    if runs:
        await store.execute("MATCH (r:IngestionRun) DELETE r", name="floor.runs")


async def counts(store: Store) -> tuple[int, ...]:
    row = (
        await store.read(
            "RETURN COUNT { (:Document) } AS documents, COUNT { (:Section) } AS sections, "
            "COUNT { (:Chunk) } AS chunks, COUNT { ()-[]->() } AS links, COUNT { (:IngestionRun) } AS runs",
            name="bench.counts",
        )
    ).records[0]
    return tuple(int(row[key]) for key in ("documents", "sections", "chunks", "links", "runs"))


async def wipe(store: Store) -> None:
    await store.execute(
        "MATCH (n) WHERE NOT n:GraphRagMigration CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
        name="bench.wipe",
    )


async def settle(store: Store) -> None:
    """A pause after writing, so background work of the write (index updates) is done.

    Community edition has no ``db.checkpoint()``; a checkpoint may still land inside a
    timed run, which is one reason runs are paired and repeated.
    """
    await store.execute("CALL db.awaitIndexes(600)", name="bench.await_indexes")
    await asyncio.sleep(1.0)


async def timed(store: Store, action: Callable[[], Awaitable[None]]) -> tuple[float, int]:
    """Seconds ``action()`` took and the statements it sent, counted by the store's hook."""
    events: list[StatementEvent] = []
    remove_hook = store.add_hook(events.append)
    began = time.perf_counter()
    try:
        await action()
    finally:
        elapsed = time.perf_counter() - began
        remove_hook()
    return elapsed, len(events)


async def one_round(
    store: Store, corpus: Corpus, scenario: str, way: str, args: argparse.Namespace, seed: int
) -> tuple[float, int]:
    """One timed run: (seconds, statements)."""
    await wipe(store)
    service = MaintenanceService(store, MODEL, OFFLINE_EMBEDDING_SET)
    if scenario == "reset":
        await corpus.write(args.documents, seed)
        await settle(store)

        async def reset() -> None:
            if way == "toolkit":
                report = await service.reset()
                assert report.documents == args.documents, report
            else:
                await floor_delete(store, None, runs=True)

        result = await timed(store, reset)
        assert await counts(store) == (0, 0, 0, 0, 0), await counts(store)
        return result
    ids = await corpus.write(args.of, seed)
    chosen = sorted(ids)[:: max(1, args.of // args.remove)][: args.remove]
    await settle(store)

    async def remove() -> None:
        if way == "toolkit":
            report = await service.reset(ResetScope(document_ids=tuple(chosen)))
            assert report.documents == len(chosen), report
        else:
            await floor_delete(store, chosen, runs=False)

    result = await timed(store, remove)
    left = args.of - len(chosen)
    expected = (left, 2 * left, CHUNKS_PER_DOCUMENT * left, 17 * left, 1)
    assert await counts(store) == expected, (await counts(store), expected)
    return result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=4000)
    parser.add_argument("--of", type=int, default=1000)
    parser.add_argument("--remove", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--port", type=int, default=7692)
    parser.add_argument("--stop", action="store_true", help="stop the server at the end")
    parser.add_argument("--json", type=str, default=None, help="also write the figures to this file")
    args = parser.parse_args()

    local = LocalDbSettings.from_env(home_name=f"home-test-{args.port}", port=args.port)
    start(local)
    settings = ConnectionSettings(uri=local.uri, password=os.environ.get("NEO4J_PASSWORD", local.password))
    store = await open_store(settings)
    try:
        await Migrator(store, Chain.load()).apply()
        corpus = Corpus(store)
        version = await server_version(store)
        results: dict[str, dict[str, list[float]]] = {}
        statements: dict[str, dict[str, int]] = {}
        seed = 52
        for scenario in ("reset", "remove"):
            times: dict[str, list[float]] = {"toolkit": [], "floor": []}
            counted: dict[str, int] = {}
            for way in ("toolkit", "floor"):  # warm-up (query plans, caches), not counted
                seed += 1
                await one_round(store, corpus, scenario, way, args, seed)
            for repeat in range(args.repeats):
                order = ("toolkit", "floor") if repeat % 2 == 0 else ("floor", "toolkit")
                for way in order:
                    seed += 1
                    seconds, sent = await one_round(store, corpus, scenario, way, args, seed)
                    times[way].append(seconds)
                    counted[way] = sent  # the same corpus shape every run: the same count
            results[scenario] = times
            statements[scenario] = counted
        await wipe(store)
    finally:
        await store.driver.close()
        if args.stop:
            stop(local)

    labels = {
        "reset": f"reset of {args.documents:,} documents / {args.documents * CHUNKS_PER_DOCUMENT:,} chunks",
        "remove": f"removal of {args.remove:,} of {args.of:,} documents",
    }
    print(f"Neo4j {version}, CPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"{args.repeats} pairs per scenario, toolkit and floor alternating; corpus rewritten before each run")
    print("| Scenario | graphrag-orm (median, best) | Floor (median, best) | Floor / graphrag-orm (median of pairs) |")
    print("|---|---:|---:|---:|")
    summary: dict[str, Any] = {"neo4j": version, "repeats": args.repeats}
    for scenario, times in results.items():
        toolkit, floor = times["toolkit"], times["floor"]
        ratio = statistics.median(f / t for t, f in zip(toolkit, floor, strict=True))
        print(
            f"| {labels[scenario]} | {statistics.median(toolkit):.2f} s, {min(toolkit):.2f} s "
            f"| {statistics.median(floor):.2f} s, {min(floor):.2f} s | {ratio:.2f} |"
        )
        summary[scenario] = {"toolkit": toolkit, "floor": floor, "ratio": ratio, "statements": statements[scenario]}
    for scenario, times in results.items():
        runs = ", ".join(f"{t:.2f}/{f:.2f}" for t, f in zip(times["toolkit"], times["floor"], strict=True))
        print(f"{scenario} (toolkit/floor): {runs}")
    for scenario, counted in statements.items():
        print(f"{scenario} statements per run (store hook): toolkit {counted['toolkit']}, floor {counted['floor']}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")  # noqa: ASYNC240


if __name__ == "__main__":
    asyncio.run(main())
