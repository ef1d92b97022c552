"""Retrieval relevance on the dev set (examples/devset): graphrag-orm against neo4j-graphrag, per kind.

    make eval-retrieval          # or: .venv/bin/python benchmarks/relevance/run.py

Ingests Pride and Prejudice with the toolkit's defaults (2 KiB chunks, one paragraph of
overlap) and the local MiniLM model (the ``local`` extra) on its own local Neo4j (port
7706, home ``home-retr``; ``--port``, ``--home``, or NEO4J_URI, which is **wiped**), then
asks the 45 questions of ``examples/devset/cases.jsonl``:

- graphrag-orm, through the evaluation harness (``Evaluator``, k = 10), in several
  configurations: its defaults, the same without the passage stage (the fusion alone), the
  defaults before fusion and the budget changed (reciprocal rank over 20 candidates a
  route, no shared votes, a 16 KiB budget), and each change on its own (these without the
  stage);
- neo4j-graphrag 1.22.0's ``VectorRetriever`` and ``HybridRetriever`` (its default
  ranker) on the same indexes, with the same query vectors and Lucene text, top 10
  (``neo4j_graphrag_side.py`` in ``benchmarks/.venv-neo4j-graphrag``), scored by the
  same metrics (:func:`graphrag_orm.evaluation.metrics.score_case`) on the chunks' text.

``--model NAME`` picks the local model card (default: GRAPHRAG_EMBEDDING_MODEL, else
MiniLM; ``graphrag-orm models list``); questions are embedded as queries (the card's
query prefix), chunks as passages. The embedder's throughput on the corpus's chunks
(texts/s of wall time and per CPU-second, after a warm-up) is printed beside the table. ``--only-defaults`` runs only
graphrag-orm's defaults and its vector route; ``--only TEXT`` the defaults and the
configurations whose name holds TEXT; ``--no-neo4j-graphrag`` leaves the peer out.
``--devset DIR`` asks another dev set's questions on its corpus (default ``examples/devset``;
e.g. ``examples/devset2``, Frankenstein): the folder's ``cases.jsonl`` and its one ``.txt``,
ingested as ``https://example.org/graphrag-orm/<folder>/<file>``, the URI its cases expect.

Per kind of question (the id's prefix): coverage (required phrases found in the first
10 items), recall@10 (a required phrase in the first 10) and MRR; unanswerable
questions have no phrases, so they count only in "cases". Also: cases where the byte
budget, not the ranking, dropped a required phrase. ``--markdown FILE`` writes the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import NEO4J_GRAPHRAG_PYTHON, SCRATCH, BenchServer, reset_database, server_version
from window_vectors import ROUTE as WINDOWS
from window_vectors import WindowRoute, build_windows

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.embeddings.base import embed_questions
from graphrag_orm.embeddings.local import DEFAULT_MODEL
from graphrag_orm.embeddings.windows import LONG_TEXTS
from graphrag_orm.evaluation import Evaluator, load_cases
from graphrag_orm.evaluation.cases import EvalCase
from graphrag_orm.evaluation.metrics import score_case
from graphrag_orm.evaluation.stored import StoredChunks
from graphrag_orm.evaluation.values import CaseResult
from graphrag_orm.evidence import Evidence, EvidenceItem, Route
from graphrag_orm.ingestion import IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import RetrievalOptions, Retriever, Retrievers, to_query
from graphrag_orm.retrieval.options import Fusion
from graphrag_orm.schema import CreateStep, Schema
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_driver

REPO = Path(__file__).resolve().parents[2]
DEVSET = REPO / "examples" / "devset"
CORPUS_URI = "https://example.org/graphrag-orm/devset/pride-and-prejudice.txt"
SIDE = Path(__file__).with_name("neo4j_graphrag_side.py")
K = 10
KINDS = ("multihop", "paraphrase", "aggregate", "unanswerable")
BEFORE = {"fusion": Fusion.RECIPROCAL_RANK, "candidates_per_route": 20, "shared_votes": False, "max_utf8_bytes": 16_384}
#: The fusion alone: the rows that compare fusions leave the passage stage out, as when they were measured.
NO_STAGE = {"stages": ()}


def configurations() -> list[tuple[str, RetrievalOptions]]:
    """graphrag-orm's contenders: the defaults (the passage stage on the fusion), the fusion alone,
    the defaults before, each change alone, and others measured (each without the stage)."""
    with_stage = RetrievalOptions()
    default = with_stage.model_copy(update=NO_STAGE)
    before = default.model_copy(update=BEFORE)
    return [
        ("graphrag-orm defaults", with_stage),
        ("graphrag-orm defaults without the passage stage", default),
        ("graphrag-orm before (RRF, 20 a route, 16 KiB)", before),
        ("  before + budget for k", before.model_copy(update={"max_utf8_bytes": None})),
        (
            "  before + budget + sized candidates",
            before.model_copy(update={"max_utf8_bytes": None, "candidates_per_route": None}),
        ),
        (
            "  RRF, sized, shared votes",
            default.model_copy(update={"fusion": Fusion.RECIPROCAL_RANK, "shared_votes": True}),
        ),
        (
            "  score fusion, sized, no shared votes",
            default.model_copy(update={"fusion": Fusion.SCORE, "shared_votes": False}),
        ),
        (
            "  score fusion, sized, shared votes",
            default.model_copy(update={"fusion": Fusion.SCORE, "shared_votes": True}),
        ),
        (
            "  score fusion, 10 a item, shared",
            default.model_copy(update={"fusion": Fusion.SCORE, "candidates_per_item": 10}),
        ),
        (
            "  score fusion, 3 a item, shared",
            default.model_copy(update={"fusion": Fusion.SCORE, "candidates_per_item": 3}),
        ),
        (
            "  best-score fusion, sized, shared votes",
            default.model_copy(update={"fusion": Fusion.BEST_SCORE, "shared_votes": True}),
        ),
        (
            "  best-score fusion, sized, no shared votes",
            default.model_copy(update={"fusion": Fusion.BEST_SCORE, "shared_votes": False}),
        ),
        (
            "  relative-score fusion, sized, shared votes",
            default.model_copy(update={"fusion": Fusion.RELATIVE_SCORE, "shared_votes": True}),
        ),
        (
            "  RRF, 10 a item, shared",
            default.model_copy(update={"fusion": Fusion.RECIPROCAL_RANK, "candidates_per_item": 10}),
        ),
        ("graphrag-orm vector only", Retrievers.vector()),
    ]


def window_configurations() -> list[tuple[str, RetrievalOptions]]:
    """The window-vector experiment's contenders (``--windows``): the windows route in place of,
    or beside, the pooled vector route."""
    default = RetrievalOptions()
    text_and_windows = frozenset({Route.FULL_TEXT.value, WINDOWS})
    return [
        ("  windows only", default.model_copy(update={"routes": frozenset({WINDOWS})})),
        ("  full text + windows, best-score", default.model_copy(update={"routes": text_and_windows})),
        (
            "  full text + windows, score",
            default.model_copy(update={"routes": text_and_windows, "fusion": Fusion.SCORE}),
        ),
        (
            "  full text + windows, RRF, 20 a route",
            default.model_copy(
                update={"routes": text_and_windows, "fusion": Fusion.RECIPROCAL_RANK, "candidates_per_route": 20}
            ),
        ),
        (
            "  full text + vector + windows, best-score",
            default.model_copy(update={"routes": text_and_windows | {Route.VECTOR.value}}),
        ),
    ]


def corpus_of(devset: Path) -> tuple[Path, str]:
    """A dev set's corpus (the one ``.txt`` in its folder) and the document URI its cases expect:
    ``https://example.org/graphrag-orm/<folder>/<file>``, as ``CORPUS_URI`` for the first set."""
    texts = sorted(devset.glob("*.txt"))
    if len(texts) != 1:
        raise SystemExit(f"{devset}: a dev set holds one corpus (.txt), found {len(texts)}")
    return texts[0], f"https://example.org/graphrag-orm/{devset.resolve().name}/{texts[0].name}"


