"""The vector route's own first items kept in the first k, tried (a quota for the route paraphrase needs).

    .venv/bin/python benchmarks/relevance/quota.py [--devset examples/devset2 --port 7741 --home home-devset2]

A paraphrased passage the vector route ranks 6th can leave the first 10 after fusion and the
passage stage (``misses.py``). Here the defaults' first k keep the vector route's own first
``q`` (3, 5, 7): any of them missing replaces the defaults' last items. The same graph as
``run.py`` (port 7706, home ``home-retr``), reused between runs.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.evaluation import load_cases
from graphrag_orm.evidence import Route
from graphrag_orm.retrieval import RetrievalOptions


class Quota(relevance.Around):
    """The defaults, with the vector route's own first ``q`` put in place of their last items."""

    def __init__(self, inner: Any, q: int) -> None:
        super().__init__(inner)
        self.q = q

    async def retrieve(self, question: str, options: RetrievalOptions | None = None, **kw: Any) -> Any:
        options = options or self.inner.options
        k = options.max_items
        main = await self.inner.retrieve(question, options, **kw)
        vec = await self.inner.retrieve(
            question, RetrievalOptions(routes=frozenset({Route.VECTOR}), stages=(), max_items=self.q), **kw
        )
        ids = [i.chunk_id for i in main.items]
        missing = [i for i in vec.items if i.chunk_id not in ids]
        if not missing:
            return main
        kept = list(main.items[: k - len(missing)])
        return main.model_copy(update={"items": tuple(kept + missing)})


async def main(args: Any) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    embedder = LocalEmbedder(args.model)
    async with relevance.dev_set_graph(args, embedder) as graph:
        r = graph.retriever
        contenders = [("defaults", r)] + [(f"vector first {q} kept, at the end", Quota(r, q)) for q in (3, 5, 7)]
        scored = await relevance.score_contenders(contenders, cases, graph.stored)
    print(relevance.render(scored))


if __name__ == "__main__":
    asyncio.run(main(relevance.dev_set_parser(__doc__).parse_args()))
