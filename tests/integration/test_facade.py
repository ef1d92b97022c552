"""The facade: wiring, the schema check at connect, and the blocking wrapper."""

from __future__ import annotations

import pytest
from neomodel import adb

from graphrag_orm import ConnectionSettings, EmbeddingSet, GraphRag, SchemaMismatch, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.chat.extractive import NO_MODEL_NOTE
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.layout import Layout
from graphrag_orm.models import Chunk, for_layout
from graphrag_orm.store import Store
from graphrag_orm.store.neomodel import attach_neomodel


def rag(embedding_set: EmbeddingSet = OFFLINE_EMBEDDING_SET) -> GraphRag:
    return GraphRag(
        embedding_set=embedding_set, embedder=HashingEmbedder(embedding_set.dimensions), chat=ExtractiveChat()
    )


async def test_connect_checks_the_vector_index_and_answers(
    graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    facade = rag()
    async with facade:
        receipt = await facade.ingestion.ingest([Sources.text("a", "Members can borrow up to twelve items at a time.")])
        assert receipt.ingested == 1
        assert facade.answers is not None
        answer = await facade.answers.answer("How many items can a member borrow?")
        assert answer.text == f"Members can borrow up to twelve items at a time.\n\n{NO_MODEL_NOTE}"
    # The suite's own connection was replaced by the facade's; reconnect it for later tests.
    await attach_neomodel(store.driver, store.database)


async def test_typed_reads_take_the_connected_facades_classes_whichever_layout_was_built_last(
    graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    facade = rag()
    async with facade:
        await facade.ingestion.ingest([Sources.text("a", "Members can borrow up to twelve items at a time.")])
        # Another layout with the same labels, built after the default one: neomodel alone would
        # read every Chunk as its class (same module and name), whose document is FROM_DOCUMENT.
        other = for_layout(Layout.NEO4J_GRAPHRAG)
        assert other.chunk is not facade.model.chunk
        chunks = await Chunk.nodes.all()
        assert chunks and {type(chunk) for chunk in chunks} == {facade.model.chunk}
        document = await chunks[0].document.single()
        assert type(document) is facade.model.document and document.source_uri == "text:a"
    # Closing the facade takes its mappings with it: nothing of it is left in neomodel's registry.
    assert not any(cls in adb._NODE_CLASS_REGISTRY.values() for cls in facade.model.node_classes)
    await attach_neomodel(store.driver, store.database)


async def test_connect_refuses_other_dimensions(graph: None, store: Store, neo4j_settings: ConnectionSettings) -> None:
    with pytest.raises(SchemaMismatch) as refused:
        await rag(EmbeddingSet(model="other", dimensions=64)).connect(neo4j_settings)
    assert refused.value.code == "embedding-dimensions"
    await attach_neomodel(store.driver, store.database)


async def test_connect_refuses_a_missing_vector_index(
    graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    custom = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(256),
        layout=Layout.DEFAULT.replace(chunk_label="Passage2", schema_prefix="other"),
    )
    with pytest.raises(SchemaMismatch) as refused:
        await custom.connect(neo4j_settings)
    assert refused.value.code == "schema-missing"
    await attach_neomodel(store.driver, store.database)
    rows, _ = await adb.cypher_query("RETURN 1")
    assert rows == [[1]]


async def test_connect_refuses_a_vector_index_with_the_right_dimensions_under_another_name(
    graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    # Same dimensions, another model: the graph's index is not the one this set's retrieval would search.
    other = EmbeddingSet(model="another-model", dimensions=OFFLINE_EMBEDDING_SET.dimensions)
    with pytest.raises(SchemaMismatch) as refused:
        await rag(other).connect(neo4j_settings)
    assert refused.value.code == "equivalent-schema"
    expected = Layout.DEFAULT.vector_index_name(other.vector_index_name)
    existing = Layout.DEFAULT.vector_index_name(OFFLINE_EMBEDDING_SET.vector_index_name)
    assert expected != existing
    assert expected in refused.value.message and existing in refused.value.message
    assert "\n" not in refused.value.message
    await attach_neomodel(store.driver, store.database)
