"""The cost of tenancy at scale: one corpus ingested untenanted, then dealt to many tenants (issue 31, item 5).

On one server, two runs on a fresh database each, with the scale benchmark's generated
corpus (``corpus.py``) and its pieces (``run.py``):

1. *untenanted*: the default layout and the toolkit's chain, the corpus ingested as
   ``run.py``'s ``ours`` (one ingest call per 10% slice), then hybrid retrieval warm;
2. *tenanted*: ``Layout.DEFAULT.replace(tenancy="required")`` and ``Chain.load(tenanted=True)``;
   document ``i`` belongs to tenant ``t{i % tenants:03d}``; each slice is ingested per
   tenant through that tenant's view (``GraphRag.for_tenant``), ``--tenant-lanes``
   tenants at once, each call with ``documents_in_flight`` = 4 / lanes, so as many
   documents are in flight as in the untenanted call (4); then hybrid retrieval warm
   for one tenant, ``t000``, on questions drawn from its own documents (the untenanted
   graph is asked these too, for a p95 on the same questions).

Each run first ingests ``--warmup-documents`` other documents its own way, untimed, and
empties the database again (``run.py``'s warm-up). Reported: chunks/s per run and per
slice, tenanted / untenanted ingestion (goal at least 0.9), hybrid p50/p95/p99, the
ratio of the p95s (goal at most 1.5), the items returned and the limits reached
(``FullTextTenantOverFetch``: the tenanted full-text route came back short), the machine's load.

    .venv/bin/python benchmarks/scale/tenants.py --size 100k --tenants 100
    .venv/bin/python benchmarks/scale/tenants.py --documents 200 --tenants 20 --questions 20   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    BASE_URI,
    SCRATCH,
    LoadProbe,
    machine_description,
    print_table,
    reset_database,
    server_version,
)
from corpus import CorpusInfo, write_corpus
from ingest.run import Outcome
from retrieve.run import Latencies
from run import (
    LAYOUT,
    RESULTS,
    ScaleServer,
    Session,
    _ms,
    _on_term,
    add_scale_flags,
    await_indexes,
    embedding_set,
    fresh_database,
    generate_questions_for,
    ingest_cells,
    ingest_sliced,
    invariants,
    percentiles,
    settle_size,
    slice_ingester,
    warm_up_ingest,
)

from graphrag_orm import GraphRag, GraphRagOptions
from graphrag_orm.codes import LimitName
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.ingestion import IngestionOptions, IngestionReceipt, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.retrieval import Retriever, Retrievers
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store

TENANTED = Layout.DEFAULT.replace(tenancy="required")
MAX_TENANTS = 1000
#: The tenant whose retrieval is timed.
ASKING = "t000"
#: Below this share of retrievals with items, the latencies mean little: the run fails (after writing its results).
MIN_NON_EMPTY = 0.9
#: Documents in flight in one untenanted ingest call; the tenanted run keeps the same number in flight.
IN_FLIGHT = IngestionOptions().documents_in_flight
OVER_FETCH = LimitName.FULL_TEXT_TENANT_OVER_FETCH.value
#: The untenanted graph asked t000's questions too: the same questions as the tenanted run, for a like-for-like p95.
SAME_QUESTIONS = "hybrid_asking_questions"


def tenant_of(number: int, tenants: int) -> str:
    """Document ``number``'s tenant: the documents are dealt round-robin."""
    return f"t{number % tenants:03d}"


def document_number(source: Source) -> int:
    """The number of a corpus document (``doc-NNNNNN.md``)."""
    return int(source.source_uri.rsplit("doc-", 1)[1].removesuffix(".md"))


def tenant_ingester(services: dict[str, IngestionService], lanes: int) -> Callable[[Path], Awaitable[Outcome]]:
    """One slice: its documents grouped by tenant, one ``ingest`` call per tenant (``services``: each tenant's
    view's ingestion), ``lanes`` at once."""

    async def one_slice(where: Path) -> Outcome:
        gate = asyncio.Semaphore(lanes)

        async def one(tenant: str, sources: list[Source]) -> IngestionReceipt:
            async with gate:
                return await services[tenant].ingest(sources)

        began = time.perf_counter()
        dealt: dict[str, list[Source]] = {}
        for source in Sources.folder(where, base_uri=BASE_URI):
            dealt.setdefault(tenant_of(document_number(source), len(services)), []).append(source)
        receipts = await asyncio.gather(*(one(tenant, sources) for tenant, sources in dealt.items()))
        seconds = time.perf_counter() - began
        failed, unchanged = sum(r.failed for r in receipts), sum(r.unchanged for r in receipts)
        if failed or unchanged:
            raise SystemExit(f"tenanted: {failed} failed, {unchanged} unchanged in {where}")
        ingested, chunks = sum(r.ingested for r in receipts), sum(r.chunks_written for r in receipts)
        return Outcome("graphrag-orm tenanted", seconds, ingested, chunks)

    return one_slice


