"""Turning a question into a Lucene query that means only "any of these words".

Every character Lucene's classic query parser treats as syntax is escaped with a
backslash, and the operator words (AND, OR, NOT) are lower-cased, so no question can
break the query or change its meaning. Terms are de-duplicated and bounded, and so are
the clauses they make: the index's analyzer splits one word into several terms
(``b-b-b`` into three ``b``), each a clause, and a query of more clauses than Lucene
allows (1,024) fails. :func:`clauses` counts a word's terms from above (a run of letters
and digits, a wide character such as an ideograph, a symbol such as an emoji: one
each); the query keeps at most :data:`MAX_CLAUSES`, the last word cut to fit.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_CLAUSES", "MAX_TERMS", "clauses", "escape_term", "to_query"]

#: Lucene classic syntax characters (``&&`` and ``||`` are covered by ``&`` and ``|``).
_SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')
_OPERATORS = frozenset({"AND", "OR", "NOT"})
MAX_TERMS = 256
#: Half of Lucene's 1,024 clauses: the count is an upper bound, and the margin is cheap.
MAX_CLAUSES = 512


def escape_term(term: str) -> str:
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in term)


def _counts(word: str) -> list[int]:
    """The clause count of each prefix of ``word``: ``counts[i]`` for ``word[: i + 1]``."""
    counts: list[int] = []
    count, in_run = 0, False
    for ch in word:
        wide = unicodedata.east_asian_width(ch) in ("W", "F")
        if (ch.isalnum() or ch == "_") and not wide:
            if not in_run:
                count += 1
            in_run = True
        else:
            if wide or unicodedata.category(ch).startswith("S"):
                count += 1
            in_run = False
        counts.append(count)
    return counts


def clauses(word: str) -> int:
    """At least as many clauses as the analyzer makes of ``word``."""
    counts = _counts(word)
    return counts[-1] if counts else 0


def to_query(question: str, max_terms: int = MAX_TERMS, max_clauses: int = MAX_CLAUSES) -> str:
    """A disjunction of the question's whitespace-separated words, escaped; "" when none remain."""
    seen: set[str] = set()
    terms: list[str] = []
    left = max_clauses
    for word in re.split(r"\s+", question):
        if not word:
            continue
        if word in _OPERATORS:
            word = word.lower()
        # A word made only of syntax characters carries no text to search for.
        if all(ch in _SPECIAL for ch in word) or word in seen:
            continue
        seen.add(word)
        counts = _counts(word)
        if counts[-1] > left:
            # The longest prefix that fits; the words after it are left out.
            word = word[: sum(1 for count in counts if count <= left)]
            left = 0
        else:
            left -= counts[-1]
        if word:
            terms.append(escape_term(word))
        if len(terms) == max_terms or left == 0:
            break
    return " ".join(terms)
