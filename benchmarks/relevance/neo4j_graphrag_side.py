"""The neo4j-graphrag side of the relevance benchmark; run by run.py in benchmarks/.venv-neo4j-graphrag.

neo4j-graphrag 1.22.0's ``VectorRetriever`` and ``HybridRetriever`` (its default ranker)
on graphrag-orm's vector and full-text indexes, given the query vector and the Lucene
text graphrag-orm computed for each question, as run.py writes them on stdin.
Prints one JSON line: for each retriever, each question's chunk ids, best first.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import neo4j
from neo4j_graphrag.retrievers import HybridRetriever, VectorRetriever


def main() -> None:
    """Reads ``{"questions", "vectorIndex", "fulltextIndex", "topK"}`` as JSON on stdin."""
    warnings.simplefilter("ignore", DeprecationWarning)
    asked = json.loads(sys.stdin.read())
    questions, top_k = asked["questions"], int(asked["topK"])
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    found: dict[str, list[list[str]]] = {"vector": [], "hybrid": []}
    with neo4j.GraphDatabase.driver(os.environ["NEO4J_URI"], auth=auth, notifications_min_severity="OFF") as driver:
        vector = VectorRetriever(driver, asked["vectorIndex"])
        hybrid = HybridRetriever(driver, asked["vectorIndex"], asked["fulltextIndex"])
        for question in questions:
            result = vector.get_search_results(query_vector=question["vector"], top_k=top_k)
            found["vector"].append([record["node"]["id"] for record in result.records])
            result = hybrid.get_search_results(
                query_text=question["lucene"], query_vector=question["vector"], top_k=top_k
            )
            found["hybrid"].append([record["node"]["id"] for record in result.records])
    print(json.dumps(found))


if __name__ == "__main__":
    main()