def kind_of(case_id: str) -> str:
    return case_id.split("-", 1)[0]


def summarise(results: Sequence[CaseResult]) -> dict[str, dict[str, float | int]]:
    """Per kind and overall: cases, coverage, recall@10, MRR (means over cases with phrases), budget drops."""
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        groups[kind_of(result.id)].append(result)
        groups["all"].append(result)
    table: dict[str, dict[str, float | int]] = {}
    for kind, group in groups.items():
        scored = [r for r in group if r.coverage is not None]
        n = max(len(scored), 1)
        table[kind] = {
            "cases": len(group),
            "coverage": sum(r.coverage or 0.0 for r in scored) / n,
            "recall": sum(r.recall_at_k or 0.0 for r in scored) / n,
            "mrr": sum(r.reciprocal_rank or 0.0 for r in scored) / n,
            "budget": sum(1 for r in group if r.budget_dropped),
        }
    return table


async def ingest(store: Store, embedder: LocalEmbedder, devset: Path = DEVSET) -> int:
    # The toolkit's chain declares the offline set's vector index on the same property: swap it for MiniLM's.
    await reset_database(store)
    for row in await store.read("SHOW VECTOR INDEXES YIELD name RETURN name", name="bench.vector-indexes"):
        await store.execute(f"DROP INDEX `{row['name']}` IF EXISTS", name="bench.drop")
    definition = Schema.vector_index(Layout.DEFAULT, embedder.embedding_set())
    await store.execute(CreateStep(definition=definition).cypher(), name="bench.create")
    service = IngestionService(
        store,
        for_layout(Layout.DEFAULT),
        embedder.embedding_set(),
        embedder,
        chunker=Chunker(ChunkerOptions()),
        options=IngestionOptions(),
    )
    began = time.perf_counter()
    corpus, uri = corpus_of(devset)
    receipt = await service.ingest([Sources.file(corpus, uri=uri)])
    await store.execute("CALL db.awaitIndexes(300)", name="bench.await-indexes")
    print(f"ingested {receipt.chunks_written} chunks in {time.perf_counter() - began:.0f} s ({receipt.failed} failed)")
    return receipt.chunks_written


