"""A recorded evaluation of graph questions on the recall wiki, each answer checked through the typed classes.

The wiki (examples/recall) is ingested with its hand-written extraction, as
tests/integration/test_recall.py does. The model's replies to 18 questions (counting,
listing, multi-hop, "which documents mention X", and three the graph cannot answer) are
stored as data in tests/data/text2cypher/recall_questions.json. They were written by
hand, not recorded from a model: no live model is reachable where this suite was
written. They are replayed through the chat interface (``ScriptedChat`` reading the
question block of each request), so every answer passes the real prompt, reply reader,
gates and sandbox.

Each answer's rows are checked against the graph read another way: through neomodel's
typed classes (``Bike.nodes``, ``Bulletin.nodes.get(...)``, their fact relationships and
``mentioned_in``), never by running the same Cypher again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from neomodel import AsyncRelationshipTo, adb

from examples.recall.bikes import AFFECTED, BIKES, Bike, Bulletin, Part, Supplier, extraction_reply
from graphrag_orm.chat import ChatRequest, ScriptedChat
from graphrag_orm.chat.evidence_block import parse_question
from graphrag_orm.codes import GraphRefusal
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.facade import GraphRag
from graphrag_orm.models import Document, LexicalModel
from graphrag_orm.ontology import Entity, fact_model
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.text2cypher import GraphAnswer, Text2CypherOptions, schema_text
from tests.integration.knowledge_support import ontology_schema

ROOT = Path(__file__).resolve().parents[2]
WIKI = ROOT / "examples" / "recall" / "wiki"
CASES: list[dict[str, Any]] = json.loads(
    (ROOT / "tests" / "data" / "text2cypher" / "recall_questions.json").read_text(encoding="utf-8")
)["cases"]
KINDS: dict[str, type[Entity]] = {"Bike": Bike, "Part": Part, "Supplier": Supplier, "Bulletin": Bulletin}
Rows = list[tuple[Any, ...]]


@contextmanager
def typed_facts() -> Iterator[None]:
    """The bikes ontology's facts declared on its classes (``Bike.has_part``, ``Bulletin.covers``, ...),
    as models.for_layout declares structural edges; taken off again afterwards."""
    added: list[tuple[type[Entity], str]] = []

    def refresh(cls: type[Entity]) -> None:
        cls.__all_relationships__ = tuple(cls.defined_properties(aliases=False, properties=False).items())

    for fact in BIKES.facts:
        source, target, name = KINDS[fact.source], KINDS[fact.target], fact.type.lower()
        if (source, name) not in added:
            setattr(source, name, AsyncRelationshipTo(target, fact.type, model=fact_model(fact.type)))
            refresh(source)
            added.append((source, name))
    try:
        yield
    finally:
        for source, name in added:
            delattr(source, name)
            refresh(source)


# ------------------------------------------------------------------ the graph, read through the typed classes


async def _named(cls: type[Entity], name: str) -> Any:
    return await cls.nodes.get(name=name)


async def _names(nodes: list[Any]) -> list[str]:
    return sorted({node.name for node in nodes})


async def _parts_within(part: Any, seen: set[str]) -> set[str]:
    """``part``'s name and every part inside it, however deep."""
    if part.name in seen:
        return seen
    seen.add(part.name)
    for inner in await part.has_part.all():
        await _parts_within(inner, seen)
    return seen


async def _bike_parts(bike: Any) -> set[str]:
    found: set[str] = set()
    for part in await bike.has_part.all():
        await _parts_within(part, found)
    return found


async def count_of(kind: str) -> Rows:
    return [(len(await KINDS[kind].nodes.all()),)]


async def document_count() -> Rows:
    return [(len(await Document.nodes.all()),)]


async def names_of(kind: str) -> Rows:
    return [(name,) for name in await _names(await KINDS[kind].nodes.all())]


async def covered_parts(bulletin: str) -> Rows:
    return [(name,) for name in await _names(await (await _named(Bulletin, bulletin)).covers.all())]


async def suppliers_of(part: str) -> Rows:
    return [(name,) for name in await _names(await (await _named(Part, part)).supplied_by.all())]


async def parts_supplied_by(supplier: str) -> Rows:
    parts = [p for p in await Part.nodes.all() if supplier in await _names(await p.supplied_by.all())]
    return [(name,) for name in await _names(parts)]


async def parts_per_supplier() -> Rows:
    counts = {s.name: 0 for s in await Supplier.nodes.all()}
    for part in await Part.nodes.all():
        for supplier in await part.supplied_by.all():
            counts[supplier.name] += 1
    return sorted(counts.items())


async def direct_parts_of_part(part: str) -> Rows:
    return [(name,) for name in await _names(await (await _named(Part, part)).has_part.all())]


async def direct_parts_per_bike() -> Rows:
    return sorted([(bike.name, len(await bike.has_part.all())) for bike in await Bike.nodes.all()])


async def bikes_affected_by(bulletin: str) -> Rows:
    covered = {name for (name,) in await covered_parts(bulletin)}
    bikes = [bike for bike in await Bike.nodes.all() if covered & await _bike_parts(bike)]
    return [(name,) for name in await _names(bikes)]


