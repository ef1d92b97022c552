"""The full-text index's analyzer on the dev sets: ``standard-no-stop-words`` (the default) against ``english``.

    .venv/bin/python benchmarks/relevance/analyzers.py [--devset examples/devset2 --port 7741 --home home-devset2]
        [--model e5-small-v2-int8] [--no-neo4j-graphrag]

Neo4j's default full-text analyzer keeps every word as it is written: a question's "the",
"of" and "was" are clauses that match most chunks, and "married" does not match "marry".
Lucene's ``english`` analyzer drops English stop words and stems what is left (Porter, with
possessives removed), on the indexed text and on the query alike. This script rebuilds the
chunk full-text index under its name with each analyzer in turn, on the graph the other
relevance scripts leave (it is ingested with ``run.py``'s ingestion only when the stored
document is not the set's corpus, it has too few chunks, or its vectors are not this
embedder's), and asks the set's questions of:

- graphrag-orm's defaults, reciprocal rank with candidates sized from k, and the full-text
  route alone (the vector route does not depend on the analyzer: it is run once);
- neo4j-graphrag 1.22's ``HybridRetriever`` on the same index, vectors and Lucene text.

The index is left with the default analyzer when the script ends, even on an error.
Results: docs/benchmarks.md, "The full-text analyzer".
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as relevance  # benchmarks/relevance/run.py

from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.evaluation import Evaluator, load_cases
from graphrag_orm.evidence import Route
from graphrag_orm.layout import Layout
from graphrag_orm.retrieval import RetrievalOptions, Retrievers
from graphrag_orm.retrieval.options import Fusion
from graphrag_orm.schema import CreateStep, FullTextAnalyzer, FullTextIndex, Schema
from graphrag_orm.store import Store

Row = tuple[str, dict[str, dict[str, float | int]]]


async def rebuild_index(store: Store, embedding_set: EmbeddingSet, analyzer: FullTextAnalyzer) -> None:
    """The layout's chunk full-text index, dropped and created again with ``analyzer``."""
    (chunk_text,) = (d for d in Schema.definitions(Layout.DEFAULT, embedding_set) if isinstance(d, FullTextIndex))
    definition = chunk_text.model_copy(update={"analyzer": analyzer})
    await store.execute(f"DROP INDEX `{definition.name}` IF EXISTS", name="bench.drop-fulltext")
    await store.execute(CreateStep(definition=definition).cypher(), name="bench.create-fulltext")
    await store.execute("CALL db.awaitIndexes(300)", name="bench.await-indexes")


async def main(args: argparse.Namespace) -> None:
    cases = load_cases(args.devset / "cases.jsonl")
    uri = relevance.corpus_of(args.devset)[1]
    embedder = LocalEmbedder(args.model)
    rows: list[Row] = []
    async with relevance.dev_set_graph(args, embedder) as graph:
        store, retriever, stored, server = graph.store, graph.retriever, graph.stored, graph.server
        default = RetrievalOptions()
        contenders: list[tuple[str, RetrievalOptions]] = [
            ("graphrag-orm defaults", default),
            ("RRF, sized", default.model_copy(update={"fusion": Fusion.RECIPROCAL_RANK})),
            ("full text only", default.model_copy(update={"routes": frozenset({Route.FULL_TEXT}), "stages": ()})),
        ]
        vectors = await relevance.question_vectors(embedder, cases)
        questions_file = relevance.write_questions(cases, vectors)
        vector_only = Retrievers.vector()
        report = await Evaluator(retriever=retriever, stored=stored, retrieval=vector_only, k=relevance.K).run(cases)
        rows.append(("vector only (either analyzer)", relevance.summarise(report.cases)))
        try:
            for analyzer in (FullTextAnalyzer.STANDARD, FullTextAnalyzer.ENGLISH):
                await rebuild_index(store, embedder.embedding_set(), analyzer)
                for name, options in contenders:
                    report = await Evaluator(retriever=retriever, stored=stored, retrieval=options, k=relevance.K).run(
                        cases
                    )
                    rows.append((f"{name}, {analyzer.value}", relevance.summarise(report.cases)))
                    print(f"{name}, {analyzer.value}: done", flush=True)
                if not args.no_neo4j_graphrag:
                    theirs = relevance.neo4j_graphrag(questions_file, server.settings, retriever)
                    results = await relevance.score_theirs(cases, theirs["hybrid"], stored, uri)
                    rows.append(
                        (f"neo4j-graphrag 1.22 HybridRetriever, {analyzer.value}", relevance.summarise(results))
                    )
        finally:
            await rebuild_index(store, embedder.embedding_set(), FullTextAnalyzer.STANDARD)
    print(f"\nembedder: {embedder.model_name}; dev set {args.devset.name}\n\n{relevance.render(rows)}")


def parse_args(argv: list[str] | None = None) -> Any:
    parser = relevance.dev_set_parser(__doc__)
    parser.add_argument("--no-neo4j-graphrag", action="store_true", help="leave neo4j-graphrag out")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
