"""Our extraction in neo4j-graphrag's entity shape, read by neo4j-graphrag 1.22.0 itself.

graphrag-orm ingests the corpus with ``Layout.NEO4J_GRAPHRAG`` and
``generic.ONTOLOGY.with_neo4j_graphrag_entities()`` (a scripted extraction model); then
neo4j-graphrag's ``VectorCypherRetriever``, in its own venv, reads the graph through our
vector index with the retrieval query its users write (``(node)<-[:FROM_CHUNK]-(:__Entity__)``).
Reset and orphan clean-up in that shape are then checked to leave nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionReceipt
from graphrag_orm.layout import Layout
from graphrag_orm.ontologies import generic
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.sources import Source
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.integration.knowledge_support import ontology_schema, scripted
from tests.interop.corpus import DOCUMENTS, QUESTIONS, extraction_reply, things_in
from tests.interop.stack import DIMENSIONS, neo4j_graphrag

SHAPED = generic.ONTOLOGY.with_neo4j_graphrag_entities()
LAYOUT = Layout.NEO4J_GRAPHRAG
VECTOR_INDEX = LAYOUT.vector_index_name(OFFLINE_EMBEDDING_SET.vector_index_name)
SHAPE_LABELS = ("__Entity__", "__KGBuilder__")


def sources() -> list[Source]:
    return [Sources.text(path, text, "text/markdown") for path, text in DOCUMENTS.items()]


@pytest.fixture
async def rag(graph: None, store: Store, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    """A facade in neo4j-graphrag's names, extracting with the scripted model, on the suite's database."""
    facade = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(DIMENSIONS),
        chat=ExtractiveChat(),
        extraction_chat=scripted(extraction_reply),
        layout=LAYOUT,
        ontology=SHAPED,
        options=GraphRagOptions(chunking=ChunkerOptions(max_utf8_bytes=256, overlap_paragraphs=0)),
    )
    async with ontology_schema(store, SHAPED, LAYOUT):
        await facade.connect(neo4j_settings, neomodel=False)
        try:
            yield facade
        finally:
            await facade.close()


async def ingest(rag: GraphRag) -> IngestionReceipt:
    receipt = await rag.ingestion.ingest(sources())
    assert receipt.ingested == len(DOCUMENTS)
    return receipt


async def our_chunks(store: Store) -> dict[str, tuple[str, dict[str, str]]]:
    """Each chunk id -> its text and the things pointing at it (name -> kind), read by our store."""
    result = await store.read(
        "MATCH (c:Chunk) OPTIONAL MATCH (c)<-[:FROM_CHUNK]-(e:__Entity__) "
        "RETURN c.id AS id, c.text AS text, collect([e.name, labels(e)]) AS things",
        name="test.interop.chunks",
    )
    chunks: dict[str, tuple[str, dict[str, str]]] = {}
    for row in result.records:
        things = {}
        for name, labels in row["things"]:
            (kind,) = set(labels) - set(SHAPE_LABELS)
            things[name] = kind
        chunks[row["id"]] = (row["text"], things)
    return chunks


async def leftovers(store: Store) -> list[int]:
    """Nodes and relationships besides the suite's marker and migration journal."""
    result = await store.read(
        "MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:GraphRagTestDatabase "
        "OPTIONAL MATCH (n)-[r]-() RETURN count(DISTINCT n) AS nodes, count(DISTINCT r) AS links",
        name="test.interop.leftovers",
    )
    row = result.records[0]
    return [row["nodes"], row["links"]]


async def test_vector_cypher_retriever_returns_each_passage_with_exactly_the_things_we_extracted(
    rag: GraphRag, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    receipt = await ingest(rag)
    ours = await our_chunks(store)
    assert receipt.extraction is not None and receipt.extraction.mentions > 0
    # What we stored is what the scripted model said of each chunk, in the shape.
    for chunk_id, (text, things) in ours.items():
        assert things == things_in(text), chunk_id

    theirs = await neo4j_graphrag(
        {
            "command": "cypher",
            "vectorIndex": VECTOR_INDEX,
            "queries": list(QUESTIONS),
            "topK": len(ours),
            "dimensions": DIMENSIONS,
        },
        neo4j_settings,
    )

    for items in theirs["results"]:
        # top_k is every chunk: neo4j-graphrag reads each passage once, with exactly our things.
        assert sorted(item["chunkId"] for item in items) == sorted(ours)
        for item in items:
            text, things = ours[item["chunkId"]]
            assert item["text"].removesuffix("\nThings: " + ", ".join(sorted(things))) == text
            assert {entity["name"]: entity["labels"] for entity in item["entities"]} == {
                name: sorted((kind, *SHAPE_LABELS)) for name, kind in things.items()
            }
    # neo4j-graphrag counts the same things and mentions as our extraction wrote.
    items = theirs["results"][0]
    names = {entity["name"] for item in items for entity in item["entities"]}
    mentions = sum(len(item["entities"]) for item in items)
    stored = await store.read("MATCH (e:__Entity__) RETURN count(e) AS things", name="test.interop.things")
    assert len(names) == stored.records[0]["things"] == len({n for _, t in ours.values() for n in t})
    assert mentions == receipt.extraction.mentions
    # Its GraphRAG put those passages, each with its things, in the scripted model's prompt.
    assert theirs["answer"].startswith("Scripted answer")
    assert all(item["text"] in theirs["prompt"] for item in items)


async def test_orphan_clean_up_and_reset_in_that_shape_leave_nothing(
    rag: GraphRag, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    await ingest(rag)
    tea = Sources.text("harbour/tea.md", DOCUMENTS["harbour/tea.md"], "text/markdown").document_id
    # An orphan group: the tea document's node goes (as a crashed tool might leave it),
    # its chunks, their mentions and Tokyo (only mentioned there) stay behind.
    await store.execute(
        "MATCH (d:Document {id: $id}) OPTIONAL MATCH (d)-[r]-() DELETE r, d", {"id": tea}, name="test.interop.orphan"
    )
    assert await store.read("MATCH (e:__Entity__ {name: 'Tokyo'}) RETURN e", name="test.interop.tokyo")

    orphans = await rag.maintenance.remove_orphans()

    assert orphans.chunks > 0 and orphans.things >= 1 and orphans.refused == ()
    assert not (await store.read("MATCH (c:Chunk {documentId: $id}) RETURN c", {"id": tea}, name="test.tea")).records
    assert not (await store.read("MATCH (e:__Entity__ {name: 'Tokyo'}) RETURN e", name="test.interop.tokyo")).records
    theirs = await neo4j_graphrag(
        {"command": "cypher", "vectorIndex": VECTOR_INDEX, "queries": [QUESTIONS[2]], "topK": 50, "dimensions": 256},
        neo4j_settings,
    )
    assert "Tokyo" not in {entity["name"] for item in theirs["results"][0] for entity in item["entities"]}
    assert sorted(item["chunkId"] for item in theirs["results"][0]) == sorted(await our_chunks(store))

    reset = await rag.maintenance.reset()

    assert reset.documents == len(DOCUMENTS) - 1 and reset.refused == ()
    assert await leftovers(store) == [0, 0]
    theirs = await neo4j_graphrag(
        {"command": "cypher", "vectorIndex": VECTOR_INDEX, "queries": [QUESTIONS[0]], "topK": 50, "dimensions": 256},
        neo4j_settings,
    )
    assert theirs["results"] == [[]]
