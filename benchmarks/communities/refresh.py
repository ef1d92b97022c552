"""Communities and their reports at scale on the real Neo4j: build, report, then a 1% change and a refresh.

Usage::

    .venv/bin/python benchmarks/communities/refresh.py                # 100,000 things (2,500 documents)
    .venv/bin/python benchmarks/communities/refresh.py --things 4000  # a quick look
    .venv/bin/python -m benchmarks.communities.refresh --heap 6g --transaction-max 4g  # a larger server

``--heap`` and ``--transaction-max`` start the benchmark's own server with that heap and that
bound on one transaction's memory (and on all of them together); by default the local
server's (1 GiB, 450 MiB).

The knowledge graph is written the way users write it: synthetic documents ingested by the
toolkit with a hand-written extraction reply (:class:`~graphrag_orm.chat.ScriptedChat`, no
model), so things, facts, mentions and chunks are exactly what grounded extraction stores.
Document ``g`` names 40 things of its own (``T<g>-0`` .. ``T<g>-39``), states 49 facts among
them (a chain and a few chords) in one sentence each, and one fact joining ``T<g>-0`` to
``T<g-1>-0``: groups of 40 joined in a chain, so 100,000 things are 2,500 documents and
about 125,000 facts.

Then, timed: ``CommunityService.build`` (read, detect, write), ``ReportService.write`` with the
extractive writer (no model: the figure is the toolkit's reads, verification and writes), the
removal of 1% of the documents (the retraction), ``CommunityService.refresh`` and
``ReportService.write(only_missing=True)``: the reports written again after the change,
against the reports stored. Memory: this process's peak RSS after each step, and the server's
heap (JMX) when the server allows it. The database is the benchmark's own server (port 7745,
home ``home-communities``), or ``NEO4J_URI``'s, which it **wipes**.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import time
from pathlib import Path
from typing import Any

from benchmarks.common import BenchServer, machine_description, print_table, reset_database
from benchmarks.scale.run import server_memory
from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ChatRequest, ScriptedChat
from graphrag_orm.communities import CommunityOptions, CommunityService, ReportOptions, ReportService
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionOptions
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.ontology import Entity, Ontology
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.store import Store

GROUP = 40
RESULTS = Path(".benchmarks/communities")


class Thing(Entity):
    """A synthetic thing, named ``T<document>-<position>``."""


BENCH = Ontology.custom(name="bench", entities=[Thing], facts=[(Thing, "RELATED_TO", Thing)])


def facts_of(document: int) -> list[tuple[str, str]]:
    """Document ``document``'s facts as (source, target) names: a chain, chords, one link to the previous group."""
    names = [f"T{document}-{k}" for k in range(GROUP)]
    pairs = [(names[k], names[k + 1]) for k in range(GROUP - 1)]
    pairs += [(names[k], names[(k + 7) % GROUP]) for k in range(0, GROUP, 4)]
    if document > 0:
        pairs.append((names[0], f"T{document - 1}-0"))
    return pairs


def text_of(document: int) -> str:
    sentences = " ".join(f"{a} relates to {b}." for a, b in facts_of(document))
    return f"# Document {document}\n\n{sentences}\n"


def extraction_reply(request: ChatRequest) -> str:
    """The hand-written extraction of the passage's document: every thing it names and every fact it states."""
    passage = request.messages[1].content.removeprefix("Passage:\n")
    document = int(passage.split("\n", 1)[0].removeprefix("# Document ").strip())
    pairs = [(a, b) for a, b in facts_of(document) if f"{a} relates to {b}." in passage]
    names = dict.fromkeys(name for pair in pairs for name in pair)
    entities = [
        {"kind": "Thing", "name": name, "aliases": [], "description": None, "mentions": [name]} for name in names
    ]
    relationships = [
        {"type": "RELATED_TO", "source": a, "target": b, "role": None, "kind": None, "description": None}
        for a, b in pairs
    ]
    return json.dumps({"entities": entities, "relationships": relationships})


def peak_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


async def count(store: Store, cypher: str) -> int:
    return int((await store.read(cypher, name="bench.count")).records[0]["n"])


