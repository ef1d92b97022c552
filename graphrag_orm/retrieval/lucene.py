"""Turning a question into a Lucene query that means only "any of these words".

Every character Lucene's classic query parser treats as syntax is escaped with a
backslash, and the operator words (AND, OR, NOT) are lower-cased, so no question can
break the query or change its meaning. Terms are de-duplicated and bounded, because a
query with more clauses than Lucene allows fails.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TERMS", "escape_term", "to_query"]

#: Lucene classic syntax characters (``&&`` and ``||`` are covered by ``&`` and ``|``).
_SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')
_OPERATORS = frozenset({"AND", "OR", "NOT"})
MAX_TERMS = 256


def escape_term(term: str) -> str:
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in term)


def to_query(question: str, max_terms: int = MAX_TERMS) -> str:
    """A disjunction of the question's whitespace-separated words, escaped; "" when none remain."""
    seen: set[str] = set()
    terms: list[str] = []
    for word in re.split(r"\s+", question):
        if not word:
            continue
        if word in _OPERATORS:
            word = word.lower()
        # A word made only of syntax characters carries no text to search for.
        if all(ch in _SPECIAL for ch in word):
            continue
        escaped = escape_term(word)
        if escaped not in seen:
            seen.add(escaped)
            terms.append(escaped)
        if len(terms) == max_terms:
            break
    return " ".join(terms)
