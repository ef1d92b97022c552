"""Community detection alone: seeded and deterministic, bounded with limits reported, its extra named."""

from __future__ import annotations

import random
import sys

import pytest

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.communities import CommunityOptions, GraphFact, detect
from graphrag_orm.errors import ConfigurationError


def planted(groups: int, size: int, seed: int = 7) -> list[GraphFact]:
    """``groups`` dense groups of ``size`` things, each joined to the next by one fact."""
    rng = random.Random(seed)
    facts = []
    for g in range(groups):
        names = [f"g{g}-t{i:02d}" for i in range(size)]
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if rng.random() < 0.6:
                    facts.append(GraphFact(a, "KNOWS", b, (f"doc-{g}",)))
        facts.append(GraphFact(names[0], "KNOWS", f"g{(g + 1) % groups}-t00", ("doc-bridge",)))
    return facts


def test_planted_groups_come_back_as_communities_and_two_runs_agree() -> None:
    facts = planted(6, 12)
    first = detect(facts, CommunityOptions())
    shuffled = list(facts)
    random.Random(3).shuffle(shuffled)
    second = detect(shuffled, CommunityOptions())
    assert first == second, "the same graph in another order gives the same communities"
    top = [c for c in first.communities if c.level == 0]
    assert sorted(tuple(sorted({m.split("-")[0] for m in c.members})) for c in top) == [(f"g{g}",) for g in range(6)]
    assert all(c.fingerprint.startswith("sha256:") and c.facts > 0 for c in top)
    assert first.limits_reached == ()


def test_a_changed_fact_changes_only_its_communitys_fingerprint() -> None:
    facts = planted(4, 10)
    before = {c.id: c.fingerprint for c in detect(facts, CommunityOptions()).communities}
    changed = [
        GraphFact(f.source, f.type, f.target, (*f.document_ids, "doc-new")) if f == facts[0] else f for f in facts
    ]
    after = {c.id: c.fingerprint for c in detect(changed, CommunityOptions()).communities}
    assert before.keys() == after.keys()
    assert sum(before[k] != after[k] for k in before) == 1


def test_a_large_community_is_split_into_a_lower_level_with_parents() -> None:
    facts = planted(1, 40)
    detection = detect(facts, CommunityOptions(max_community_size=10, max_levels=4))
    levels = {c.level for c in detection.communities}
    assert 0 in levels and max(levels) >= 1
    ids = {c.id for c in detection.communities}
    assert all(c.parent_id in ids for c in detection.communities if c.level > 0)
    assert all(c.parent_id is None for c in detection.communities if c.level == 0)


def test_levels_past_the_bound_are_reported() -> None:
    detection = detect(planted(1, 40), CommunityOptions(max_community_size=5, max_levels=1))
    assert {c.level for c in detection.communities} == {0}
    names = {limit.name for limit in detection.limits_reached}
    assert LimitName.COMMUNITY_LEVELS in names


def test_no_facts_no_communities_and_self_facts_join_nothing() -> None:
    assert detect([], CommunityOptions()).communities == ()
    assert detect([GraphFact("a", "IS", "a")], CommunityOptions()).communities == ()


def test_options_out_of_bounds_are_refused_with_a_code() -> None:
    with pytest.raises(ConfigurationError) as raised:
        CommunityOptions(max_levels=9)
    assert raised.value.code == ErrorCode.INVALID_OPTION


def test_without_the_extra_detection_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "graspologic_native", None)  # what an uninstalled module imports as
    with pytest.raises(ConfigurationError) as raised:
        detect(planted(2, 4), CommunityOptions())
    assert raised.value.code == ErrorCode.MISSING_EXTRA
    assert "graphrag-orm[communities]" in raised.value.message