async def vectors_are_this_embedders(store: Store, embedder: LocalEmbedder) -> bool:
    """Whether the stored vectors are this embedder's: the vector index named for its embedding set
    is there (the name holds the model's, so e5 in fp32 is not taken for int8: their vectors of
    one text have a cosine above 0.99), and a stored chunk's vector has a cosine above 0.99 with a
    fresh embedding (not 1: the int8 models quantise each batch by its own range, so one text
    embedded in another batch comes out at about 0.997)."""
    index = Layout.DEFAULT.vector_index_name(embedder.embedding_set().vector_index_name)
    shown = await store.read("SHOW VECTOR INDEXES YIELD name RETURN collect(name) AS names", name="bench.indexes")
    if index not in shown.value("names"):
        return False
    rows = await store.read(
        "MATCH (c:Chunk) WITH c ORDER BY c.startByte SKIP 3 LIMIT 1 RETURN c.text AS text, c.embedding AS vector",
        name="bench.one-chunk",
    )
    row = rows.single()
    if row is None or row["vector"] is None:
        return False
    stored = [float(x) for x in row["vector"]]
    (fresh,) = await embedder.embed([str(row["text"])])
    if len(fresh) != len(stored):
        return False
    dot = sum(a * b for a, b in zip(fresh, stored, strict=True))
    norms = math.sqrt(sum(a * a for a in fresh)) * math.sqrt(sum(b * b for b in stored))
    return dot / (norms or 1.0) > 0.99


