"""The passage stage's weight set per question from how well the candidates hold its words, tried.

    .venv/bin/python benchmarks/relevance/adaptive.py [--devset examples/devset2 --port 7741 --home home-devset2]

A paraphrased question shares few words with its passage: the stage's lexical signal then
moves the right chunk down (the stage's one loss, paraphrase MRR). Each question's
*lexical fit* is read from the stage's own work: ``fit`` = the best window's idf sum over the
candidates divided by the idf sum of all the question's terms (1 when one window of one
candidate holds every term; low when no candidate holds the question's words together). The
variants scale the stage's weight by the fit (``weight * fit ** p``), or, below a fit
threshold, also mix in the vector route's own score over the candidates (a question the text
does not echo is a question for the vector). Before anything is built: the fit per kind of
question is printed first, to see whether it tells the kinds apart at all.
The same graph as ``run.py`` (port 7706, home ``home-retr``), reused between runs.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py
from proximity import Staged

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import EvidenceItem, Route
from graphrag_orm.retrieval.passages import (
    PassageStage,
    _folded,
    _idf,
    _placed,
    best_window,
    passage_terms,
    term_hits,
)
from graphrag_orm.retrieval.routes import RouteRequest, StageResult


def fit_and_scores(stage: PassageStage, question: str, sent: tuple[EvidenceItem, ...]) -> tuple[float, list[float]]:
    terms = list(dict.fromkeys(passage_terms(question, stage.options.prefix_letters)))[: stage.options.max_terms]
    if not terms:
        return 0.0, [0.0] * len(sent)
    cap = stage.options.max_item_chars
    hits = [term_hits(_folded(item.text[:cap]), terms, stage.options.prefix_letters) for item in sent]
    wanted = _idf(hits, terms)
    windows = [best_window(wanted, found, stage.options.width_chars) for found in hits]
    total = sum(wanted.values())
    return (max(windows) / total if total else 0.0), windows


def vector_score(item: EvidenceItem) -> float | None:
    for rank in item.routes:
        if rank.route == Route.VECTOR.value:
            return rank.native_score
    return None


class AdaptiveStage(PassageStage):
    """The passage stage with its weight scaled by the question's lexical fit (``power``), and,
    below ``vector_below``, the vector route's own score mixed in with ``vector_weight``."""

    def __init__(self, power: float, vector_below: float = 0.0, vector_weight: float = 0.0) -> None:
        super().__init__()
        self.power, self.vector_below, self.vector_weight = power, vector_below, vector_weight

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult:
        sent = items[: self.wants(request.options)]
        if len(sent) < 2:
            return StageResult(items)
        fit, windows = fit_and_scores(self, request.question, sent)
        weight = self.options.weight * fit**self.power
        passage = _placed(windows) if any(windows) else [0.0] * len(sent)
        fused = _placed([item.score for item in sent])
        mixed = [(1 - weight) * f + weight * p for f, p in zip(fused, passage, strict=True)]
        if fit < self.vector_below and self.vector_weight:
            vectors = [vector_score(item) for item in sent]
            known = [v for v in vectors if v is not None]
            low = min(known, default=0.0)
            placed = _placed([v if v is not None else low for v in vectors]) if known else [0.0] * len(sent)
            mixed = [(1 - self.vector_weight) * m + self.vector_weight * v for m, v in zip(mixed, placed, strict=True)]
        order = sorted(range(len(sent)), key=lambda i: (-mixed[i], i))
        return StageResult((*(sent[i] for i in order), *items[len(sent) :]))


async def main(args: Any) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        retriever = graph.retriever
        stage = PassageStage()
        fits: dict[str, list[float]] = defaultdict(list)
        for case in cases:
            options = retriever.options.model_copy(update={"stages": (), "max_items": 2 * relevance.K})
            evidence = await retriever.retrieve(case.question, options)
            fit, _ = fit_and_scores(stage, case.question, evidence.items)
            fits[relevance.kind_of(case.id)].append(fit)
        for kind, values in sorted(fits.items()):
            quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else values
            print(f"fit {kind}: mean {statistics.mean(values):.2f}, quartiles {[round(q, 2) for q in quartiles]}")
        contenders: list[tuple[str, Any]] = [
            ("graphrag-orm defaults", retriever),
            ("weight x fit", Staged(graph, embedder, AdaptiveStage(1.0))),
            ("weight x fit^2", Staged(graph, embedder, AdaptiveStage(2.0))),
            ("defaults, vector 0.3 below fit 0.5", Staged(graph, embedder, AdaptiveStage(0.0, 0.5, 0.3))),
            ("weight x fit, vector 0.3 below fit 0.5", Staged(graph, embedder, AdaptiveStage(1.0, 0.5, 0.3))),
        ]
        scored = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}; dev set {args.devset.name}\n\n{relevance.render(scored)}")


if __name__ == "__main__":
    asyncio.run(main(relevance.dev_set_parser(__doc__).parse_args()))
