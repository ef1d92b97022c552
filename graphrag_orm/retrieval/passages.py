"""A passage stage: the fused items reordered by where the question's words stand together.

In the default retrieval; every retriever has it, under the name ``passages``
(``RetrievalOptions(stages=())`` turns it off). Both routes score a whole chunk: full text's
BM25 counts the question's words anywhere in it, and the vector is pooled over all of it. So
a 2 KiB chunk where the question's rarer words stand together in one passage counts no more
than one where they lie scattered. This stage gives each of the fused first
``candidates_per_item * max_items`` its best passage's score, the sum of the idf of the
distinct question terms starting inside a window of ``width_chars`` characters, the best
window over the item's text, and mixes its place among them with the fused score's: ``(1 -
weight) * fused + weight * passage``, each as ``(s - worst) / (best - worst)`` over the
candidates (1 when all score alike). Ties keep the fused order.

The question's terms are its casefolded words (``\\w+``), English stop words and
one-character words left out, each cut to its first ``prefix_letters`` letters (a crude
stemmer: "married" and "marriage" meet). An item is never split into words: each term is
looked for where it starts a word (a shorter term, as a whole word), so the cost is the
terms' substring searches. The idf is over the candidates themselves, ``log(1 + (n - df +
0.5) / (df + 0.5))``: no corpus statistics are read, so the stage costs no database call,
nothing is kept between questions, and in a tenanted graph it sees only what the retrieval
returned. It reads the first ``max_item_chars`` characters of each item (reported as
``PassageItemChars`` when it cut one) and never adds or drops an item. It reorders the
fusion of the vector and full-text routes only: with the graph route, or a route of the
application's, named, it leaves the fused order (and wants no more than ``max_items``).

Measured on the three dev sets against the fusion alone and neo4j-graphrag's
``HybridRetriever``, and at 20k and 100k chunks against the raw index queries
(docs/benchmarks.md, "A passage stage").
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

from pydantic import Field

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import EvidenceItem, Route
from graphrag_orm.retrieval.options import PASSAGE_STAGE, RetrievalOptions
from graphrag_orm.retrieval.routes import MAX_STAGE_ITEMS, RouteRequest, StageResult
from graphrag_orm.values import Limit, Options

__all__ = [
    "MAX_PASSAGE_ITEM_CHARS",
    "MAX_PASSAGE_TERMS",
    "PASSAGE_STAGE",
    "PassageOptions",
    "PassageStage",
    "best_window",
    "passage_terms",
    "term_hits",
]

#: The most characters of one item's text the stage reads.
MAX_PASSAGE_ITEM_CHARS: Final = 100_000
#: The most distinct question terms the stage looks for (each is a substring search of every item).
MAX_PASSAGE_TERMS: Final = 256

_WORD = re.compile(r"\w+")
#: The routes whose fusion the stage reorders.
TEXT_ROUTES: Final = frozenset({Route.VECTOR.value, Route.FULL_TEXT.value})
#: English function words, and the words questions are made of ("what", "which", "did", "tell").
STOP_WORDS: Final = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    mr mrs miss said say says tell told""".split()  # noqa: SIM905 (a word list reads as words)
)


class PassageOptions(Options):
    """How wide a passage is, how much it counts, and how much of each item is read."""

    width_chars: int = Field(500, ge=20, le=20_000, description="characters in a passage window")
    weight: float = Field(0.4, ge=0.0, le=1.0, description="the passage score's share of the new order")
    prefix_letters: int = Field(5, ge=1, le=64, description="letters of a word kept as its term")
    candidates_per_item: int = Field(
        2, ge=1, le=32, description="fused items reordered for each of max_items (at most the stage bound)"
    )
    max_item_chars: int = Field(
        8_000, ge=100, le=MAX_PASSAGE_ITEM_CHARS, description="characters of an item's text read"
    )
    max_terms: int = Field(
        32, ge=1, le=MAX_PASSAGE_TERMS, description="distinct question terms looked for, the first in the question"
    )


def _folded(text: str) -> str:
    return text.casefold().replace("\u2019", "'")


def passage_terms(text: str, prefix_letters: int = 5) -> list[str]:
    """``text``'s terms in order: casefolded words, stop words and single characters left out, cut to ``prefix_letters``."""
    return [word[:prefix_letters] for word in _WORD.findall(_folded(text)) if len(word) > 1 and word not in STOP_WORDS]


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


@functools.cache
def _stop_word_starts(prefix_letters: int) -> frozenset[str]:
    """The first ``prefix_letters`` letters of every stop word: a term among them may start one."""
    return frozenset(word[:prefix_letters] for word in STOP_WORDS)