async def reuse_or_ingest(store: Store, embedder: LocalEmbedder, devset: Path) -> None:
    """The graph another script left, kept when it holds the set's corpus alone, at least a chunk per
    4 KiB of it (not an ingestion cut short) and this embedder's vectors; else ingested again."""
    corpus, uri = corpus_of(devset)
    stored_chunks = (await store.read("MATCH (c:Chunk) RETURN count(c) AS n", name="bench.count")).value("n")
    uris = await store.read("MATCH (d:Document) RETURN d.sourceUri AS uri", name="bench.documents")
    if (
        [row["uri"] for row in uris] != [uri]
        or stored_chunks < corpus.stat().st_size // 4096
        or not await vectors_are_this_embedders(store, embedder)
    ):
        await ingest(store, embedder, devset)


class Around:
    """A contender around ``inner`` (a retriever, or an embedder): what the subclass does not
    define is the inner one's, so the evaluation harness takes it for the real thing."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass
class DevSetGraph:
    """A dev set's graph on its local server, with the default retriever and the stored chunks."""

    server: BenchServer
    store: Store
    retriever: Retriever
    stored: StoredChunks


@asynccontextmanager
async def dev_set_graph(args: argparse.Namespace, embedder: LocalEmbedder) -> AsyncIterator[DevSetGraph]:
    """The graph another script left on ``args.port``/``args.home`` (:func:`reuse_or_ingest`), open."""
    with BenchServer(port=args.port, home=args.home) as server:
        driver = await open_driver(server.settings)
        store = Store(driver, database=server.settings.database)
        try:
            await reuse_or_ingest(store, embedder, args.devset)
            model = for_layout(Layout.DEFAULT)
            retriever = Retriever(store, model, embedder.embedding_set(), embedder)
            yield DevSetGraph(server, store, retriever, StoredChunks(store, model))
        finally:
            await driver.close()


async def score_contenders(
    contenders: Sequence[tuple[str, Any]], cases: Sequence[EvalCase], stored: StoredChunks
) -> list[tuple[str, dict[str, dict[str, float | int]]]]:
    """Each contender (a retriever, or anything with its ``retrieve``) through the evaluation harness at k."""
    rows = []
    for name, contender in contenders:
        report = await Evaluator(retriever=contender, stored=stored, k=K).run(cases)
        rows.append((name, summarise(report.cases)))
        print(f"{name}: done", flush=True)
    return rows


async def question_vectors(embedder: LocalEmbedder, cases: Sequence[EvalCase]) -> list[Sequence[float]]:
    """Each question's vector as the retriever computes it: embedded alone. (In a batch the int8
    models quantise by the whole batch's range, and a question's vector moves to a cosine of
    about 0.997 with its own: close candidates can swap.)"""
    return [(await embed_questions(embedder, [case.question]))[0] for case in cases]


def write_questions(cases: Sequence[EvalCase], vectors: Sequence[Sequence[float]]) -> Path:
    """The questions as neo4j-graphrag's side reads them (Lucene text and query vector), in a scratch file."""
    questions = [{"lucene": to_query(c.question), "vector": list(v)} for c, v in zip(cases, vectors, strict=True)]
    SCRATCH.mkdir(exist_ok=True)
    questions_file = SCRATCH / "relevance-questions.json"
    questions_file.write_text(json.dumps(questions), encoding="utf-8")
    return questions_file


def dev_set_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options the scripts that reuse a dev set's graph share: --model, --port, --home, --devset."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n", 1)[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--port", type=int, default=7706)
    parser.add_argument("--home", default="home-retr")
    parser.add_argument("--devset", type=Path, default=DEVSET, help="the dev set's folder (default: examples/devset)")
    return parser


