"""Whitespace runs normalised and mapped back: the one rule quote location and chunk placement share.

Any run of Unicode whitespace (``str.isspace``) counts as one space; a lone space stays;
optional ``marks`` (characters a caller may skip, such as emphasis marks) vanish when a
run holds only them. :class:`Normalised` maps every kept character back to its original
offset, so a match in the normalised text is a span in the original.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Final

__all__ = ["WHITESPACE_SEEDS", "Normalised", "collapse_whitespace", "normalise_runs"]


#: Every ``str.isspace`` character but the space itself.
WHITESPACE_SEEDS: Final = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def collapse_whitespace(text: str) -> str:
    """``text`` with every whitespace run as one space and none at either end."""
    # str.split() without arguments splits on exactly the str.isspace() runs.
    return " ".join(text.split())


# Normalisation replaces each maximal run of whitespace and marks by one space (or by
# nothing when it holds only marks), except a lone space, which stays. One regular
# expression over the text finds the runs; its quantifier ranges over one character
# class, and it captures its runs so re.split hands back kept pieces and runs
# alternately.
#
# A run starts at a seed: a mark, or whitespace other than a space. Beginning with one
# character class lets the regex engine skip from seed to seed instead of stopping at
# every space of the prose. A space before a seed stays at the end of the kept piece
# before it, so a run whose piece already ends with a space adds nothing. That needs at
# most one space before each seed, so every double space is first rewritten as a space
# and a tab: same length, so offsets do not move, and every run of spaces then holds a seed.
@lru_cache(maxsize=8)
def _runs(marks: str) -> re.Pattern[str]:
    return re.compile(f"([{re.escape(WHITESPACE_SEEDS + marks)}][\\s{re.escape(marks)}]*)")


@dataclass(frozen=True, slots=True)
class Normalised:
    """A text with whitespace runs as one space (and marks, if any, skipped).

    The text is cut into kept pieces and runs. Kept piece ``k`` starts at normalised
    offset ``norm_starts[k]`` and original character ``orig_starts[k]`` and runs in step
    with the original. A run becomes one space or nothing and has no entry:
    :meth:`original` is only asked about a non-space character, never a run's space.
    """

    text: str
    norm_starts: tuple[int, ...]
    orig_starts: tuple[int, ...]

    def original(self, offset: int) -> int:
        """The original character index of the normalised, non-space character ``offset``."""
        # bisect_right passes over an empty piece that starts where the next one does.
        piece = bisect_right(self.norm_starts, offset) - 1
        return self.orig_starts[piece] + (offset - self.norm_starts[piece])

    def at_or_after(self, index: int) -> int:
        """A normalised offset from which every non-space character maps to ``index`` or later."""
        piece = bisect_right(self.orig_starts, index) - 1
        offset = self.norm_starts[piece] + (index - self.orig_starts[piece])
        following = self.norm_starts[piece + 1] if piece + 1 < len(self.norm_starts) else len(self.text)
        return min(offset, following)


def normalise_runs(text: str, marks: str = "") -> Normalised:
    """``text`` with each run of whitespace (and of ``marks``) as one space, mapped back.

    A run of marks alone is removed; a run holding whitespace becomes one space, or
    nothing when the piece before it already ends with a space. Characters other than
    whitespace and ``marks`` are never changed. Linear in the text's length.
    """
    if "  " in text:
        text = text.replace("  ", " \t")
    parts = _runs(marks).split(text)
    orig_ends = list(accumulate(map(len, parts)))
    parts[1::2] = [
        " " if run.strip(marks) and not before.endswith(" ") else ""
        for before, run in zip(parts[0::2], parts[1::2], strict=False)
    ]
    norm_ends = list(accumulate(map(len, parts)))
    # Kept piece k is part 2k; it starts where part 2k - 1, a run, ends.
    return Normalised("".join(parts), (0, *norm_ends[1::2]), (0, *orig_ends[1::2]))
