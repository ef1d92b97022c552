"""A passage stage: the fused items reordered by where the question's words stand together.

Off by default; every retriever has it, under the name ``passages``
(``RetrievalOptions(stages=("passages",))``). Both routes score a whole chunk: full text's
BM25 counts the question's words anywhere in it, and the vector is pooled over all of it. So
a 2 KiB chunk where the question's rarer words stand together in one passage counts no more
than one where they lie scattered. This stage gives each fused candidate its best passage's
score, the sum of the idf of the distinct question terms inside a window of ``width_words``
words, the best window over the item's text, and mixes its place among the candidates with
the fused score's: ``(1 - weight) * fused + weight * passage``, each as ``(s - worst) / (best
- worst)`` over the candidates (1 when all score alike). Ties keep the fused order.

Terms are the casefolded words (``\\w+``), English stop words and one-character words left
out, each cut to its first ``prefix_letters`` letters (a crude stemmer: "married" and
"marriage" meet). The idf is over the candidates themselves, ``log(1 + (n - df + 0.5) / (df +
0.5))``: no corpus statistics are read, so the stage costs no database call, nothing is kept
between questions, and in a tenanted graph it sees only what the retrieval returned. It
reads the first ``max_item_chars`` characters of each item (reported as
``PassageItemChars`` when it cut one) and never adds or drops an item. It reorders the
fusion of the vector and full-text routes only: with the graph route, or a route of the
application's, named, it leaves the fused order (and wants no more than ``max_items``).

Measured on the three dev sets against the fusion alone and neo4j-graphrag's
``HybridRetriever`` (docs/benchmarks.md, "A passage stage"): more passages found, at a cost
in latency that keeps it out of the defaults for now (the statement projects every
candidate it is handed).
"""

from __future__ import annotations

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

__all__ = ["MAX_PASSAGE_ITEM_CHARS", "PASSAGE_STAGE", "PassageOptions", "PassageStage", "passage_terms"]

#: The most characters of one item's text the stage reads.
MAX_PASSAGE_ITEM_CHARS: Final = 100_000

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

    width_words: int = Field(40, ge=2, le=1_000, description="words in a passage window")
    weight: float = Field(0.4, ge=0.0, le=1.0, description="the passage score's share of the new order")
    prefix_letters: int = Field(5, ge=1, le=64, description="letters of a word kept as its term")
    candidates: int | None = Field(
        None,
        ge=1,
        le=MAX_STAGE_ITEMS,
        description="fused items reordered; None: every route's candidates (routes x route_candidates)",
    )
    max_item_chars: int = Field(
        8_000, ge=100, le=MAX_PASSAGE_ITEM_CHARS, description="characters of an item's text read"
    )


def passage_terms(text: str, prefix_letters: int = 5) -> list[str]:
    """``text``'s terms in order: casefolded words, stop words and single characters left out, cut to ``prefix_letters``."""
    return [
        word[:prefix_letters]
        for word in _WORD.findall(text.casefold().replace("\u2019", "'"))
        if len(word) > 1 and word not in STOP_WORDS
    ]


def _idf(documents: Iterable[Sequence[str]]) -> dict[str, float]:
    df: Counter[str] = Counter()
    n = 0
    for words in documents:
        df.update(set(words))
        n += 1
    return {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}


def best_window(wanted: dict[str, float], words: Sequence[str], width: int) -> float:
    """The largest sum of ``wanted`` weights of the distinct terms in any ``width`` consecutive words."""
    present: Counter[str] = Counter()
    score = best = 0.0
    for i, word in enumerate(words):
        if word in wanted:
            present[word] += 1
            if present[word] == 1:
                score += wanted[word]
        if i >= width:
            gone = words[i - width]
            if gone in wanted:
                present[gone] -= 1
                if present[gone] == 0:
                    score -= wanted[gone]
        best = max(best, score)
    return best


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
        if self.options.candidates is not None:
            return max(options.max_items, self.options.candidates)
        return min(MAX_STAGE_ITEMS, max(options.max_items, len(options.routes) * options.route_candidates))

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult:
        count = self.options.candidates or len(items)
        sent = items[:count]
        wanted_terms = set(passage_terms(request.question, self.options.prefix_letters))
        if len(sent) < 2 or not wanted_terms or self.options.weight == 0 or not applies(request.options):
            return StageResult(items)
        cap = self.options.max_item_chars
        limits = (Limit(name=LimitName.PASSAGE_ITEM_CHARS, value=cap),) if any(len(i.text) > cap for i in sent) else ()
        words = [passage_terms(item.text[:cap], self.options.prefix_letters) for item in sent]
        idf = _idf(words)
        wanted = {term: idf.get(term, 0.0) for term in wanted_terms}
        passage = _placed([best_window(wanted, w, self.options.width_words) for w in words])
        fused = _placed([item.score for item in sent])
        weight = self.options.weight
        mixed = [(1 - weight) * f + weight * p for f, p in zip(fused, passage, strict=True)]
        order = sorted(range(len(sent)), key=lambda i: (-mixed[i], i))
        return StageResult((*(sent[i] for i in order), *items[len(sent) :]), limits)
