"""Fusion on the server: score-normalised against reciprocal rank, and overlapping chunks sharing votes.

Two routes that read for themselves hand the fusion exactly the ranks and scores a test
needs; the chunks are real (ingested with the default overlap of one paragraph), so the
shared votes follow the stored byte spans and ``NEXT`` links.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import RetrievalOptions, Retriever
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.options import Fusion
from graphrag_orm.retrieval.routes import RouteRead, RouteRequest
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store

MODEL = for_layout(Layout.DEFAULT)
TEXT = "\n\n".join(f"Paragraph {n} tells of the {word} by the river." for n, word in enumerate("abcdefghijkl", 1))


@dataclass
class Fixed:
    """A route that found ``hits`` (chunk id, score), best first."""

    name: str
    hits: tuple[tuple[str, float], ...]
    follows: bool = False
    indexes: tuple[str, ...] = ()

    async def plan(self, request: RouteRequest) -> RouteRead:
        return RouteRead(self.name, tuple(Candidate(chunk, score) for chunk, score in self.hits))


async def chunks(store: Store) -> list[tuple[str, int, int]]:
    small = Chunker(ChunkerOptions(max_utf8_bytes=120, overlap_paragraphs=1))
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(256), chunker=small)
    assert (await ingestion.ingest([Sources.text("River", TEXT)])).failed == 0
    rows = await store.read("MATCH (c:Chunk) RETURN c.id AS id, c.startByte AS s, c.endByte AS e ORDER BY s")
    return [(row["id"], row["s"], row["e"]) for row in rows]


async def fused(store: Store, routes: list[Fixed], **options: object) -> list[str]:
    retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(256), routes=routes)
    chosen = RetrievalOptions(
        routes=frozenset(route.name for route in routes), max_items=8, neighbour_chunks=0, **options
    )
    evidence = await retriever.retrieve("the river", chosen)
    return [item.chunk_id for item in evidence.items]


@pytest.mark.parametrize("fusion", [Fusion.RECIPROCAL_RANK, Fusion.SCORE])
async def test_two_routes_ranking_overlapping_chunks_put_both_above_lone_first_hits(
    graph: None, store: Store, fusion: Fusion
) -> None:
    spans = await chunks(store)
    assert len(spans) >= 6 and spans[2][2] > spans[3][1], "chunks 2 and 3 share a paragraph"
    lone_a, lone_b, left, right = spans[0][0], spans[5][0], spans[2][0], spans[3][0]
    routes = [Fixed("A", ((lone_a, 1.0), (left, 0.99))), Fixed("B", ((lone_b, 1.0), (right, 0.99)))]
    shared = await fused(store, routes, fusion=fusion, shared_votes=True)
    assert set(shared[:2]) == {left, right}
    alone = await fused(store, routes, fusion=fusion, shared_votes=False)
    assert set(alone[:2]) == {lone_a, lone_b}


async def test_score_fusion_keeps_a_close_second_that_rank_fusion_ties_with_a_distant_one(
    graph: None, store: Store
) -> None:
    spans = await chunks(store)
    a, close, b, distant = spans[0][0], spans[4][0], spans[8][0], spans[12 if len(spans) > 12 else -1][0]
    routes = [Fixed("A", ((a, 100.0), (distant, 1.0))), Fixed("B", ((b, 100.0), (close, 99.0)))]
    by_score = await fused(store, routes, fusion=Fusion.SCORE, shared_votes=False)
    assert by_score == [*sorted([a, b]), close, distant]
    by_rank = await fused(store, routes, fusion=Fusion.RECIPROCAL_RANK, shared_votes=False)
    assert by_rank == sorted([a, b]) + sorted([close, distant])


async def test_best_score_fusion_keeps_what_one_route_is_sure_of_above_what_two_found_lukewarm(
    graph: None, store: Store
) -> None:
    spans = await chunks(store)
    sure, lukewarm, a_top, b_top = spans[0][0], spans[4][0], spans[8][0], spans[10][0]
    routes = [
        Fixed("A", ((a_top, 10.0), (sure, 9.5), (lukewarm, 6.0))),
        Fixed("B", ((b_top, 10.0), (lukewarm, 6.0))),
    ]
    best = await fused(store, routes, fusion=Fusion.BEST_SCORE, shared_votes=False)
    assert best == [*sorted([a_top, b_top]), sure, lukewarm]
    summed = await fused(store, routes, fusion=Fusion.SCORE, shared_votes=False)
    assert summed == [lukewarm, *sorted([a_top, b_top]), sure]


async def test_best_score_fusion_reports_each_routes_normalised_score_as_its_vote(graph: None, store: Store) -> None:
    spans = await chunks(store)
    first, second = spans[0][0], spans[2][0]
    routes = [Fixed("A", ((first, 4.0), (second, 2.0))), Fixed("B", ((second, 8.0),))]
    retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(256), routes=routes)
    options = RetrievalOptions(
        routes=frozenset({"A", "B"}), max_items=8, neighbour_chunks=0, fusion=Fusion.BEST_SCORE, shared_votes=False
    )
    evidence = await retriever.retrieve("the river", options)
    assert [item.chunk_id for item in evidence.items] == sorted([first, second])
    votes = {item.chunk_id: {rank.route: rank.rank_score for rank in item.routes} for item in evidence.items}
    assert votes[second] == {"A": 0.5, "B": 1.0}
    assert votes[first] == {"A": 1.0}


async def test_relative_score_fusion_places_each_score_in_its_routes_range(graph: None, store: Store) -> None:
    spans = await chunks(store)
    v1, v2, v3, t1, t2, t3 = (spans[i][0] for i in (0, 2, 4, 6, 8, 10))
    # A route of a narrow band (as cosine scores) and a route whose scores fall fast (as BM25).
    routes = [
        Fixed("A", ((v1, 0.92), (v2, 0.91), (v3, 0.90))),
        Fixed("B", ((t1, 12.0), (t2, 9.0), (t3, 3.0))),
    ]
    # Over the best score, the narrow band outvotes the second full-text hit with its whole list.
    best = await fused(store, routes, fusion=Fusion.BEST_SCORE, shared_votes=False)
    assert best[:4] == [*sorted([v1, t1]), v2, v3]
    # In each route's range, the second hits come next (B's 0.67 above A's 0.5), the last ones vote 0.
    relative = await fused(store, routes, fusion=Fusion.RELATIVE_SCORE, shared_votes=False)
    assert relative == [*sorted([v1, t1]), t2, v2, *sorted([v3, t3])]
    retriever = Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(256), routes=routes)
    options = RetrievalOptions(
        routes=frozenset({"A", "B"}), max_items=8, neighbour_chunks=0, fusion=Fusion.RELATIVE_SCORE, shared_votes=False
    )
    evidence = await retriever.retrieve("the river", options)
    votes = {item.chunk_id: {rank.route: round(rank.rank_score, 6) for rank in item.routes} for item in evidence.items}
    assert votes[v2] == {"A": 0.5} and votes[t2] == {"B": 0.666667} and votes[t3] == {"B": 0.0}
    assert {item.chunk_id: round(item.score, 6) for item in evidence.items}[t2] == 0.666667


async def test_relative_score_fusion_keeps_a_chunk_two_routes_found_at_its_best_routes_vote(
    graph: None, store: Store
) -> None:
    spans = await chunks(store)
    both, a_top, b_top, alone = spans[0][0], spans[4][0], spans[8][0], spans[10][0]
    # One candidate alone, or all alike: each votes 1.
    routes = [
        Fixed("A", ((a_top, 5.0), (both, 4.0), (alone, 1.0))),
        Fixed("B", ((b_top, 2.0), (both, 2.0))),
    ]
    relative = await fused(store, routes, fusion=Fusion.RELATIVE_SCORE, shared_votes=False)
    assert relative == [*sorted([a_top, b_top, both]), alone]
