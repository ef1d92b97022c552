"""Two retrieval variants tried on the dev set before building them: clause search and a diversity pass.

    .venv/bin/python benchmarks/relevance/variants.py [--model e5-small-v2-int8] [--port 7706] [--home home-retr]
        [--devset examples/devset2]

Each wraps the toolkit's ``Retriever`` (its defaults) and is scored by the evaluation harness at
k = 10 on ``examples/devset`` (or ``--devset DIR``, as ``run.py``), beside the defaults, per kind of question:

- **clause search**: a question of several clauses ("Who invited Lydia to Brighton, and what did
  she write to that friend?") is cut at ``;``, ``:``, ``?`` and at an "and" that begins a new
  question (an interrogative word, or a preposition and one, follows it); the whole question and
  each clause of three words or more are retrieved, and the lists are merged by reciprocal rank
  (``rrf``: 1 / (60 + rank) summed over the lists), by turns (``turns``: each list's first, then
  each list's second...), or the whole question's first half then turns (``half``);
- **diversity** (maximal marginal relevance over content words): 30 (or 20) fused candidates, of
  which 10 are taken one at a time by ``(1 - lambda) * score / best - lambda * similarity`` to
  the ones taken, the similarity being the Jaccard index of their content words.

The local server (port 7706, home ``home-retr``, as ``run.py``) keeps the dev set's graph between
runs: it is ingested (with ``run.py``'s ingestion) only when the stored document is not the set's
corpus or it has fewer chunks than one per 4 KiB of the corpus (an ingestion cut short).
Results: docs/benchmarks.md, "Clause search and a diversity pass, tried".
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.chat.extractive import content_words
from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.retrieval import RetrievalOptions, Retriever

_ASKS = r"(?:what|where|when|who|whom|whose|why|how|which|did|does|do|was|were|is|are)"
_CUT = re.compile(rf"(?:[;:?]\s+|,?\s+and\s+(?=(?:(?:in|at|on|to|from|for|with|by)\s+)?{_ASKS}\b))", re.IGNORECASE)


def clauses(question: str) -> list[str]:
    """The clauses of a question of several (three words or more each); none for a question of one."""
    parts = [part.strip(" ,?;:") for part in _CUT.split(question)]
    parts = [part for part in parts if len(part.split()) >= 3]
    return parts if len(parts) > 1 else []


class ClauseSearch(relevance.Around):
    """The whole question and each of its clauses retrieved, the lists merged as ``merge`` says."""

    def __init__(self, inner: Retriever, merge: str) -> None:
        super().__init__(inner)
        self.merge = merge

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        whole = await self.inner.retrieve(question, options, **kwargs)
        parts = clauses(question)
        if not parts:
            return whole
        k = (options or self.inner.options).max_items
        lists = [whole.items] + [(await self.inner.retrieve(part, options, **kwargs)).items for part in parts]
        return whole.model_copy(update={"items": tuple(merged(self.merge, lists, k))})


def merged(how: str, lists: Sequence[Sequence[EvidenceItem]], k: int) -> list[EvidenceItem]:
    if how == "rrf":
        score: dict[str, float] = {}
        item: dict[str, EvidenceItem] = {}
        for ranked in lists:
            for rank, found in enumerate(ranked, start=1):
                score[found.chunk_id] = score.get(found.chunk_id, 0.0) + 1.0 / (60 + rank)
                item[found.chunk_id] = found
        return [item[c] for c in sorted(score, key=lambda c: -score[c])][:k]
    taken: list[EvidenceItem] = []
    seen: set[str] = set()

    def take(found: EvidenceItem) -> None:
        if found.chunk_id not in seen:
            seen.add(found.chunk_id)
            taken.append(found)

    order = list(lists)
    if how == "half":
        for found in lists[0][: k // 2]:
            take(found)
        order = [*lists[1:], lists[0]]
    for rank in range(k):
        for ranked in order:
            if rank < len(ranked):
                take(ranked[rank])
    return taken[:k]


class Diversity(relevance.Around):
    """``pool`` fused candidates, of which ``max_items`` are taken by maximal marginal relevance."""

    def __init__(self, inner: Retriever, weight: float, pool: int) -> None:
        super().__init__(inner)
        self.weight, self.pool = weight, pool

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        options = options or self.inner.options
        wide = await self.inner.retrieve(question, options.model_copy(update={"max_items": self.pool}), **kwargs)
        left = list(wide.items)
        if not left:
            return wide
        best = max(found.score for found in left) or 1.0
        words = {found.chunk_id: content_words(found.text) for found in left}
        taken: list[EvidenceItem] = []

        def value(found: EvidenceItem) -> float:
            mine = words[found.chunk_id]
            similar = max(
                (len(mine & words[t.chunk_id]) / max(1, len(mine | words[t.chunk_id])) for t in taken), default=0.0
            )
            return (1 - self.weight) * found.score / best - self.weight * similar

        while left and len(taken) < options.max_items:
            chosen = max(left, key=value)
            taken.append(chosen)
            left.remove(chosen)
        return wide.model_copy(update={"items": tuple(taken)})


async def main(args: argparse.Namespace) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    print(f"{sum(1 for c in cases if clauses(c.question))} of {len(cases)} questions have several clauses")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        retriever = graph.retriever
        contenders: list[tuple[str, Any]] = [
            ("graphrag-orm defaults", retriever),
            *((f"clause search, {how}", ClauseSearch(retriever, how)) for how in ("rrf", "turns", "half")),
            ("diversity 0.2 of 30", Diversity(retriever, 0.2, 30)),
            ("diversity 0.4 of 30", Diversity(retriever, 0.4, 30)),
            ("diversity 0.2 of 20", Diversity(retriever, 0.2, 20)),
        ]
        rows = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}\n\n{relevance.render(rows)}")


if __name__ == "__main__":
    parser = relevance.dev_set_parser(__doc__)
    asyncio.run(main(parser.parse_args()))
