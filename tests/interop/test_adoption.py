"""Two stacks on one graph: neo4j-graphrag 1.22.0 builds it, graphrag-orm adopts it, both read it.

neo4j-graphrag's lexical pipeline (its ``FixedSizeSplitter`` with overlap, our hashing
vectors, its writer) writes the corpus in its own venv and creates its own vector and
full-text indexes. Two documents get their source files (source-grounded), the third
none (chunk-grounded). Then: the adoption's schema steps go through a migration chain,
the dry run writes nothing, apply adds only our keys, spans and run, our answers cite
checked quotes, and neo4j-graphrag's ``VectorRetriever`` and ``HybridRetriever`` return
the same passages before, after apply and after undo, which restores the graph exactly.
"""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.adoption import Adoption, AdoptionOptions
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import GraphRefused
from graphrag_orm.evidence import Grounding
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, Migrator, Revision
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.interop.corpus import DOCUMENTS, QUESTIONS
from tests.interop.stack import DIMENSIONS, FULLTEXT_INDEX, VECTOR_INDEX, neo4j_graphrag

# neo4j-graphrag's names, with the indexes its user created: both stacks search them.
LAYOUT = Layout.NEO4J_GRAPHRAG.replace(vector_index=VECTOR_INDEX, fulltext_index=FULLTEXT_INDEX)
CHUNK_SIZE, CHUNK_OVERLAP = 120, 30
WITH_SOURCE = ("harbour/pilots.md", "harbour/barrier.md")
TOP_K = 4

# Every node and relationship outside the suite's marker and the migration journal and lock.
NODES = (
    "MATCH (n) WHERE NOT n:GraphRagTestDatabase AND NOT n:GraphRagMigration AND NOT n:GraphRagMigrationLock "
    "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS properties"
)
LINKS = "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, elementId(a) AS a, elementId(b) AS b, properties(r) AS properties"


@dataclass(frozen=True)
class TheirGraph:
    chunks: dict[str, list[str]]
    sources: dict[str, Path]


