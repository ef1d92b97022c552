"""Candidates per route sized from max_items, and an evidence budget that agrees with it."""

from __future__ import annotations

from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.retrieval.budget import apply_budget
from graphrag_orm.retrieval.fusion import Candidate, ranked_hits
from graphrag_orm.retrieval.options import MAX_CANDIDATES_PER_ROUTE, MIN_SIZED_CANDIDATES


def test_candidates_grow_with_max_items_within_their_bounds() -> None:
    assert RetrievalOptions(max_items=10).route_candidates == 30
    assert RetrievalOptions(max_items=2).route_candidates == MIN_SIZED_CANDIDATES
    capped = RetrievalOptions(max_items=128, candidates_per_item=32)
    assert capped.route_candidates == MAX_CANDIDATES_PER_ROUTE and capped.candidates_capped
    assert RetrievalOptions(max_items=128, candidates_per_route=40).route_candidates == 40
    assert not RetrievalOptions(max_items=128, candidates_per_route=40).candidates_capped


def test_the_default_budget_holds_max_items_whole_default_chunks_with_titles() -> None:
    items = [
        EvidenceItem(
            chunk_id=f"c{n}",
            document_id="d",
            source_uri="u",
            title="A title of a reasonable length for a novel",
            text="x" * 2_048,
            start_byte=n * 2_048,
            end_byte=(n + 1) * 2_048,
            score=1.0,
        )
        for n in range(12)
    ]
    for k in (8, 10, 12):
        options = RetrievalOptions(max_items=k)
        budget = apply_budget(items, options.max_items, options.utf8_budget)
        assert len(budget.items) == k and all(len(item.text) == 2_048 for item in budget.items)
    assert RetrievalOptions(max_utf8_bytes=1_000).utf8_budget == 1_000


def test_a_routes_hits_carry_their_score_over_its_best() -> None:
    hits = ranked_hits("r", [Candidate("a", 4.0), Candidate("b", 1.0), Candidate("a", 0.5)])
    assert [(h["id"], h["rank"], h["norm"]) for h in hits] == [("a", 1, 1.0), ("b", 2, 0.25)]
    assert ranked_hits("r", [Candidate("a", 0.0)])[0]["norm"] == 0.0
    # The relative vote: the score's place between the route's last and first (after duplicates go).
    spread = ranked_hits("r", [Candidate("a", 0.9), Candidate("b", 0.85), Candidate("c", 0.8), Candidate("b", 0.1)])
    assert [round(h["rel"], 6) for h in spread] == [1.0, 0.5, 0.0]
    assert [h["rel"] for h in ranked_hits("r", [Candidate("a", 2.0), Candidate("b", 2.0)])] == [1.0, 1.0]
    assert ranked_hits("r", [])[:1] == []