async def hybrid_warm(
    store: Store, model: LexicalModel, chosen: EmbeddingSet, questions: list[str], rounds: int, server_pid: int | None
) -> dict[str, Any]:
    """Hybrid retrieval after an untimed round: percentiles, items returned and the limits the evidence reported."""
    options = Retrievers.hybrid()
    retriever = Retriever(store, model, chosen, HashingEmbedder(chosen.dimensions), options)
    for question in questions:
        await retriever.retrieve(question, options)
    latencies = Latencies("hybrid", [])
    items: list[int] = []
    limits: Counter[str] = Counter()
    any_limit = 0
    with LoadProbe(server_pid) as probe:
        for _ in range(rounds):
            for question in questions:
                began = time.perf_counter()
                evidence = await retriever.retrieve(question, options)
                latencies.seconds.append(time.perf_counter() - began)
                items.append(len(evidence.items))
                limits.update({limit.name.value for limit in evidence.limits_reached})
                any_limit += bool(evidence.limits_reached)
    return percentiles(latencies) | {
        "retrievals": len(items),
        "mean_items": sum(items) / len(items),
        "non_empty": sum(1 for n in items if n) / len(items),
        "any_limit": any_limit,
        "limits": dict(limits),
        "load": dataclasses.asdict(probe.report()),
    }


async def tenant_check(store: Store, tenants: int) -> dict[str, Any]:
    """Every document and chunk carries a tenant, every tenant has documents; chunks per tenant."""
    rows = await store.read(
        f"MATCH (c:{LAYOUT.chunk_label}) RETURN c.tenant AS tenant, count(*) AS chunks", name="bench.tenants"
    )
    chunks = {row["tenant"]: int(row["chunks"]) for row in rows}
    untagged = await store.read(
        f"MATCH (d:{LAYOUT.document_label}) WHERE d.tenant IS NULL RETURN count(d) AS n", name="bench.untagged"
    )
    found = {
        "tenants": len([t for t in chunks if t is not None]),
        "untagged_chunks": chunks.pop(None, 0),
        "untagged_documents": int(untagged.records[0]["n"]),
        "chunks_min": min(chunks.values(), default=0),
        "chunks_max": max(chunks.values(), default=0),
        "chunks_asking": chunks.get(ASKING, 0),
    }
    found["held"] = found["tenants"] == tenants and not found["untagged_chunks"] and not found["untagged_documents"]
    return found


@dataclasses.dataclass(frozen=True)
class Run:
    """What both runs share: the server, the flags, the corpus and the store of the benchmark's own session."""

    server: ScaleServer
    args: argparse.Namespace
    info: CorpusInfo
    store: Store


async def ingest_and_ask(
    name: str,
    layout: Layout,
    store: Store,
    ingester: Callable[[Path], Awaitable[Outcome]],
    asking: Store,
    questions: dict[str, list[str]],
    run: Run,
) -> dict[str, Any]:
    """Warm-up, the sliced ingest and its invariants, then hybrid latency warm through ``asking``: one
    result per set of ``questions`` (named by its key)."""
    server, args, info = run.server, run.args, run.info
    chosen = embedding_set(args.dimensions)
    await warm_up_ingest(name, store, chosen, args, ingester, layout)
    result: dict[str, Any] = {"ingest": await ingest_sliced(name, args.corpus, ingester, server.server_pid)}
    result["invariants"] = await invariants(store, info.documents, info.chunks)
    if layout.tenanted:
        result["tenancy"] = await tenant_check(store, min(args.tenants, info.documents))
    result["indexes_online_seconds"] = await await_indexes(store, args.index_timeout)
    model = for_layout(layout)
    for key, asked in questions.items():
        result[key] = await hybrid_warm(asking, model, chosen, asked, args.rounds, server.server_pid)
    return result


