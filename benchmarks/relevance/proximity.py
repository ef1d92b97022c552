"""A lexical proximity rerank of the fused candidates, tried on a dev set before building anything.

    .venv/bin/python benchmarks/relevance/proximity.py [--grid | --stage] [--devset examples/devset2 --port 7741 --home home-devset2]

The misses sit just past the first 10 (``misses.py``: a third of them at 11th to 20th), so
the question here is whether a signal the two routes lack reorders them. A chunk of 2 KiB
holds twenty sentences: Lucene's BM25 scores the question's words over all of it, and the
pooled vector averages all of it, so a chunk where the question's rarer words stand together
in one passage counts no more than one where they are scattered. Here each candidate (the
two routes' ``3 * k`` each, as the defaults read them, fused by relative-score best votes as
the retriever does) also gets its best passage's score: the sum of the idf of the distinct
question terms inside a window of ``W`` words, the best window over the chunk (terms are
lower-cased words, stop words dropped, cut to their first five letters; idf over every stored
chunk). Its placing among the candidates, ``(s - min) / (max - min)``, is mixed with the fused
vote, ``(1 - a) * fused + a * passage``, and the first ``k`` scored. A different signal from
``sentences.py`` (each sentence's vector) and ``variants.py``'s clause search (the question
cut in parts): no model, the candidates' text only. ``--stage`` runs the product's stage
(``PassageStage``) instead, over window widths in characters and the candidates it is handed.
Results: docs/benchmarks.md.
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
from relative import relative

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Evidence, EvidenceItem, Route
from graphrag_orm.retrieval import RetrievalOptions, Retriever
from graphrag_orm.retrieval.passages import PASSAGE_STAGE, STOP_WORDS, PassageOptions, PassageStage

_WORD = re.compile(r"[a-z0-9]+")
PREFIX = 5


def terms(text: str, prefix: int | None = PREFIX) -> list[str]:
    """Lower-cased words, stop words dropped, each cut to its first ``prefix`` letters (``None``: whole)."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return [word[:prefix] for word in _WORD.findall(text) if word not in STOP_WORDS and len(word) > 1]