async def run(
    things: int, change: float, heap: str | None = None, transaction_max: str | None = None
) -> dict[str, Any]:
    documents = max(things // GROUP, 2)
    steps: dict[str, Any] = {}
    with BenchServer(port=7745, home="home-communities", heap=heap, transaction_max=transaction_max) as server:
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(extraction_reply),
            ontology=BENCH,
            options=GraphRagOptions(ingestion=IngestionOptions(max_documents=100_000, lanes=2)),
        )
        await rag.connect(server.settings, check_schema=False)
        try:
            await reset_database(rag.store, BENCH.schema_definitions(Layout.DEFAULT))
            began = time.perf_counter()
            receipt = await rag.ingestion.ingest(
                Sources.text(f"doc-{g}", text_of(g), media_type="text/markdown") for g in range(documents)
            )
            steps["ingest"] = {"seconds": time.perf_counter() - began, "failed": receipt.failed}
            graph = {
                "documents": documents,
                "things": await count(rag.store, "MATCH (t:Thing) RETURN count(t) AS n"),
                "facts": await count(rag.store, "MATCH (:Thing)-[f:RELATED_TO]->(:Thing) RETURN count(f) AS n"),
            }
            print(f"ingested {graph} in {steps['ingest']['seconds']:.1f} s", flush=True)
            options = CommunityOptions(max_facts=1_000_000)
            report_options = ReportOptions(max_reports=10_000)
            communities = CommunityService(rag.store, BENCH)
            reports = ReportService(rag.store, BENCH, report_options)

            began = time.perf_counter()
            built = await communities.build(options)
            steps["build"] = {
                "seconds": time.perf_counter() - began,
                "communities": built.communities,
                "per_level": list(built.per_level),
                "facts_read": built.facts_read,
                "transactions": built.transactions,
                "limits": [limit.name.value for limit in built.limits_reached],
                "peak_mb": peak_mb(),
                "server": await server_memory(rag.store),
            }
            print(f"build {steps['build']['seconds']:.1f} s, {built.communities} communities", flush=True)
            began = time.perf_counter()
            written = await reports.write()
            steps["reports"] = {
                "seconds": time.perf_counter() - began,
                "reports": written.reports,
                "findings": written.findings,
                "dropped": written.dropped,
                "limits": [limit.name.value for limit in written.limits_reached],
                "peak_mb": peak_mb(),
                "server": await server_memory(rag.store),
            }
            print(f"reports {steps['reports']['seconds']:.1f} s, {written.reports} reports", flush=True)

            removed_ids = [
                row["id"]
                for row in await rag.store.read(
                    "MATCH (d:Document) RETURN d.id AS id ORDER BY d.sourceUri LIMIT $n",
                    {"n": max(1, round(documents * change))},
                    name="bench.change",
                )
            ]
            began = time.perf_counter()
            removal = await rag.maintenance.reset(ResetScope(document_ids=tuple(removed_ids)))
            steps["remove"] = {
                "seconds": time.perf_counter() - began,
                "documents": removal.documents,
                "findings_retracted": removal.findings_retracted,
                "findings_trimmed": removal.findings_trimmed,
                "reports_removed": removal.reports,
            }
            began = time.perf_counter()
            stale = await communities.stale(limit=10_000)
            steps["stale"] = {"seconds": time.perf_counter() - began, "stale": stale.stale, "checked": stale.checked}
            began = time.perf_counter()
            refreshed = await communities.refresh(options)
            steps["refresh"] = {
                "seconds": time.perf_counter() - began,
                "communities": refreshed.communities,
                "communities_kept": refreshed.communities_kept,
                "communities_replaced": refreshed.communities_replaced,
                "communities_added": refreshed.communities_added,
                "reports_kept": refreshed.reports_kept,
                "reports_removed": refreshed.reports_removed,
            }
            began = time.perf_counter()
            again = await reports.write(only_missing=True)
            steps["rewrite"] = {
                "seconds": time.perf_counter() - began,
                "reports": again.reports,
                "peak_mb": peak_mb(),
                "server": await server_memory(rag.store),
            }
            print(f"refresh: {refreshed.reports_kept} kept, {again.reports} written again", flush=True)
            began = time.perf_counter()
            rebuilt = await communities.build(options)
            steps["rebuild"] = {
                "seconds": time.perf_counter() - began,
                "communities": rebuilt.communities,
                "removed": rebuilt.removed,
                "transactions": rebuilt.transactions,
                "peak_mb": peak_mb(),
            }
            print(f"build again {steps['rebuild']['seconds']:.1f} s, {rebuilt.removed} replaced", flush=True)
        finally:
            await rag.close()
    server_memory_bounds = {"heap": heap or "1g", "transaction_max": transaction_max or "450m"}
    return {"machine": machine_description(), "server": server_memory_bounds, "graph": graph, "steps": steps}


