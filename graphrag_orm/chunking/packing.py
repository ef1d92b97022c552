"""Paragraphs, sections and the packing of paragraphs into chunks (rules 1 to 5 of :mod:`graphrag_orm.chunking`)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence

from graphrag_orm.chunking.options import ChunkerOptions
from graphrag_orm.chunking.plan import ChunkSpan, SectionSpan
from graphrag_orm.loaders.outline import Heading
from graphrag_orm.tokens import TokenCounter

__all__ = ["BLANK_LINE", "Packer", "inside", "paragraph_breaks", "sections_of"]

# A line ending followed by one or more blank lines (and blank space at the very end):
# its end is where the next paragraph starts.
_BLANK_RUN = re.compile(rb"\n(?:[ \t]*\r?\n)+(?:[ \t]*\r?\Z)?")
BLANK_LINE = re.compile(rb"[ \t]*(?:\r?\n|\r?\Z)")
_LINE_BREAK = (b"\n",)
_LINE_BREAK_PATTERN = re.compile(rb"\n")
_WHITESPACE = (b" ", b"\t", b"\r", b"\f", b"\v")
_WHITESPACE_PATTERN = re.compile(rb"[ \t\r\f\v]")


def paragraph_breaks(utf8: bytes, fences: Sequence[tuple[int, int]]) -> list[int]:
    """Where paragraphs start after blank lines, except inside fenced code; sorted."""
    breaks = [match.end() for match in _BLANK_RUN.finditer(utf8)]
    if not fences or not breaks:
        return breaks
    kept: list[int] = []
    taken = 0
    for start, end in fences:
        low = bisect_right(breaks, start, taken)
        high = bisect_left(breaks, end, low)
        kept.extend(breaks[taken:low])
        taken = high
    kept.extend(breaks[taken:])
    return kept


def inside(breaks: list[int], start: int, end: int) -> list[int]:
    """The breaks strictly between ``start`` and ``end``."""
    return breaks[bisect_right(breaks, start) : bisect_left(breaks, end)]


def sections_of(headings: Sequence[Heading], size: int) -> tuple[SectionSpan, ...]:
    ends = [size] * len(headings)
    parents: list[int | None] = [None] * len(headings)
    open_sections: list[int] = []
    for order, heading in enumerate(headings):
        while open_sections and headings[open_sections[-1]].level >= heading.level:
            ends[open_sections.pop()] = heading.start
        parents[order] = open_sections[-1] if open_sections else None
        open_sections.append(order)
    return tuple(
        SectionSpan(
            order=order,
            level=heading.level,
            title=heading.title,
            start_byte=heading.start,
            end_byte=ends[order],
            parent_order=parents[order],
        )
        for order, heading in enumerate(headings)
    )


class Packer:
    """Packs one segment's paragraphs at a time into chunks; see the module's rules 4 and 5."""

    def __init__(self, utf8: bytes, options: ChunkerOptions, counter: TokenCounter | None) -> None:
        self.utf8 = utf8
        self.budget = options.max_utf8_bytes
        self.overlap = options.overlap_paragraphs
        self.max_tokens = options.max_tokens or 0
        # ``tokens_of`` reports a span's tokens whenever there is a counter; the budget
        # check uses it only when there is also a token budget.
        self.tokens_of: Callable[[int, int], int] | None = None
        if counter is not None:
            count = counter.count
            self.tokens_of = lambda start, end: count(utf8[start:end].decode("utf-8"))
        self.enforce_tokens = self.tokens_of is not None and options.max_tokens is not None
        self.chunks: list[ChunkSpan] = []

    def _measure(self, start: int, end: int) -> int:
        """The span's token count (0 without a token budget) if it fits the budget, else -1."""
        if end - start > self.budget:
            return -1
        if not self.enforce_tokens:
            return 0
        assert self.tokens_of is not None
        tokens = self.tokens_of(start, end)
        return tokens if tokens <= self.max_tokens else -1

    def _emit(self, start: int, end: int, tokens: int, section: int | None) -> None:
        token_count: int | None = None
        if self.enforce_tokens:
            token_count = tokens
        elif self.tokens_of is not None:
            token_count = self.tokens_of(start, end)
        self.chunks.append(
            ChunkSpan(
                order=len(self.chunks),
                start_byte=start,
                end_byte=end,
                section_order=section,
                token_count=token_count,
            )
        )

    def pack(self, bounds: list[int], section: int | None, overlap_floor: int) -> None:
        """Chunks for the paragraphs ``[bounds[i], bounds[i + 1])`` of one segment.

        ``bounds`` strictly increases. ``overlap_floor`` is the lowest paragraph index
        that may be repeated as overlap (1 skips a heading paragraph).
        """
        paragraphs = len(bounds) - 1
        budget = self.budget
        previous_first = -1
        index = 0
        while index < paragraphs:
            end_first = bounds[index + 1]
            overlap = max(0, min(self.overlap, index - overlap_floor, index - previous_first - 1))
            tokens = -1
            while overlap > 0:
                tokens = self._measure(bounds[index - overlap], end_first)
                if tokens >= 0:
                    break
                overlap -= 1
            first = index - overlap
            start = bounds[first]
            if overlap == 0:
                tokens = self._measure(start, end_first)
                if tokens < 0:
                    start, tokens = self._cut_paragraph(start, end_first, section)
                    overlap_floor = index + 1  # a cut paragraph is never repeated

            # A byte budget is monotone: the furthest boundary within it is found at once.
            last = bisect_right(bounds, start + budget, index + 1) - 1
            if self.enforce_tokens and last > index + 1:
                # Usually the bytes bind first and one count settles it; otherwise a binary
                # search over the paragraphs in between, each answer measured.
                more = self._measure(start, bounds[last])
                if more >= 0:
                    tokens = more
                else:
                    fitting = self._largest_fitting(start, bounds[index + 2 : last])
                    if fitting is None:
                        last = index + 1
                    else:
                        last = bisect_left(bounds, fitting[0], index + 2, last)
                        tokens = fitting[1]
            self._emit(start, bounds[last], tokens, section)
            previous_first = first
            index = last

    def _cut_paragraph(self, start: int, end: int, section: int | None) -> tuple[int, int]:
        """Emit the leading pieces of an over-budget paragraph; return where its last
        piece (which fits, or is one code point over ``max_tokens``) starts, and its tokens.
        """
        while True:
            cut = self._cut(start, end)
            if cut is None:  # one code point over max_tokens: it stands alone
                assert self.tokens_of is not None
                return start, self.tokens_of(start, end)
            position, tokens = cut
            self._emit(start, position, tokens, section)
            start = position
            rest = self._measure(start, end)
            if rest >= 0:
                return start, rest

    def _cut(self, start: int, end: int) -> tuple[int, int] | None:
        """The best cut of ``[start, end)``: ``(position, tokens)`` with ``start < position < end``
        and ``[start, position)`` within budget; None when no cut exists (one code point).
        """
        utf8 = self.utf8
        limit = min(start + self.budget, end - 1)
        if limit <= start:
            return None
        # Line breaks, then whitespace: the cut goes right after the separator.
        for separators, pattern in ((_LINE_BREAK, _LINE_BREAK_PATTERN), (_WHITESPACE, _WHITESPACE_PATTERN)):
            found = max(utf8.rfind(separator, start, limit) for separator in separators)
            if found < start:
                continue
            if not self.enforce_tokens:
                return found + 1, 0
            tokens = self._measure(start, found + 1)
            if tokens >= 0:  # the usual case: the bytes bound the cut, not the tokens
                return found + 1, tokens
            cuts = [match.end() for match in pattern.finditer(utf8, start, found)]
            fitting = self._largest_fitting(start, cuts)
            if fitting is not None:
                return fitting
        # A code-point boundary: step back over continuation bytes.
        position = limit
        while position > start and utf8[position] & 0xC0 == 0x80:
            position -= 1
        if position <= start:
            return None
        if not self.enforce_tokens:
            return position, 0
        tokens = self._measure(start, position)
        if tokens >= 0:
            return position, tokens
        boundaries = [cut for cut in range(start + 1, position) if utf8[cut] & 0xC0 != 0x80]
        fitting = self._largest_fitting(start, boundaries)
        if fitting is not None:
            return fitting
        assert self.tokens_of is not None
        first = boundaries[0] if boundaries else position  # one code point over the token budget
        return first, self.tokens_of(start, first)

    def _largest_fitting(self, start: int, cuts: list[int]) -> tuple[int, int] | None:
        """The largest cut whose prefix fits, by binary search: token counts grow with
        the prefix in practice, and every answer is measured, so a counter that is not
        monotone can only cost the best cut, never the budget.
        """
        low, high = 0, len(cuts) - 1
        best: tuple[int, int] | None = None
        while low <= high:
            middle = (low + high) // 2
            tokens = self._measure(start, cuts[middle])
            if tokens >= 0:
                best = (cuts[middle], tokens)
                low = middle + 1
            else:
                high = middle - 1
        return best