def idf(documents: list[list[str]]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for words in documents:
        df.update(set(words))
    n = len(documents)
    return {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}


def best_window(wanted: dict[str, float], words: list[str], width: int) -> float:
    """The largest sum of ``wanted`` weights of the distinct terms in any ``width`` consecutive words
    (the trial's window; the product's stage counts characters, ``--stage``)."""
    present: Counter[str] = Counter()
    score = best = 0.0
    for i, word in enumerate(words):
        if word in wanted:
            present[word] += 1
            score += wanted[word] if present[word] == 1 else 0.0
        if i >= width and words[i - width] in wanted:
            gone = words[i - width]
            present[gone] -= 1
            score -= wanted[gone] if present[gone] == 0 else 0.0
        best = max(best, score)
    return best


class Passages:
    """idf over every stored chunk, and a chunk's best window's score for a question."""

    def __init__(self, texts: list[str], prefix: int | None = PREFIX, pool: bool = False) -> None:
        self.prefix, self.pool = prefix, pool
        self.cache: dict[str, list[str]] = {}
        self.idf = idf([terms(text, prefix) for text in texts])

    def pool_idf(self, pool: dict[str, str]) -> None:
        """With ``pool``: idf over the candidates of this question only (no corpus statistics)."""
        if self.pool:
            self.idf = idf([self.words(c, text) for c, text in pool.items()])

    def words(self, chunk_id: str, text: str) -> list[str]:
        return self.cache.setdefault(chunk_id, terms(text, self.prefix))

    def best_window(self, question: str, chunk_id: str, text: str, width: int) -> float:
        wanted = {t: self.idf.get(t, 0.0) for t in set(terms(question, self.prefix))}
        words = self.words(chunk_id, text)
        if not wanted or not words:
            return 0.0
        return best_window(wanted, words, width)


class Proximity(relevance.Around):
    """The defaults' two routes (each alone), fused by relative-score best votes, then mixed with
    the candidates' best-passage placing at ``weight`` (0: the fusion alone)."""

    def __init__(self, inner: Retriever, passages: Passages, weight: float, width: int = 40) -> None:
        super().__init__(inner)
        self.passages, self.weight, self.width = passages, weight, width

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        options = options or self.inner.options
        k = options.max_items
        deep = options.model_copy(update={"max_items": 3 * k, "max_utf8_bytes": None, "stages": ()})
        lists = [
            await self.inner.retrieve(question, deep.model_copy(update={"routes": frozenset({route})}))
            for route in (Route.VECTOR, Route.FULL_TEXT)
        ]
        votes: dict[str, float] = {}
        items: dict[str, EvidenceItem] = {}
        for found in lists:
            for chunk_id, vote in relative(found.items).items():
                votes[chunk_id] = max(votes.get(chunk_id, 0.0), vote)
            for item in found.items:
                items.setdefault(item.chunk_id, item)
        if self.weight > 0:
            self.passages.pool_idf({c: items[c].text for c in votes})
            raw = {c: self.passages.best_window(question, c, items[c].text, self.width) for c in votes}
            top, low = max(raw.values()), min(raw.values())
            span = top - low
            for c in votes:
                placed = (raw[c] - low) / span if span > 0 else 1.0
                votes[c] = (1 - self.weight) * votes[c] + self.weight * placed
        ranked = sorted(votes, key=lambda c: (-votes[c], c))[:k]
        return lists[0].model_copy(
            update={"items": tuple(items[c].model_copy(update={"score": votes[c]}) for c in ranked)}
        )


class Staged(relevance.Around):
    """A passage stage (the product's, or a variant of it) in place of the default one, on the defaults' routes."""

    def __init__(self, graph: Any, embedder: LocalEmbedder, stage: PassageStage) -> None:
        inner = graph.retriever
        super().__init__(Retriever(inner.store, inner.model, embedder.embedding_set(), embedder, stages=[stage]))

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        options = (options or self.inner.options).model_copy(update={"stages": (PASSAGE_STAGE,)})
        return await self.inner.retrieve(question, options, **kwargs)


def stage_contenders(graph: Any, embedder: LocalEmbedder) -> list[tuple[str, Any]]:
    """The product's stage over window widths (characters) and the fused candidates it is handed,
    per item: 6 (every route's candidates at k = 10, 60), 3 (30) and 2 (20; the default)."""
    return [
        (
            f"stage, {width} chars, {per_item * relevance.K} candidates",
            Staged(graph, embedder, PassageStage(PassageOptions(width_chars=width, candidates_per_item=per_item))),
        )
        for width in (300, 500, 800)
        for per_item in (6, 3, 2)
    ]


async def main(args: Any) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        rows = await graph.store.read("MATCH (c:Chunk) RETURN c.text AS text", name="bench.proximity-read")
        passages = Passages([str(row["text"]) for row in rows])
        retriever = graph.retriever
        contenders: list[tuple[str, Any]] = [
            ("graphrag-orm defaults", retriever),
            ("relative best (outside)", Proximity(retriever, passages, 0.0)),
        ]
        if args.stage:
            contenders.append(("+ passage, 40 words, a = 0.4", Proximity(retriever, passages, 0.4)))
            contenders += stage_contenders(graph, embedder)
        elif args.grid:
            for width in (20, 40, 80):
                for weight in (0.2, 0.4):
                    contenders.append(
                        (f"+ passage, {width} words, a = {weight}", Proximity(retriever, passages, weight, width))
                    )
        else:
            texts = [str(row["text"]) for row in rows]
            contenders += [
                ("+ passage, 40 words, a = 0.4", Proximity(retriever, passages, 0.4)),
                ("+ passage, whole words", Proximity(retriever, Passages(texts, prefix=None), 0.4)),
                ("+ passage, idf over the candidates", Proximity(retriever, Passages(texts, pool=True), 0.4)),
                (
                    "+ passage, whole words, idf over the candidates",
                    Proximity(retriever, Passages(texts, prefix=None, pool=True), 0.4),
                ),
            ]
        scored = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}; dev set {args.devset.name}\n\n{relevance.render(scored)}")


if __name__ == "__main__":
    parser = relevance.dev_set_parser(__doc__)
    parser.add_argument("--stage", action="store_true", help="the product's stage: widths and candidates")
    parser.add_argument("--grid", action="store_true", help="widths 20, 40, 80 and weights 0.2, 0.4")
    asyncio.run(main(parser.parse_args()))
