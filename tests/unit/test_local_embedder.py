"""LocalEmbedder (a real model on the CPU, offline), embedder windows and chunks kept within them.

The model tests need the ``local`` extra; without it they are skipped on a developer's
machine and fail in CI (``CI`` set), where the extra is installed. The window tests
(``max_input_tokens``, ``within_window``) need no model.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions, EmbedderTokenCounter, within_window
from graphrag_orm.embeddings import EmbeddingVectors, HashingEmbedder, LocalEmbedder, OpenAIEmbedder
from graphrag_orm.embeddings.base import count_input_tokens, input_window
from graphrag_orm.embeddings.local import (
    DEFAULT_BATCH_SIZE,
    MAX_BATCH_SIZE,
    MAX_SESSIONS,
    default_sessions,
    default_threads,
)
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.loaders import LoadedDocument

REPO = Path(__file__).resolve().parents[2]
ALICE = REPO / "examples" / "novel" / "alice-chapter-1.txt"
MINILM = "all-MiniLM-L6-v2-int8"

needs_model = pytest.mark.skipif(
    not LocalEmbedder.available() and not os.environ.get("CI"),
    reason="the local extra is not installed (pip install 'graphrag-orm[local]')",
)


def python(code: str, **env: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter (offline, no hub) and read the JSON it prints last."""
    environment = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **env)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=environment, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def norm(vector: list[float]) -> float:
    return math.hypot(*vector)