async def bikes_supplied_by(supplier: str) -> Rows:
    supplied = {name for (name,) in await parts_supplied_by(supplier)}
    bikes = [bike for bike in await Bike.nodes.all() if supplied & await _bike_parts(bike)]
    return [(name,) for name in await _names(bikes)]


async def bulletins_of_supplier(supplier: str) -> Rows:
    supplied = {name for (name,) in await parts_supplied_by(supplier)}
    found = [b for b in await Bulletin.nodes.all() if supplied & set(await _names(await b.covers.all()))]
    return [(name,) for name in await _names(found)]


async def _documents_mentioning(kind: str, name: str) -> list[Any]:
    documents = {}
    for chunk in await (await _named(KINDS[kind], name)).mentioned_in.all():
        document = await chunk.document.single()
        documents[document.uid] = document
    return list(documents.values())


async def documents_mentioning(kind: str, name: str) -> Rows:
    return sorted((document.title,) for document in await _documents_mentioning(kind, name))


async def count_documents_mentioning(kind: str, name: str) -> Rows:
    return [(len(await _documents_mentioning(kind, name)),)]


ORACLES: dict[str, Callable[..., Awaitable[Rows]]] = {
    oracle.__name__: oracle
    for oracle in (
        count_of,
        document_count,
        names_of,
        covered_parts,
        suppliers_of,
        parts_supplied_by,
        parts_per_supplier,
        direct_parts_of_part,
        direct_parts_per_bike,
        bikes_affected_by,
        bikes_supplied_by,
        bulletins_of_supplier,
        documents_mentioning,
        count_documents_mentioning,
    )
}


# ------------------------------------------------------------------ the evaluation


class Replay:
    """The recorded replies, replayed by question; every request is kept to check what the model saw."""

    def __init__(self) -> None:
        self.replies = {case["question"]: json.dumps(case["reply"]) for case in CASES}
        self.chat = ScriptedChat(self.respond)

    def respond(self, request: ChatRequest) -> str:
        return self.replies[parse_question(request.messages[1].content)]


@pytest.fixture(scope="module")
def replay() -> Replay:
    return Replay()


@contextmanager
def default_layout_classes(model: LexicalModel) -> Iterator[None]:
    """neomodel inflates a node by its labels, and every layout a test process built holds a
    class labelled ``Chunk`` (the last built wins): map the lexical labels to this graph's
    layout's classes while the oracles traverse, then put the mapping back."""
    registry = adb._NODE_CLASS_REGISTRY
    saved = dict(registry)
    registry.update({frozenset(cls.inherited_labels()): cls for cls in model.node_classes})
    try:
        yield
    finally:
        registry.clear()
        registry.update(saved)


@pytest.fixture
async def recall(store: Store, graph: None, replay: Replay) -> AsyncIterator[GraphRag]:
    """The recall wiki ingested with its hand-written extraction; Text2Cypher enabled with the replay."""
    async with ontology_schema(store, BIKES):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=replay.chat,
            extraction_chat=ScriptedChat(extraction_reply),
            ontology=BIKES,
            text2cypher=Text2CypherOptions(),
        )
        rag.store.bind(store.driver, store.database)
        receipt = await rag.ingestion.ingest(Sources.folder(WIKI, base_uri="https://example.org/recall/"))
        assert receipt.failed == 0 and receipt.extraction is not None
        with typed_facts(), default_layout_classes(rag.model):
            yield rag


def test_the_cases_cover_every_kind_of_question() -> None:
    kinds = [case["kind"] for case in CASES]
    assert len(CASES) >= 15 and len({case["question"] for case in CASES}) == len(CASES)
    assert {"counting", "listing", "multi-hop", "mentions", "unanswerable"} == set(kinds)
    assert 2 <= kinds.count("unanswerable") <= 3


async def test_every_recorded_answer_matches_the_graph_read_through_the_typed_classes(
    recall: GraphRag, replay: Replay
) -> None:
    assert recall.graph is not None
    results: list[tuple[str, bool]] = []
    for case in CASES:
        answer: GraphAnswer = await recall.graph.ask(case["question"])
        request = replay.chat.calls[-1]
        assert schema_text(recall.model, BIKES).rstrip() in request.messages[1].content
        if "insufficient" in case["reply"]:
            assert answer.refusal == GraphRefusal.MODEL_DECLINED, case["id"]
            assert answer.query is None and answer.rows == ()
            results.append((case["id"], True))
            continue
        assert answer.answered, f"{case['id']}: {answer.message}"
        assert answer.query == case["reply"]["cypher"] and answer.limits_reached == ()
        expected = await ORACLES[case["oracle"]](*case["args"])
        got = [tuple(row[column] for column in answer.columns) for row in answer.rows]
        assert expected, f"{case['id']}: the typed read found nothing, so the check would prove nothing"
        results.append((case["id"], got == expected))
        assert got == expected, f"{case['id']}: rows {got} but the typed classes read {expected}"
    assert all(correct for _, correct in results) and len(results) == len(CASES)


async def test_the_multi_hop_recall_question_finds_both_affected_bikes_and_no_distractor(recall: GraphRag) -> None:
    assert recall.graph is not None
    answer = await recall.graph.ask("Which bikes are affected by SB-2026-07?")
    assert tuple(row["bike"] for row in answer.rows) == AFFECTED
    assert await bikes_affected_by("SB-2026-07") == [(bike,) for bike in AFFECTED]
