"""Where the defaults' misses are: each required phrase left out of the first 10, ranked in each route.

    .venv/bin/python benchmarks/relevance/misses.py [--devset examples/devset2 --port 7741 --home home-devset2]
        [--model e5-small-v2-int8]

The issue's own method, on a dev set: for each answerable question, each required phrase no
item of the defaults' first 10 holds is looked up in the vector route's and the full-text
route's own rankings (each alone, 100 items deep, the same evaluation phrase match), and in the
defaults' ranking 100 deep. The counts say what a better ranking of the routes' candidates
could recover (a phrase one route ranks 11th to 30th) and what no fusion of these two routes
can (a phrase neither ranks in its first 100). On the graph the other relevance scripts leave
(ingested with ``run.py``'s ingestion when it is not the set's, as ``analyzers.py``).

It also prints each kind's ceiling: the coverage and recall@10 a perfect reordering of the
routes' candidates would reach, counting a phrase as found when either route ranks an item
holding it within its first 30 (the candidates the defaults' fusion reads at k = 10: 3 an
item) or within its first 100 (what a reranker reading 100 a route could at best reach).
No fusion of these two routes' lists, and no reranking of them, can go above it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evaluation.metrics import holds
from graphrag_orm.evidence import Route
from graphrag_orm.retrieval import RetrievalOptions

DEEP = 100
#: The candidates a route gives the defaults' fusion at k = 10 (``candidates_per_item`` 3).
READ = 3 * 10
BANDS = ((1, 10), (11, 20), (21, 30), (31, 50), (51, 100))


def band(rank: int | None) -> str:
    if rank is None:
        return f"not in {DEEP}"
    return next(f"{low}-{high}" for low, high in BANDS if low <= rank <= high)


def first_rank(texts: list[str], phrase: str) -> int | None:
    return next((rank for rank, text in enumerate(texts, start=1) if holds(text, phrase)), None)


async def main(args: argparse.Namespace) -> None:
    cases = [case for case in load_cases(args.devset / "cases.jsonl") if case.required_phrases]
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        retriever = graph.retriever
        deep = RetrievalOptions(max_items=DEEP, max_utf8_bytes=None)
        lists: dict[str, Any] = {
            "defaults": deep,
            "vector": deep.model_copy(update={"routes": frozenset({Route.VECTOR}), "stages": ()}),
            "full text": deep.model_copy(update={"routes": frozenset({Route.FULL_TEXT}), "stages": ()}),
        }
        tally: dict[str, Counter[str]] = {name: Counter() for name in lists}
        both: Counter[str] = Counter()
        misses = 0
        ceilings: dict[str, list[tuple[float, float, float, float]]] = {}
        for case in cases:
            ranked = {
                name: [item.text for item in (await retriever.retrieve(case.question, options)).items]
                for name, options in lists.items()
            }
            ceilings.setdefault(relevance.kind_of(case.id or ""), []).append(ceiling(case.required_phrases, ranked))
            for phrase in case.required_phrases:
                if first_rank(ranked["defaults"][: relevance.K], phrase) is not None:
                    continue
                misses += 1
                ranks = {name: first_rank(texts, phrase) for name, texts in ranked.items()}
                for name, rank in ranks.items():
                    tally[name][band(rank)] += 1
                best = min((r for n, r in ranks.items() if n != "defaults" and r is not None), default=None)
                both[band(best)] += 1
                print(
                    f"{case.id}: {phrase[:40]!r}: "
                    + ", ".join(f"{name} {rank or '-'}" for name, rank in ranks.items()),
                    flush=True,
                )
    total = sum(len(case.required_phrases) for case in cases)
    print(f"\n{misses} of {total} required phrases missed by the defaults' first {relevance.K} ({args.devset.name})")
    columns = [f"{low}-{high}" for low, high in BANDS[1:]] + [f"not in {DEEP}"]
    print("| ranking | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, counts in [*tally.items(), ("the better route", both)]:
        print(f"| {name} | " + " | ".join(str(counts[c]) for c in columns) + " |")
    print(f"\nceilings: coverage / recall@10 if the routes' first {READ} (then {DEEP}) were ordered perfectly")
    print(f"| kind | first {READ} a route | first {DEEP} a route |")
    print("|---|---:|---:|")
    for kind, rows in [*ceilings.items(), ("all", [row for group in ceilings.values() for row in group])]:
        means = [sum(row[i] for row in rows) / len(rows) for i in range(4)]
        print(f"| {kind} | {means[0]:.2f} / {means[1]:.2f} | {means[2]:.2f} / {means[3]:.2f} |")


def ceiling(phrases: tuple[str, ...], ranked: dict[str, list[str]]) -> tuple[float, float, float, float]:
    """Coverage and recall@10 if either route's first ``READ`` (then ``DEEP``) items were ordered perfectly:
    a question needs at most three items, so every reachable phrase fits in 10."""
    found = []
    for depth in (READ, DEEP):
        reach = [
            any(first_rank(ranked[name][:depth], phrase) is not None for name in ("vector", "full text"))
            for phrase in phrases
        ]
        found += [sum(reach) / len(reach), float(any(reach))]
    return found[0], found[1], found[2], found[3]


if __name__ == "__main__":
    parser = relevance.dev_set_parser(__doc__)
    asyncio.run(main(parser.parse_args()))
