"""The dev set (examples/devset): its cases load, each kind is there, every required phrase is in the corpus."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from graphrag_orm.evaluation import load_cases

DEVSET = Path(__file__).resolve().parents[2] / "examples" / "devset"


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("_", "").replace("*", "")).strip()


def test_the_dev_set_has_forty_cases_of_four_kinds_on_a_corpus_of_fifty_thousand_words() -> None:
    corpus = (DEVSET / "pride-and-prejudice.txt").read_text(encoding="utf-8")
    assert len(corpus.split()) >= 50_000
    cases = load_cases(DEVSET / "cases.jsonl")
    kinds = Counter((case.id or "").split("-", 1)[0] for case in cases)
    assert len(cases) >= 40 and set(kinds) == {"multihop", "paraphrase", "aggregate", "unanswerable"}
    text = _normal(corpus)
    for case in cases:
        assert case.answerable == bool(case.required_phrases), case.id
        for phrase in case.required_phrases:
            assert _normal(phrase) in text, f"{case.id}: {phrase!r}"
