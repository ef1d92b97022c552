"""The passage stage: terms, the best window, the mix with the fused order, its bounds."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.retrieval import RetrievalOptions, Retrievers
from graphrag_orm.retrieval.passages import (
    PASSAGE_STAGE,
    PassageOptions,
    PassageStage,
    best_window,
    passage_terms,
    term_hits,
)
from graphrag_orm.retrieval.routes import MAX_STAGE_ITEMS, RouteRequest

FILLER = " ".join(f"filler{n}" for n in range(120))  # 1,000 characters: wider than any default window


def items(texts: list[str], scores: list[float] | None = None) -> tuple[EvidenceItem, ...]:
    scores = scores or [1.0 - n / 100 for n in range(len(texts))]
    return tuple(
        EvidenceItem(
            chunk_id=f"c{n}", document_id="d", source_uri="mem://d", text=t, start_byte=0, end_byte=len(t), score=s
        )
        for n, (t, s) in enumerate(zip(texts, scores, strict=True))
    )


def request(question: str, max_items: int = 2) -> RouteRequest:
    options = RetrievalOptions(stages=(PASSAGE_STAGE,), max_items=max_items)
    return RouteRequest(question=question, options=options, scope=None)


def ids(found: Any) -> list[str]:
    return [item.chunk_id for item in found.items]


def test_terms_are_casefolded_words_without_stop_words_cut_to_their_first_letters() -> None:
    assert passage_terms("What did Dorian’s portrait show after Sibyl Vane's death?") == [
        "doria",
        "portr",
        "show",
        "sibyl",
        "vane",
        "death",
    ]
    assert passage_terms("Married; MARRIAGE, a é Zoë", prefix_letters=3) == ["mar", "mar", "zoë"]
    assert passage_terms("what is it, and who was there?") == []


def test_terms_are_found_where_they_start_a_word_and_a_short_one_only_as_a_whole_word() -> None:
    text = "the marriage; married, unmarried. art, arts, smart art_x art"
    assert term_hits(text, ["marri", "art"]) == [(4, "marri"), (14, "marri"), (34, "art"), (57, "art")]
    assert term_hits("", ["marri"]) == []
    assert term_hits("art", ["art"]) == [(0, "art")]
    # A term of prefix_letters letters is a cut word: it starts longer words too.
    assert term_hits("mar marble", ["mar"], prefix_letters=3) == [(0, "mar"), (4, "mar")]
    # ... but never a stop word, as the question's own words are cut ("shoulder" and "should").
    assert term_hits("you should see his shoulder", ["shoul"]) == [(19, "shoul")]
    assert term_hits("which of them, whichever", ["which"]) == [(15, "which")]
    assert term_hits("a x ab", ["a", "x"], prefix_letters=1) == [(4, "a")]
    assert term_hits("anything", ["", "thing"]) == []  # no empty term; "thing" starts no word here
    # The same words as passage_terms on any text: a word counts where its cut form is a term.
    text = "Über the shoulder’s strap, the over-tired owl-light; ÜBERMUT 42 _under underneath"
    terms = set(passage_terms(text))
    hit_words = [t for _, t in term_hits(text.casefold().replace("\u2019", "'"), terms)]
    assert hit_words == passage_terms(text)


def test_the_best_window_counts_each_term_once_and_only_inside_the_width() -> None:
    weights = {"a": 1.0, "b": 2.0}
    assert best_window(weights, [(0, "a"), (5, "a"), (9, "a")], 10) == 1.0
    assert best_window(weights, [(0, "a"), (9, "b")], 10) == 3.0
    assert best_window(weights, [(0, "a"), (10, "b")], 10) == 2.0  # a leaves as b comes
    assert best_window(weights, [(0, "a"), (10, "b")], 11) == 3.0
    assert best_window(weights, [(0, "a"), (1, "a"), (12, "b"), (13, "a")], 5) == 3.0
    assert best_window(weights, [], 3) == 0.0
    with pytest.raises(ValueError):
        best_window(weights, [(0, "a")], 0)


async def test_a_candidate_whose_question_words_stand_together_rises_over_scattered_ones() -> None:
    question = "Why did the harbour master raise the mooring fees?"
    texts = [
        f"harbour {FILLER} master {FILLER} mooring {FILLER} fees",  # every word, scattered: fused first
        f"{FILLER} the lamp is trimmed at dusk {FILLER}",
        f"{FILLER} the harbour master raised the mooring fees in spring {FILLER}",
        f"{FILLER} smoke calms the colony {FILLER}",
    ]
    fused = [1.0, 0.2, 0.8, 0.0]  # the fused order: c0, c2, c1, c3
    result = await PassageStage().apply(request(question), items(texts, fused))
    assert ids(result) == ["c2", "c0", "c1", "c3"]
    assert result.limits == ()
    # At weight 0 the stage leaves the order alone; far from the first, a passage does not make up the gap.
    untouched = await PassageStage(PassageOptions(weight=0.0)).apply(request(question), items(texts, fused))
    assert ids(untouched) == ["c0", "c1", "c2", "c3"]
    behind = await PassageStage().apply(request(question), items(texts, [1.0, 0.2, 0.1, 0.0]))
    assert ids(behind)[0] == "c0"


async def test_ties_keep_the_fused_order_and_nothing_is_added_or_dropped() -> None:
    texts = ["no match here", "nor here", "nothing at all"]
    result = await PassageStage().apply(request("harbour fees"), items(texts, [0.5, 0.5, 0.5]))
    assert ids(result) == ["c0", "c1", "c2"]
    stop_words_only = await PassageStage().apply(request("what was it?"), items(texts))
    assert ids(stop_words_only) == ["c0", "c1", "c2"]
    one = await PassageStage().apply(request("harbour"), items(["harbour"]))
    assert ids(one) == ["c0"]


async def test_only_candidates_are_reordered_the_rest_follow_and_a_cut_text_is_reported() -> None:
    texts = [f"{FILLER} far", f"{FILLER} far", "harbour master fees", f"{FILLER} harbour master fees"]
    stage = PassageStage(PassageOptions(candidates_per_item=1))
    alike = [0.5, 0.5, 0.5, 0.5]
    result = await stage.apply(request("harbour master fees"), items(texts, alike))
    assert ids(result) == ["c0", "c1", "c2", "c3"]  # the two reordered hold none of the words
    cut = await PassageStage(PassageOptions(max_item_chars=100)).apply(
        request("harbour master fees", max_items=4), items(texts, alike)
    )
    assert ids(cut) == ["c2", "c0", "c1", "c3"]  # c3's words lie past the 100 characters read
    assert [limit.name for limit in cut.limits] == ["PassageItemChars"]
    assert cut.limits[0].value == 100


async def test_the_first_terms_of_a_long_question_are_looked_for_and_the_cut_is_reported() -> None:
    texts = [f"{FILLER} far", "harbour master fees"]
    question = "harbour master fees " + " ".join(f"{chr(97 + n // 26)}{chr(97 + n % 26)}word" for n in range(40))
    result = await PassageStage().apply(request(question), items(texts, [0.5, 0.5]))
    assert ids(result) == ["c1", "c0"]
    assert [(limit.name, limit.value) for limit in result.limits] == [("PassageTerms", 32)]
    late = await PassageStage(PassageOptions(max_terms=2)).apply(request("harbour master fees"), items(texts))
    assert [limit.name for limit in late.limits] == ["PassageTerms"]


async def test_with_the_graph_route_or_a_route_of_ones_own_the_fused_order_stays() -> None:
    texts = [f"ferry {FILLER} warden", "the ferry warden", "nothing"]
    fused = [1.0, 0.8, 0.0]
    for routes in (Retrievers.hybrid_graph().routes, frozenset({"Title", "FullText"})):
        options = RetrievalOptions(routes=routes)
        wider = RouteRequest(question="ferry warden", options=options, scope=None)
        assert ids(await PassageStage().apply(wider, items(texts, fused))) == ["c0", "c1", "c2"]
        assert PassageStage().wants(options) == options.max_items
    assert ids(await PassageStage().apply(request("ferry warden"), items(texts, fused))) == ["c1", "c0", "c2"]


def test_the_stage_wants_two_candidates_for_each_item_within_the_stage_bound() -> None:
    stage = PassageStage()
    assert stage.name == "passages"
    assert stage.wants(RetrievalOptions(max_items=10)) == 20  # two for each item
    assert stage.wants(RetrievalOptions(max_items=128)) == MAX_STAGE_ITEMS
    assert PassageStage(PassageOptions(candidates_per_item=1)).wants(RetrievalOptions(max_items=10)) == 10


@pytest.mark.parametrize(
    "bad",
    [
        {"width_chars": 19},
        {"width_chars": 20_001},
        {"weight": -0.1},
        {"weight": 1.5},
        {"prefix_letters": 0},
        {"candidates_per_item": 0},
        {"candidates_per_item": 33},
        {"max_item_chars": 99},
        {"max_item_chars": 100_001},
        {"max_terms": 0},
        {"max_terms": 257},
    ],
)
def test_options_out_of_bounds_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        PassageOptions(**bad)
    assert refused.value.code == "invalid-option"
