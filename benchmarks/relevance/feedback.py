"""Pseudo-relevance feedback on the vector route, tried on the dev sets before building it.

    .venv/bin/python benchmarks/relevance/feedback.py [--model e5-small-v2-int8] [--port 7706] [--home home-retr]
        [--devset examples/devset2]

Rocchio's feedback on vectors: the toolkit's ``Retriever`` (its defaults) finds the question's
first items; the texts of the first ``m`` are embedded as passages and the question's vector
moves toward their mean, ``q' = q + beta * mean(p_1..p_m)`` (normalised), and the retrieval runs
again with ``q'`` in the vector route (the full-text route keeps the question's words). The
second list is taken as it is (``again``) or merged with the first by reciprocal rank (``rrf``).
Scored by the evaluation harness at k = 10, per kind of question, beside the defaults, as
``variants.py``; the same server and graph (ingested only when missing).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py
from variants import merged

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.embeddings.base import embed_questions
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Evidence
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import RetrievalOptions, Retriever


class _Moved(relevance.Around):
    """An embedder whose question vector is the one set last (the passages are the inner one's)."""

    def __init__(self, inner: LocalEmbedder) -> None:
        super().__init__(inner)
        self.vector: list[float] = []

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        return await self.inner.embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        return [self.vector for _ in texts]


def _normalised(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class Feedback:
    """The first retrieval's ``m`` first texts move the question's vector by ``beta``; see the module."""

    def __init__(
        self, first: Retriever, again: Retriever, moved: _Moved, embedder: LocalEmbedder, m: int, beta: float, how: str
    ) -> None:
        self.first, self.again, self.moved, self.embedder = first, again, moved, embedder
        self.m, self.beta, self.how = m, beta, how

    def __getattr__(self, name: str) -> Any:
        return getattr(self.first, name)

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        found = await self.first.retrieve(question, options, **kwargs)
        texts = [item.text for item in found.items[: self.m]]
        if not texts:
            return found
        (q,) = await embed_questions(self.embedder, [question])
        passages = await self.embedder.embed(texts)
        mean = [sum(p[i] for p in passages) / len(passages) for i in range(len(q))]
        self.moved.vector = _normalised([a + self.beta * b for a, b in zip(q, mean, strict=True)])
        second = await self.again.retrieve(question, options, **kwargs)
        if self.how == "again":
            return second
        k = (options or self.first.options).max_items
        return found.model_copy(update={"items": tuple(merged("rrf", [found.items, second.items], k))})


async def main(args: argparse.Namespace) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    moved = _Moved(embedder)
    async with relevance.dev_set_graph(args, embedder) as graph:
        first = graph.retriever
        again = Retriever(graph.store, for_layout(Layout.DEFAULT), embedder.embedding_set(), moved)
        contenders: list[tuple[str, Any]] = [("graphrag-orm defaults", first)]
        for m, beta, how in ((3, 0.5, "again"), (3, 1.0, "again"), (3, 0.5, "rrf"), (5, 1.0, "rrf")):
            name = f"feedback m={m} beta={beta} {how}"
            contenders.append((name, Feedback(first, again, moved, embedder, m, beta, how)))
        rows = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}\n\n{relevance.render(rows)}")


if __name__ == "__main__":
    parser = relevance.dev_set_parser(__doc__)
    asyncio.run(main(parser.parse_args()))
