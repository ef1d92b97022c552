"""Retrieval against the real Neo4j: routes, fusion, budget, context, scope, provenance, bad questions."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from neomodel import adb

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evidence import Route, ScopeStrategy
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import (
    CypherScope,
    DocumentFilter,
    DocumentsScope,
    MetadataScope,
    QuestionRefused,
    RetrievalFailed,
    RetrievalOptions,
    Retriever,
    Retrievers,
    SectionsScope,
)
from graphrag_orm.sources import Source, SourceMetadata, Sources

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
async def corpus(graph: None) -> list[Source]:
    items = sources()
    ingestion = IngestionService(
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(DIMS),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=96, overlap_paragraphs=0)),
    )
    receipt = await ingestion.ingest(items)
    assert receipt.failed == 0
    return items


def retriever() -> Retriever:
    return Retriever(MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))


async def test_hybrid_retrieval_fuses_both_routes_by_rank(corpus: list[Source]) -> None:
    evidence = await retriever().retrieve("Which caliper is recalled?")
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


async def test_item_text_is_exactly_the_stored_span(corpus: list[Source]) -> None:
    evidence = await retriever().retrieve("Émile espresso Zürich")
    documents = {s.document_id: s.text for s in corpus}
    for item in evidence.items:
        utf8 = (documents[item.document_id] or "").encode()
        assert item.text.encode() == utf8[item.start_byte : item.end_byte]


async def test_retrieval_reads_no_embeddings(corpus: list[Source]) -> None:
    evidence = await retriever().retrieve("tyre pressure")
    dumped = evidence.model_dump_json()
    assert '"embedding"' not in dumped
    assert all(len(item.model_dump()) < 20 for item in evidence.items)


async def test_the_budget_cuts_at_a_code_point_and_reports_what_it_left_out(corpus: list[Source]) -> None:
    options = RetrievalOptions(max_utf8_bytes=64, max_items=3)
    evidence = await retriever().retrieve("Émile sells espresso in Zürich café", options)
    assert evidence.utf8_bytes <= 64
    assert sum(len(item.text.encode()) for item in evidence.items) == evidence.utf8_bytes
    last = evidence.items[-1]
    assert last.end_byte - last.start_byte == len(last.text.encode())
    names = {limit.name for limit in evidence.limits_reached}
    assert "MaxUtf8Bytes" in names or "MaxItems" in names
    assert evidence.omitted_items > 0


async def test_max_items_is_reported(corpus: list[Source]) -> None:
    evidence = await retriever().retrieve("the", RetrievalOptions(max_items=1, neighbour_chunks=0))
    assert len(evidence.items) == 1
    assert ("MaxItems", 1) in [(lim.name, lim.value) for lim in evidence.limits_reached]
    assert evidence.omitted_items >= 1


async def test_neighbours_are_context_never_items(corpus: list[Source]) -> None:
    evidence = await retriever().retrieve("Acme supplied", RetrievalOptions(max_items=1, neighbour_chunks=1))
    item_ids = {item.chunk_id for item in evidence.items}
    assert evidence.context, "the supplier chunk has a neighbour"
    assert all(c.reason == "neighbour" and c.chunk_id not in item_ids for c in evidence.context)


async def test_a_cypher_expansion_runs_read_only_and_is_bounded(corpus: list[Source]) -> None:
    options = Retrievers.hybrid_cypher(
        "UNWIND $chunkIds AS id MATCH (c:Chunk {id: id})-[:IN_DOCUMENT]->(d:Document) "
        "RETURN id AS chunkId, d.publisher AS publisher, c.embedding AS embedding"
    ).model_copy(update={"max_items": 2})
    evidence = await retriever().retrieve("caliper", options)
    expansions = [c for c in evidence.context if c.reason == "cypher-expansion"]
    assert len(expansions) == 2
    assert "Safety Office" in expansions[0].text and "vector left out" in expansions[0].text

    writing = Retrievers.vector_cypher("CREATE (:Intruder) RETURN 1 AS one")
    with pytest.raises(RetrievalFailed):
        await retriever().retrieve("caliper", writing)
    rows, _ = await adb.cypher_query("MATCH (n:Intruder) RETURN count(n)")
    assert rows[0][0] == 0

    many = Retrievers.vector_cypher("UNWIND range(1, 500) AS i RETURN i").model_copy(
        update={
            "expansion": Retrievers.vector_cypher("UNWIND range(1, 500) AS i RETURN i").expansion.model_copy(
                update={"max_rows": 5}
            )
        }  # type: ignore[union-attr]
    )
    bounded = await retriever().retrieve("caliper", many)
    assert len([c for c in bounded.context if c.reason == "cypher-expansion"]) == 5
    assert ("ExpansionRows", 5) in [(lim.name, lim.value) for lim in bounded.limits_reached]


@pytest.mark.parametrize(
    "question",
    ['caliper AND OR ( ) " ~ * ? \\ / :', "NOT caliper", "caliper~0.1^10", "title:*", '"unterminated', "\\", "((("],
)
async def test_lucene_syntax_in_questions_cannot_break_or_change_the_query(corpus: list[Source], question: str) -> None:
    evidence = await retriever().retrieve(question, Retrievers.hybrid())
    if "caliper" in question:
        assert any("caliper" in item.text for item in evidence.items)


async def test_an_empty_or_huge_question_is_refused_with_a_code(corpus: list[Source]) -> None:
    for question, code in (("", "empty-question"), ("   \n", "empty-question"), ("x" * 100_000, "question-too-long")):
        with pytest.raises(QuestionRefused) as refused:
            await retriever().retrieve(question)
        assert refused.value.code == code


async def test_the_retriever_refuses_history(corpus: list[Source]) -> None:
    from graphrag_orm.retrieval import Turn

    with pytest.raises(QuestionRefused) as refused:
        await retriever().retrieve("and then?", RetrievalOptions(history=(Turn(question="What is recalled?"),)))
    assert refused.value.code == "history-not-supported"


async def test_a_failed_route_fails_the_retrieval_instead_of_returning_the_other_route(corpus: list[Source]) -> None:
    missing_index = for_layout(Layout.DEFAULT.replace(fulltext_index="graphrag_no_such_index"))
    broken = Retriever(missing_index, OFFLINE_EMBEDDING_SET, HashingEmbedder(DIMS))
    with pytest.raises(RetrievalFailed) as failed:
        await broken.retrieve("caliper", Retrievers.hybrid())
    assert failed.value.code == "retrieval-failed"
    assert (await broken.retrieve("caliper", Retrievers.vector())).items


async def test_an_invalid_query_vector_fails_before_any_search(corpus: list[Source]) -> None:
    class _Broken:
        async def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[0.0] * DIMS for _ in texts]  # a zero vector is refused before any query

    from graphrag_orm.embeddings import EmbeddingRejected

    with pytest.raises(EmbeddingRejected):
        await Retriever(MODEL, OFFLINE_EMBEDDING_SET, _Broken()).retrieve("caliper")


async def test_document_scope_keeps_every_item_and_neighbour_inside(corpus: list[Source]) -> None:
    tyres = corpus[1].document_id
    options = RetrievalOptions(scope=DocumentsScope(document_ids=(tyres,)), neighbour_chunks=2)
    evidence = await retriever().retrieve("caliper recalled tyre pressure", options)
    assert evidence.items and all(item.document_id == tyres for item in evidence.items)
    context_ids = [c.chunk_id for c in evidence.context]
    rows, _ = await adb.cypher_query(
        "UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN c.documentId", {"ids": context_ids}
    )
    assert all(row[0] == tyres for row in rows)
    assert evidence.scope is not None and evidence.scope.kind == "documents"
    vector_route = next(r for r in evidence.scope.routes if r.route == Route.VECTOR)
    assert vector_route.strategy == ScopeStrategy.EXACT


async def test_section_scope_keeps_chunks_wholly_inside_the_section(corpus: list[Source]) -> None:
    rows, _ = await adb.cypher_query("MATCH (s:Section {title: 'Supplier'}) RETURN s.id, s.startByte, s.endByte")
    section_id, start, end = rows[0]
    evidence = await retriever().retrieve("caliper", RetrievalOptions(scope=SectionsScope(section_ids=(section_id,))))
    assert evidence.items
    assert all(start <= item.start_byte and item.end_byte <= end for item in evidence.items)


async def test_metadata_and_cypher_scopes(corpus: list[Source]) -> None:
    workshop = RetrievalOptions(
        scope=MetadataScope(filter=DocumentFilter(publisher="Workshop", published_from="2026-03-01"))
    )
    evidence = await retriever().retrieve("espresso tyres", workshop)
    assert {item.document_id for item in evidence.items} == {corpus[2].document_id}

    cypher = RetrievalOptions(
        scope=CypherScope(
            cypher="MATCH (d:Document) WHERE d.title = $title RETURN d.id AS documentId", parameters={"title": "Tyres"}
        )
    )
    evidence = await retriever().retrieve("espresso tyres", cypher)
    assert {item.document_id for item in evidence.items} == {corpus[1].document_id}


async def test_over_fetch_is_used_for_large_scopes_and_reported_when_short(corpus: list[Source]) -> None:
    recall = corpus[0].document_id
    options = RetrievalOptions(
        scope=DocumentsScope(document_ids=(recall,)), scope_exact_chunks=1, candidates_per_route=50
    )
    evidence = await retriever().retrieve("caliper", options)
    assert evidence.scope is not None
    assert {r.strategy for r in evidence.scope.routes} == {ScopeStrategy.OVER_FETCH}
    assert all(item.document_id == recall for item in evidence.items)


async def test_an_empty_scope_finds_nothing_without_searching(corpus: list[Source]) -> None:
    evidence = await retriever().retrieve("caliper", RetrievalOptions(scope=DocumentsScope(document_ids=("missing",))))
    assert evidence.items == () and evidence.context == ()
    assert evidence.scope is not None and {r.strategy for r in evidence.scope.routes} == {ScopeStrategy.EMPTY}


@pytest.mark.parametrize(
    "question",
    ["Which caliper is recalled?", "Émile espresso Zürich", "tyre pressure weight", "the", "caliper AND NOT café"],
)
@pytest.mark.parametrize(
    "options", [RetrievalOptions(), RetrievalOptions(max_items=2, max_utf8_bytes=100, neighbour_chunks=0)]
)
async def test_the_one_statement_hybrid_path_equals_the_general_path(
    corpus: list[Source], question: str, options: RetrievalOptions
) -> None:
    fast = retriever()
    general = retriever()
    general.one_statement = False
    one = await fast.retrieve(question, options)
    two = await general.retrieve(question, options)
    assert one.model_dump() == two.model_dump()
    assert one.items, "the question finds something"