async def run_untenanted(run: Run, questions: dict[str, list[str]]) -> dict[str, Any]:
    """The default layout and chain: ``run.py``'s ingest of ours, then hybrid latency warm on each set of questions."""
    chosen = embedding_set(run.args.dimensions)
    await fresh_database(run.store, chosen)
    ingester = slice_ingester("ours", run.store, chosen, run.server.settings)
    return await ingest_and_ask("untenanted", LAYOUT, run.store, ingester, run.store, questions, run)


async def run_tenanted(run: Run, questions: dict[str, list[str]]) -> dict[str, Any]:
    """The tenanted layout and chain, the corpus dealt to ``--tenants`` tenants, then ``t000``'s hybrid latency."""
    args = run.args
    chosen = embedding_set(args.dimensions)
    await fresh_database(run.store, chosen, TENANTED)
    options = GraphRagOptions(ingestion=IngestionOptions(documents_in_flight=IN_FLIGHT // args.tenant_lanes))
    rag = GraphRag(embedding_set=chosen, embedder=HashingEmbedder(chosen.dimensions), layout=TENANTED, options=options)
    # No tenant bound: the schema is checked through a tenant's view below (as the HTTP server does).
    await rag.connect(run.server.settings, check_schema=False, neomodel=False)
    try:
        views = {tenant: rag.for_tenant(tenant) for tenant in (tenant_of(n, args.tenants) for n in range(args.tenants))}
        await views[ASKING].check_vector_index()  # refuses a vector index that does not declare tenant
        # Each view's ingestion is built now (its statements rendered), outside the timing.
        ingester = tenant_ingester({t: view.ingestion for t, view in views.items()}, args.tenant_lanes)
        return await ingest_and_ask("tenanted", TENANTED, run.store, ingester, views[ASKING].store, questions, run)
    finally:
        await rag.close()


def machine_load(seconds: float = 3.0) -> dict[str, Any]:
    """How busy the machine is (all cores, over ``seconds``) and its load average, with nothing of ours running."""
    with LoadProbe(None) as probe:
        time.sleep(seconds)
    report = probe.report()
    return {"busy": report.machine_busy, "load_average": report.load_average, "cores": os.cpu_count()}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    print(f"machine: {machine_description()}")
    info = write_corpus(args.corpus, args.documents, args.seed, args.processes)
    print(f"corpus: {info.documents:,} documents, {info.chunks:,} chunks (the chunker's plan), {args.tenants} tenants")
    among = range(0, info.documents, args.tenants)  # t000's documents
    everyone, own = generate_questions_for(args, info), generate_questions_for(args, info, among)
    results: dict[str, Any] = {"size": args.label, "dimensions": args.dimensions, "corpus": dataclasses.asdict(info)}
    results |= {"tenants": args.tenants, "asking": ASKING, "asking_documents": len(among)}
    results |= {"tenant_lanes": args.tenant_lanes, "documents_in_flight": IN_FLIGHT, "machine": machine_description()}
    results |= {"heap": args.heap, "page_cache": args.page_cache, "load_before": machine_load()}
    print(f"load before: {describe_load(results['load_before'])}")
    with ScaleServer(args.port, args.home, args.heap, args.page_cache) as server:
        session = Session(server)
        store = await session.open()
        try:
            results["server"] = f"Neo4j {await server_version(store)} at {server.settings.uri}"
            print(results["server"])
            both = Run(server, args, info, store)
            print("\n## untenanted")
            results["untenanted"] = await run_untenanted(both, {"hybrid": everyone, SAME_QUESTIONS: own})
            print(f"\n## tenanted: {args.tenants} tenants, {args.tenant_lanes} at once")
            results["tenanted"] = await run_tenanted(both, {"hybrid": own})
            await reset_database(store)
        finally:
            await session.close()
    results["load_after"] = machine_load()
    untenanted, tenanted = results["untenanted"], results["tenanted"]
    results["ingest_ratio"] = tenanted["ingest"]["chunks_per_second"] / untenanted["ingest"]["chunks_per_second"]
    results["p95_ratio"] = tenanted["hybrid"]["p95"] / untenanted["hybrid"]["p95"]
    results["p95_ratio_same_questions"] = tenanted["hybrid"]["p95"] / untenanted[SAME_QUESTIONS]["p95"]
    report(results)
    return results


def describe_load(load: dict[str, Any]) -> str:
    return f"machine {load['busy']:.0%} busy of {load['cores']} cores, load average {load['load_average'][0]:.2f}"


def report(results: dict[str, Any]) -> None:
    """The Markdown tables: ingestion, hybrid retrieval, the ratios and the load."""
    runs = ("untenanted", "tenanted")
    print(f"\n## {results['size']}, {results['tenants']} tenants: ingest, 10% slices\n")
    rows = []
    for name in runs:
        ingest, held = results[name]["ingest"], results[name]["invariants"]
        tenancy = results[name].get("tenancy", {"held": True})
        rows.append(
            [
                name,
                *ingest_cells(ingest),
                "held" if held["held"] and tenancy["held"] else f"BROKEN {held} {tenancy}",
            ]
        )
    headers = ["Run", "Chunks", "Time", "Chunks/s", "Per slice", "Client CPU", "Server CPU", "Others", "Invariants"]
    print_table(headers, rows)
    print(f"\n## Hybrid retrieval, warm: {results['asking']} of the tenanted graph against the untenanted graph\n")
    rows = []
    asked = f"untenanted, {results['asking']}'s questions"
    for label, name, key in (
        ("untenanted", "untenanted", "hybrid"),
        (asked, "untenanted", SAME_QUESTIONS),
        ("tenanted", "tenanted", "hybrid"),
    ):
        h = results[name][key]
        others = {k: v for k, v in h["limits"].items() if k != OVER_FETCH}
        rows.append(
            [
                label,
                str(h["retrievals"]),
                _ms(h["p50"]),
                _ms(h["p95"]),
                _ms(h["p99"]),
                f"{h['mean_items']:.1f}",
                f"{h['non_empty']:.0%}",
                str(h["limits"].get(OVER_FETCH, 0)),
                ", ".join(f"{k} {v}" for k, v in sorted(others.items())) or "none",
            ]
        )
    headers = ["Run", "Retrievals", "p50", "p95", "p99", "Mean items", "Non-empty", OVER_FETCH, "Other limits"]
    print_table(headers, rows)
    print()
    ingest_ok, p95_ok = results["ingest_ratio"] >= 0.9, results["p95_ratio"] <= 1.5
    print_table(
        ["Figure", "Value", "Goal"],
        [
            ["tenanted / untenanted chunks/s", f"{results['ingest_ratio']:.2f}x", "≥ 0.9: " + _met(ingest_ok)],
            ["tenanted / untenanted hybrid p95", f"{results['p95_ratio']:.2f}x", "≤ 1.5: " + _met(p95_ok)],
            ["the same, on the same questions", f"{results['p95_ratio_same_questions']:.2f}x", ""],
            ["load before", describe_load(results["load_before"]), ""],
            ["load after", describe_load(results["load_after"]), ""],
            ["server", results["server"], ""],
        ],
    )


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def tenant_count(text: str) -> int:
    count = int(text)
    if not 1 <= count <= MAX_TENANTS:
        raise argparse.ArgumentTypeError(f"--tenants is 1 to {MAX_TENANTS}, not {count}")
    return count


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_scale_flags(parser)
    parser.add_argument("--tenants", type=tenant_count, default=100, help=f"1 to {MAX_TENANTS} tenants")
    parser.add_argument(
        "--tenant-lanes",
        type=int,
        choices=(1, 2, 4),
        default=4,
        help=f"tenants ingesting at once (each call then has {IN_FLIGHT} / lanes documents in flight)",
    )
    args = parser.parse_args(argv)
    settle_size(args)
    return args


def run(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    results = asyncio.run(main(args))
    target = RESULTS / f"tenants-{args.label}.json"
    target.write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    print(f"\nresults: {target.relative_to(SCRATCH.parent)}")
    thin = {name: results[name]["hybrid"]["non_empty"] for name in ("untenanted", "tenanted")}
    thin[SAME_QUESTIONS] = results["untenanted"][SAME_QUESTIONS]["non_empty"]
    if min(thin.values()) < MIN_NON_EMPTY:
        raise SystemExit(f"too many empty results (share with items: {thin}): the latencies mean little")


if __name__ == "__main__":
    run()
