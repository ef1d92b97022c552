"""The dev sets (examples/devset, examples/devset2, examples/devset3): their cases load, each kind is there,
every required phrase is in the corpus, and the expected document is the corpus's URI as the relevance benchmark
ingests it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from graphrag_orm.evaluation import load_cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SETS = [
    ("devset", "pride-and-prejudice.txt"),
    ("devset2", "frankenstein.txt"),
    ("devset3", "the-picture-of-dorian-gray.txt"),
]


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("_", "").replace("*", "")).strip()


@pytest.mark.parametrize(("folder", "corpus_name"), SETS)
def test_the_dev_set_has_forty_cases_of_four_kinds_on_a_corpus_of_fifty_thousand_words(
    folder: str, corpus_name: str
) -> None:
    devset = EXAMPLES / folder
    assert sorted(path.name for path in devset.glob("*.txt")) == [corpus_name]
    corpus = (devset / corpus_name).read_text(encoding="utf-8")
    assert len(corpus.split()) >= 50_000
    cases = load_cases(devset / "cases.jsonl")
    kinds = Counter((case.id or "").split("-", 1)[0] for case in cases)
    assert len(cases) >= 40 and set(kinds) == {"multihop", "paraphrase", "aggregate", "unanswerable"}
    uri = f"https://example.org/graphrag-orm/{folder}/{corpus_name}"
    text = _normal(corpus)
    for case in cases:
        assert case.answerable == bool(case.required_phrases), case.id
        assert list(case.expected_documents) == ([uri] if case.answerable else []), case.id
        for phrase in case.required_phrases:
            assert _normal(phrase) in text, f"{case.id}: {phrase!r}"
