"""Scoped vector search filtered inside the index (Neo4j 2026 ``SEARCH ... WHERE``), against the real server.

A chain whose second revision declares ``documentId`` on the chunk vector index: the
engine applies it (drop, then create: the index is rebuilt from the chunks already
there), sees the difference, and retrieval inside a document scope switches from the
exact and over-fetch strategies to in-index filtering with the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evidence import Evidence, Route, ScopeStrategy
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, Migrator, check_vector_index, initial_revision, next_revision, write_revision
from graphrag_orm.migrate.compare import check_schema
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import CypherScope, DocumentsScope, RetrievalOptions, Retriever
from graphrag_orm.schema import Schema
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from graphrag_orm.store.introspection import read_live_schema

MODEL = for_layout(Layout.DEFAULT)
DIMS = OFFLINE_EMBEDDING_SET.dimensions
INDEX = Schema.vector_index(Layout.DEFAULT, OFFLINE_EMBEDDING_SET).name
TOPICS = ["brake caliper recall", "tyre pressure", "espresso in Zurich", "chain lubrication", "saddle height"]
QUESTIONS = ["which caliper is recalled", "how much tyre pressure", "lubricate the chain", "espresso"]
VECTOR_ONLY = RetrievalOptions(
    routes=frozenset({Route.VECTOR}), candidates_per_route=4, max_items=4, neighbour_chunks=0
)


def _sources() -> list[Source]:
    """Twelve documents of five paragraphs each, the topics mixed differently in each."""
    items = []
    for n in range(12):
        paragraphs = [
            f"Note {n}.{p}: about {TOPICS[(n + p) % len(TOPICS)]} and {TOPICS[(n * p) % len(TOPICS)]}."
            for p in range(5)
        ]
        items.append(Sources.text(f"doc-{n:02d}", "\n\n".join(paragraphs), media_type="text/plain"))
    return items


def _chunks(evidence: Evidence) -> list[str]:
    return [item.chunk_id for item in evidence.items]


def _strategy(evidence: Evidence) -> ScopeStrategy:
    assert evidence.scope is not None
    return {r.route: r.strategy for r in evidence.scope.routes}[Route.VECTOR]


def _retriever(store: Store) -> Retriever:
    return Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))


@pytest.fixture
async def chain(bare_database: None, store: Store, tmp_path: Path) -> Path:
    """A chain at its first revision (no filter properties), applied, and the corpus ingested."""
    folder = tmp_path / "chain"
    write_revision(folder, initial_revision(Layout.DEFAULT, OFFLINE_EMBEDDING_SET, revision="0001_app"))
    await Migrator(store, Chain.load(folder)).apply()
    ingestion = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(DIMS),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=64, overlap_paragraphs=0)),
    )
    receipt = await ingestion.ingest(_sources())
    assert receipt.failed == 0
    return folder


async def _declare_document_filter(store: Store, folder: Path) -> None:
    made = next_revision(
        Chain.load(folder),
        Layout.DEFAULT,
        OFFLINE_EMBEDDING_SET,
        revision="0002_vector_filter",
        message="filter the vector index by document",
        vector_filter=("documentId",),
    )
    assert made is not None
    write_revision(folder, made)
    report = await Migrator(store, Chain.load(folder)).apply()
    assert report.applied == ("0002_vector_filter",)


async def test_the_revision_rebuilds_the_index_with_the_filter_and_the_engine_sees_it(
    chain: Path, store: Store
) -> None:
    plain = Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET)
    assert (await check_schema(store, plain)).ok
    await _declare_document_filter(store, chain)

    live = (await read_live_schema(store))[INDEX]
    assert live.signature == ("VECTOR", ("Chunk",), ("embedding", "documentId")) and live.state == "ONLINE"
    assert (await Migrator(store, Chain.load(chain)).check()).ok
    different = (await check_schema(store, plain)).different
    assert [d.name for d in different] == [INDEX]
    await check_vector_index(store, Layout.DEFAULT, OFFLINE_EMBEDDING_SET)  # connect still accepts it
    # The rebuilt index holds the chunks ingested before it: unscoped search finds them.
    assert len((await _retriever(store).retrieve("tyre pressure", VECTOR_ONLY)).items) == 4


async def test_a_document_scope_filters_inside_the_index_with_the_exact_items(chain: Path, store: Store) -> None:
    before = _retriever(store)
    documents = tuple(s.document_id for s in _sources()[3:6])
    scoped = VECTOR_ONLY.with_scope(DocumentsScope(document_ids=documents))
    exact, over_fetch = {}, {}
    for question in QUESTIONS:
        found = await before.retrieve(question, scoped)
        assert _strategy(found) == ScopeStrategy.EXACT  # no declared property: today's strategies, named
        assert {item.document_id for item in found.items} <= set(documents)
        exact[question] = _chunks(found)
        fetched = await before.retrieve(question, scoped.model_copy(update={"scope_exact_chunks": 1}))
        assert _strategy(fetched) == ScopeStrategy.OVER_FETCH
        over_fetch[question] = _chunks(fetched)

    await _declare_document_filter(store, chain)
    after = _retriever(store)
    for question in QUESTIONS:
        # A scope small enough to score exactly stays exact: the index's search is approximate.
        found = await after.retrieve(question, scoped)
        assert _strategy(found) == ScopeStrategy.EXACT and _chunks(found) == exact[question]
        # A larger one is filtered inside the index instead of over-fetched.
        large = await after.retrieve(question, scoped.model_copy(update={"scope_exact_chunks": 1}))
        assert _strategy(large) == ScopeStrategy.IN_INDEX and _chunks(large) == exact[question], question
        assert {item.document_id for item in large.items} <= set(documents)
    assert all(len(chunks) == 4 for chunks in exact.values())
    # The trace in JSON names the strategy.
    hybrid = await after.retrieve(
        "tyre pressure", RetrievalOptions(scope=DocumentsScope(document_ids=documents), scope_exact_chunks=1)
    )
    assert '"strategy":"in-index"' in hybrid.model_dump_json(by_alias=True)
    assert {r.route: r.strategy for r in hybrid.scope.routes if hybrid.scope} == {
        Route.VECTOR: ScopeStrategy.IN_INDEX,
        Route.FULL_TEXT: ScopeStrategy.OVER_FETCH,
    }
    # The declared properties were read once per resolver, at its first scope, and kept.
    assert after.scopes._index_filter == ("documentId",)
    assert before.scopes._index_filter == ()


async def test_ranged_and_empty_scopes_keep_their_strategies(chain: Path, store: Store) -> None:
    await _declare_document_filter(store, chain)
    retriever = _retriever(store)
    empty = await retriever.retrieve("espresso", VECTOR_ONLY.with_scope(DocumentsScope(document_ids=())))
    assert empty.items == () and _strategy(empty) == ScopeStrategy.EMPTY
    missing = await retriever.retrieve("espresso", VECTOR_ONLY.with_scope(DocumentsScope(document_ids=("nope",))))
    assert missing.items == () and _strategy(missing) == ScopeStrategy.EMPTY
    document = _sources()[4].document_id
    ranges = CypherScope(
        cypher="MATCH (c:Chunk {documentId: $doc}) WHERE c.order < 3 "
        "RETURN c.documentId AS documentId, c.startByte AS startByte, c.endByte AS endByte",
        parameters={"doc": document},
    )
    ranged = await retriever.retrieve("espresso", VECTOR_ONLY.with_scope(ranges))
    assert _strategy(ranged) == ScopeStrategy.EXACT  # byte ranges: the index filters by document only
    assert ranged.items and all(item.document_id == document for item in ranged.items)
    whole = CypherScope(cypher="MATCH (d:Document {id: $doc}) RETURN d.id AS documentId", parameters={"doc": document})
    found = await retriever.retrieve(
        "espresso", VECTOR_ONLY.with_scope(whole).model_copy(update={"scope_exact_chunks": 1})
    )
    assert _strategy(found) == ScopeStrategy.IN_INDEX
    assert found.items and all(item.document_id == document for item in found.items)
