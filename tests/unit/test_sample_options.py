"""The samples (``make demo``, ``make eval``) take the environment's model figures, as the CLI does.

Before, they built their options by hand and an openai-compatible server was sent two
extraction lanes and the hosted output bounds whatever GRAPHRAG_* said.
"""

from __future__ import annotations

import pytest

from examples.recall.run import Embedding, sample_options
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET

STAND_IN = Embedding(OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions), "stand-in", True)
REAL = Embedding(OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions), "a real model", False)


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GRAPHRAG_MODEL_MODE", "GRAPHRAG_PROVIDER", "GRAPHRAG_LANES", "GRAPHRAG_ANSWER_MAX_TOKENS"):
        monkeypatch.delenv(name, raising=False)


def test_an_openai_compatible_server_gets_one_lane_and_the_local_output_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRAPHRAG_MODEL_MODE", "live")
    monkeypatch.setenv("GRAPHRAG_PROVIDER", "openai-compatible")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    options = sample_options(STAND_IN)
    assert options.ingestion.lanes == 1
    assert options.answers.max_output_tokens == 512


def test_a_variable_wins_and_a_real_embedder_keeps_chunks_in_its_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRAG_LANES", "3")
    options = sample_options(REAL)
    assert options.ingestion.lanes == 3 and options.ingestion.fit_chunks_to_embedder
    assert not sample_options(STAND_IN).ingestion.fit_chunks_to_embedder
