"""Relative-score fusion tried on the dev sets: each route's scores min-max normalised over its candidates.

    .venv/bin/python benchmarks/relevance/relative.py [--devset examples/devset2 --port 7741 --home home-devset2]

The defaults' fusion divides each hit's score by its route's best. Neo4j's vector index gives
cosine as (1 + cos) / 2, and e5's cosines lie in a narrow band, so all 30 vector candidates
vote 0.95 to 1 while the full-text route's (BM25) votes fall fast: fused, the ranking is
nearly the vector route's (``misses.py``: the defaults' misses sit where the vector route's
do). Here each route's candidates (``3 * k`` of them, as the defaults read) are normalised
over their own range instead, ``(s - min) / (max - min)``, and fused by the sum or the best
of a chunk's votes. Each route's list comes from the toolkit's retriever with that route
alone; the fusion is done here. Results: docs/benchmarks.md.

``--dbsf`` tries distribution-based score fusion instead (Qdrant's DBSF): each route's scores
placed in its own mean plus or minus three standard deviations, ``(s - (mean - 3 sd)) / (6 sd)``
clipped to [0, 1], so a hit votes by how far it stands out of its route's candidates rather
than by where it falls between the first and the last; fused by the sum (DBSF's own rule) and
by the best of a chunk's votes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Evidence, EvidenceItem, Route
from graphrag_orm.retrieval import RetrievalOptions, Retriever


def relative(items: tuple[EvidenceItem, ...]) -> dict[str, float]:
    if not items:
        return {}
    top, low = items[0].score, items[-1].score
    span = top - low
    return {item.chunk_id: (item.score - low) / span if span > 0 else 1.0 for item in items}


Placing = Callable[[tuple[EvidenceItem, ...]], dict[str, float]]


def distribution(items: tuple[EvidenceItem, ...]) -> dict[str, float]:
    if not items:
        return {}
    scores = [item.score for item in items]
    mean = sum(scores) / len(scores)
    sd = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
    if sd == 0:
        return {item.chunk_id: 1.0 for item in items}
    low = mean - 3 * sd
    return {item.chunk_id: min(1.0, max(0.0, (item.score - low) / (6 * sd))) for item in items}


class Relative(relevance.Around):
    def __init__(
        self, inner: Retriever, how: str, depth: int = 3, weight: float = 0.5, place: Placing = relative
    ) -> None:
        super().__init__(inner)
        self.how, self.depth, self.weight, self.place = how, depth, weight, place

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        options = options or self.inner.options
        k = options.max_items
        deep = options.model_copy(update={"max_items": self.depth * k, "max_utf8_bytes": None, "stages": ()})
        lists = {}
        for route in (Route.VECTOR, Route.FULL_TEXT):
            found = await self.inner.retrieve(
                question, deep.model_copy(update={"routes": frozenset({route})}), **kwargs
            )
            lists[route] = found
        votes: dict[str, float] = {}
        items: dict[str, EvidenceItem] = {}
        for route, found in lists.items():
            w = (1 - self.weight) if route == Route.FULL_TEXT else self.weight
            for chunk_id, vote in self.place(found.items).items():
                vote *= 2 * w
                votes[chunk_id] = (
                    max(votes.get(chunk_id, 0.0), vote) if self.how == "best" else votes.get(chunk_id, 0.0) + vote
                )
            for item in found.items:
                items.setdefault(item.chunk_id, item)
        ranked = sorted(votes, key=lambda c: (-votes[c], c))[:k]
        return lists[Route.VECTOR].model_copy(
            update={"items": tuple(items[c].model_copy(update={"score": votes[c]}) for c in ranked)}
        )


async def main(args: argparse.Namespace) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        retriever = graph.retriever
        contenders: list[tuple[str, Any]] = [("graphrag-orm defaults", retriever)]
        if args.dbsf:
            contenders += [
                ("relative, best (outside)", Relative(retriever, "best")),
                ("distribution, sum", Relative(retriever, "sum", place=distribution)),
                ("distribution, best", Relative(retriever, "best", place=distribution)),
            ]
        else:
            contenders += [
                ("relative, sum", Relative(retriever, "sum")),
                ("relative, best", Relative(retriever, "best")),
                ("relative, sum, 2 a item", Relative(retriever, "sum", depth=2)),
                ("relative, sum, 5 a item", Relative(retriever, "sum", depth=5)),
            ]
        rows = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}; dev set {args.devset.name}\n\n{relevance.render(rows)}")


if __name__ == "__main__":
    parser = relevance.dev_set_parser(__doc__)
    parser.add_argument("--dbsf", action="store_true", help="distribution-based score fusion against the defaults")
    asyncio.run(main(parser.parse_args()))
