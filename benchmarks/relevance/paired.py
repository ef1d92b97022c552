"""How far the defaults stand from neo4j-graphrag's HybridRetriever, question by question, with the noise of a small set.

    .venv/bin/python benchmarks/relevance/paired.py [--resamples 10000] [--seed 26]

The three dev sets' graphs, as ``run.py`` left them (ports 7706, 7741 and 7751, homes
``home-retr``, ``home-devset2`` and ``home-devset3``; reused when it holds the set, else
ingested). Each
question is asked of graphrag-orm's default retriever and of neo4j-graphrag 1.22's
``HybridRetriever`` (its venv, the same chunks and the same question vectors), and each
figure (coverage, recall@10, reciprocal rank) is kept per question, so the two are
compared on the same questions: the difference of the means per kind, per set and over
the three sets, with a paired bootstrap's 95% interval (the questions of a kind drawn with
replacement, ``--resamples`` times, a fixed ``--seed``) and the share of resamples where the
difference reaches 10 points (issue 26's bar for coverage and recall@10; for MRR the share
where it is not below zero).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import Evaluator, load_cases
from graphrag_orm.evaluation.values import CaseResult

#: (folder, port, home) of each dev set's graph, as the README gives them.
SETS = (
    (Path("examples/devset"), 7706, "home-retr"),
    (Path("examples/devset2"), 7741, "home-devset2"),
    (Path("examples/devset3"), 7751, "home-devset3"),
)
FIGURES = (("coverage", 0.10), ("recall_at_k", 0.10), ("reciprocal_rank", 0.0))
KINDS = ("multihop", "paraphrase", "aggregate")

Pair = tuple[CaseResult, CaseResult]


def value(result: CaseResult, figure: str) -> float:
    return float(getattr(result, figure) or 0.0)


def bootstrap(pairs: Sequence[Pair], figure: str, bar: float, resamples: int, rng: random.Random) -> str:
    """The mean difference (ours - theirs) in points, its 95% interval, and the share of resamples reaching ``bar``."""
    differences = [value(ours, figure) - value(theirs, figure) for ours, theirs in pairs]
    n = len(differences)
    means = sorted(mean(rng.choices(differences, k=n)) for _ in range(resamples))
    low, high = means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]
    reached = sum(1 for m in means if m >= bar - 1e-9) / resamples
    return f"{100 * mean(differences):+.0f} [{100 * low:+.0f}, {100 * high:+.0f}] {100 * reached:.0f}%"


async def pairs_of(devset: Path, port: int, home: str, embedder: LocalEmbedder) -> list[tuple[str, Pair]]:
    """(kind, (ours, theirs)) for each scored question of the set."""
    cases = load_cases(devset / "cases.jsonl")
    args = argparse.Namespace(devset=devset, port=port, home=home)
    async with relevance.dev_set_graph(args, embedder) as graph:
        ours = (await Evaluator(retriever=graph.retriever, stored=graph.stored, k=relevance.K).run(cases)).cases
        vectors = await relevance.question_vectors(embedder, cases)
        theirs_ids = relevance.neo4j_graphrag(
            relevance.write_questions(cases, vectors), graph.server.settings, graph.retriever
        )
        theirs = await relevance.score_theirs(cases, theirs_ids["hybrid"], graph.stored, relevance.corpus_of(devset)[1])
    return [
        (relevance.kind_of(a.id), (a, b))
        for a, b in zip(ours, theirs, strict=True)
        if a.coverage is not None and b.coverage is not None
    ]


def table(rows: Sequence[tuple[str, Sequence[Pair]]], resamples: int, seed: int) -> str:
    head = "| questions | n | coverage | recall@10 | MRR |"
    lines = [head, "|---|---:|---:|---:|---:|"]
    for name, pairs in rows:
        cells = [bootstrap(pairs, figure, bar, resamples, random.Random(seed)) for figure, bar in FIGURES]
        lines.append(f"| {name} | {len(pairs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    embedder = LocalEmbedder(args.model)
    per_set = {devset.name: await pairs_of(devset, port, home, embedder) for devset, port, home in SETS}
    rows: list[tuple[str, Sequence[Pair]]] = []
    for name, found in per_set.items():
        rows += [(f"{name} {kind}", [p for k, p in found if k == kind]) for kind in KINDS]
    pooled = [item for found in per_set.values() for item in found]
    rows += [(f"all three sets, {kind}", [p for k, p in pooled if k == kind]) for kind in KINDS]
    rows.append(("all three sets, every kind", [p for _, p in pooled]))
    print(
        f"\nembedder: {embedder.model_name}; the defaults minus HybridRetriever in points, "
        f"[95% interval], share of {args.resamples} resamples reaching the bar (+10 for coverage and "
        f"recall@10, 0 for MRR)\n\n{table(rows, args.resamples, args.seed)}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--model", default=relevance.DEFAULT_MODEL)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=26)
    asyncio.run(main(parser.parse_args()))
