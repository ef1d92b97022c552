"""Hybrid retrieval latency: graphrag-orm against the raw index queries and neo4j-graphrag, in one run.

Ingests the ingestion benchmark's corpus (2,000 documents, about 20,000 chunks) with
graphrag-orm, then asks 200 generated questions, each contender after a warm-up pass:

- **graphrag-orm**: ``Retriever.retrieve(question, Retrievers.hybrid())``: the question's
  vector, the vector route (Cypher 25 ``SEARCH``) and the full-text route
  (``db.index.fulltext.queryNodes``), rank fusion and the winners' fields with their
  neighbours in one statement (``retrieval.evidence``), then the budget and the evidence
  values.
- **floor**: the two raw index queries, the same text with the same parameters and
  limits, one after the other in one session, on precomputed vectors: nothing else.
- **neo4j-graphrag** 1.22.0: ``HybridRetriever`` on our vector and full-text indexes,
  given the same query vectors and the same Lucene query text, ``top_k`` = our
  candidates per route; in its own venv, as a subprocess reading the same questions.

graphrag-orm (with its default neighbour context, and bare: no neighbours, like
neo4j-graphrag) and the floor take turns question by question; each timed round over the
questions is followed by one of neo4j-graphrag's process, so drift in machine load falls
on all. Reports p50 and p95 per contender and the ratios.

    .venv/bin/python benchmarks/retrieve/run.py
    .venv/bin/python benchmarks/retrieve/run.py --documents 200 --questions 50   # a quick look

Set NEO4J_URI (and NEO4J_PASSWORD) to use another server; the benchmark wipes it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import (
    BASE_URI,
    NEO4J_GRAPHRAG_PYTHON,
    SCRATCH,
    BenchServer,
    LoadProbe,
    LoadReport,
    generate_corpus,
    generate_questions,
    machine_description,
    print_table,
    reset_database,
    server_version,
)

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import RetrievalOptions, Retriever, Retrievers, to_query
from graphrag_orm.sources import Sources
from graphrag_orm.store import StatementEvent, Store
from graphrag_orm.store.connection import ConnectionSettings, open_driver

HERE = Path(__file__).resolve().parent
NEO4J_GRAPHRAG_SIDE = HERE / "neo4j_graphrag_side.py"


@dataclass(frozen=True)
class Question:
    text: str
    lucene: str  # what graphrag-orm's full-text route sends (to_query)
    vector: list[float]


@dataclass
class Latencies:
    name: str
    seconds: list[float]
    load: LoadReport | None = None
    note: str = ""

    def percentile(self, p: float) -> float:
        """The nearest-rank percentile: the smallest latency with ``p`` percent at or below it."""
        ordered = sorted(self.seconds)
        rank = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
        return ordered[rank]

    @property
    def p50(self) -> float:
        return statistics.median(self.seconds)

    @property
    def p95(self) -> float:
        return self.percentile(95)


# ------------------------------------------------------------------ the contenders


class Floor:
    """The two index searches graphrag-orm's hybrid statement holds, on their own, and nothing else.

    Sent on the store's driver as two auto-commit statements in one session: no
    transaction, no fusion, no fields.
    """

    def __init__(self, store: Store, retriever: Retriever, options: RetrievalOptions) -> None:
        self.store = store
        chunks = retriever.model.names.chunk
        label, key = chunks.label, chunks.key
        self.vector_query = (
            f"MATCH (c:{label}) SEARCH c IN (VECTOR INDEX {retriever.vector_index} FOR $vector LIMIT $fetch) "
            f"SCORE AS score RETURN c.{key}, score"
        )
        self.fulltext_query = (
            "CALL db.index.fulltext.queryNodes($index, $query, {limit: $fetch}) YIELD node AS c, score "
            f"RETURN c.{key}, score"
        )
        self.fulltext_index = retriever.fulltext_index
        self.fetch = options.route_candidates

    async def ask(self, question: Question) -> int:
        async with self.store.driver.session(database=self.store.database) as session:
            vector = await (
                await session.run(self.vector_query, {"vector": question.vector, "fetch": self.fetch})
            ).values()
            text = await (
                await session.run(
                    self.fulltext_query, {"index": self.fulltext_index, "query": question.lucene, "fetch": self.fetch}
                )
            ).values()
        return len(vector) + len(text)


async def ask_ours(retriever: Retriever, options: RetrievalOptions, question: Question) -> int:
    evidence = await retriever.retrieve(question.text, options)
    return len(evidence.items)


def neo4j_graphrag(
    questions_file: Path, settings: ConnectionSettings, retriever: Retriever, top_k: int, rounds: int
) -> Latencies:
    if not NEO4J_GRAPHRAG_PYTHON.is_file():
        raise SystemExit("neo4j-graphrag's venv is missing: run `bash benchmarks/setup-neo4j-graphrag.sh` first")
    env = dict(os.environ, NEO4J_URI=settings.uri, NEO4J_USER=settings.user, NEO4J_PASSWORD=settings.password)
    command = [
        str(NEO4J_GRAPHRAG_PYTHON),
        str(NEO4J_GRAPHRAG_SIDE),
        "--questions",
        str(questions_file),
        "--vector-index",
        retriever.vector_index,
        "--fulltext-index",
        retriever.fulltext_index,
        "--top-k",
        str(top_k),
        "--rounds",
        str(rounds),
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"neo4j-graphrag side failed ({result.returncode}):\n{result.stderr[-4000:]}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return Latencies(
        "neo4j-graphrag HybridRetriever",
        report["seconds"],
        note=f"{report['items_per_question']:.1f} items per question",
    )


# ------------------------------------------------------------------ where ours spends its time


@contextlib.contextmanager
def statements_seen(store: Store) -> Iterator[list[StatementEvent]]:
    """The store's statements while active, as its hook sees them (nothing is patched)."""
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        yield events
    finally:
        remove()


