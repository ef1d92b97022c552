"""Embedders (OpenAI over loopback HTTP, the hashing stand-in) and vector validation."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable

import pytest

from graphrag_orm.embeddings import (
    Embedder,
    EmbeddingRejected,
    EmbeddingSet,
    EmbeddingVectors,
    HashingEmbedder,
    OpenAIEmbedder,
    validate_vectors,
)
from graphrag_orm.embeddings.validation import validate_usage
from graphrag_orm.errors import ConfigurationError
from tests.support.openai_server import OpenAIServer, default_embedding

EMBEDDINGS = "/v1/embeddings"


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


def float32(vector: list[float]) -> list[float]:
    return array("f", vector).tolist()


# ---------------------------------------------------------------- OpenAIEmbedder


async def test_openai_embedder_batches_within_one_call_in_input_order(openai_server: OpenAIServer) -> None:
    texts = [f"text number {i}" for i in range(7)]
    async with OpenAIEmbedder("test-embedding", base_url=openai_server.url, api_key="k", batch_size=3) as embedder:
        vectors = await embedder.embed(texts)
    sent = [request.body["input"] for request in openai_server.requests_to(EMBEDDINGS)]
    assert sent == [texts[0:3], texts[3:6], texts[6:7]]
    assert vectors == [float32(default_embedding(text, 8)) for text in texts]
    assert isinstance(vectors, EmbeddingVectors)


async def test_openai_embedder_passes_dimensions_and_sums_usage(openai_server: OpenAIServer) -> None:
    async with OpenAIEmbedder(
        "text-embedding-3-small", dimensions=16, base_url=openai_server.url, api_key="k", batch_size=2
    ) as embedder:
        vectors = await embedder.embed(["one two", "three", "four five six"])
    bodies = [request.body for request in openai_server.requests_to(EMBEDDINGS)]
    assert [body["dimensions"] for body in bodies] == [16, 16]
    assert all(body["model"] == "text-embedding-3-small" for body in bodies)
    assert all(len(vector) == 16 for vector in vectors)
    assert vectors.input_tokens == 6


async def test_openai_embedder_sends_no_dimensions_unless_set_and_reports_missing_usage(
    openai_server: OpenAIServer,
) -> None:
    openai_server.embedding_tokens = None
    async with OpenAIEmbedder("m", base_url=openai_server.url, api_key="k") as embedder:
        vectors = await embedder.embed(["alpha"])
    assert "dimensions" not in openai_server.requests[0].body
    assert vectors.input_tokens is None


async def test_openai_embedder_makes_no_call_for_no_texts(openai_server: OpenAIServer) -> None:
    async with OpenAIEmbedder("m", base_url=openai_server.url, api_key="k") as embedder:
        vectors = await embedder.embed([])
    assert vectors == [] and vectors.input_tokens == 0
    assert openai_server.requests == []


async def test_openai_embedder_sends_the_key_and_reads_the_environment_only_when_not_given(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-environment")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    async with OpenAIEmbedder("m") as from_environment:
        await from_environment.embed(["alpha"])
    async with OpenAIEmbedder("m", api_key="given", base_url=openai_server.url) as given:
        await given.embed(["alpha"])
    keys = [request.headers["authorization"] for request in openai_server.requests]
    assert keys == ["Bearer from-environment", "Bearer given"]


async def test_openai_embedder_calls_a_local_endpoint_without_a_key(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    async with OpenAIEmbedder("m", base_url=openai_server.url) as embedder:
        await embedder.embed(["alpha"])
    assert openai_server.requests[0].headers["authorization"] == "Bearer no-key"


def test_openai_embedder_refuses_bad_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError) as refused:
        OpenAIEmbedder("m")  # neither a key nor an endpoint
    assert refused.value.code == "invalid-option"
    refusals: list[Callable[[], object]] = [
        lambda: OpenAIEmbedder("m", api_key="k", batch_size=0),
        lambda: OpenAIEmbedder("m", api_key="k", dimensions=5000),
        lambda: OpenAIEmbedder("m", api_key="k", timeout=0),
    ]
    for bad in refusals:
        with pytest.raises(ConfigurationError) as refused:
            bad()
        assert refused.value.code == "invalid-option"


async def test_openai_embedder_orders_by_index_and_refuses_a_short_response(openai_server: OpenAIServer) -> None:
    openai_server.mangle_embeddings = lambda data: list(reversed(data))
    async with OpenAIEmbedder("m", base_url=openai_server.url, api_key="k") as embedder:
        vectors = await embedder.embed(["a", "b", "c"])
        assert vectors == [float32(default_embedding(text, 8)) for text in "abc"]
        openai_server.mangle_embeddings = lambda data: data[:-1]
        with pytest.raises(EmbeddingRejected) as rejected:
            await embedder.embed(["a", "b"])
    assert rejected.value.code == "embedding-count"


# ---------------------------------------------------------------- validation

SET = EmbeddingSet(model="m", dimensions=3)


def rejection(vectors: list[list[float]], expected: int = 1) -> str:
    with pytest.raises(EmbeddingRejected) as rejected:
        validate_vectors(vectors, expected, SET)
    return rejected.value.code


def test_a_wrong_number_of_vectors_is_refused() -> None:
    assert rejection([[1.0, 0.0, 0.0]], expected=2) == "embedding-count"


def test_a_vector_of_the_wrong_length_is_refused() -> None:
    assert rejection([[1.0, 0.0]]) == "embedding-dimensions"


def test_nan_is_refused() -> None:
    assert rejection([[1.0, math.nan, 0.0]]) == "invalid-embedding"


def test_infinity_is_refused() -> None:
    assert rejection([[1.0, -math.inf, 0.0]]) == "invalid-embedding"


def test_a_coordinate_beyond_float32_is_refused() -> None:
    assert rejection([[1.0, 3.5e38, 0.0]]) == "invalid-embedding"
    assert rejection([[-1e300, 0.0, 0.0]]) == "invalid-embedding"


def test_an_all_zero_vector_is_refused() -> None:
    assert rejection([[0.0, 0.0, 0.0]]) == "invalid-embedding"


def test_a_non_number_is_refused() -> None:
    assert rejection([[1.0, "0.5", 0.0]]) == "invalid-embedding"  # type: ignore[list-item]


@pytest.mark.parametrize(
    "output",
    [None, (v for v in [[1.0, 0.0, 0.0]]), iter([[1.0, 0.0, 0.0]]), "abc", {"0": [1.0, 0.0, 0.0]}, 3],
    ids=["none", "generator", "iterator", "text", "mapping", "number"],
)
def test_an_output_that_is_not_a_list_of_vectors_is_embedding_count_not_a_type_error(output: object) -> None:
    assert rejection(output) == "embedding-count"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "vector",
    [None, (x for x in (1.0, 0.0, 0.0)), "1.0", {"a": 1.0, "b": 0.0, "c": 0.0}, 1.0],
    ids=["none", "generator", "text", "mapping", "number"],
)
def test_a_vector_that_is_not_a_list_of_numbers_is_invalid_embedding_not_a_type_error(vector: object) -> None:
    assert rejection([[1.0, 0.0, 0.0], vector], expected=2) == "invalid-embedding"  # type: ignore[list-item]


@pytest.mark.parametrize("tokens", [1.5, 2.0, "12", "many", -1, True, math.nan, math.inf, [3]])
def test_a_token_count_that_is_not_a_whole_number_is_embedding_failed(tokens: object) -> None:
    with pytest.raises(EmbeddingRejected) as rejected:
        validate_usage(tokens)
    assert rejected.value.code == "embedding-failed"


def test_a_whole_token_count_or_none_is_kept() -> None:
    assert validate_usage(None) is None
    assert validate_usage(0) == 0
    assert validate_usage(12) == 12


def test_valid_vectors_come_back_as_float_lists_and_unchanged() -> None:
    vectors = [(3, 4, 0), [0.5, -0.25, 3.4028234663852886e38]]
    assert validate_vectors(vectors, 2, SET) == [[3.0, 4.0, 0.0], [0.5, -0.25, 3.4028234663852886e38]]


def test_normalising_sets_get_unit_vectors() -> None:
    normalising = SET.model_copy(update={"normalize": True})
    assert validate_vectors([[3.0, 4.0, 0.0]], 1, normalising) == [[0.6, 0.8, 0.0]]
    tiny = validate_vectors([[1e-300, 0.0, 0.0]], 1, normalising)
    assert tiny == [[1.0, 0.0, 0.0]]


# ---------------------------------------------------------------- HashingEmbedder


async def test_hashing_is_deterministic_and_seeded() -> None:
    texts = ["The knight rides to the castle.", "Bread rises in the oven."]
    first = await HashingEmbedder(64).embed(texts)
    again = await HashingEmbedder(64).embed(texts)
    other_seed = await HashingEmbedder(64, seed=7).embed(texts)
    assert first == again
    assert first != other_seed


async def test_hashing_vectors_are_unit_length_and_never_zero() -> None:
    vectors = await HashingEmbedder(32).embed(["", "   ", "!!!", "a", "word " * 50])
    assert all(abs(math.hypot(*vector) - 1.0) < 1e-9 for vector in vectors)
    assert vectors[0] == vectors[1]  # no characters but spaces: the one fixed vector
    assert vectors[2] != vectors[0]  # punctuation still hashes
    validate_vectors(vectors, 5, EmbeddingSet(model="hashing", dimensions=32))


async def test_related_texts_score_higher_than_unrelated() -> None:
    embedder = HashingEmbedder(256)
    query, related, inflected, unrelated = await embedder.embed(
        [
            "embedding vectors for retrieval",
            "retrieval with embedding vectors in a graph",
            "embedded vector retrieving",
            "the baker sells fresh bread every morning",
        ]
    )
    assert cosine(query, related) > cosine(query, unrelated) + 0.3
    assert cosine(query, inflected) > cosine(query, unrelated)


async def test_hashing_counts_word_tokens_and_labels_itself_a_stand_in() -> None:
    embedder = HashingEmbedder(16)
    vectors = await embedder.embed(["Hello, world!", "one two three", ""])
    assert vectors.input_tokens == 5
    assert embedder.is_stand_in
    assert "stand-in" in embedder.label and "not a semantic model" in embedder.label
    assert isinstance(embedder, Embedder)


def test_hashing_dimensions_are_bounded() -> None:
    for dimensions in (0, 4097):
        with pytest.raises(ConfigurationError) as refused:
            HashingEmbedder(dimensions)
        assert refused.value.code == "invalid-option"
