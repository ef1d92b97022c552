"""The neo4j-graphrag side of the ingestion benchmark; run by run.py in benchmarks/.venv-neo4j-graphrag.

neo4j-graphrag 1.22.0's lexical graph pipeline, as its documentation builds it: a text
splitter, ``TextChunkEmbedder``, ``LexicalGraphBuilder`` and ``Neo4jWriter``, one
``Pipeline.run`` per document. Two stand-ins make it do our work:

- the splitter returns graphrag-orm's chunk texts for the document (from ``--plan``,
  computed by run.py outside the timing; chunking the whole corpus takes ~0.1 s);
- the embedder computes graphrag-orm's ``HashingEmbedder(256)`` vector for each chunk,
  with graphrag-orm's own code, inside the timing, as ours does.

``--writer stock`` uses ``Neo4jWriter`` as shipped. Its relationship statement calls
``apoc.merge.relationship``; without APOC that statement fails, the writer logs it and
returns ``FAILURE``, and no edge is written (nodes and vectors are). ``--writer
apoc-free`` subclasses it and replaces only that statement with the same MERGE written
in Cypher 25 (a dynamic relationship type), so the whole lexical graph is written.

Prints one JSON line: seconds, documents, chunks, writer statuses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
import types
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
from neo4j_graphrag.components.embedder import TextChunkEmbedder
from neo4j_graphrag.components.kg_writer import Neo4jWriter
from neo4j_graphrag.components.lexical_graph import LexicalGraphBuilder
from neo4j_graphrag.components.text_splitters.base import TextSplitter
from neo4j_graphrag.components.types import LexicalGraphConfig, Neo4jRelationship, TextChunk
from neo4j_graphrag.embeddings.base import Embedder
from neo4j_graphrag.experimental.pipeline import Pipeline

REPO = Path(__file__).resolve().parents[2]


def _our_hashing_embedder() -> Any:
    """graphrag-orm's HashingEmbedder, imported without the rest of the package.

    The package's ``__init__`` files import neomodel and the OpenAI client, which this
    venv lacks; the hashing module itself needs only pydantic, so ``graphrag_orm`` and
    ``graphrag_orm.embeddings`` are registered by path with their ``__init__`` skipped.
    """
    for name, folder in (
        ("graphrag_orm", REPO / "graphrag_orm"),
        ("graphrag_orm.embeddings", REPO / "graphrag_orm" / "embeddings"),
    ):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    from graphrag_orm.embeddings.hashing import HashingEmbedder

    return HashingEmbedder(256)


class PlannedSplitter(TextSplitter):
    """Returns graphrag-orm's chunk texts for a document, found by its text."""

    def __init__(self, chunks_by_text: dict[str, list[str]]) -> None:
        self.chunks_by_text = chunks_by_text

    def iter_chunks(self, text: str) -> Iterator[TextChunk]:
        for index, chunk in enumerate(self.chunks_by_text[text]):
            yield TextChunk(text=chunk, index=index)


