"""Maintenance with the knowledge graph: removal takes documents off facts, orphans go, health sees both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.recall.bikes import BIKES, extraction_reply
from graphrag_orm import GraphRag, HealthFinding, Sources
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.sources import Source
from graphrag_orm.store import Store
from tests.integration.knowledge_support import ontology_schema

WIKI = Path(__file__).resolve().parents[2] / "examples" / "recall" / "wiki"
PAGES = ("sb-2026-07", "kestrel", "bk-7", "trail-5", "city-3")


def wiki() -> list[Source]:
    return [Sources.file(WIKI / f"{name}.md", uri=f"https://example.org/recall/{name}") for name in PAGES]


@pytest.fixture
async def rag(store: Store, graph: None) -> Any:
    async with ontology_schema(store, BIKES):
        facade = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(extraction_reply),
            ontology=BIKES,
        )
        # The suite's driver, as connect() would bind its own.
        facade.store.bind(store.driver, store.database)
        receipt = await facade.ingestion.ingest(wiki())
        assert receipt.failed == 0
        yield facade


async def one(rag: GraphRag, query: str, **params: Any) -> Any:
    """The one column of the first row, or None, read through the facade's store."""
    result = await rag.store.read(query, params)
    return result.records[0][result.keys[0]] if result.records else None


async def test_removing_a_document_takes_it_off_its_facts_and_deletes_facts_only_it_stated(rag: GraphRag) -> None:
    bulletin, kestrel = wiki()[0].document_id, wiki()[1].document_id
    supplied = "MATCH (:Part {name: 'BC-310'})-[f:SUPPLIED_BY]->() RETURN f.documentIds"
    assert await one(rag, supplied) == sorted([bulletin, kestrel])
    report = await rag.maintenance.remove_source(bulletin)
    assert report.documents == 1 and report.facts >= 1 and report.facts_updated >= 1
    assert await one(rag, supplied) == [kestrel], "a fact another document states keeps that document"
    assert await one(rag, "MATCH ()-[f:COVERS]->() RETURN count(f)") == 0, "a fact only it stated is deleted"
    assert await one(rag, "MATCH (:Document {id: $d}) RETURN count(*)", d=bulletin) == 0
    assert await one(rag, "MATCH ()-[m:MENTIONED_IN {documentId: $d}]->() RETURN count(m)", d=bulletin) == 0
    health = await rag.maintenance.check()
    codes = {finding.code for finding in health.findings}
    assert HealthFinding.ORPHAN_ENTITIES in codes  # the bulletin SB-2026-07 is named nowhere else
    assert HealthFinding.STALE_FACTS not in codes
    orphans = await rag.maintenance.remove_orphans()
    assert orphans.things >= 1
    assert await one(rag, "MATCH (b:Bulletin) RETURN count(b)") == 0
    assert (await rag.maintenance.check()).healthy


async def test_a_fact_listing_a_document_that_is_gone_is_a_stale_fact(rag: GraphRag) -> None:
    await rag.store.execute("MATCH ()-[f:HAS_PART]->() WITH f LIMIT 1 SET f.documentIds = f.documentIds + 'gone'")
    health = await rag.maintenance.check()
    stale = [f for f in health.findings if f.code == HealthFinding.STALE_FACTS]
    assert stale and stale[0].count == 1


async def test_reset_of_everything_removes_the_knowledge_graph_too(rag: GraphRag) -> None:
    report = await rag.maintenance.reset(ResetScope())
    assert report.documents == len(PAGES)
    assert await one(rag, "MATCH (n) WHERE n:Bike OR n:Part OR n:Supplier OR n:Bulletin RETURN count(n)") == 0
    assert await one(rag, "MATCH ()-[r]->() RETURN count(r)") == 0
    assert (await rag.maintenance.check()).healthy


async def test_reingesting_a_changed_document_replaces_its_knowledge(rag: GraphRag) -> None:
    trail = wiki()[3]
    assert trail.path is not None

    def reply(request: Any) -> str:
        return extraction_reply(request).replace("BK-7", "BK-9")

    # The same URI with changed bytes: the spec sheet now names kit BK-9.
    edited = trail.path.parent.parent / "edited-trail-5.md"
    edited.write_text(trail.path.read_text().replace("brake kit BK-7", "brake kit BK-9"))
    rag.ingestion.extractor.chat = ScriptedChat(reply)  # type: ignore[union-attr]
    try:
        receipt = await rag.ingestion.ingest([Sources.file(edited, uri=trail.source_uri)])
    finally:
        edited.unlink()
    assert receipt.documents[0].status.value == "Ingested"
    assert await one(rag, "MATCH (:Bike {name: 'Trail 5'})-[:HAS_PART]->(p {name: 'BK-7'}) RETURN count(p)") == 0
    assert await one(rag, "MATCH (:Bike {name: 'Trail 5'})-[:HAS_PART]->(p {name: 'BK-9'}) RETURN count(p)") == 1
