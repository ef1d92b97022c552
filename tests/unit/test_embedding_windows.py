"""Long texts embedded whole: the windows a text is cut into, and how their vectors are pooled."""

from __future__ import annotations

import itertools
import math
import re

import pytest

from graphrag_orm.embeddings.windows import WINDOW_OVERLAP_DIVISOR, pool, window_spans


def words(text: str) -> list[tuple[int, int]]:
    """Offsets of a toy tokenizer: each word, and each run of punctuation, one token."""
    return [match.span() for match in re.finditer(r"\w+|[^\w\s]+", text)]


def pieces(text: str) -> list[tuple[int, int]]:
    """Offsets of a toy word-piece tokenizer: words cut into three-letter pieces that touch."""
    spans = []
    for start, end in words(text):
        spans.extend((at, min(at + 3, end)) for at in range(start, end, 3))
    return spans


def test_a_text_that_fits_is_one_window_the_whole_text() -> None:
    text = "  A short text, with a trailing space. "
    assert window_spans(text, words(text), 100) == ((0, len(text)),)
    assert window_spans("", [], 4) == ((0, 0),)


@pytest.mark.parametrize("budget", [8, 16, 33, 64])
def test_windows_cover_every_character_hold_at_most_the_budget_and_overlap(budget: int) -> None:
    text = " ".join(f"word{n}, extraordinarily" for n in range(120)) + "\n"
    offsets = pieces(text)
    spans = window_spans(text, offsets, budget)
    assert len(spans) > 1
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (start, end), (next_start, next_end) in itertools.pairwise(spans):
        # they overlap, or (a budget too small for the overlap and the next word) only spaces lie between
        assert next_start < end or not text[end:next_start].strip()
        if budget >= 16:
            assert next_start < end, "consecutive windows overlap"
        assert start < next_start and end < next_end, "windows move forward"
    for start, end in spans:
        inside = [span for span in offsets if start <= span[0] and span[1] <= end]
        assert len(inside) <= budget
        # no window starts inside a word (the text's first character aside)
        assert start == 0 or not text[start - 1].isalnum()
        assert end == len(text) or not text[end].isalnum()
    overlap = budget // WINDOW_OVERLAP_DIVISOR
    if budget >= 16:
        assert overlap
        shared = [
            [span for span in offsets if span[0] >= b_start and span[1] <= a_end]
            for (_, a_end), (b_start, _) in itertools.pairwise(spans)
        ]
        assert all(shared), "each window repeats the end of the one before"


def test_a_word_longer_than_a_window_is_cut_inside_it() -> None:
    text = "a " + "x" * 60 + " b"
    spans = window_spans(text, pieces(text), 4)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    covered = set()
    for start, end in spans:
        covered.update(range(start, end))
    assert covered >= {index for index, char in enumerate(text) if not char.isspace()}


def test_a_budget_under_one_token_is_refused() -> None:
    with pytest.raises(ValueError):
        window_spans("text", [(0, 4)], 0)


def test_pooling_weights_windows_by_their_tokens_and_returns_a_unit_vector() -> None:
    pooled = pool([[1.0, 0.0], [0.0, 1.0]], [3, 1])
    assert math.isclose(math.hypot(*pooled), 1.0)
    assert math.isclose(pooled[0] / pooled[1], 3.0)
    assert pool([[0.6, 0.8]], [5]) == pytest.approx([0.6, 0.8])