class OurVectors(Embedder):
    """Each chunk's vector from graphrag-orm's HashingEmbedder(256), computed on call."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = _our_hashing_embedder()

    def embed_query(self, text: str) -> list[float]:
        vector, _ = self.inner.embed_one(text)
        return list(vector)


# apoc.merge.relationship(start, row.type, {}, row.properties, end, row.properties) is a
# MERGE on the type alone that sets the properties on create and on match.
APOC_FREE_RELATIONSHIPS = (
    "UNWIND $rows AS row "
    "MATCH (start:__KGBuilder__ {__tmp_internal_id: row.start_node_id}), "
    "(end:__KGBuilder__ {__tmp_internal_id: row.end_node_id}) "
    "MERGE (start)-[rel:$(row.type)]->(end) SET rel += row.properties "
    "RETURN elementId(rel)"
)


class ApocFreeWriter(Neo4jWriter):
    """``Neo4jWriter`` with only its APOC relationship statement replaced (see the module)."""

    def _upsert_relationships(self, rels: list[Neo4jRelationship]) -> None:
        self.driver.execute_query(
            APOC_FREE_RELATIONSHIPS,
            parameters_={"rows": self._relationships_to_rows(rels)},
            database_=self.neo4j_database,
        )


def build_pipeline(driver: neo4j.Driver, splitter: PlannedSplitter, embedder: Embedder, writer_kind: str) -> Pipeline:
    """The documented lexical graph pipeline: splitter, chunk embedder, builder, writer."""
    writer_class = ApocFreeWriter if writer_kind == "apoc-free" else Neo4jWriter
    pipe = Pipeline()
    pipe.add_component(splitter, "splitter")
    pipe.add_component(TextChunkEmbedder(embedder=embedder), "chunk_embedder")
    pipe.add_component(LexicalGraphBuilder(LexicalGraphConfig()), "lexical_graph_builder")
    pipe.add_component(writer_class(driver), "writer")
    pipe.connect("splitter", "chunk_embedder", input_config={"text_chunks": "splitter"})
    pipe.connect("chunk_embedder", "lexical_graph_builder", input_config={"text_chunks": "chunk_embedder"})
    pipe.connect(
        "lexical_graph_builder",
        "writer",
        input_config={"graph": "lexical_graph_builder.graph", "lexical_graph_config": "lexical_graph_builder.config"},
    )
    return pipe


def load_plan(args: argparse.Namespace) -> tuple[list[Path], dict[str, list[str]], dict[str, list[str]]]:
    """The corpus files, our chunk texts per file name, and the same keyed by document text."""
    plan: dict[str, list[str]] = json.loads(Path(args.plan).read_text(encoding="utf-8"))
    paths = sorted(Path(args.corpus).glob("*.md"))
    # Keyed by text: a splitter's run() receives only the text.
    return paths, plan, {path.read_text(encoding="utf-8"): plan[path.name] for path in paths}


async def ingest(
    args: argparse.Namespace,
    driver: neo4j.Driver,
    paths: list[Path],
    plan: dict[str, list[str]],
    chunks_by_text: dict[str, list[str]],
) -> dict[str, Any]:
    splitter = PlannedSplitter(chunks_by_text)
    embedder = OurVectors()
    # One pipeline per document in flight: Pipeline.run resets the pipeline's state.
    pipelines = asyncio.Queue[Pipeline]()
    for _ in range(args.documents_in_flight):
        pipelines.put_nowait(build_pipeline(driver, splitter, embedder, args.writer))
    statuses: Counter[str] = Counter()

    async def one(path: Path) -> int:
        pipe = await pipelines.get()
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")  # as ours reads
            result = await pipe.run(
                {
                    "splitter": {"text": text},
                    "lexical_graph_builder": {"document_info": {"path": args.base_uri + path.name}},
                }
            )
            statuses[str(result.result.get("writer", {}).get("status"))] += 1
            return len(plan[path.name])
        finally:
            pipelines.put_nowait(pipe)

    began = time.perf_counter()
    chunks = sum(await asyncio.gather(*(one(path) for path in paths)))
    seconds = time.perf_counter() - began
    return {"seconds": seconds, "documents": len(paths), "chunks": chunks, "writer_statuses": dict(statuses)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--plan", required=True)
    parser.add_argument("--base-uri", required=True)
    parser.add_argument("--writer", choices=("stock", "apoc-free"), default="apoc-free")
    parser.add_argument("--documents-in-flight", type=int, default=4)
    args = parser.parse_args()
    # The stock writer logs each failed relationship statement with its stack trace.
    logging.getLogger("neo4j_graphrag").setLevel(logging.CRITICAL)
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    with neo4j.GraphDatabase.driver(os.environ["NEO4J_URI"], auth=auth, notifications_min_severity="OFF") as driver:
        report = asyncio.run(ingest(args, driver, *load_plan(args)))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
