"""The neo4j-graphrag side of the retrieval benchmark; run by run.py in benchmarks/.venv-neo4j-graphrag.

neo4j-graphrag 1.22.0's ``HybridRetriever`` on graphrag-orm's vector and full-text
indexes. Each question is asked with the query vector and the Lucene query text that
graphrag-orm computed (``--questions``), so no embedder runs here, and ``top_k`` equal
to graphrag-orm's candidates per route. On Neo4j 2026.01 or later it sends one
statement: the vector part as a ``SEARCH`` clause and the full-text part with
``db.index.fulltext.queryNodes``, unioned, max-score normalised, ordered and limited.

One warm-up pass over the questions, then ``--rounds`` timed passes; prints one JSON
line with every latency in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import neo4j
from neo4j_graphrag.retrievers import HybridRetriever


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", required=True)
    parser.add_argument("--vector-index", required=True)
    parser.add_argument("--fulltext-index", required=True)
    parser.add_argument("--top-k", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    questions = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    with neo4j.GraphDatabase.driver(os.environ["NEO4J_URI"], auth=auth, notifications_min_severity="OFF") as driver:
        retriever = HybridRetriever(driver, args.vector_index, args.fulltext_index)
        items = 0
        for question in questions:  # warm-up
            result = retriever.search(query_text=question["lucene"], query_vector=question["vector"], top_k=args.top_k)
            items += len(result.items)
        seconds: list[float] = []
        for _ in range(args.rounds):
            for question in questions:
                began = time.perf_counter()
                retriever.search(query_text=question["lucene"], query_vector=question["vector"], top_k=args.top_k)
                seconds.append(time.perf_counter() - began)
    print(json.dumps({"seconds": seconds, "items_per_question": items / len(questions)}))


if __name__ == "__main__":
    main()