async def breakdown(store: Store, retriever: Retriever, options: RetrievalOptions, questions: list[Question]) -> None:
    """Per question: time inside the database statements and what is left (Python, the driver)."""
    totals: list[float] = []
    inside: list[float] = []
    statements: list[int] = []
    names: set[str] = set()
    for question in questions:
        with statements_seen(store) as events:
            began = time.perf_counter()
            await retriever.retrieve(question.text, options)
            totals.append(time.perf_counter() - began)
        inside.append(sum(event.seconds for event in events))
        statements.append(len(events))
        names.update(event.name for event in events)
    rest = [total - spent for total, spent in zip(totals, inside, strict=True)]
    print(
        f"\n## Where graphrag-orm's time goes ({len(questions)} questions, medians; "
        f"{statistics.mean(statements):.1f} statements per question: {', '.join(sorted(names))})\n"
    )
    print_table(
        ["Phase", "Median"],
        [
            ["whole retrieve()", _ms(statistics.median(totals))],
            ["the statement: both routes, fusion, fields, neighbours", _ms(statistics.median(inside))],
            ["the rest: transaction, embedding the question, budget, evidence values", _ms(statistics.median(rest))],
        ],
    )
    embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    began = time.perf_counter()
    for question in questions:
        embedder.embed_one(question.text)
    print(f"\n(embedding a question alone: {_ms((time.perf_counter() - began) / len(questions))})")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    print(f"machine: {machine_description()}")
    corpus = generate_corpus(args.seed, args.documents)
    folder = corpus.write(SCRATCH / f"retrieve-corpus-s{args.seed}-n{args.documents}")
    embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    questions = [
        Question(text, to_query(text), embedder.embed_one(text)[0])
        for text in generate_questions(corpus, args.questions, seed=args.seed)
    ]
    questions_file = SCRATCH / "retrieve-questions.json"
    questions_file.write_text(json.dumps([q.__dict__ for q in questions]), encoding="utf-8")
    print(f"corpus: {len(corpus.documents):,} documents, {corpus.utf8_bytes / 1e6:.1f} MB; {len(questions)} questions")
    with BenchServer() as server:
        settings = server.settings
        driver = await open_driver(settings)
        store = Store(driver, database=settings.database)
        try:
            print(f"server: Neo4j {await server_version(store)} at {settings.uri}")
            await reset_database(store)
            service = IngestionService(
                store,
                for_layout(Layout.DEFAULT),
                OFFLINE_EMBEDDING_SET,
                HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
                chunker=Chunker(ChunkerOptions()),
                options=IngestionOptions(),
            )
            began = time.perf_counter()
            receipt = await service.ingest(Sources.folder(folder, base_uri=BASE_URI))
            print(
                f"ingested by graphrag-orm: {receipt.chunks_written:,} chunks in {time.perf_counter() - began:.0f} s "
                f"({receipt.failed} failed)"
            )
            await store.execute("CALL db.awaitIndexes(300)", name="bench.await-indexes")
            print(f"load before: load average {os.getloadavg()[0]:.2f}\n")

            # Neighbour context (1 chunk each side by default) is work neo4j-graphrag's
            # retriever does not do: "ours, bare" (neighbour_chunks 0) compares like for like.
            options = Retrievers.hybrid().model_copy(update={"neighbour_chunks": args.neighbours})
            bare_options = options.model_copy(update={"neighbour_chunks": 0})
            retriever = Retriever(
                store, for_layout(Layout.DEFAULT), OFFLINE_EMBEDDING_SET, HashingEmbedder(256), options
            )
            floor = Floor(store, retriever, options)
            ours = Latencies(f"graphrag-orm Retriever.retrieve (hybrid, {args.neighbours} neighbour chunks)", [])
            bare = Latencies("graphrag-orm Retriever.retrieve (hybrid, no neighbours)", [])
            raw = Latencies("floor: the two index queries, back to back", [])
            theirs = Latencies("neo4j-graphrag HybridRetriever", [])
            contenders = [
                (ours, lambda q: ask_ours(retriever, options, q)),
                (bare, lambda q: ask_ours(retriever, bare_options, q)),
                (raw, floor.ask),
            ]
            items = 0
            for question in questions:  # warm-up: every question once, each contender
                items += await ask_ours(retriever, options, question)
                await ask_ours(retriever, bare_options, question)
                await floor.ask(question)
            with LoadProbe(server.server_pid) as probe:
                # Rounds alternate between our contenders (rotated question by question)
                # and neo4j-graphrag's process, so drift in the machine's load falls on all.
                for _ in range(args.rounds):
                    for index, question in enumerate(questions):
                        shift = index % len(contenders)
                        for into, ask in contenders[shift:] + contenders[:shift]:
                            began = time.perf_counter()
                            await ask(question)
                            into.seconds.append(time.perf_counter() - began)
                    if args.neo4j_graphrag:
                        side = neo4j_graphrag(questions_file, settings, retriever, options.route_candidates, 1)
                        theirs.seconds.extend(side.seconds)
                        theirs.note = side.note
            ours.load = bare.load = raw.load = theirs.load = probe.report()
            ours.note = f"{items / len(questions):.1f} evidence items per question"
            report([ours, bare, raw, theirs] if args.neo4j_graphrag else [ours, bare, raw], args.rounds, len(questions))
            await breakdown(store, retriever, options, questions)
            await reset_database(store)
        finally:
            await driver.close()


