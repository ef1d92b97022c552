"""Retrieval against the real Neo4j: routes, fusion, budget, context, scope, provenance, bad questions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, QueryRefused
from graphrag_orm.evidence import Route, ScopeStrategy
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import (
    CypherExpansion,
    CypherScope,
    DocumentFilter,
    DocumentsScope,
    MetadataScope,
    QuestionRefused,
    RetrievalFailed,
    RetrievalOptions,
    Retriever,
    Retrievers,
    ScopeError,
    SectionsScope,
)
from graphrag_orm.retrieval.options import Fusion
from graphrag_orm.sources import Source, SourceMetadata, Sources
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_store
from tests.database import TEST_PORT

MODEL = for_layout(Layout.DEFAULT)
DIMS = OFFLINE_EMBEDDING_SET.dimensions

DOCS = {
    "recall": "# Recall notice\n\nThe BC-310 brake caliper is recalled: its piston can seize.\n\n"
    "## Bikes\n\nThe City 3 uses the BC-310 caliper.\n\n## Supplier\n\nAcme Components supplied the caliper.\n",
    "tyres": "# Tyres\n\nThe Trail 5 rides on 2.4 inch tyres.\n\nTyre pressure depends on rider weight.\n",
    "café": "# Café\n\nÉmile sells espresso in Zürich ☕ every morning.\n\nThe café closes at noon.\n",
}


def sources() -> list[Source]:
    publishers = {"recall": "Safety Office", "tyres": "Workshop", "café": "Workshop"}
    return [
        Sources.text(
            name,
            text,
            media_type="text/markdown",
            metadata=SourceMetadata(publisher=publishers[name], published=f"2026-0{i + 1}-01"),
        )
        for i, (name, text) in enumerate(DOCS.items())
    ]


@pytest.fixture
async def corpus(graph: None, store: Store) -> list[Source]:
    items = sources()
    ingestion = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(DIMS),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=96, overlap_paragraphs=0)),
    )
    receipt = await ingestion.ingest(items)
    assert receipt.failed == 0
    return items


@pytest.fixture
def retriever(store: Store) -> Retriever:
    return Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))


#: Reciprocal rank fusion alone, over a fixed 20 candidates a route: the fusion these tests redo by hand.
RANK_FUSION: dict[str, Any] = {"fusion": Fusion.RECIPROCAL_RANK, "shared_votes": False, "candidates_per_route": 20}


async def test_hybrid_retrieval_fuses_both_routes_by_rank(corpus: list[Source], retriever: Retriever) -> None:
    evidence = await retriever.retrieve("Which caliper is recalled?", RetrievalOptions(**RANK_FUSION))
    top = evidence.items[0]
    assert "recalled" in top.text
    routes = {rank.route for rank in top.routes}
    assert routes == {Route.VECTOR, Route.FULL_TEXT}
    for item in evidence.items:
        assert item.score == pytest.approx(sum(1.0 / (60 + r.rank) for r in item.routes))
        assert all(r.rank_score == pytest.approx(1.0 / (60 + r.rank)) for r in item.routes)
    scores = [(-item.score, item.chunk_id) for item in evidence.items]
    assert scores == sorted(scores), "rank order, ties by chunk id"
    assert evidence.provenance is not None
    assert evidence.provenance.embedding_set_id == OFFLINE_EMBEDDING_SET.id
    assert evidence.provenance.server_version.startswith("2026.")
    assert evidence.provenance.indexes == (
        Layout.DEFAULT.vector_index_name(OFFLINE_EMBEDDING_SET.vector_index_name),
        "graphrag_chunk_text",
    )


async def test_item_text_is_exactly_the_stored_span(corpus: list[Source], retriever: Retriever) -> None:
    evidence = await retriever.retrieve("Émile espresso Zürich")
    documents = {s.document_id: s.text for s in corpus}
    for item in evidence.items:
        utf8 = (documents[item.document_id] or "").encode()
        assert item.text.encode() == utf8[item.start_byte : item.end_byte]


async def test_retrieval_reads_no_embeddings(corpus: list[Source], retriever: Retriever) -> None:
    evidence = await retriever.retrieve("tyre pressure")
    dumped = evidence.model_dump_json()
    assert '"embedding"' not in dumped
    assert all(len(item.model_dump()) < 20 for item in evidence.items)


async def test_the_budget_cuts_at_a_code_point_and_reports_what_it_left_out(
    corpus: list[Source], retriever: Retriever
) -> None:
    options = RetrievalOptions(max_utf8_bytes=64, max_items=3)
    evidence = await retriever.retrieve("Émile sells espresso in Zürich café", options)
    assert evidence.utf8_bytes <= 64
    assert sum(len(item.text.encode()) + len((item.title or "").encode()) for item in evidence.items) == (
        evidence.utf8_bytes
    )
    last = evidence.items[-1]
    assert last.end_byte - last.start_byte == len(last.text.encode())
    names = {limit.name for limit in evidence.limits_reached}
    assert "MaxUtf8Bytes" in names or "MaxItems" in names
    assert evidence.omitted_items > 0


async def test_max_items_is_reported(corpus: list[Source], retriever: Retriever) -> None:
    evidence = await retriever.retrieve("the", RetrievalOptions(max_items=1, neighbour_chunks=0))
    assert len(evidence.items) == 1
    assert ("MaxItems", 1) in [(lim.name, lim.value) for lim in evidence.limits_reached]
    assert evidence.omitted_items >= 1


async def test_neighbours_are_context_never_items(corpus: list[Source], retriever: Retriever) -> None:
    evidence = await retriever.retrieve("Acme supplied", RetrievalOptions(max_items=1, neighbour_chunks=1))
    item_ids = {item.chunk_id for item in evidence.items}
    assert evidence.context, "the supplier chunk has a neighbour"
    assert all(c.reason == "neighbour" and c.chunk_id not in item_ids for c in evidence.context)


async def test_a_cypher_expansion_runs_read_only_and_is_bounded(
    corpus: list[Source], retriever: Retriever, store: Store
) -> None:
    options = Retrievers.hybrid_cypher(
        "UNWIND $chunkIds AS id MATCH (c:Chunk {id: id})-[:IN_DOCUMENT]->(d:Document) "
        "RETURN id AS chunkId, d.publisher AS publisher, c AS chunk"
    ).model_copy(update={"max_items": 2})
    evidence = await retriever.retrieve("caliper", options)
    expansions = [c for c in evidence.context if c.reason == "cypher-expansion"]
    assert len(expansions) == 2
    assert "Safety Office" in expansions[0].text and '"embedding"' not in expansions[0].text

    vector = Retrievers.hybrid_cypher("UNWIND $chunkIds AS id MATCH (c:Chunk {id: id}) RETURN c.embedding AS e")
    with pytest.raises(RetrievalFailed) as unreadable:
        await retriever.retrieve("caliper", vector)
    assert unreadable.value.code == "vector-not-readable"

    writing = Retrievers.vector_cypher("CREATE (:Intruder) RETURN 1 AS one")
    with pytest.raises(RetrievalFailed):
        await retriever.retrieve("caliper", writing)
    assert (await store.read("MATCH (n:Intruder) RETURN count(n) AS intruders")).value("intruders") == 0

    many = Retrievers.vector().model_copy(
        update={"expansion": CypherExpansion(cypher="UNWIND range(1, 500) AS i RETURN i", max_rows=5)}
    )
    bounded = await retriever.retrieve("caliper", many)
    assert len([c for c in bounded.context if c.reason == "cypher-expansion"]) == 5
    assert ("ExpansionRows", 5) in [(lim.name, lim.value) for lim in bounded.limits_reached]


@pytest.mark.parametrize(
    "question",
    ['caliper AND OR ( ) " ~ * ? \\ / :', "NOT caliper", "caliper~0.1^10", "title:*", '"unterminated', "\\", "((("],
)
async def test_lucene_syntax_in_questions_cannot_break_or_change_the_query(
    corpus: list[Source], question: str, retriever: Retriever
) -> None:
    evidence = await retriever.retrieve(question, Retrievers.hybrid())
    if "caliper" in question:
        assert any("caliper" in item.text for item in evidence.items)


async def test_an_empty_or_huge_question_is_refused_with_a_code(corpus: list[Source], retriever: Retriever) -> None:
    for question, code in (("", "empty-question"), ("   \n", "empty-question"), ("x" * 100_000, "question-too-long")):
        with pytest.raises(QuestionRefused) as refused:
            await retriever.retrieve(question)
        assert refused.value.code == code


def test_the_retriever_takes_no_history() -> None:
    # One standalone question: history belongs to answers, which rewrite a follow-up first.
    with pytest.raises(ConfigurationError) as refused:
        RetrievalOptions(history=({"question": "What is recalled?"},))  # type: ignore[call-arg]
    assert refused.value.code == "invalid-option"


async def test_a_failed_route_fails_the_retrieval_instead_of_returning_the_other_route(
    corpus: list[Source], store: Store
) -> None:
    missing_index = for_layout(Layout.DEFAULT.replace(fulltext_index="graphrag_no_such_index"))
    broken = Retriever(store, missing_index, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))
    with pytest.raises(RetrievalFailed) as failed:
        await broken.retrieve("caliper", Retrievers.hybrid())
    assert failed.value.code == "retrieval-failed"
    assert (await broken.retrieve("caliper", Retrievers.vector())).items


async def test_an_invalid_query_vector_fails_before_any_search(corpus: list[Source], store: Store) -> None:
    class _Broken:
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[0.0] * DIMS for _ in texts]  # a zero vector is refused before any query

    from graphrag_orm.embeddings import EmbeddingRejected

    with pytest.raises(EmbeddingRejected):
        await Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, _Broken()).retrieve("caliper")


async def test_document_scope_keeps_every_item_and_neighbour_inside(
    corpus: list[Source], retriever: Retriever, store: Store
) -> None:
    tyres = corpus[1].document_id
    options = RetrievalOptions(scope=DocumentsScope(document_ids=(tyres,)), neighbour_chunks=2)
    evidence = await retriever.retrieve("caliper recalled tyre pressure", options)
    assert evidence.items and all(item.document_id == tyres for item in evidence.items)
    context_ids = [c.chunk_id for c in evidence.context]
    found = await store.read(
        "UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN c.documentId AS documentId", {"ids": context_ids}
    )
    assert all(doc == tyres for doc in found.column("documentId"))
    assert evidence.scope is not None and evidence.scope.kind == "documents"
    vector_route = next(r for r in evidence.scope.routes if r.route == Route.VECTOR)
    assert vector_route.strategy == ScopeStrategy.EXACT


async def test_section_scope_keeps_chunks_wholly_inside_the_section(
    corpus: list[Source], retriever: Retriever, store: Store
) -> None:
    found = await store.read(
        "MATCH (s:Section {title: 'Supplier'}) RETURN s.id AS id, s.startByte AS startByte, s.endByte AS endByte"
    )
    section = found.single()
    assert section is not None
    section_id, start, end = section["id"], section["startByte"], section["endByte"]
    evidence = await retriever.retrieve("caliper", RetrievalOptions(scope=SectionsScope(section_ids=(section_id,))))
    assert evidence.items
    assert all(start <= item.start_byte and item.end_byte <= end for item in evidence.items)


async def test_metadata_and_cypher_scopes(corpus: list[Source], retriever: Retriever) -> None:
    workshop = RetrievalOptions(
        scope=MetadataScope(filter=DocumentFilter(publisher="Workshop", published_from="2026-03-01"))
    )
    evidence = await retriever.retrieve("espresso tyres", workshop)
    assert {item.document_id for item in evidence.items} == {corpus[2].document_id}

    cypher = RetrievalOptions(
        scope=CypherScope(
            cypher="MATCH (d:Document) WHERE d.title = $title RETURN d.id AS documentId", parameters={"title": "Tyres"}
        )
    )
    evidence = await retriever.retrieve("espresso tyres", cypher)
    assert {item.document_id for item in evidence.items} == {corpus[1].document_id}


async def test_over_fetch_is_used_for_large_scopes_and_reported_when_short(
    corpus: list[Source], retriever: Retriever
) -> None:
    recall = corpus[0].document_id
    options = RetrievalOptions(
        scope=DocumentsScope(document_ids=(recall,)), scope_exact_chunks=1, candidates_per_route=50
    )
    evidence = await retriever.retrieve("caliper", options)
    assert evidence.scope is not None
    assert {r.strategy for r in evidence.scope.routes} == {ScopeStrategy.OVER_FETCH}
    assert all(item.document_id == recall for item in evidence.items)


async def test_an_empty_scope_finds_nothing_without_searching(corpus: list[Source], retriever: Retriever) -> None:
    evidence = await retriever.retrieve("caliper", RetrievalOptions(scope=DocumentsScope(document_ids=("missing",))))
    assert evidence.items == () and evidence.context == ()
    assert evidence.scope is not None and {r.strategy for r in evidence.scope.routes} == {ScopeStrategy.EMPTY}


@pytest.mark.parametrize(
    "question",
    ["Which caliper is recalled?", "Émile espresso Zürich", "tyre pressure weight", "the", "caliper AND NOT café"],
)
@pytest.mark.parametrize(
    "options",
    [
        RetrievalOptions(**RANK_FUSION),
        RetrievalOptions(max_items=2, max_utf8_bytes=100, neighbour_chunks=0, **RANK_FUSION),
    ],
)
async def test_hybrid_retrieval_is_the_rank_fusion_of_each_route_alone(
    corpus: list[Source], retriever: Retriever, question: str, options: RetrievalOptions
) -> None:
    everything = {"max_items": 128, "max_utf8_bytes": 65_536, "neighbour_chunks": 0, **RANK_FUSION}
    ranks: dict[str, dict[Route, int]] = {}
    for route in (Route.VECTOR, Route.FULL_TEXT):
        alone = await retriever.retrieve(question, RetrievalOptions(routes=frozenset({route}), **everything))
        for item in alone.items:
            (rank,) = item.routes
            ranks.setdefault(item.chunk_id, {})[route] = rank.rank
    fused = {chunk: sum(1.0 / (60 + rank) for rank in by_route.values()) for chunk, by_route in ranks.items()}
    expected = sorted(fused, key=lambda chunk: (-fused[chunk], chunk))
    evidence = await retriever.retrieve(question, options)
    assert evidence.items, "the question finds something"
    assert [item.chunk_id for item in evidence.items] == expected[: len(evidence.items)]
    for item in evidence.items:
        assert {r.route: r.rank for r in item.routes} == ranks[item.chunk_id]
        assert item.score == pytest.approx(fused[item.chunk_id])
    assert evidence.omitted_items == len(expected) - len(evidence.items)


async def test_ties_rank_by_chunk_id_with_and_without_a_scope(graph: None, store: Store) -> None:
    copies = [Sources.text(f"copy-{i}", "The BC-310 caliper is recalled.\n") for i in range(4)]
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))
    assert (await ingestion.ingest(copies)).failed == 0
    retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))
    options = RetrievalOptions(neighbour_chunks=0)
    unscoped = await retriever.retrieve("caliper recalled", options)
    order = [item.chunk_id for item in unscoped.items]
    assert len(order) == 4 and order == sorted(order), "equal scores rank by chunk id"
    scope = DocumentsScope(document_ids=tuple(source.document_id for source in copies))
    for exact_chunks, strategy in ((10_000, ScopeStrategy.EXACT), (1, ScopeStrategy.OVER_FETCH)):
        scoped = await retriever.retrieve(
            "caliper recalled", options.model_copy(update={"scope": scope, "scope_exact_chunks": exact_chunks})
        )
        assert scoped.scope is not None
        assert {r.route: r.strategy for r in scoped.scope.routes}[Route.VECTOR] == strategy
        assert [item.chunk_id for item in scoped.items] == order
        assert [[(r.route, r.rank) for r in item.routes] for item in scoped.items] == [
            [(r.route, r.rank) for r in item.routes] for item in unscoped.items
        ]


async def test_a_cypher_scope_over_the_cap_keeps_the_first_documents_by_id(
    graph: None, store: Store, retriever: Retriever
) -> None:
    await store.execute(
        "UNWIND range(0, 10000) AS i CREATE (:Document {id: 'doc-' + right('0000' + toString(i), 5)})",
        name="test.documents",
    )
    # Rows come in descending order: keeping them in row order would keep the last ids.
    scope = CypherScope(cypher="MATCH (d:Document) RETURN d.id AS documentId ORDER BY documentId DESC")
    resolved = await retriever.scopes.resolve(scope)
    assert resolved.document_ids == [f"doc-{i:05d}" for i in range(10_000)]
    assert [(limit.name, limit.value) for limit in resolved.limits] == [("ScopeDocuments", 10_000)]
    evidence = await retriever.retrieve("caliper", RetrievalOptions(scope=scope))
    assert evidence.scope is not None and evidence.scope.documents == 10_000
    assert ("ScopeDocuments", 10_000) in [(limit.name, limit.value) for limit in evidence.limits_reached]


async def test_values_cut_in_expansion_rows_are_reported(corpus: list[Source], retriever: Retriever) -> None:
    cut = Retrievers.hybrid_cypher(
        "RETURN range(1, 1500) AS numbers, reduce(s = '', i IN range(1, 1200) | s + 'abcdefghij') AS text"
    ).model_copy(update={"max_context_utf8_bytes": 262_144})
    evidence = await retriever.retrieve("caliper", cut)
    (row,) = [json.loads(c.text) for c in evidence.context if c.reason == "cypher-expansion"]
    assert row["numbers"] == list(range(1, 1001)) and row["text"] == "abcdefghij" * 1_000
    limits = [(limit.name, limit.value) for limit in evidence.limits_reached]
    assert ("ExpansionListItems", 1_000) in limits and ("ExpansionText", 10_000) in limits

    whole = Retrievers.hybrid_cypher("RETURN range(1, 1000) AS numbers, 'short' AS text")
    kept = await retriever.retrieve("caliper", whole)
    (row,) = [json.loads(c.text) for c in kept.context if c.reason == "cypher-expansion"]
    assert len(row["numbers"]) == 1_000
    assert not {"ExpansionListItems", "ExpansionText"} & {limit.name for limit in kept.limits_reached}


async def test_a_cypher_scope_or_expansion_that_reads_a_file_is_refused_with_the_sandbox_code(
    corpus: list[Source], retriever: Retriever
) -> None:
    reading = CypherScope(cypher="LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row[0] AS documentId")
    with pytest.raises(ScopeError) as scoped:
        await retriever.retrieve("caliper", RetrievalOptions(scope=reading))
    assert scoped.value.code == "not-allowed" and isinstance(scoped.value.__cause__, QueryRefused)

    for attack in (
        "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "CALL dbms.listConfig() YIELD name, value RETURN name, value",
        "SHOW TRANSACTIONS YIELD currentQuery, parameters RETURN currentQuery, parameters",
    ):
        with pytest.raises(RetrievalFailed) as failed:
            await retriever.retrieve("caliper", Retrievers.hybrid_cypher(attack))
        assert failed.value.code == "not-allowed", attack


async def test_a_cypher_expansion_that_may_write_is_not_read_only(corpus: list[Source], retriever: Retriever) -> None:
    writing = Retrievers.vector_cypher("MATCH (d:Document) SET d.pwned = true RETURN d.id AS id")
    with pytest.raises(RetrievalFailed) as failed:
        await retriever.retrieve("caliper", writing)
    assert failed.value.code == "not-read-only"


async def test_a_cypher_scope_keeps_at_most_the_range_bound_and_reports_it(
    corpus: list[Source], retriever: Retriever
) -> None:
    recall, tyres = corpus[0].document_id, corpus[1].document_id
    scope = CypherScope(
        cypher="UNWIND $docs AS doc UNWIND range(0, 1199) AS i RETURN doc AS documentId, i AS startByte, "
        "i + 100000 AS endByte",
        parameters={"docs": [recall, tyres]},
    )
    resolved = await retriever.scopes.resolve(scope)
    kept = {doc: len(spans or ()) for doc, spans in resolved.ranges.items()}
    first = min(recall, tyres)
    assert kept == {first: 1_000}, "the first ranges by document id and start; a document left with none is out"
    assert ("ScopeRanges", 1_000) in [(limit.name, limit.value) for limit in resolved.limits]
    evidence = await retriever.retrieve("caliper tyres", RetrievalOptions(scope=scope))
    assert {item.document_id for item in evidence.items} <= {first}
    assert ("ScopeRanges", 1_000) in [(limit.name, limit.value) for limit in evidence.limits_reached]

    # A range inside another adds nothing: dropped, with no limit reached.
    nested = CypherScope(
        cypher="UNWIND range(0, 1999) AS i RETURN $doc AS documentId, i AS startByte, 4000 - i AS endByte",
        parameters={"doc": recall},
    )
    inside = await retriever.scopes.resolve(nested)
    assert inside.ranges == {recall: ((0, 4000),)} and not inside.limits
    wider = await retriever.scopes.resolve(scope.model_copy(update={"max_ranges": 2_400}))
    assert {doc: len(spans or ()) for doc, spans in wider.ranges.items()} == {recall: 1_200, tyres: 1_200}
    assert not wider.limits


async def test_a_question_of_one_long_hyphenated_word_searches_instead_of_failing(
    corpus: list[Source], retriever: Retriever
) -> None:
    question = "-".join(["b"] * 2_000)[:3_999]
    evidence = await retriever.retrieve(question, Retrievers.hybrid())
    assert evidence.provenance is not None
    words = " ".join(f"日本語{i}" for i in range(300))
    mixed = await retriever.retrieve(f"caliper {words} {'x-' * 500}", Retrievers.hybrid())
    assert any("caliper" in item.text for item in mixed.items)


async def test_a_question_with_a_lone_surrogate_is_refused_as_an_invalid_question(retriever: Retriever) -> None:
    with pytest.raises(QuestionRefused) as refused:
        await retriever.retrieve("caliper \ud800 recall")
    assert refused.value.code == "invalid-question"


@pytest.fixture
def own_server() -> Iterator[LocalDbSettings]:
    """A server of this test's own, to restart under a live retriever (the suite's stays up)."""
    port = TEST_PORT + 150
    settings = LocalDbSettings.from_env(home_name=f"home-restart-{port}", port=port)
    start(settings)
    try:
        yield settings
    finally:
        stop(settings)


@pytest.mark.slow
async def test_a_retrieval_after_a_server_restart_succeeds_and_one_while_it_is_down_is_coded(
    own_server: LocalDbSettings,
) -> None:
    store = await open_store(ConnectionSettings(uri=own_server.uri, password=own_server.password))
    try:
        await Migrator(store, Chain.load()).apply()
        await store.execute("MATCH (n) WHERE NOT n:GraphRagMigration CALL (n) { DETACH DELETE n } IN TRANSACTIONS")
        ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))
        items = sources()
        assert (await ingestion.ingest(items)).failed == 0
        retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))
        # The sandbox's read is never retried once sent: a pooled connection to the old
        # server must be found dead before the query goes out.
        sandboxed = (
            Retrievers.hybrid()
            .with_cypher_expansion("UNWIND $chunkIds AS id RETURN id AS chunkId", trusted=True)
            .with_scope(CypherScope(cypher="MATCH (d:Document) RETURN d.id AS documentId"))
        )
        for options in (Retrievers.hybrid(), sandboxed):
            assert (await retriever.retrieve("caliper", options)).items
            await asyncio.to_thread(stop, own_server)
            await asyncio.to_thread(start, own_server)
            assert (await retriever.retrieve("caliper", options)).items, "the first call after the restart"
            assert (await retriever.retrieve("caliper", options)).items

        documents = RetrievalOptions(scope=DocumentsScope(document_ids=(items[0].document_id,)))
        await asyncio.to_thread(stop, own_server)
        with pytest.raises(RetrievalFailed) as down:
            await retriever.retrieve("caliper", documents)
        assert down.value.code == "retrieval-failed"
        with pytest.raises(ScopeError) as refused:
            await retriever.retrieve("caliper", sandboxed)
        assert refused.value.code == "query-failed"
        await asyncio.to_thread(start, own_server)
        assert (await retriever.retrieve("caliper", documents)).items
    finally:
        await store.driver.close()


async def test_a_cypher_scope_with_offsets_that_are_not_integers_is_an_invalid_scope(
    corpus: list[Source], retriever: Retriever
) -> None:
    scope = CypherScope(
        cypher="RETURN $doc AS documentId, 'start' AS startByte, 10 AS endByte",
        parameters={"doc": corpus[0].document_id},
    )
    with pytest.raises(ScopeError) as refused:
        await retriever.retrieve("caliper", RetrievalOptions(scope=scope))
    assert refused.value.code == "invalid-scope"


async def test_an_expansion_in_a_scope_is_refused_unless_trusted_and_never_returns_another_publishers_text(
    corpus: list[Source], retriever: Retriever, store: Store
) -> None:
    """The review's read past the scope: a metadata scope, an expansion reading every other document's text."""
    leaking = (
        "MATCH (c:Chunk) WHERE NOT c.documentId IN $scopeDocumentIds RETURN c.text AS text, c.documentId AS documentId"
    )
    workshop = RetrievalOptions(scope=MetadataScope(filter=DocumentFilter(publisher="Workshop")))
    sent: list[object] = []
    remove = store.add_hook(sent.append)
    try:
        with pytest.raises(RetrievalFailed) as failed:
            await retriever.retrieve("espresso tyres", workshop.with_cypher_expansion(leaking))
    finally:
        remove()
    assert failed.value.code == "expansion-not-trusted"
    assert not sent  # refused before any statement was sent

    # Trusted, the rows naming a document outside the scope are dropped and counted.
    trusted = await retriever.retrieve("espresso tyres", workshop.with_cypher_expansion(leaking, trusted=True))
    texts = " ".join(c.text for c in trusted.context)
    assert "Safety Office" not in texts and "BC-310" not in texts and "recalled" not in texts
    assert not [c for c in trusted.context if c.reason == "cypher-expansion"]
    dropped = [limit.value for limit in trusted.limits_reached if limit.name == "ExpansionOutOfScope"]
    assert dropped and dropped[0] >= 1


async def test_a_trusted_scoped_expansion_keeps_rows_inside_the_scope_and_drops_rows_naming_outside_it(
    corpus: list[Source], retriever: Retriever
) -> None:
    recall, tyres, cafe = (source.document_id for source in corpus)
    query = (
        "MATCH (d:Document) RETURN d.id AS id, d.title AS title ORDER BY id "
        "UNION ALL MATCH (c:Chunk {documentId: $tyres}) RETURN {chunk: [c.id]} AS id, 'nested' AS title "
        "UNION ALL RETURN 'no key here' AS id, 'plain' AS title"
    )
    options = RetrievalOptions(scope=DocumentsScope(document_ids=(cafe,))).with_cypher_expansion(
        query, {"tyres": tyres}, trusted=True
    )
    evidence = await retriever.retrieve("espresso", options)
    rows = [json.loads(c.text) for c in evidence.context if c.reason == "cypher-expansion"]
    # The café document's row and the row naming no key stay; the recall and tyres documents' rows
    # and every tyres chunk (its id nested in a list in a map) are dropped.
    assert rows == [{"id": cafe, "title": "Café"}, {"id": "no key here", "title": "plain"}]
    dropped = [limit.value for limit in evidence.limits_reached if limit.name == "ExpansionOutOfScope"]
    assert dropped and dropped[0] >= 3  # two documents and at least one chunk
    assert recall not in json.dumps(rows)

    # Unscoped, the same expansion keeps every row and reports nothing.
    unscoped = await retriever.retrieve("espresso", RetrievalOptions().with_cypher_expansion(query, {"tyres": tyres}))
    assert len([c for c in unscoped.context if c.reason == "cypher-expansion"]) >= 5
    assert "ExpansionOutOfScope" not in {limit.name for limit in unscoped.limits_reached}