def _counts(text: str, at: int) -> bool:
    """Whether the word starting at ``at`` is a term's word: no stop word, more than one character."""
    word = _WORD.match(text, at)
    return word is not None and len(word[0]) > 1 and word[0] not in STOP_WORDS


def term_hits(text: str, terms: Iterable[str], prefix_letters: int = 5) -> list[tuple[int, str]]:
    """Where each of ``terms`` starts a word of the casefolded ``text``, by offset, as
    :func:`passage_terms` would cut that word: a term of ``prefix_letters`` letters starts any
    word (it is a cut word) that is no stop word, a shorter one is a whole word. A substring
    search per term, never a pass over each word: the stage's cost is the terms' hits."""
    hits: list[tuple[int, str]] = []
    end = len(text)
    starts = _stop_word_starts(prefix_letters)
    for term in terms:
        size = len(term)
        if not size:
            continue
        # Only a term that starts a stop word ("shoul" for "shoulder") needs its word read.
        check = size >= prefix_letters and (term in starts or size == 1)
        at = text.find(term)
        while at >= 0:
            after = at + size
            if (
                (at == 0 or not _is_word(text[at - 1]))
                and (size >= prefix_letters or after == end or not _is_word(text[after]))
                and (not check or _counts(text, at))
            ):
                hits.append((at, term))
            at = text.find(term, after)
    hits.sort()
    return hits


def best_window(wanted: dict[str, float], hits: Sequence[tuple[int, str]], width: int) -> float:
    """The largest sum of ``wanted`` weights of the distinct terms starting inside any ``width``
    characters, over ``hits`` (offset, term) in offset order (rounded to 9 places, so that
    sums of the same terms in another order score alike)."""
    if width < 1:
        raise ValueError("a window is at least one character wide")
    present: Counter[str] = Counter()
    score = best = 0.0
    first = 0
    for at, term in hits:
        while hits[first][0] <= at - width:
            gone = hits[first][1]
            present[gone] -= 1
            if present[gone] == 0:
                score -= wanted[gone]
            first += 1
        present[term] += 1
        if present[term] == 1:
            score += wanted[term]
        best = max(best, score)
    return round(best, 9)


def _idf(hits: Sequence[Sequence[tuple[int, str]]], terms: Iterable[str]) -> dict[str, float]:
    """Each term's idf over the candidates, ``log(1 + (n - df + 0.5) / (df + 0.5))``."""
    df: Counter[str] = Counter()
    for found in hits:
        df.update({term for _, term in found})
    n = len(hits)
    return {term: math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5)) for term in terms}


def applies(options: RetrievalOptions) -> bool:
    """Whether the stage reorders under ``options``: only the vector and full-text routes' fusion.
    The graph route brings chunks for the links between facts, which the question's words need
    not name, and a route of the application's was not measured: with either, the fused order stays."""
    return options.routes <= TEXT_ROUTES


def _placed(scores: Sequence[float]) -> list[float]:
    top, low = max(scores), min(scores)
    span = top - low
    return [(s - low) / span if span > 0 else 1.0 for s in scores]


class PassageStage:
    """The passage stage described in the module docstring (name ``passages``)."""

    name = PASSAGE_STAGE

    def __init__(self, options: PassageOptions | None = None) -> None:
        self.options = options or PassageOptions()

    def wants(self, options: RetrievalOptions) -> int:
        if not applies(options):
            return options.max_items
        return min(MAX_STAGE_ITEMS, self.options.candidates_per_item * options.max_items)

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult:
        sent = items[: self.wants(request.options)]
        distinct = list(dict.fromkeys(passage_terms(request.question, self.options.prefix_letters)))
        wanted_terms = distinct[: self.options.max_terms]
        if len(sent) < 2 or not wanted_terms or self.options.weight == 0 or not applies(request.options):
            return StageResult(items)
        cap = self.options.max_item_chars
        limits: list[Limit] = []
        if len(distinct) > len(wanted_terms):
            limits.append(Limit(name=LimitName.PASSAGE_TERMS, value=self.options.max_terms))
        if any(len(i.text) > cap for i in sent):
            limits.append(Limit(name=LimitName.PASSAGE_ITEM_CHARS, value=cap))
        prefix = self.options.prefix_letters
        hits = [term_hits(_folded(item.text[:cap]), wanted_terms, prefix) for item in sent]
        wanted = _idf(hits, wanted_terms)
        passage = _placed([best_window(wanted, found, self.options.width_chars) for found in hits])
        fused = _placed([item.score for item in sent])
        weight = self.options.weight
        mixed = [(1 - weight) * f + weight * p for f, p in zip(fused, passage, strict=True)]
        order = sorted(range(len(sent)), key=lambda i: (-mixed[i], i))
        return StageResult((*(sent[i] for i in order), *items[len(sent) :]), tuple(limits))
