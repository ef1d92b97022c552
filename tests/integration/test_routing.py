"""Reads go out as READ and writes as WRITE over a ``neo4j://`` routing driver.

On a cluster a routing driver sends READ transactions to secondaries and WRITE ones to
the leader, so a read service that opens a WRITE session loads the leader and a write
in a READ session fails. The suite's server is one instance; the ``neo4j://`` scheme
works against it with the same host and port, and the store's statement hook sees the
access mode each statement was sent with. A read after a write on the same store must
see the write: the routing driver's sessions share a bookmark manager.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import neo4j
import pytest

from graphrag_orm import GraphRag
from graphrag_orm.answers import AnswersService
from graphrag_orm.chat import ChatRequest, ExtractiveChat, ScriptedChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evaluation import EvalCase, Evaluator, StoredChunks
from graphrag_orm.maintenance.reports import ResetScope
from graphrag_orm.ontologies import novel
from graphrag_orm.resolution import Resolution
from graphrag_orm.sources import Sources
from graphrag_orm.store import AccessMode, StatementEvent, Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.text2cypher import Text2CypherOptions
from tests.integration.knowledge_support import entity, fact, ontology_schema

# Fiction written for these tests.
TEXTS = {
    "wood-1": "Alice met the Caterpillar in the Wood. The Caterpillar sat on a mushroom.",
    "wood-2": "Caterpillar smoked in the Wood. Alice argued with Caterpillar about her size.",
}
LATER = "The Duchess kept a pig in her kitchen in the Wood."


def extraction(passage: str) -> dict[str, Any]:
    """Two names for one character, so resolution has a pair to suggest."""
    if passage.startswith("Alice met"):
        return {
            "entities": [
                entity("Character", "Alice"),
                entity("Character", "the Caterpillar", mentions=["the Caterpillar", "The Caterpillar"]),
                entity("Place", "Wood"),
            ],
            "relationships": [fact("the Caterpillar", "LOCATED_IN", "Wood")],
        }
    if passage.startswith("Caterpillar smoked"):
        return {
            "entities": [
                entity("Character", "Caterpillar", mentions=["Caterpillar", "Caterpillar"]),
                entity("Character", "Alice"),
                entity("Place", "Wood"),
            ],
            "relationships": [fact("Caterpillar", "LOCATED_IN", "Wood")],
        }
    return {"entities": [entity("Character", "Duchess")], "relationships": []}


def reply(request: ChatRequest) -> str:
    """Extraction requests get the passage's entities; a Text2Cypher request gets one read query."""
    content = request.messages[1].content if len(request.messages) > 1 else ""
    if content.startswith("Passage:\n"):
        return json.dumps(extraction(content.removeprefix("Passage:\n")))
    return json.dumps({"cypher": "MATCH (c:Character) RETURN c.name AS name ORDER BY name"})


def routing_settings(settings: ConnectionSettings) -> ConnectionSettings:
    """The suite's server, addressed with the routing scheme."""
    parts = urlsplit(settings.uri)
    return dataclasses.replace(settings, uri=urlunsplit(("neo4j", parts.netloc, "", "", "")))


class Statements:
    """Every statement the facade's store sends, as its hook sees it."""

    def __init__(self, store: Store) -> None:
        self.events: list[StatementEvent] = []
        self.remove = store.add_hook(self.events.append)

    async def during(self, call: Awaitable[Any]) -> tuple[Any, list[StatementEvent]]:
        start = len(self.events)
        value = await call
        return value, self.events[start:]


def modes(events: list[StatementEvent]) -> set[tuple[str, AccessMode]]:
    return {(event.name, event.mode) for event in events}


def assert_all_read(service: str, events: list[StatementEvent]) -> None:
    assert events, f"{service} sent no statement"
    writes = sorted(name for name, mode in modes(events) if mode is not AccessMode.READ)
    assert writes == [], f"{service} sent statements in WRITE mode: {writes}"


def assert_writes_as_write(service: str, events: list[StatementEvent]) -> None:
    changed = [event for event in events if any(event.counters.values())]
    assert changed, f"{service} wrote nothing"
    assert {event.mode for event in changed} == {AccessMode.WRITE}, sorted(modes(changed))


@pytest.fixture
async def routed(store: Store, graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    """A facade on a ``neo4j://`` driver of its own, with the novel ontology and two documents."""
    chat = ScriptedChat(reply)
    async with ontology_schema(store, novel.ONTOLOGY):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=chat,
            ontology=novel.ONTOLOGY,
            text2cypher=Text2CypherOptions(),
        )
        await rag.connect(routing_settings(neo4j_settings), neomodel=False)
        try:
            receipt = await rag.ingestion.ingest([Sources.text(name, text) for name, text in TEXTS.items()])
            assert receipt.failed == 0, receipt.documents
            yield rag
        finally:
            await rag.close()


