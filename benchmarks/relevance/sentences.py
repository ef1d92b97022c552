"""Sentence vectors as a third route, tried on a dev set before building anything.

    .venv/bin/python benchmarks/relevance/sentences.py [--devset examples/devset2 --port 7741 --home home-devset2]

A paraphrased question is often about one sentence, and a multi-hop one about two, each in a
chunk of some twenty sentences whose pooled vector also holds the rest. Here every sentence of
every stored chunk is embedded alone (as a passage; the same model as the chunks), and a
question's sentence route ranks each chunk by its best sentence's cosine, ``3 * k`` chunks
deep as the other routes. That list is fused with the defaults' two routes (each alone, from
the toolkit's retriever, as ``relative.py``) by relative-score fusion, the best of a chunk's
votes, and scored beside the defaults, the sentence route alone and the two routes fused
without it. The sentence vectors live in this process only (numpy), so nothing here says
what an index of them would cost; the embedding time is printed. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import run as relevance  # benchmarks/relevance/run.py
from relative import relative

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Evidence, EvidenceItem, Route
from graphrag_orm.retrieval import RetrievalOptions, Retriever

#: A sentence ends at . ! or ? (and any closing quotes), then space; a line break between paragraphs too.
_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+|\n\s*\n")
#: Sentences shorter than this many words join the next one ("Yes." "Mr. Darcy" ...).
SHORTEST = 6


def sentences(text: str) -> list[str]:
    """The text's sentences, each of at least ``SHORTEST`` words (short ones joined to the next)."""
    parts = [part.strip() for part in _END.split(text) if part and part.strip()]
    out: list[str] = []
    carry = ""
    for part in parts:
        carry = f"{carry} {part}".strip() if carry else part
        if len(carry.split()) >= SHORTEST:
            out.append(carry)
            carry = ""
    if carry:
        if out:
            out[-1] = f"{out[-1]} {carry}"
        else:
            out.append(carry)
    return out


class SentenceIndex:
    """Every stored chunk's sentences embedded as passages, and each chunk's rows in the matrix."""

    def __init__(self, items: dict[str, EvidenceItem], matrix: Any, owners: list[str]) -> None:
        self.items, self.matrix, self.owners = items, matrix, np.array(owners)

    @classmethod
    async def build(cls, graph: relevance.DevSetGraph, embedder: LocalEmbedder) -> SentenceIndex:
        rows = await graph.store.read(
            "MATCH (c:Chunk) RETURN c.id AS id, c.text AS text, c.startByte AS start, c.endByte AS end ORDER BY id",
            name="bench.sentences-read",
        )
        template = (await graph.retriever.retrieve("a", RetrievalOptions(max_items=1))).items[0]
        items: dict[str, EvidenceItem] = {}
        texts: list[str] = []
        owners: list[str] = []
        for row in rows:
            chunk_id = str(row["id"])
            items[chunk_id] = template.model_copy(
                update={
                    "chunk_id": chunk_id,
                    "text": str(row["text"]),
                    "start_byte": int(row["start"]),
                    "end_byte": int(row["end"]),
                    "routes": (),
                }
            )
            for sentence in sentences(str(row["text"])):
                texts.append(sentence)
                owners.append(chunk_id)
        unique = sorted(set(texts))
        began = time.perf_counter()
        vectors = await embedder.embed(unique)
        print(
            f"sentences: {len(texts)} in {len(rows)} chunks ({len(unique)} distinct), "
            f"embedded in {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        where = {text: row for row, text in enumerate(unique)}
        matrix = np.array(list(vectors), dtype=np.float32)[[where[text] for text in texts]]
        return cls(items, matrix, owners)

    def ranked(self, query: Any, depth: int) -> tuple[EvidenceItem, ...]:
        """Chunks by their best sentence's cosine to ``query``, best first, ``depth`` of them."""
        cosines = self.matrix @ np.asarray(query, dtype=np.float32)
        best: dict[str, float] = {}
        for owner, cosine in zip(self.owners.tolist(), cosines.tolist(), strict=True):
            if cosine > best.get(owner, -2.0):
                best[owner] = cosine
        order = sorted(best, key=lambda c: (-best[c], c))[:depth]
        return tuple(self.items[c].model_copy(update={"score": best[c]}) for c in order)


class SentenceFusion(relevance.Around):
    """The defaults' routes (each alone) and, with ``sentences``, the sentence route, fused by
    relative-score best votes; ``only_sentences`` returns the sentence route alone."""

    def __init__(
        self,
        inner: Retriever,
        index: SentenceIndex,
        embedder: LocalEmbedder,
        *,
        with_sentences: bool = True,
        only_sentences: bool = False,
    ) -> None:
        super().__init__(inner)
        self.index, self.embedder = index, embedder
        self.with_sentences, self.only_sentences = with_sentences, only_sentences

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kwargs: Any) -> Evidence:
        options = options or self.inner.options
        k = options.max_items
        deep = options.model_copy(update={"max_items": 3 * k, "max_utf8_bytes": None, "stages": ()})
        vector = await self.inner.retrieve(question, deep.model_copy(update={"routes": frozenset({Route.VECTOR})}))
        query = (await self.embedder.embed_query([question]))[0]
        by_sentence = self.index.ranked(query, 3 * k)
        if self.only_sentences:
            return vector.model_copy(update={"items": by_sentence[:k]})
        lists = [vector.items]
        text = await self.inner.retrieve(question, deep.model_copy(update={"routes": frozenset({Route.FULL_TEXT})}))
        lists.append(text.items)
        if self.with_sentences:
            lists.append(by_sentence)
        votes: dict[str, float] = {}
        items: dict[str, EvidenceItem] = {}
        for found in lists:
            for chunk_id, vote in relative(found).items():
                votes[chunk_id] = max(votes.get(chunk_id, 0.0), vote)
            for item in found:
                items.setdefault(item.chunk_id, item)
        ranked = sorted(votes, key=lambda c: (-votes[c], c))[:k]
        return vector.model_copy(
            update={"items": tuple(items[c].model_copy(update={"score": votes[c]}) for c in ranked)}
        )


async def main(args: argparse.Namespace) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        index = await SentenceIndex.build(graph, embedder)
        retriever = graph.retriever
        contenders: list[tuple[str, Any]] = [
            ("graphrag-orm defaults", retriever),
            (
                "vector + full text, relative best (outside)",
                SentenceFusion(retriever, index, embedder, with_sentences=False),
            ),
            ("sentences alone", SentenceFusion(retriever, index, embedder, only_sentences=True)),
            ("vector + full text + sentences, relative best", SentenceFusion(retriever, index, embedder)),
        ]
        rows = await relevance.score_contenders(contenders, cases, graph.stored)
    print(f"\nembedder: {embedder.model_name}; dev set {args.devset.name}\n\n{relevance.render(rows)}")


if __name__ == "__main__":
    parser = relevance.dev_set_parser(__doc__)
    asyncio.run(main(parser.parse_args()))
