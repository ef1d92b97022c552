"""The local refresh's plan (graphrag_orm.communities.local): pure, no database."""

from __future__ import annotations

from graphrag_orm.communities import CommunityOptions
from graphrag_orm.communities.detection import GraphFact, detect
from graphrag_orm.communities.local import StoredCommunity, local_options, plan_refresh


def _fact(a: str, b: str, *documents: str) -> GraphFact:
    return GraphFact(a, "R", b, tuple(sorted(documents or ("d",))))


def _stored(facts: list[GraphFact]) -> list[StoredCommunity]:
    found = detect(facts, CommunityOptions()).communities
    return [StoredCommunity(c.id, c.level, c.fingerprint, c.parent_id, c.members) for c in found]


def _triangle(p: str) -> list[GraphFact]:
    return [_fact(f"{p}1", f"{p}2"), _fact(f"{p}2", f"{p}3"), _fact(f"{p}3", f"{p}1")]


GRAPH = _triangle("a") + _triangle("b") + _triangle("c") + [_fact("a1", "b1")]


def test_nothing_changed_keeps_everything() -> None:
    stored = _stored(GRAPH)
    plan = plan_refresh(stored, GRAPH, {t for f in GRAPH for t in (f.source, f.target)})
    assert plan.kept == {c.id for c in stored} and plan.replaced == frozenset() and plan.facts == ()


def test_a_changed_fact_replaces_only_its_subtree_and_scales_the_resolution() -> None:
    stored = _stored(GRAPH)
    changed = [_fact("c1", "c2", "d", "e") if f == _fact("c1", "c2") else f for f in GRAPH]
    plan = plan_refresh(stored, changed, {t for f in changed for t in (f.source, f.target)})
    assert plan.things == {"c1", "c2", "c3"} and len(plan.replaced) == 1
    assert plan.kept == {c.id for c in stored} - plan.replaced
    assert 0 < plan.share < 1 and local_options(CommunityOptions(), plan.share).resolution < 1.0


def test_a_new_thing_joined_only_to_a_kept_community_takes_that_subtree_along() -> None:
    stored = _stored(GRAPH)
    grown = [*GRAPH, _fact("b2", "x")]
    plan = plan_refresh(stored, grown, {t for f in grown for t in (f.source, f.target)})
    assert {"x", "b1", "b2", "b3"} <= plan.things and "c1" not in plan.things
    assert all(f.source in plan.things and f.target in plan.things for f in plan.facts)


def test_a_thing_whose_facts_reach_only_kept_communities_takes_their_subtrees_along() -> None:
    stored = _stored(GRAPH)
    # c3 loses its facts in its triangle and gains one to a1: alone among the things detected again.
    moved = [f for f in GRAPH if "c3" not in (f.source, f.target)] + [_fact("c3", "a1")]
    plan = plan_refresh(stored, moved, {t for f in moved for t in (f.source, f.target)})
    assert {"c1", "c2", "c3", "a1", "a2", "a3"} <= plan.things
    assert any(f == _fact("c3", "a1") for f in plan.facts)
