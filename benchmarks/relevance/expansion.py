"""Lexical feedback (the question widened by words of its first passages), tried before building it.

    .venv/bin/python benchmarks/relevance/expansion.py [--devset examples/devset2 --port 7741 --home home-devset2]

A multi-hop question names one end of a chain ("the estate of the man who proposed at
Hunsford"); the passage at the other end names what the first passage names (the bridge: a
person, a place). Classic pseudo-relevance feedback on the lexical side (RM3's idea, without
its language model): the defaults' first ``m`` items give ``e`` expansion words, those with the
highest term frequency in them times their idf over the defaults' 2 x k candidates, leaving out
the question's own terms and stop words; the question with those words appended is retrieved
again (the full-text route alone, or both routes), and the two lists are merged by reciprocal
rank (``rrf``) or the first list's first half then turns (``half``). The vector feedback
(``feedback.py``) moved the question's vector; this moves its words.
The same graph as ``run.py`` (port 7706, home ``home-retr``), reused between runs.
"""

from __future__ import annotations

import asyncio
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py
from variants import merged

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Evidence, Route
from graphrag_orm.retrieval import RetrievalOptions, Retriever
from graphrag_orm.retrieval.passages import STOP_WORDS, passage_terms

_WORD = re.compile(r"[^\W\d_]{3,}")


def expansion_words(question: str, texts: list[str], pool: list[str], m: int, e: int) -> list[str]:
    """The ``e`` words of ``texts[:m]`` with the highest tf x idf over ``pool``, none of the question's terms."""
    asked = set(passage_terms(question))
    df: Counter[str] = Counter()
    for text in pool:
        df.update(set(_WORD.findall(text.casefold())))
    tf: Counter[str] = Counter()
    for text in texts[:m]:
        tf.update(w for w in _WORD.findall(text.casefold()) if w not in STOP_WORDS and w[:5] not in asked)
    n = len(pool)
    score = {w: c * math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w, c in tf.items()}
    return sorted(score, key=lambda w: (-score[w], w))[:e]


class Expanded(relevance.Around):
    def __init__(self, inner: Retriever, m: int, e: int, routes: str, merge: str) -> None:
        super().__init__(inner)
        self.m, self.e, self.routes, self.merge = m, e, routes, merge

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        options = options or self.inner.options
        k = options.max_items
        wide = await self.inner.retrieve(question, options.model_copy(update={"max_items": 2 * k}), **kwargs)
        first = list(wide.items[:k])
        words = expansion_words(question, [i.text for i in first], [i.text for i in wide.items], self.m, self.e)
        if not words:
            return wide.model_copy(update={"items": tuple(first)})
        again = (
            options if self.routes == "both" else options.model_copy(update={"routes": frozenset({Route.FULL_TEXT})})
        )
        second = await self.inner.retrieve(f"{question} {' '.join(words)}", again, **kwargs)
        return wide.model_copy(update={"items": tuple(merged(self.merge, [first, list(second.items)], k))})


async def main(args: Any) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        retriever = graph.retriever
        contenders: list[tuple[str, Any]] = [("graphrag-orm defaults", retriever)]
        for m, e in ((2, 5), (3, 10)):
            for routes in ("text", "both"):
                for merge in ("rrf", "half"):
                    contenders.append(
                        (f"feedback m={m} e={e} {routes} {merge}", Expanded(retriever, m, e, routes, merge))
                    )
        scored = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}; dev set {args.devset.name}\n\n{relevance.render(scored)}")


if __name__ == "__main__":
    asyncio.run(main(relevance.dev_set_parser(__doc__).parse_args()))
