"""neo4j-graphrag 1.22.0's side of the interop suite; run by ``stack.py`` in ``.venv-interop``.

It reads one JSON command on stdin and prints one JSON object on stdout. It never
imports graphrag-orm's package: only ``graphrag_orm/embeddings/hashing.py`` and the few
modules it needs, loaded by path (the package's ``__init__`` files import neomodel,
which this venv lacks), so the vectors are our ``HashingEmbedder``'s own.

Commands (``command`` names one):

- ``vectors``: ``texts``, ``dimensions`` -> ``vectors``, computed by the embedder the
  pipeline uses (the suite compares them with its own).
- ``build``: ``documents`` (``path``, ``text``), ``chunkSize``, ``chunkOverlap``,
  ``vectorIndex``, ``fulltextIndex``, ``dimensions`` -> ``statuses`` and each document's
  ``chunks``. neo4j-graphrag's lexical graph pipeline as its documentation builds it
  (``FixedSizeSplitter``, ``TextChunkEmbedder``, ``LexicalGraphBuilder``, ``Neo4jWriter``),
  one ``Pipeline.run`` per document; then its own ``create_vector_index`` and
  ``create_fulltext_index`` on ``Chunk``, awaited online.
- ``search``: ``vectorIndex``, ``fulltextIndex``, ``queries``, ``topK`` -> per query the
  ``vector`` and ``hybrid`` items of ``VectorRetriever`` and ``HybridRetriever``.
- ``cypher``: ``vectorIndex``, ``queries``, ``topK`` -> per query the items of
  ``VectorCypherRetriever`` with :data:`RETRIEVAL_QUERY` (each passage with the
  ``__Entity__`` nodes that point at it with ``FROM_CHUNK``), and ``GraphRAG``'s prompt
  and answer with :class:`ScriptedLLM` for the first query.

The one stand-in besides the embedder is the writer: the local Neo4j has no APOC, and
``Neo4jWriter`` writes relationships with ``apoc.merge.relationship``, so
:class:`ApocFreeWriter` replaces only that statement with the same MERGE in Cypher 25
(as ``benchmarks/ingest/neo4j_graphrag_side.py`` does).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import neo4j
from neo4j_graphrag.components.embedder import TextChunkEmbedder
from neo4j_graphrag.components.kg_writer import Neo4jWriter
from neo4j_graphrag.components.lexical_graph import LexicalGraphBuilder
from neo4j_graphrag.components.text_splitters.fixed_size_splitter import FixedSizeSplitter
from neo4j_graphrag.components.types import LexicalGraphConfig, Neo4jRelationship
from neo4j_graphrag.embeddings.base import Embedder
from neo4j_graphrag.experimental.pipeline import Pipeline
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.indexes import create_fulltext_index, create_vector_index
from neo4j_graphrag.llm import LLMInterface, LLMResponse
from neo4j_graphrag.retrievers import HybridRetriever, VectorCypherRetriever, VectorRetriever
from neo4j_graphrag.types import RetrieverResultItem

REPO = Path(__file__).resolve().parents[2]

# What a neo4j-graphrag user writes to read the passage with the things extracted from it.
RETRIEVAL_QUERY = (
    "OPTIONAL MATCH (node)<-[:FROM_CHUNK]-(entity:__Entity__) "
    "WITH node, score, collect(entity {.name, labels: labels(entity)}) AS entities "
    "RETURN node.text AS text, node.index AS index, node.id AS chunkId, "
    "elementId(node) AS elementId, entities, score"
)

SCRIPTED_ANSWER = "Scripted answer: the context above was read."


def _our_hashing_embedder(dimensions: int) -> Any:
    """graphrag-orm's HashingEmbedder, imported without the rest of the package (see the module)."""
    for name, folder in (
        ("graphrag_orm", REPO / "graphrag_orm"),
        ("graphrag_orm.embeddings", REPO / "graphrag_orm" / "embeddings"),
    ):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    from graphrag_orm.embeddings.hashing import HashingEmbedder

    return HashingEmbedder(dimensions)


class OurVectors(Embedder):
    """Each text's vector from graphrag-orm's HashingEmbedder, computed on call."""

    def __init__(self, dimensions: int) -> None:
        super().__init__()
        self.inner = _our_hashing_embedder(dimensions)

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
    """``Neo4jWriter`` with only its APOC relationship statement replaced."""

    def _upsert_relationships(self, rels: list[Neo4jRelationship]) -> None:
        self.driver.execute_query(
            APOC_FREE_RELATIONSHIPS,
            parameters_={"rows": self._relationships_to_rows(rels)},
            database_=self.neo4j_database,
        )


class ScriptedLLM(LLMInterface):
    """A stand-in model: it keeps the prompt neo4j-graphrag built and answers one fixed line."""

    def __init__(self) -> None:
        super().__init__(model_name="scripted")
        self.prompts: list[str] = []

    def invoke(self, input: str, message_history: Any = None, system_instruction: str | None = None) -> LLMResponse:
        self.prompts.append(input)
        return LLMResponse(content=SCRIPTED_ANSWER)

    async def ainvoke(
        self,
        input: str,
        message_history: Any = None,
        system_instruction: str | None = None,
    ) -> LLMResponse:
        return self.invoke(input, message_history, system_instruction)


