"""The catalog's reads that the endpoints use: documents among given ids, a document's grounding."""

from __future__ import annotations

from graphrag_orm.catalog import CatalogService
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evidence import GROUNDING_PROPERTY, Grounding
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store

MODEL = for_layout(Layout.DEFAULT)


async def test_documents_among_ids_lists_and_counts_only_stored_ones_by_source_uri(graph: None, store: Store) -> None:
    sources = [Sources.text(f"catalog/{name}", f"# {name}\n\nText of {name}.\n", "text/markdown") for name in "cab"]
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    assert (await ingestion.ingest(sources)).failed == 0
    catalog = CatalogService(store, MODEL)
    ids = [source.document_id for source in sources]
    listed = await catalog.documents(1, among=[ids[0], ids[1], "0" * 64])
    # Two of the three ids are stored; the first by source URI is catalog/a.
    assert listed.total == 2 and listed.more == 1
    assert [d.source_uri for d in listed.documents] == ["text:catalog/a"]
    assert listed.documents[0].chunks >= 1
    assert [(limit.name, limit.value) for limit in listed.limits_reached] == [("MaxListed", 1)]
    everything = await catalog.documents(10)
    assert everything.total == 3
    assert (await catalog.documents(10, among=[])).total == 0


async def test_grounding_is_chunk_when_a_chunk_is_grounded_in_its_own_text_only(graph: None, store: Store) -> None:
    source = Sources.text("catalog/grounded", "# Grounded\n\nSome text.\n", "text/markdown")
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    assert (await ingestion.ingest([source])).failed == 0
    catalog = CatalogService(store, MODEL)
    assert await catalog.grounding(source.document_id) is Grounding.SOURCE
    await store.execute(
        f"MATCH (c:Chunk {{documentId: $id}}) WITH c LIMIT 1 SET c.{GROUNDING_PROPERTY} = $chunk",
        {"id": source.document_id, "chunk": Grounding.CHUNK.value},
    )
    assert await catalog.grounding(source.document_id) is Grounding.CHUNK
