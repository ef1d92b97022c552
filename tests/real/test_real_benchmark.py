"""Both real models' benchmark runs (docs/benchmarks.md, "A real local model"), replayed in ``make test``.

``benchmarks/real_model/run.py`` recorded every reply of the 0.5B and the 1.5B model on the
novel sample (grounded extraction of chapter I, the 21 evaluation cases) and on the recall
wiki's Text2Cypher questions. Here each recording is replayed on the suite's Neo4j with no
model called, and the figures must be the committed results' exactly: a change to a prompt,
the grounding or the gates that moves a documented figure fails here. The toolkit's
promises are checked on the same run: every answered citation located, every refusal coded,
every stored mention the bytes of its chunk.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from benchmarks.real_model import run as bench
from graphrag_orm.codes import GraphRefusal, RefusalReason
from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.environment import chat_from_env
from graphrag_orm.store import Store
from tests.database import claim_database, wipe_data

MODELS = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
#: The stand-ins' run (the replies written by hand, ExtractiveChat) is the tables' first column.
STAND_INS = "stand-ins"
PARTS = ("novel", "text2cypher")


@pytest_asyncio.fixture
async def emptied(bare_database: None, store: Store) -> AsyncIterator[None]:
    """The benchmark empties the database itself (the suite's marker too): mark it again after."""
    yield
    await wipe_data(store)
    await claim_database(store)


@pytest.mark.parametrize("model", (*MODELS, STAND_INS))
async def test_a_models_benchmark_replays_to_its_committed_figures(emptied: None, model: str) -> None:
    assert LocalEmbedder.available(bench.RECORDED_EMBEDDER), "the recordings were made with the local MiniLM"
    saved = dict(os.environ)
    try:
        if model == STAND_INS:
            chat, label = None, STAND_INS
        else:
            recording = bench.model_environment(model, "http://127.0.0.1:9/v1", replay=True)  # nothing listens there
            assert recording.is_file()
            chat, label, _mode = chat_from_env()
        result = await bench.run_parts(chat, label, set(PARTS))
    finally:
        os.environ.clear()
        os.environ.update(saved)

    committed = json.loads(bench.results_path(model).read_text(encoding="utf-8"))
    assert bench.differences({k: result[k] for k in PARTS}, {k: committed[k] for k in PARTS}) == []

    novel = result["novel"]
    extraction, evaluation = novel["extraction"], novel["evaluation"]
    assert extraction["documents_failed"] == 0 and extraction["chunks"] > 0
    assert extraction["mentions"] > 0 and extraction["mentions_located"] == extraction["mentions"]
    assert evaluation["cases"] == 21 and evaluation["errors"] == 0
    assert evaluation["answered"] > 0 and evaluation["citation_validity"] == 1.0
    assert set(evaluation["reasons"]) <= {str(reason) for reason in RefusalReason}
    for answer in novel["answers"]:
        assert (answer["answer"] is None) == (answer["reason"] is not None), answer["id"]
    queries = result["text2cypher"]["queries"]
    assert all(row["refusal"] in {str(refusal) for refusal in GraphRefusal} for row in queries if not row["ran"])


def test_a_difference_is_named_by_its_path() -> None:
    committed = {"novel": {"evaluation": {"answered": 8, "seconds": 5686.2}, "answers": [{"id": "a", "reason": None}]}}
    replayed = {"novel": {"evaluation": {"answered": 7, "seconds": 3.9}, "answers": [{"id": "a", "reason": "x"}]}}
    assert bench.differences(replayed, committed) == [
        "novel.answers[0].reason: replayed 'x', committed None",
        "novel.evaluation.answered: replayed 7, committed 8",
    ]
    assert bench.differences(committed, committed) == []
    assert bench.differences({"novel": {"new": 1}}, {"novel": {}}) == ["novel.new: only in the replay"]