def cosine(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (norm(a) * norm(b))


# ---------------------------------------------------------------- without the model


def test_importing_local_embedder_loads_no_model_runtime() -> None:
    seen = python(
        "import json, sys\n"
        "from graphrag_orm.embeddings import LocalEmbedder\n"
        "LocalEmbedder.available()\n"
        "print(json.dumps({m: m in sys.modules for m in ('onnxruntime', 'tokenizers', 'wordllama', 'numpy')}))"
    )
    assert seen == {"onnxruntime": False, "tokenizers": False, "wordllama": False, "numpy": False}


@pytest.mark.parametrize("blocked", ["onnxruntime", "tokenizers"])
def test_without_the_extra_local_embedder_is_unavailable_and_building_one_says_how_to_install(blocked: str) -> None:
    result = python(
        "import json, sys\n"
        f"sys.modules[{blocked!r}] = None  # as if the package were not installed\n"
        "from graphrag_orm.embeddings import LocalEmbedder\n"
        "from graphrag_orm.errors import GraphRagError\n"
        "available = LocalEmbedder.available()\n"
        "try:\n"
        "    LocalEmbedder()\n"
        "    print(json.dumps({'available': available, 'built': True}))\n"
        "except GraphRagError as error:\n"
        "    print(json.dumps({'available': available, 'code': error.code, 'message': error.message}))\n"
    )
    assert result["available"] is False
    assert result["code"] == "local-model-missing"
    assert "pip install 'graphrag-orm[local]'" in result["message"]
    assert "\n" not in result["message"]


def test_local_embedder_refuses_an_unknown_model_and_batch_sizes_out_of_bounds() -> None:
    builds: list[Callable[[], object]] = [
        lambda: LocalEmbedder("no-such-model"),
        lambda: LocalEmbedder(batch_size=0),
        lambda: LocalEmbedder(batch_size=MAX_BATCH_SIZE + 1),
        lambda: LocalEmbedder(threads=0),
        lambda: LocalEmbedder(sessions=0),
        lambda: LocalEmbedder(sessions=MAX_SESSIONS + 1),
        lambda: LocalEmbedder(sessions=True),  # type: ignore[arg-type]
        lambda: LocalEmbedder(sessions="2"),  # type: ignore[arg-type]
    ]
    for build in builds:
        with pytest.raises(ConfigurationError) as refused:
            build()
        assert refused.value.code == "invalid-option"


def test_embedders_declare_the_tokens_they_read() -> None:
    assert input_window(HashingEmbedder(8)) is None
    small = OpenAIEmbedder("text-embedding-3-small", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert small.max_input_tokens == 8191 and input_window(small) == 8191
    other = OpenAIEmbedder("nomic-embed-text", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert input_window(other) is None
    assert input_window(OpenAIEmbedder("nomic-embed-text", api_key="k", max_input_tokens=2048)) == 2048

    class Plain:  # a user's embedder without the attribute keeps working
        async def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0] for _ in texts]

    assert input_window(Plain()) is None
    assert count_input_tokens(Plain(), ["abcdefgh", "é"]) == [2, 1]  # four bytes a token, rounded up


class WordWindow(HashingEmbedder):
    """The stand-in with a window of ``window`` tokens, counted as words plus two specials."""

    def __init__(self, window: int) -> None:
        super().__init__(16)
        self.max_input_tokens = window

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 2


def alice() -> LoadedDocument:
    return LoadedDocument(source_uri="https://example.org/alice", media_type="text/plain", utf8=ALICE.read_bytes())


def test_within_window_keeps_every_chunk_within_the_embedders_window_and_covers_the_text() -> None:
    document = alice()
    embedder = WordWindow(120)
    default = Chunker()
    assert any(embedder.count_tokens(text) > 120 for text in default.plan(document).texts(document.utf8))
    fitted = within_window(default, embedder)
    plan = fitted.plan(document)
    texts = plan.texts(document.utf8)
    assert all(embedder.count_tokens(text) <= 120 for text in texts)
    assert all(chunk.token_count is not None and chunk.token_count <= 120 for chunk in plan.chunks)
    assert plan.chunks[0].start_byte == 0 and plan.chunks[-1].end_byte == len(document.utf8)
    assert fitted.fingerprint != default.fingerprint
    assert fitted.options.max_utf8_bytes == default.options.max_utf8_bytes
    # A smaller budget of the chunker's own wins; no window leaves the chunker as it is.
    assert within_window(Chunker(ChunkerOptions(max_tokens=50)), embedder).options.max_tokens == 50
    assert within_window(default, HashingEmbedder(8)) is default
    assert EmbedderTokenCounter(embedder).identity == "embedder:WordWindow:graphrag-orm-hashing-v1-seed0"


# ---------------------------------------------------------------- the model


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder(MINILM)


@needs_model
def test_the_default_model_is_e5_and_building_it_fetches_nothing() -> None:
    assert LocalEmbedder.installed()
    default = LocalEmbedder()
    assert default.model_name == "e5-small-v2-int8" and default.dimensions == 384 and default.window_tokens == 512
    assert default._loaded is None  # loaded (and, the first time, fetched) when it first embeds
    assert default.embedding_set().id == "e5-small-v2-int8:384:cosine"


@needs_model
def test_minilm_has_384_dimensions_and_a_256_piece_window(local: LocalEmbedder) -> None:
    assert LocalEmbedder.available(MINILM)
    assert local.model_name == MINILM
    assert local.dimensions == 384 and local.window_tokens == 256
    # Long texts are pooled over windows by default: the embedder reads every token.
    assert local.long_texts == "pool" and local.max_input_tokens is None
    assert LocalEmbedder(MINILM, long_texts="first").max_input_tokens == 256
    assert local.batch_size == DEFAULT_BATCH_SIZE // local.sessions
    embedding_set = local.embedding_set()
    assert embedding_set.model == MINILM and embedding_set.dimensions == 384
    assert embedding_set.id == "all-MiniLM-L6-v2-int8:384:cosine"


@needs_model
async def test_local_vectors_are_normalised_and_in_input_order(local: LocalEmbedder) -> None:
    texts = ["The rabbit took a watch out of its pocket.", "", "Members can borrow up to twelve items.", "  "]
    together = await local.embed(texts)
    assert isinstance(together, EmbeddingVectors) and len(together) == len(texts)
    assert all(len(vector) == 384 and abs(norm(vector) - 1.0) < 1e-5 for vector in together)
    for text, vector in zip(texts, together, strict=True):
        (alone,) = await local.embed([text])
        assert cosine(alone, vector) > 0.9999
    assert together.input_tokens is not None and together.input_tokens > 0


@needs_model
async def test_local_embedder_makes_no_model_call_for_no_texts(local: LocalEmbedder) -> None:
    vectors = await local.embed([])
    assert vectors == [] and vectors.input_tokens == 0


@needs_model
async def test_local_embedder_runs_batches_of_at_most_batch_size_off_the_event_loop() -> None:
    embedder = LocalEmbedder(MINILM, batch_size=3)
    runtime = embedder._runtime
    sizes: list[int] = []
    loop_thread: list[bool] = []
    main = threading.get_ident()

    class Recording:
        sessions = 1

        def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
            sizes.append(len(texts))
            loop_thread.append(threading.get_ident() == main)
            return runtime.embed(texts)

        def count(self, text: str) -> int:
            return runtime.count(text)

        def offsets(self, text: str) -> list[tuple[int, int]]:
            return runtime.offsets(text)

    embedder._loaded = Recording()
    texts = [f"sentence number {'x' * i}" for i in range(8)]
    vectors = await embedder.embed(texts)
    assert sizes == [3, 3, 2] and not any(loop_thread)
    expected = await LocalEmbedder(MINILM).embed(texts)
    assert all(cosine(a, b) > 0.9999 for a, b in zip(vectors, expected, strict=True))


@needs_model
def test_two_sessions_by_default_sharing_the_cores_and_eight_texts_in_the_model() -> None:
    cores = len(os.sched_getaffinity(0))
    assert default_sessions() == (2 if cores >= 2 else 1)
    assert default_threads(1) is None and default_threads(2) == max(1, cores // 2)
    embedder = LocalEmbedder(MINILM)
    assert embedder.sessions == default_sessions() and embedder.threads == default_threads(embedder.sessions)
    assert embedder.sessions * embedder.batch_size == DEFAULT_BATCH_SIZE or embedder.sessions == 1
    one = LocalEmbedder(MINILM, sessions=1)
    assert (one.sessions, one.threads, one.batch_size) == (1, None, DEFAULT_BATCH_SIZE)
    chosen = LocalEmbedder(MINILM, sessions=3, threads=1, batch_size=5)
    assert (chosen.sessions, chosen.threads, chosen.batch_size) == (3, 1, 5)
    assert LocalEmbedder(MINILM, sessions=8).batch_size == 1
    if LocalEmbedder.installed("wordllama-l2-supercat-256"):  # one batch at a time, its own threads
        wordllama = LocalEmbedder("wordllama-l2-supercat-256", sessions=4)
        assert (wordllama.sessions, wordllama.threads, wordllama.batch_size) == (1, None, DEFAULT_BATCH_SIZE)


@needs_model
async def test_two_sessions_run_two_batches_of_one_call_at_once_and_agree_with_one_session() -> None:
    embedder = LocalEmbedder(MINILM, batch_size=2, sessions=2, threads=1)
    runtime = embedder._runtime
    assert runtime.sessions == 2
    # Each batch waits at the barrier for the other: run one at a time, they would time out.
    together = threading.Barrier(2, timeout=20)

    class Meeting:
        sessions = runtime.sessions

        def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
            together.wait()
            return runtime.embed(texts)

        def count(self, text: str) -> int:
            return runtime.count(text)

        def offsets(self, text: str) -> list[tuple[int, int]]:
            return runtime.offsets(text)

    embedder._loaded = Meeting()
    texts = ["The rabbit took a watch out of its pocket.", "Members borrow twelve items.", "a", "Tea at six."]
    vectors = await embedder.embed(texts)
    expected = await LocalEmbedder(MINILM, sessions=1).embed(texts)
    assert len(vectors) == 4 and all(cosine(a, b) > 0.9999 for a, b in zip(vectors, expected, strict=True))


@needs_model
def test_a_batch_waits_for_an_idle_session_and_every_session_returns_after_a_failure() -> None:
    runtime = LocalEmbedder(MINILM, sessions=2, threads=1)._runtime
    held = [runtime._idle.get(), runtime._idle.get()]  # type: ignore[attr-defined]
    done = threading.Event()
    worker = threading.Thread(target=lambda: (runtime.embed(["waiting"]), done.set()))
    worker.start()
    assert not done.wait(0.3)  # both sessions busy: the batch waits
    runtime._idle.put(held.pop())  # type: ignore[attr-defined]
    assert done.wait(20)
    worker.join()
    runtime._idle.put(held.pop())  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        runtime.embed([None])  # type: ignore[list-item]  # the tokenizer refuses it
    assert runtime._idle.qsize() == 2  # type: ignore[attr-defined]


@needs_model
def test_local_embedder_counts_word_pieces_with_the_models_tokenizer(local: LocalEmbedder) -> None:
    assert local.count_tokens("hello world") == 4  # [CLS] hello world [SEP]
    document = alice()
    texts = Chunker().plan(document).texts(document.utf8)
    assert all(local.count_tokens(text) > 256 for text in texts if len(text.encode()) > 1800)


@needs_model
async def test_semantic_pairs_rank_above_unrelated_texts(local: LocalEmbedder) -> None:
    pairs = [
        ("How many books can I take home at once?", "Members can borrow up to twelve items at a time."),
        ("Is there a penalty for returning things late?", "The library charges no late fees."),
        ("Which bike is built for heavy loads?", "Long-tail frame, two 500 Wh batteries, four-piston brakes."),
        ("What is the name of Alice's cat?", "'Dinah'll miss me very much to-night!' (Dinah was the cat.)"),
        ("When does the book club meet?", "The reading club meets on the first Monday of each month."),
    ]
    questions = await local.embed([q for q, _ in pairs])
    answers = await local.embed([a for _, a in pairs])
    for i, question in enumerate(questions):
        own = cosine(question, answers[i])
        others = [cosine(question, answer) for j, answer in enumerate(answers) if j != i]
        assert own > max(others), (pairs[i][0], own, max(others))


@needs_model
async def test_with_long_texts_first_a_text_past_the_window_is_embedded_from_its_first_256_pieces() -> None:
    first = LocalEmbedder(MINILM, long_texts="first")
    head = " ".join(["rabbit"] * 254)
    (short,) = await first.embed([head])
    (long,) = await first.embed([head + " and then something else entirely about bicycles " * 20])
    assert cosine(short, long) > 0.9999


@needs_model
async def test_by_default_a_long_text_is_embedded_whole_from_pooled_windows(local: LocalEmbedder) -> None:
    head = " ".join(["rabbit"] * 254)
    tail = " and then something else entirely about bicycles" * 40
    spans = local.window_spans(head + tail)
    assert len(spans) >= 3 and spans[0][0] == 0 and spans[-1][1] == len(head + tail)
    assert all(local.count_tokens((head + tail)[start:end]) <= 256 for start, end in spans)
    (short,) = await local.embed([head])
    (long,) = await local.embed([head + tail])
    (bicycles,) = await local.embed([tail])
    assert cosine(short, long) < 0.99, "the tail past the window moved the vector"
    assert cosine(long, bicycles) > cosine(short, bicycles)
    # A text that fits is one window: the same vector either way.
    fits = "The rabbit took a watch out of its waistcoat-pocket."
    assert local.window_spans(fits) == ((0, len(fits)),)
    (pooled,) = await local.embed([fits])
    (first,) = await LocalEmbedder(MINILM, long_texts="first").embed([fits])
    assert cosine(pooled, first) > 0.9999


def test_an_unknown_long_texts_is_refused() -> None:
    with pytest.raises(ConfigurationError) as raised:
        LocalEmbedder(long_texts="cut")  # type: ignore[arg-type]
    assert raised.value.code == "invalid-option"


@needs_model
def test_the_model_runs_offline_without_any_download() -> None:
    result = python(
        "import asyncio, json, socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError('no network in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from graphrag_orm.embeddings import LocalEmbedder\n"
        f"vectors = asyncio.run(LocalEmbedder({MINILM!r}).embed(['offline']))\n"
        "print(json.dumps({'dimensions': len(vectors[0])}))\n"
    )
    assert result == {"dimensions": 384}


@pytest.mark.skipif(not LocalEmbedder.available("wordllama-l2-supercat-256"), reason="wordllama is not installed")
async def test_wordllama_is_selectable_and_reads_the_whole_text() -> None:
    embedder = LocalEmbedder("wordllama-l2-supercat-256")
    assert embedder.dimensions == 256 and embedder.max_input_tokens is None
    vectors = await embedder.embed(["a rabbit with a watch", "bicycle brakes"])
    assert all(abs(norm(v) - 1.0) < 1e-5 for v in vectors)
