"""Communities over the recall wiki's knowledge graph, written to and read from the real Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.recall.bikes import BIKES, extraction_reply
from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.codes import LimitName
from graphrag_orm.communities import CommunityOptions, CommunityService
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.store import Store
from tests.integration.knowledge_support import ontology_schema

WIKI = Path(__file__).resolve().parents[2] / "examples" / "recall" / "wiki"


@pytest.fixture
async def rag(store: Store, graph: None) -> Any:
    async with ontology_schema(store, BIKES):
        facade = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(extraction_reply),
            ontology=BIKES,
        )
        facade.store.bind(store.driver, store.database)
        pages = sorted(WIKI.glob("*.md"))
        receipt = await facade.ingestion.ingest(
            [Sources.file(p, uri=f"https://example.org/recall/{p.stem}") for p in pages]
        )
        assert receipt.failed == 0
        yield facade


async def rows(rag: GraphRag, query: str, **params: Any) -> list[dict[str, Any]]:
    return list(await rag.store.read(query, params))


async def test_a_build_places_every_thing_of_a_fact_once_per_level_and_two_builds_agree(rag: GraphRag) -> None:
    service = CommunityService(rag.store, BIKES)
    built = await service.build()
    assert built.communities > 0 and built.facts_read > 0 and built.limits_reached == ()
    assert sum(built.per_level) == built.communities
    # Every end of a fact is a member of exactly one level-0 community.
    ends = await rows(
        rag,
        f"MATCH (a)-[f:{'|'.join(BIKES.fact_types)}]->(b) WHERE a <> b "
        "UNWIND [a, b] AS t WITH DISTINCT t "
        "RETURN t.id AS id, COUNT { (t)-[:IN_COMMUNITY]->(:Community {level: 0}) } AS homes",
    )
    assert ends and all(row["homes"] == 1 for row in ends)
    stored = await service.list()
    assert len(stored.communities) == built.communities
    for community in stored.communities:
        members = await service.members(community.id)
        assert len(members) == community.size
    first = [(c.id, c.fingerprint, c.parent_id) for c in stored.communities]
    again = await service.build()
    assert again.removed == built.communities and again.build_id != built.build_id
    assert [(c.id, c.fingerprint, c.parent_id) for c in (await service.list()).communities] == first


async def test_the_facts_read_are_bounded_and_the_bound_reported(rag: GraphRag) -> None:
    built = await CommunityService(rag.store, BIKES).build(CommunityOptions(max_facts=2))
    assert built.facts_read == 2
    assert [limit.name for limit in built.limits_reached] == [LimitName.COMMUNITY_FACTS]


async def test_the_listing_is_bounded(rag: GraphRag) -> None:
    service = CommunityService(rag.store, BIKES)
    built = await service.build()
    assert built.communities >= 2
    listing = await service.list(limit=1)
    assert len(listing.communities) == 1 and listing.limits_reached[0].name == LimitName.MAX_LISTED


async def test_a_reset_of_everything_removes_every_community(rag: GraphRag) -> None:
    built = await CommunityService(rag.store, BIKES).build()
    assert built.communities > 0
    report = await rag.maintenance.reset()
    assert report.communities == built.communities
    assert await rows(rag, "MATCH (c:Community) RETURN c.id AS id") == []


async def test_removing_a_document_after_a_build_removes_its_orphan_things_with_their_places(rag: GraphRag) -> None:
    service = CommunityService(rag.store, BIKES)
    await service.build()
    placed = await rows(rag, "MATCH (t)-[p:IN_COMMUNITY]->() RETURN count(p) AS n")
    # A document that alone mentions a placed thing: removing it orphans that thing.
    (alone,) = await rows(
        rag,
        "MATCH (t)-[:IN_COMMUNITY]->() WITH DISTINCT t MATCH (t)-[m:MENTIONED_IN]->() "
        "WITH t, collect(DISTINCT m.documentId) AS documents WHERE size(documents) = 1 "
        "RETURN documents[0] AS document ORDER BY document LIMIT 1",
    )
    assert (await rag.maintenance.remove_source(alone["document"])).documents == 1
    assert (await rag.maintenance.remove_orphans()).things >= 1, "the orphan goes, with its places"
    after = await rows(rag, "MATCH (t)-[p:IN_COMMUNITY]->() RETURN count(p) AS n")
    assert after[0]["n"] < placed[0]["n"]
    assert (await service.build()).communities > 0
