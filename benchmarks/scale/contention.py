"""Many workers on one manifest: what their leases cost, counted statement by statement.

N ingestion runs (``IngestionService``, the hashing embedder, ``wait_for_leases_seconds``
600) are given the same folder at once, in one process against one server, sharing
one store whose statement hook counts every statement by name
(``common.StatementCounter``). Each run must write each document at most once; what
sharing costs is the lease inserts beyond one per document:

- **refused**: an insert that failed on the lease's uniqueness (another run held it),
  each followed by a takeover attempt that found the lease unexpired;
- **wasted**: an insert that took the lease of a document another run had already
  written (its state was read before that write), found ``Unchanged`` under it and
  released;
- **reads**: the statements reading stored states and leases as each pass goes.

The counts do not depend on the machine's speed the way times do; times are printed
for orientation only (the throughput of many worker *processes* over a network is
``workers.py``'s). After every N: every document stored once, the planned chunks, no
lease left, else the run stops.

    .venv/bin/python benchmarks/scale/contention.py
    .venv/bin/python benchmarks/scale/contention.py --documents 400 --workers 1,2,4,8 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import (
    BENCH_HOME,
    BENCH_PORT,
    SCRATCH,
    BenchServer,
    StatementCounter,
    generate_corpus,
    machine_description,
    print_table,
    reset_database,
)

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import DocumentStatus, IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import open_store

BASE_URI = "https://contention.example/"
MODEL = for_layout(Layout.DEFAULT)
#: State reads of a waiting pass, by name (the current one and those of earlier versions).
READS = ("ingestion.state.window", "ingestion.state.prefetch", "ingestion.lease.present")


async def one_round(store: Store, folder: Path, workers: int, documents: int, chunks: int) -> dict[str, float]:
    """N runs on one folder at once: the lease statements they made, checked afterwards."""
    await reset_database(store)
    options = IngestionOptions(wait_for_leases_seconds=600.0, lease_duration_seconds=60.0)
    services = [
        IngestionService(
            store,
            MODEL,
            OFFLINE_EMBEDDING_SET,
            HashingEmbedder(256),
            chunker=Chunker(ChunkerOptions()),
            options=options,
        )
        for _ in range(workers)
    ]
    sources = Sources.folder(folder, base_uri=BASE_URI)
    began = time.perf_counter()
    with StatementCounter(store) as counter:
        receipts = await asyncio.gather(*(service.ingest(sources) for service in services))
    seconds = time.perf_counter() - began
    written = sum(r.ingested for r in receipts)
    stored = (await store.read("MATCH (d:Document) RETURN count(d) AS n", name="bench.count")).value("n", 0)
    stored_chunks = (await store.read("MATCH (c:Chunk) RETURN count(c) AS n", name="bench.count")).value("n", 0)
    leases = (await store.read("MATCH (l:GraphRagLease) RETURN count(l) AS n", name="bench.count")).value("n", 0)
    failed = [o for r in receipts for o in r.documents if o.status == DocumentStatus.FAILED]
    if (written, stored, stored_chunks, leases, len(failed)) != (documents, documents, chunks, 0, 0):
        raise SystemExit(
            f"broken invariant with {workers} workers: {written} written, {stored} stored of {documents}, "
            f"{stored_chunks} chunks of {chunks}, {leases} leases left, {len(failed)} failed"
        )
    refused = counter.failed.get(("ingestion.lease.insert", "ConstraintError"), 0)
    inserted = counter.counts.get("ingestion.lease.insert", 0) - refused
    return {
        "seconds": seconds,
        "inserts": counter.counts.get("ingestion.lease.insert", 0),
        "refused": refused,
        "takeovers": counter.counts.get("ingestion.lease.takeover", 0),
        "wasted": inserted - written,
        "reads": counter.total(*READS),
        "statements": counter.total(),
    }


async def main(args: argparse.Namespace) -> None:
    folder = SCRATCH / "scale" / f"contention-s{args.seed}-n{args.documents}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    corpus = generate_corpus(args.seed, args.documents)
    for name, text in corpus.documents:
        (folder / name).write_text(text, encoding="utf-8")
    chunker = Chunker(ChunkerOptions())
    chunks = 0
    for source in Sources.folder(folder, base_uri=BASE_URI):
        chunks += len(chunker.plan(await LoaderRegistry.default().load(source)).chunks)
    print(machine_description())
    print(f"corpus: {args.documents} documents, {chunks} chunks; {args.rounds} round(s) per N, medians")
    rows = []
    try:
        with BenchServer(port=args.port, home=args.home) as server:
            store = await open_store(server.settings)
            try:
                for workers in (int(n) for n in args.workers.split(",")):
                    rounds = [
                        await one_round(store, folder, workers, args.documents, chunks) for _ in range(args.rounds)
                    ]
                    median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
                    extra = median["refused"] + median["wasted"]
                    rows.append(
                        [
                            str(workers),
                            f"{median['inserts']:,.0f}",
                            f"{median['refused']:,.0f}",
                            f"{median['takeovers']:,.0f}",
                            f"{median['wasted']:,.0f}",
                            f"{extra / args.documents:.2f}",
                            f"{median['reads']:,.0f}",
                            f"{median['statements'] / args.documents:.1f}",
                            f"{median['seconds']:.1f} s",
                        ]
                    )
                    print(f"  {workers} workers: {rows[-1]}", flush=True)
            finally:
                await store.driver.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print()
    print_table(
        [
            "Workers",
            "Lease inserts",
            "Refused",
            "Takeover tries",
            "Wasted",
            "Extra per document",
            "State reads",
            "Statements per document",
            "Time",
        ],
        rows,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=400)
    parser.add_argument("--workers", default="1,2,4,8", help="comma-separated run counts")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per N (medians)")
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--port", type=int, default=BENCH_PORT)
    parser.add_argument("--home", default=BENCH_HOME)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
