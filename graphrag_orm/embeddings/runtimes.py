"""The loaded local models: ONNX Runtime sessions and WordLlama, each loaded once per process.

:class:`~graphrag_orm.embeddings.local.LocalEmbedder` embeds through a runtime from
:func:`runtime`: an :class:`Onnx` model (its tokenizer, pooling and ``sessions`` sessions,
each running one batch at a time) or WordLlama's static embeddings. Also here: finding and
checking a card's files (:func:`card_files`, :func:`checked`), and importing the ``local``
extra's packages with a coded error when they are missing.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import queue
import threading
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.cards import INSTALL_HINT, WORDLLAMA, LocalModel
from graphrag_orm.errors import ConfigurationError

__all__ = ["Runtime", "card_files", "checked", "importable", "runtime", "sha256_of"]

_DATA = "graphrag_orm.embeddings"


class Runtime(Protocol):
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
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


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


class Onnx:
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


class WordLlama:
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


_RUNTIMES: dict[tuple[LocalModel, int | None, int], Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def runtime(model: LocalModel, threads: int | None, sessions: int) -> Runtime:
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get((model, threads, sessions))
        if runtime is None:
            runtime = WordLlama(threads) if model.runtime == "wordllama" else Onnx(model, threads, sessions)
            _RUNTIMES[(model, threads, sessions)] = runtime
        return runtime


def importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