def neo4j_graphrag(questions: Path, settings: ConnectionSettings, retriever: Retriever) -> dict[str, list[list[str]]]:
    if not NEO4J_GRAPHRAG_PYTHON.is_file():
        raise SystemExit("neo4j-graphrag's venv is missing: run `bash benchmarks/setup-neo4j-graphrag.sh` first")
    env = dict(os.environ, NEO4J_URI=settings.uri, NEO4J_USER=settings.user, NEO4J_PASSWORD=settings.password)
    asked = {
        "questions": json.loads(questions.read_text(encoding="utf-8")),
        "vectorIndex": retriever.vector_index,
        "fulltextIndex": retriever.fulltext_index,
        "topK": K,
    }
    result = subprocess.run(
        [str(NEO4J_GRAPHRAG_PYTHON), str(SIDE)], input=json.dumps(asked), env=env, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise SystemExit(f"neo4j-graphrag side failed ({result.returncode}):\n{result.stderr[-4000:]}")
    found: dict[str, list[list[str]]] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


async def score_theirs(
    cases: Sequence[EvalCase], ranked: Sequence[Sequence[str]], stored: StoredChunks, uri: str = CORPUS_URI
) -> list[CaseResult]:
    """Each case's metrics from another retriever's chunk ids, on the stored chunks' text."""
    results = []
    for case, ids in zip(cases, ranked, strict=True):
        chunks = await stored.chunks(ids)
        items = tuple(
            EvidenceItem(
                chunk_id=chunk_id,
                document_id=uri,
                source_uri=uri,
                text=chunks[chunk_id].text,
                start_byte=chunks[chunk_id].start_byte,
                end_byte=chunks[chunk_id].end_byte,
                score=0.0,
            )
            for chunk_id in ids
        )
        evidence = Evidence(question=case.question, items=items)
        results.append(score_case(case, evidence, None, (), k=K, seconds=0.0))
    return results


def render(rows: Sequence[tuple[str, dict[str, dict[str, float | int]]]]) -> str:
    """One markdown table: a row per contender, coverage / recall@10 / MRR per kind."""
    kinds = [k for k in KINDS if k != "unanswerable"] + ["all"]
    head = "| contender | " + " | ".join(f"{k}: cov / R@10 / MRR" for k in kinds) + " | budget drops |"
    lines = [head, "|---|" + "---:|" * (len(kinds) + 1)]
    for name, table in rows:
        cells = [
            f"{table[k]['coverage']:.2f} / {table[k]['recall']:.2f} / {table[k]['mrr']:.2f}" if k in table else "-"
            for k in kinds
        ]
        lines.append(f"| {name.strip()} | " + " | ".join(cells) + f" | {table['all']['budget']} |")
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> str:
    cases = load_cases(args.devset / "cases.jsonl")
    counts = {kind: sum(1 for c in cases if kind_of(c.id or "") == kind) for kind in KINDS}
    print(f"{len(cases)} cases: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    embedder = LocalEmbedder(args.model, threads=args.threads, long_texts=args.long_texts)
    with BenchServer(port=args.port, home=args.home) as server:
        settings = server.settings
        driver = await open_driver(settings)
        store = Store(driver, database=settings.database)
        try:
            print(
                f"server: Neo4j {await server_version(store)} at {settings.uri}; "
                f"embedder {embedder.model_name} (long texts: {embedder.long_texts})"
            )
            await ingest(store, embedder, args.devset)
            await throughput(store, embedder)
            model = for_layout(Layout.DEFAULT)
            extra = []
            if args.windows:
                began = time.perf_counter()
                written = await build_windows(store, embedder)
                print(f"window vectors: {written} windows in {time.perf_counter() - began:.0f} s")
                extra = [WindowRoute(store, embedder)]
            retriever = Retriever(store, model, embedder.embedding_set(), embedder, routes=extra)
            stored = StoredChunks(store, model)
            rows: list[tuple[str, dict[str, dict[str, float | int]]]] = []
            chosen = configurations() + (window_configurations() if args.windows else [])
            if args.only_defaults:
                chosen = [chosen[0], chosen[-1]]
            if args.only:
                chosen = [chosen[0], *(c for c in chosen[1:] if any(part in c[0] for part in args.only))]
            for name, options in chosen:
                began = time.perf_counter()
                report = await Evaluator(retriever=retriever, stored=stored, retrieval=options, k=K).run(cases)
                failed = sorted({case.error_code for case in report.cases if case.error_code})
                if failed:
                    raise SystemExit(f"{name}: cases failed with {', '.join(failed)}")
                rows.append((name, summarise(report.cases)))
                print(f"{name}: {time.perf_counter() - began:.1f} s")
            if args.no_neo4j_graphrag:
                return finish(rows, embedder)
            vectors = await question_vectors(embedder, cases)
            questions_file = write_questions(cases, vectors)
            theirs = neo4j_graphrag(questions_file, settings, retriever)
            for key, label in (("vector", "VectorRetriever"), ("hybrid", "HybridRetriever")):
                results = await score_theirs(cases, theirs[key], stored, corpus_of(args.devset)[1])
                rows.append((f"neo4j-graphrag 1.22 {label}", summarise(results)))
        finally:
            await driver.close()
    return finish(rows, embedder)


def finish(rows: Sequence[tuple[str, dict[str, dict[str, float | int]]]], embedder: LocalEmbedder) -> str:
    table = f"embedder: {embedder.model_name}, long texts: {embedder.long_texts}\n\n" + render(rows)
    print("\n" + table)
    return table


async def throughput(store: Store, embedder: LocalEmbedder) -> None:
    """The embedder alone on the ingested chunks, as passages, after a warm-up: texts per second of
    wall time, and per second of this process's CPU time (all its threads; it moves less when
    other work shares the machine), with the word pieces the model read per text."""
    rows = await store.read("MATCH (c:Chunk) RETURN c.text AS text ORDER BY c.startByte", name="bench.chunks")
    chunks = [str(row["text"]) for row in rows]
    await embedder.embed(chunks[:8])
    began, cpu = time.perf_counter(), time.process_time()
    vectors = await embedder.embed(chunks)
    seconds, cpu_seconds = time.perf_counter() - began, time.process_time() - cpu
    pieces = (vectors.input_tokens or 0) / max(len(chunks), 1)
    print(
        f"embedder alone: {len(chunks)} chunks ({pieces:.0f} word pieces read each) in {seconds:.1f} s, "
        f"{len(chunks) / seconds:.1f} texts/s, {len(chunks) / max(cpu_seconds, 1e-9):.1f} texts per CPU-second"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=7706)
    parser.add_argument("--home", default="home-retr")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument(
        "--devset",
        type=Path,
        default=DEVSET,
        help="the dev set's folder: its cases.jsonl and its one .txt corpus (default: examples/devset)",
    )
    parser.add_argument(
        "--model",
        default=(os.environ.get("GRAPHRAG_EMBEDDING_MODEL") or "").strip() or DEFAULT_MODEL,
        help="the local model card (graphrag-orm models list)",
    )
    parser.add_argument("--threads", type=int, default=None, help="ONNX Runtime's threads (default: its choice)")
    parser.add_argument(
        "--long-texts",
        choices=LONG_TEXTS,
        default="pool",
        help="a chunk longer than the model's window: pooled windows (default; chunks keep the chunker's size), "
        "or its first window only (chunks then fitted to the window)",
    )
    parser.add_argument("--only-defaults", action="store_true", help="graphrag-orm's defaults and vector route only")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="the defaults and the configurations whose name holds this (repeatable)",
    )
    parser.add_argument(
        "--windows",
        action="store_true",
        help="also the window-vector experiment (window_vectors.py): a window index and route",
    )
    parser.add_argument("--no-neo4j-graphrag", action="store_true", help="leave neo4j-graphrag out")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args()
    written = asyncio.run(main(arguments))
    if arguments.markdown:
        Path(arguments.markdown).write_text(written + "\n", encoding="utf-8")
