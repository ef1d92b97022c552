"""Entity resolution without a database: the suggestion rules, fact moves, aliases and the run record."""

from __future__ import annotations

import neo4j.time
import pytest

from graphrag_orm.errors import ConfigurationError
from graphrag_orm.resolution import SuggestionRule, SuggestOptions, resolution_key
from graphrag_orm.resolution.moves import SeenFact, merged_aliases, plan_facts
from graphrag_orm.resolution.record import FactRecord, LinkRecord, MergeRecord, check_exact
from graphrag_orm.resolution.suggestions import MergeCandidate, suggest_within


def thing(id_: str, name: str, *aliases: str, mentions: int = 1, placeholder: bool = False) -> MergeCandidate:
    return MergeCandidate(id=id_, name=name, aliases=tuple(aliases), placeholder=placeholder, mentions=mentions)


def pairs(things: list[MergeCandidate]) -> list[tuple[str, str, str]]:
    return [(s.kept.name, s.merged.name, s.rule.value) for s in suggest_within("Character", things)]


def test_a_leading_article_case_and_extra_whitespace_are_ignored() -> None:
    assert resolution_key("  The   Caterpillar ") == "caterpillar"
    assert resolution_key("a Duchess") == resolution_key("an duchess") == "duchess"
    assert resolution_key("The") == "the", "an article alone is a name"
    assert resolution_key("Theodore") == "theodore", "only a whole leading word is an article"


def test_same_name_pairs_keep_the_most_mentioned() -> None:
    found = pairs([thing("b", "the Caterpillar", mentions=2), thing("a", "Caterpillar", mentions=5)])
    assert found == [("Caterpillar", "the Caterpillar", "same-name")]


def test_a_tie_in_mentions_keeps_the_smallest_id() -> None:
    found = suggest_within("Character", [thing("z", "The Hatter"), thing("c", "hatter")])
    assert [(s.kept.id, s.merged.id) for s in found] == [("c", "z")]


def test_an_alias_read_the_same_way_pairs_two_things() -> None:
    found = pairs([thing("a", "Cheshire Cat", "Cat", mentions=3), thing("b", "the cat")])
    assert found == [("Cheshire Cat", "the cat", "alias")]


def test_placeholders_are_never_suggested() -> None:
    found = pairs([thing("a", "she", placeholder=True), thing("b", "She", placeholder=True), thing("c", "Alice")])
    assert found == []


def test_names_that_only_contain_another_are_not_suggested() -> None:
    assert pairs([thing("a", "Mouse"), thing("b", "Dormouse"), thing("c", "Alice"), thing("d", "Alice's sister")]) == []


def test_a_group_joined_by_names_and_aliases_keeps_one_thing() -> None:
    things = [
        thing("a", "Knave of Hearts", "Knave", mentions=4),
        thing("b", "the Knave", mentions=2),
        thing("c", "The knave "),
    ]
    found = pairs(things)
    assert found == [("Knave of Hearts", "the Knave", "alias"), ("Knave of Hearts", "The knave ", "alias")]


def test_suggestions_are_in_a_stable_order_whatever_the_input_order() -> None:
    things = [
        thing("a", "Hatter", mentions=3),
        thing("b", "the Hatter"),
        thing("c", "Dodo", mentions=2),
        thing("d", "a dodo"),
    ]
    forward = suggest_within("Character", things)
    backward = suggest_within("Character", list(reversed(things)))
    assert forward == backward
    assert [s.kept.name for s in forward] == ["Dodo", "Hatter"]
    assert {s.rule for s in forward} == {SuggestionRule.SAME_NAME}


def test_suggest_options_have_bounds() -> None:
    with pytest.raises(ConfigurationError):
        SuggestOptions(max_things=0)
    with pytest.raises(ConfigurationError):
        SuggestOptions(max_suggestions=10**9)


def fact(type_: str, outgoing: bool, other: str, *documents: str) -> SeenFact:
    return SeenFact(type=type_, outgoing=outgoing, other_id=other, props={"documentIds": list(documents), "runId": "r"})


def test_facts_are_repointed_unioned_or_dropped() -> None:
    merged = [
        fact("LOCATED_IN", True, "wood", "d1"),
        fact("LOCATED_IN", True, "mushroom", "d1"),
        fact("KIN_OF", True, "K", "d3"),
        fact("KIN_OF", False, "M", "d3"),
    ]
    kept = [fact("LOCATED_IN", True, "wood", "d2", "d0")]
    moves = plan_facts("K", "M", merged, kept)
    assert [f.other_id for f in moves.repointed] == ["mushroom"]
    assert [(m.other_id, props["documentIds"], props["runId"]) for m, _, props in moves.unioned] == [
        ("wood", ["d0", "d1", "d2"], "r")
    ]
    assert [f.other_id for f in moves.dropped] == ["K", "M"]


def test_the_merged_name_and_aliases_become_aliases_never_the_kept_name() -> None:
    assert merged_aliases("Caterpillar", None, "the Caterpillar", "Caterpillar\nBlue") == ("Blue\nthe Caterpillar", 2)
    assert merged_aliases("Cat", "Puss", "the cat", None) == ("Puss\nthe cat", 1)


def record(**props: object) -> MergeRecord:
    return MergeRecord(
        ontology="f",
        kind="Character",
        kept_id="K",
        merged_id="M",
        merged_labels=["Character"],
        merged_props={"id": "M", "name": "the Caterpillar", **props},
        kept_before={"id": "K"},
        kept_after={"id": "K", "aliases": "the Caterpillar"},
        links=[LinkRecord("MENTIONED_IN", "c1", {"key": "k", "startByte": 4, "endByte": 19})],
        removed=[FactRecord("KIN_OF", False, "A", "Character", {"documentIds": ["d"], "role": "cousin"})],
    )


def test_the_run_record_reads_back_equal_with_dates_and_floats() -> None:
    exact = record(seen=neo4j.time.DateTime(2026, 12, 2, 15, 0, 0, 123456789), score=0.1, big=2**62, tags=[])
    assert MergeRecord.from_json(check_exact(exact)) == exact


def test_a_value_the_run_record_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError):
        check_exact(record(raw=b"bytes"))


def test_two_rows_of_one_id_are_read_as_one_thing() -> None:
    assert pairs([thing("a", "Alice"), thing("a", "Alice"), thing("b", "the Hatter"), thing("c", "Hatter")]) == [
        ("the Hatter", "Hatter", "same-name")
    ]
