"""Every token of a long text embedded: the text cut into overlapping windows that fit the model, pooled.

A model reads at most its window of word pieces (256 for MiniLM, 512 for e5 and bge);
the rest of a longer text would not be embedded. :class:`~graphrag_orm.embeddings.LocalEmbedder`
(``long_texts="pool"``, its default) instead cuts such a text into windows and embeds each:

- **Cut** (:func:`window_spans`): from the text's tokens as the model's tokenizer makes
  them (character offsets, no special tokens), windows of at most ``budget`` tokens
  (the window less the special tokens and the card's passage prefix, less
  :data:`WINDOW_MARGIN_TOKENS` so that re-tokenising a window's text alone still fits),
  each starting :data:`WINDOW_OVERLAP_DIVISOR`-th of the budget before the previous one
  ended, cut only where a word starts (a gap between two tokens), so no window begins
  inside a word. The first window starts at the text's first character and the last
  ends at its last: every character is in a window.
- **Pool** (:func:`pool`): the windows' unit vectors, averaged with each weighted by its
  tokens, then scaled to unit length: for a mean-pooled model, close to the mean of all
  the text's token vectors, each read with the context of its own window. A text that
  fits is one window and keeps its vector exactly.

The chunk stays the unit of storage, search and citation: one vector per chunk, so the
vector index, re-embedding, adoption, removal and health need no change. Measured
against the alternatives (chunks cut to the window, a text's first window only) on the
dev set: docs/embeddings.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, Literal

__all__ = ["LONG_TEXTS", "WINDOW_MARGIN_TOKENS", "WINDOW_OVERLAP_DIVISOR", "LongTexts", "pool", "window_spans"]

LongTexts = Literal["pool", "first"]
"""What :class:`LocalEmbedder` does with a text longer than its window (``long_texts``)."""

LONG_TEXTS: Final = ("pool", "first")
"""What :class:`LocalEmbedder` does with a text longer than its window: pool its windows, or read its first window only."""

WINDOW_MARGIN_TOKENS: Final = 8
"""Tokens kept free in each window: a window's text tokenised alone may make a few more tokens at its edges."""

WINDOW_OVERLAP_DIVISOR: Final = 8
"""Consecutive windows share an eighth of the budget (32 tokens of MiniLM's), so no sentence is only ever seen cut."""


def _word_starts(offsets: Sequence[tuple[int, int]]) -> list[bool]:
    """Whether each token begins a word: the first one, and any one not touching the previous."""
    return [index == 0 or offsets[index][0] != offsets[index - 1][1] for index in range(len(offsets))]


def window_spans(text: str, offsets: Sequence[tuple[int, int]], budget: int) -> tuple[tuple[int, int], ...]:
    """The character spans ``[start, end)`` of ``text``'s windows of at most ``budget`` tokens.

    ``offsets`` are the text's tokens' character spans, in order, special tokens left
    out. A text of at most ``budget`` tokens is one window, the whole text. A word
    longer than a window is cut inside (the only case where a window starts mid-word).
    """
    if budget < 1:
        raise ValueError("a window holds at least one token")
    count = len(offsets)
    if count <= budget:
        return ((0, len(text)),)
    starts = _word_starts(offsets)
    overlap = budget // WINDOW_OVERLAP_DIVISOR
    spans: list[tuple[int, int]] = []
    first, previous = 0, 0  # the window's first token; one past the previous window's last
    while True:
        last = first + budget  # one past the window's last token
        if last >= count:
            spans.append((offsets[first][0] if spans else 0, len(text)))
            return tuple(spans)
        end = last
        while end > first + 1 and not starts[end]:
            end -= 1
        if end == first + 1 and not starts[end]:
            end = last  # one word longer than the window: cut inside it
        if end <= previous:
            first = previous  # the overlap left no room for the next word: start where the last window ended
            continue
        spans.append((offsets[first][0] if spans else 0, offsets[end - 1][1]))
        following = max(end - overlap, first + 1)
        while following > first + 1 and not starts[following]:
            following -= 1
        if not starts[following]:
            following = end  # no word starts inside the overlap: the next window starts where this one ends
        first, previous = following, end


def pool(vectors: Sequence[Sequence[float]], weights: Sequence[int]) -> list[float]:
    """The weighted mean of ``vectors`` (weights: the windows' tokens), scaled to unit length."""
    dimensions = len(vectors[0])
    total = [0.0] * dimensions
    for vector, weight in zip(vectors, weights, strict=True):
        for index, value in enumerate(vector):
            total[index] += value * max(weight, 1)
    norm = math.sqrt(sum(value * value for value in total)) or 1.0
    return [value / norm for value in total]