def lexical_pipeline(driver: neo4j.Driver, command: dict[str, Any]) -> Pipeline:
    """The documented lexical graph pipeline: splitter, chunk embedder, builder, writer."""
    pipe = Pipeline()
    splitter = FixedSizeSplitter(chunk_size=command["chunkSize"], chunk_overlap=command["chunkOverlap"])
    pipe.add_component(splitter, "splitter")
    pipe.add_component(TextChunkEmbedder(embedder=OurVectors(command["dimensions"])), "chunk_embedder")
    pipe.add_component(LexicalGraphBuilder(LexicalGraphConfig()), "lexical_graph_builder")
    pipe.add_component(ApocFreeWriter(driver, neo4j_database=command["database"]), "writer")
    pipe.connect("splitter", "chunk_embedder", input_config={"text_chunks": "splitter"})
    pipe.connect("chunk_embedder", "lexical_graph_builder", input_config={"text_chunks": "chunk_embedder"})
    pipe.connect(
        "lexical_graph_builder",
        "writer",
        input_config={"graph": "lexical_graph_builder.graph", "lexical_graph_config": "lexical_graph_builder.config"},
    )
    return pipe


def build(driver: neo4j.Driver, command: dict[str, Any]) -> dict[str, Any]:
    statuses: list[str] = []
    chunks: list[list[str]] = []
    for document in command["documents"]:
        pipe = lexical_pipeline(driver, command)
        result = asyncio.run(
            pipe.run(
                {
                    "splitter": {"text": document["text"]},
                    "lexical_graph_builder": {"document_info": {"path": document["path"]}},
                }
            )
        )
        statuses.append(str(result.result.get("writer", {}).get("status")))
        splitter = FixedSizeSplitter(chunk_size=command["chunkSize"], chunk_overlap=command["chunkOverlap"])
        chunks.append([chunk.text for chunk in splitter.iter_chunks(document["text"])])
    database = command["database"]
    dimensions = command["dimensions"]
    create_vector_index(
        driver, command["vectorIndex"], "Chunk", "embedding", dimensions, "cosine", neo4j_database=database
    )
    create_fulltext_index(driver, command["fulltextIndex"], "Chunk", ["text"], neo4j_database=database)
    driver.execute_query("CALL db.awaitIndexes(60)", database_=database)
    return {"statuses": statuses, "chunks": chunks}


def _item(record: neo4j.Record) -> RetrieverResultItem:
    """A search record as its chunk's element id, text, index and score (the embedding left out)."""
    node = record["node"]
    metadata = {"elementId": record["elementId"], "index": node["index"], "score": record["score"]}
    return RetrieverResultItem(content=node["text"], metadata=metadata)


def _items(result: Any) -> list[dict[str, Any]]:
    return [{"text": item.content, **(item.metadata or {})} for item in result.items]


def search(driver: neo4j.Driver, command: dict[str, Any]) -> dict[str, Any]:
    embedder = OurVectors(command["dimensions"])
    properties = ["text", "index"]
    database = command["database"]
    vector = VectorRetriever(
        driver,
        command["vectorIndex"],
        embedder,
        return_properties=properties,
        result_formatter=_item,
        neo4j_database=database,
    )
    hybrid = HybridRetriever(
        driver,
        command["vectorIndex"],
        command["fulltextIndex"],
        embedder,
        return_properties=properties,
        result_formatter=_item,
        neo4j_database=database,
    )
    top_k = command["topK"]
    return {
        "results": [
            {
                "vector": _items(vector.search(query_text=query, top_k=top_k)),
                "hybrid": _items(hybrid.search(query_text=query, top_k=top_k)),
            }
            for query in command["queries"]
        ]
    }


def _cypher_item(record: neo4j.Record) -> RetrieverResultItem:
    entities = sorted(
        ({"name": entity["name"], "labels": sorted(entity["labels"])} for entity in record["entities"]),
        key=lambda entity: entity["name"],
    )
    names = ", ".join(entity["name"] for entity in entities)
    metadata = {
        "chunkId": record["chunkId"],
        "elementId": record["elementId"],
        "index": record["index"],
        "score": record["score"],
        "entities": entities,
    }
    return RetrieverResultItem(content=f"{record['text']}\nThings: {names}", metadata=metadata)


def cypher(driver: neo4j.Driver, command: dict[str, Any]) -> dict[str, Any]:
    retriever = VectorCypherRetriever(
        driver,
        command["vectorIndex"],
        RETRIEVAL_QUERY,
        OurVectors(command["dimensions"]),
        result_formatter=_cypher_item,
        neo4j_database=command["database"],
    )
    top_k = command["topK"]
    results = [_items(retriever.search(query_text=query, top_k=top_k)) for query in command["queries"]]
    llm = ScriptedLLM()
    rag = GraphRAG(retriever, llm)
    answer = rag.search(query_text=command["queries"][0], retriever_config={"top_k": top_k}, return_context=False)
    return {"results": results, "prompt": llm.prompts[0] if llm.prompts else None, "answer": answer.answer}


def vectors(command: dict[str, Any]) -> dict[str, Any]:
    embedder = OurVectors(command["dimensions"])
    return {"vectors": [embedder.embed_query(text) for text in command["texts"]]}


def main() -> None:
    command = json.loads(sys.stdin.read())
    # The writer logs a failed statement with its stack trace; LLMInterface logs its deprecation.
    logging.getLogger("neo4j_graphrag").setLevel(logging.CRITICAL)
    warnings.simplefilter("ignore")
    if command["command"] == "vectors":
        print(json.dumps(vectors(command)))
        return
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    command["database"] = os.environ.get("NEO4J_DATABASE") or None
    handlers = {"build": build, "search": search, "cypher": cypher}
    with neo4j.GraphDatabase.driver(os.environ["NEO4J_URI"], auth=auth, notifications_min_severity="OFF") as driver:
        report = handlers[command["command"]](driver, command)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