@pytest.fixture
async def their_graph(
    bare_database: None, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> AsyncIterator[TheirGraph]:
    """The corpus as neo4j-graphrag writes it, on a database without our schema; two source files."""
    built = await neo4j_graphrag(
        {
            "command": "build",
            "documents": [{"path": path, "text": text} for path, text in DOCUMENTS.items()],
            "chunkSize": CHUNK_SIZE,
            "chunkOverlap": CHUNK_OVERLAP,
            "vectorIndex": VECTOR_INDEX,
            "fulltextIndex": FULLTEXT_INDEX,
            "dimensions": DIMENSIONS,
        },
        neo4j_settings,
    )
    assert built["statuses"] == ["SUCCESS"] * len(DOCUMENTS)
    sources = {}
    for path in WITH_SOURCE:
        file = tmp_path / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(DOCUMENTS[path].encode("utf-8"))
        sources[path] = file
    yield TheirGraph(dict(zip(DOCUMENTS, built["chunks"], strict=True)), sources)


async def snapshot(store: Store) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every node's labels and properties and every relationship's ends and properties, by element id."""
    nodes = await store.read(NODES, name="test.interop.nodes")
    links = await store.read(LINKS, name="test.interop.links")
    return (
        {row["id"]: (sorted(row["labels"]), row["properties"]) for row in nodes.records},
        {row["id"]: (row["type"], row["a"], row["b"], row["properties"]) for row in links.records},
    )


async def their_search(settings: ConnectionSettings) -> list[dict[str, list[dict[str, Any]]]]:
    command = {
        "command": "search",
        "vectorIndex": VECTOR_INDEX,
        "fulltextIndex": FULLTEXT_INDEX,
        "queries": list(QUESTIONS),
        "topK": TOP_K,
        "dimensions": DIMENSIONS,
    }
    results: list[dict[str, list[dict[str, Any]]]] = (await neo4j_graphrag(command, settings))["results"]
    return results


def passages(results: list[dict[str, list[dict[str, Any]]]]) -> list[dict[str, list[tuple[str, str, int]]]]:
    """The passages each retriever returned, in order: element id, text, index (scores apart)."""
    return [
        {kind: [(item["elementId"], item["text"], item["index"]) for item in items] for kind, items in result.items()}
        for result in results
    ]


def scores(results: list[dict[str, list[dict[str, Any]]]]) -> list[float]:
    return [item["score"] for result in results for items in result.values() for item in items]


async def apply_steps(store: Store, steps: list[Any]) -> None:
    """The adoption's schema steps as the first revision of the application's own chain."""
    revision = Revision.new("0001_adopt_neo4j_graphrag", None, "adopt the neo4j-graphrag graph", steps)
    await Migrator(store, Chain.from_revisions([revision])).apply()


async def test_both_stacks_read_the_adopted_graph_and_undo_restores_it_exactly(
    their_graph: TheirGraph, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    chunk_count = sum(len(chunks) for chunks in their_graph.chunks.values())
    before = await snapshot(store)
    searched_before = await their_search(neo4j_settings)
    assert all(result["vector"] and result["hybrid"] for result in searched_before)

    plan = Adoption(store).plan(LAYOUT, OFFLINE_EMBEDDING_SET, AdoptionOptions(source_files=their_graph.sources))
    steps = plan.prepare_steps()
    assert {VECTOR_INDEX, FULLTEXT_INDEX}.isdisjoint(step.definition.name for step in steps)  # theirs, adopted
    await apply_steps(store, steps)
    preview = await plan.preview()

    assert await snapshot(store) == before  # the dry run wrote nothing
    assert preview.blockers == () and preview.steps_pending == ()
    assert sorted(preview.indexes_adopted) == sorted((VECTOR_INDEX, FULLTEXT_INDEX))
    assert (preview.documents, preview.chunks) == (len(DOCUMENTS), chunk_count)
    assert preview.document_links == chunk_count and preview.next_links == chunk_count - len(DOCUMENTS)
    tea_chunks = len(their_graph.chunks["harbour/tea.md"])
    assert (preview.documents_placed, preview.chunks_chunk_grounded) == (len(WITH_SOURCE), tea_chunks)
    assert preview.chunks_source_grounded == chunk_count - tea_chunks

    receipt = await plan.apply()

    assert (receipt.documents, receipt.chunks, receipt.documents_placed) == (len(DOCUMENTS), chunk_count, 2)
    adopted = await snapshot(store)
    assert_only_added(before, adopted)
    searched_adopted = await their_search(neo4j_settings)
    assert passages(searched_adopted) == passages(searched_before)
    assert scores(searched_adopted) == pytest.approx(scores(searched_before), rel=1e-6)
    await assert_answers_cite_checked_quotes(store, neo4j_settings, their_graph)

    undone = await plan.undo(receipt.run_id)

    assert (undone.documents, undone.chunks) == (len(DOCUMENTS), chunk_count)
    assert await snapshot(store) == before  # every label, property and relationship as neo4j-graphrag wrote it
    searched_undone = await their_search(neo4j_settings)
    assert passages(searched_undone) == passages(searched_before)
    assert scores(searched_undone) == pytest.approx(scores(searched_before), rel=1e-6)


def assert_only_added(
    before: tuple[dict[str, Any], dict[str, Any]], after: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """Apply only added: every node and link keeps its labels and every value neo4j-graphrag wrote."""
    (nodes_before, links_before), (nodes_after, links_after) = before, after
    for element, (labels, properties) in nodes_before.items():
        labels_after, properties_after = nodes_after[element]
        assert labels_after == labels
        assert {key: properties_after[key] for key in properties} == properties
    for element, (kind, start, end, properties) in links_before.items():
        kind_after, start_after, end_after, properties_after = links_after[element]
        assert (kind_after, start_after, end_after) == (kind, start, end)
        assert set(properties_after) - set(properties) == {"runId"}
    added = set(nodes_after) - set(nodes_before)
    assert [nodes_after[element][0] for element in added] == [["IngestionRun"]]
    assert set(links_after) == set(links_before)


async def assert_answers_cite_checked_quotes(
    store: Store, settings: ConnectionSettings, their_graph: TheirGraph
) -> None:
    """Our answers from the adopted graph: every citation is the source file's bytes, or the chunk's."""
    documents = await store.read("MATCH (d:Document) RETURN d.id AS id, d.path AS path", name="test.interop.docs")
    path_of = {row["id"]: row["path"] for row in documents.records}
    chunks = await store.read("MATCH (c:Chunk) RETURN c.id AS id, c.text AS text", name="test.interop.texts")
    text_of = {row["id"]: row["text"] for row in chunks.records}
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(DIMENSIONS), chat=ExtractiveChat(), layout=LAYOUT
    )
    await rag.connect(settings, neomodel=False)
    try:
        assert rag.answers is not None
        groundings = set()
        for question in QUESTIONS:
            answer = await rag.answers.answer(question)
            assert answer.answered, (question, answer.reason)
            for citation in answer.citations:
                path = path_of[citation.document_id]
                groundings.add(citation.grounding)
                if path in their_graph.sources:
                    assert citation.grounding is Grounding.SOURCE
                    source = their_graph.sources[path].read_bytes()
                    assert source[citation.start_byte : citation.end_byte].decode() == citation.quote
                else:
                    assert citation.grounding is Grounding.CHUNK
                    stored = text_of[citation.chunk_id].encode()
                    assert stored[citation.start_byte : citation.end_byte].decode() == citation.quote
                assert citation.quote in text_of[citation.chunk_id]
        assert groundings == {Grounding.SOURCE, Grounding.CHUNK}
    finally:
        await rag.close()


async def test_our_maintenance_refuses_their_graph_until_adopted_then_finds_it_healthy_and_resets_it_to_nothing(
    their_graph: TheirGraph, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    before = await snapshot(store)
    rag = GraphRag(embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(DIMENSIONS), layout=LAYOUT)
    await rag.connect(neo4j_settings, neomodel=False)
    try:
        with pytest.raises(GraphRefused) as refused:
            await rag.maintenance.reset()
        assert refused.value.code == "foreign-graph"
        assert await snapshot(store) == before  # no run of ours wrote it: refused untouched

        plan = Adoption(store).plan(LAYOUT, OFFLINE_EMBEDDING_SET, AdoptionOptions(source_files=their_graph.sources))
        await apply_steps(store, plan.prepare_steps())
        await plan.apply()
        health = await rag.maintenance.check()
        orphans = await rag.maintenance.remove_orphans()
        reset = await rag.maintenance.reset()
    finally:
        await rag.close()

    assert health.findings == ()
    assert (orphans.documents, orphans.chunks, orphans.things) == (0, 0, 0)
    assert (reset.documents, reset.chunks, reset.runs, reset.refused) == (len(DOCUMENTS), len(before[0]) - 3, 1, ())
    assert await snapshot(store) == ({}, {})


def float32(vector: list[float]) -> list[float]:
    return list(struct.unpack(f"<{len(vector)}f", struct.pack(f"<{len(vector)}f", *vector)))


async def test_neo4j_graphrag_wrote_our_hashing_vectors_and_its_own_shape(
    their_graph: TheirGraph, store: Store
) -> None:
    """What its pipeline wrote, read back: our embedder's vectors, and the shape adoption expects."""
    rows = await store.read(
        "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) "
        "RETURN d.path AS path, c.index AS index, c.text AS text, c.embedding AS embedding, "
        "labels(c) AS labels, keys(c) AS keys, keys(d) AS documentKeys",
        name="test.interop.shape",
    )
    embedder = HashingEmbedder(DIMENSIONS)
    assert len(rows.records) == sum(len(chunks) for chunks in their_graph.chunks.values())
    for row in rows.records:
        assert row["text"] == their_graph.chunks[row["path"]][row["index"]]
        # db.create.setNodeVectorProperty stores 32-bit floats: ours, rounded so, exactly.
        assert row["embedding"] == float32(embedder.embed_one(row["text"])[0])
        assert sorted(row["labels"]) == ["Chunk", "__KGBuilder__"]
        assert sorted(row["keys"]) == ["embedding", "index", "text"]  # no id, no span, no run
        assert sorted(row["documentKeys"]) == ["createdAt", "path"]
    # Its FixedSizeSplitter overlaps chunks, so adoption places each one after the previous one's start.
    for path, chunks in their_graph.chunks.items():
        assert len(chunks) > 1 and len("".join(chunks)) > len(DOCUMENTS[path])