def report(result: dict[str, Any]) -> None:
    graph, steps = result["graph"], result["steps"]
    print(
        f"\n{graph['things']:,} things, {graph['facts']:,} facts, {graph['documents']:,} documents "
        f"(ingested in {steps['ingest']['seconds']:.0f} s)"
    )
    bounds = result.get("server") or {}
    print(
        f"server: heap {bounds.get('heap', '1g')}, transaction memory at most {bounds.get('transaction_max', '450m')}\n"
    )
    build, reports, refresh, rewrite = steps["build"], steps["reports"], steps["refresh"], steps["rewrite"]
    print_table(
        ["Step", "Seconds", "What", "Peak RSS (MB)"],
        [
            [
                "build (read, detect, write)",
                f"{build['seconds']:.1f}",
                f"{build['communities']:,} communities {build['per_level']}, "
                f"{build.get('transactions', 1):,} transactions",
                str(build["peak_mb"]),
            ],
            [
                "reports (extractive)",
                f"{reports['seconds']:.1f}",
                f"{reports['reports']:,} reports, {reports['findings']:,} findings",
                str(reports["peak_mb"]),
            ],
            [
                "remove 1% of documents",
                f"{steps['remove']['seconds']:.1f}",
                f"{steps['remove']['documents']} documents, {steps['remove']['findings_retracted']:,} findings retracted",
                "",
            ],
            [
                "stale check",
                f"{steps['stale']['seconds']:.1f}",
                f"{steps['stale']['stale']:,} of {steps['stale']['checked']:,}",
                "",
            ],
            [
                "refresh (detect the touched subtrees again)",
                f"{refresh['seconds']:.1f}",
                f"communities {refresh.get('communities_kept', 0):,} kept, "
                f"{refresh.get('communities_replaced', 0):,} replaced, {refresh.get('communities_added', 0):,} added; "
                f"reports {refresh['reports_kept']:,} kept, {refresh['reports_removed']:,} removed",
                "",
            ],
            [
                "reports written again",
                f"{rewrite['seconds']:.1f}",
                f"{rewrite['reports']:,} of {reports['reports']:,}",
                str(rewrite["peak_mb"]),
            ],
            *(
                [
                    [
                        "build again (every community, report and finding replaced)",
                        f"{steps['rebuild']['seconds']:.1f}",
                        f"{steps['rebuild']['removed']:,} replaced, {steps['rebuild']['transactions']:,} transactions",
                        str(steps["rebuild"]["peak_mb"]),
                    ]
                ]
                if "rebuild" in steps
                else []
            ),
        ],
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--things", type=int, default=100_000)
    parser.add_argument("--change", type=float, default=0.01, help="share of the documents removed (default 1%%)")
    parser.add_argument("--heap", default=None, help="the local server's heap, e.g. 6g (default 1g)")
    parser.add_argument(
        "--transaction-max", default=None, help="its bound on a transaction's memory, e.g. 4g (default 450m)"
    )
    args = parser.parse_args(argv)
    for given in (args.heap, args.transaction_max):
        if given is not None and not re.fullmatch(r"[1-9][0-9]*[mg]", given):
            parser.error(f"{given!r} is not a size such as 512m or 4g")
    result = asyncio.run(run(args.things, args.change, args.heap, args.transaction_max))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"refresh-{args.things}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    report(result)


if __name__ == "__main__":
    main()