async def test_the_routing_driver_shares_bookmarks(routed: GraphRag) -> None:
    assert isinstance(routed.store.driver, neo4j.AsyncNeo4jDriver)
    assert routed.store.uses_bookmarks


async def test_every_read_service_sends_its_statements_as_read(routed: GraphRag) -> None:
    seen = Statements(routed.store)
    question = "Where did Alice meet the Caterpillar?"
    documents = await routed.catalog.documents()
    document_id = documents.documents[0].id
    answers = AnswersService(routed.retriever, ExtractiveChat())
    graph = routed.graph
    assert graph is not None
    resolution = Resolution(routed)
    evaluator = Evaluator(
        retriever=routed.retriever, answerer=answers, stored=StoredChunks(routed.store, routed.model), k=3
    )
    case = EvalCase(id="wood", question=question, answerable=True, required_phrases=("the Wood",))

    async def streamed() -> list[Any]:
        return [update async for update in answers.stream(question)]

    # Each read is started only when its turn comes, so its statements are told apart.
    reads: dict[str, Callable[[], Awaitable[Any]]] = {
        "retrieval": lambda: routed.retriever.retrieve(question),
        "answers": lambda: answers.answer(question),
        "answers stream": streamed,
        "health report": routed.maintenance.check,
        "ingestion preview": lambda: routed.ingestion.preview(
            [Sources.text("later", LATER), Sources.text("wood-1", "x")]
        ),
        "catalog documents": routed.catalog.documents,
        "catalog runs": routed.catalog.runs,
        "catalog document": lambda: routed.catalog.document(document_id),
        "catalog resolve": lambda: routed.catalog.resolve(document_id[:12]),
        "removal preview": lambda: routed.maintenance.preview(ResetScope(document_ids=(document_id,))),
        "reset preview": routed.maintenance.preview,
        "text2cypher": lambda: graph.ask("Which characters are there?"),
        "resolution suggest": resolution.suggest,
        "evaluation": lambda: evaluator.run([case]),
    }
    results: dict[str, Any] = {}
    for service, call in reads.items():
        results[service], events = await seen.during(call())
        assert_all_read(service, events)
    merge = resolution.plan(results["resolution suggest"].suggestions[:1])
    results["merge preview"], events = await seen.during(merge.preview())
    assert_all_read("merge preview", events)
    seen.remove()
    # The calls did their work (a read that returned nothing would prove little).
    assert results["answers"].citations, results["answers"]
    assert results["answers stream"], "the stream sent nothing"
    assert results["catalog resolve"] == document_id
    assert results["text2cypher"].rows, results["text2cypher"]
    assert results["resolution suggest"].suggestions, results["resolution suggest"]
    assert results["merge preview"].merges
    assert results["removal preview"].documents == 1
    assert len(results["evaluation"].cases) == 1


async def test_writes_go_out_as_write_and_a_later_read_sees_them(routed: GraphRag) -> None:
    seen = Statements(routed.store)
    receipt, events = await seen.during(routed.ingestion.ingest([Sources.text("later", LATER)]))
    assert receipt.ingested == 1
    assert_writes_as_write("ingestion", events)
    (document_id,) = [document.document_id for document in receipt.documents]

    # Read right after the write, on the routing driver: the bookmark makes the write visible.
    detail, events = await seen.during(routed.catalog.document(document_id))
    assert detail.chunk_count == len(detail.chunks) == 1
    assert_all_read("catalog after ingestion", events)
    found, _ = await seen.during(routed.retriever.retrieve("Who kept a pig in her kitchen?"))
    assert any(item.document_id == document_id for item in found.items)

    report, events = await seen.during(routed.maintenance.remove_source(document_id))
    assert report.documents == 1
    assert_writes_as_write("removal", events)
    listed, _ = await seen.during(routed.catalog.documents())
    assert document_id not in {document.id for document in listed.documents}

    resolution = Resolution(routed)
    before = (await resolution.suggest()).suggestions
    runs, events = await seen.during(resolution.plan(before[:1]).apply())
    assert len(runs) == 1
    assert_writes_as_write("resolution merge", events)
    after, _ = await seen.during(resolution.suggest())
    assert before[0] not in after.suggestions
    seen.remove()