def report(results: list[Latencies], rounds: int, questions: int) -> None:
    """One row per contender; the ratios put each of our two configurations over it."""
    ours, bare = results[0], results[1]
    print(f"\n{questions} questions x {rounds} rounds after one warm-up pass each:\n")

    def ratio(mine: Latencies, other: Latencies) -> str:
        return "" if other is mine else f"{mine.p50 / other.p50:.2f}x / {mine.p95 / other.p95:.2f}x"

    rows = [
        [
            result.name,
            _ms(result.p50),
            _ms(result.p95),
            ratio(ours, result),
            ratio(bare, result),
            f"{result.load.machine_busy:.0%}" if result.load else "",
        ]
        for result in results
    ]
    print_table(
        ["Contender", "p50", "p95", "ours / this (p50 / p95)", "ours, bare / this", "Machine busy"],
        rows,
    )
    for result in results:
        parts = [part for part in (result.note, result.load.describe() if result.load else "") if part]
        if parts:
            print(f"- {result.name}: {'; '.join(parts)}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the questions")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--neighbours", type=int, default=1, choices=range(5), help="neighbour_chunks for ours")
    parser.add_argument(
        "--no-neo4j-graphrag",
        dest="neo4j_graphrag",
        action="store_false",
        help="only graphrag-orm and the floor (when neo4j-graphrag's venv is not set up)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
