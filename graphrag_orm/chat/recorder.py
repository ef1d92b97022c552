"""Recordings of real model calls: record once, replay at zero calls.

A recording is one JSON file of entries keyed by a hash of the request (field
``request``). A chat entry keeps the reply text, finish reason, usage, model
name and date; an embedding entry keeps the vectors (float32 values, exact) and
the token count. Neither keeps an endpoint, a key, or request text beyond an
80-character ``hint`` for the person reading the file.

An entry is refused before it is stored (``secret-in-recording``) when it holds what a
secret scanner would flag (:mod:`graphrag_orm.chat.secrets` says what that is).

Known limit: a replay needs the request to be byte-identical; a changed prompt,
schema or chunking needs a new recording.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import tempfile
import threading
from array import array
from collections.abc import AsyncGenerator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from graphrag_orm.chat.base import ChatChunk, ChatClient, ChatReply, ChatRequest, ChatUsage
from graphrag_orm.chat.scripted import STREAM_PIECE
from graphrag_orm.chat.secrets import MIN_SECRET_LENGTH, SECRET_NAME, WORD_SECRET_LENGTH, check_secrets
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.base import Embedder, EmbeddingVectors
from graphrag_orm.errors import ConfigurationError, RecordingMissing, RecordingRefused

__all__ = [
    "HINT_LENGTH",
    "MIN_SECRET_LENGTH",
    "SECRET_NAME",
    "WORD_SECRET_LENGTH",
    "Recorder",
    "RecordingChat",
    "RecordingEmbedder",
    "RecordingMissing",
    "RecordingRefused",
    "embedding_request_hash",
]

RecorderMode = Literal["record", "replay"]

FORMAT = "graphrag-orm-recording"
VERSION = 1
HINT_LENGTH = 80
"""The most request text an entry keeps: the start of the last user message or the first text."""

_FLOAT32_MAX = 3.4028234663852886e38


def embedding_request_hash(texts: Sequence[str], dimensions: int) -> str:
    """SHA-256 (hex) of the canonical JSON of the texts and the dimensions."""
    canonical = json.dumps(
        {"kind": "embedding", "texts": list(texts), "dimensions": dimensions},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _hint(text: str) -> str:
    return " ".join(text.split())[:HINT_LENGTH]


def _chat_hint_source(request: ChatRequest) -> str:
    """The text a chat entry's hint starts: the last user message, else the last message."""
    users = [m.content for m in request.messages if m.role == "user"]
    return users[-1] if users else request.messages[-1].content


def _float32(vector: Sequence[float]) -> list[float]:
    """The vector rounded to float32, so record and replay return the same numbers.

    A finite coordinate beyond float32 range keeps its value (rounding would make
    it infinite), and NaN or infinity is written as Python's JSON writes it, so a
    replay is refused for the same reason as the original call.
    """
    values = [float(x) for x in vector]
    rounded = array("f", values).tolist()
    if math.isfinite(math.hypot(*rounded)):
        return rounded
    return [r if math.isfinite(r) or not math.isfinite(v) else v for r, v in zip(rounded, values, strict=True)]


class Recorder:
    """Records model calls into ``path`` (``mode="record"``) or replays them (``mode="replay"``).

    Wrap clients with :meth:`chat` and :meth:`embedder`. Record mode calls the
    inner client only for requests with no entry yet, and saves the file after
    each new entry, atomically (a temporary file, then ``os.replace``), so an
    interrupted run keeps what it paid for. Replay mode never calls a model:
    the inner client may be ``None``, and a request with no entry raises
    :class:`RecordingMissing`. An entry holding a secret of the environment, in any
    of the forms the module docstring lists, raises :class:`RecordingRefused`
    (``secret-in-recording``, naming the variable, never the value) and is not stored.
    :attr:`model_calls` counts the calls that reached an inner client.
    """

    def __init__(self, path: str | os.PathLike[str], mode: RecorderMode) -> None:
        if mode not in ("record", "replay"):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"Recorder: mode must be record or replay, got {mode!r}")
        self.path = Path(path)
        self.mode: RecorderMode = mode
        self.model_calls = 0
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = self._load()
        # Each entry's JSON line, kept so a save re-serialises only the new entry.
        self._lines: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"Recorder({str(self.path)!r}, mode={self.mode!r}, entries={len(self._entries)})"

    def __len__(self) -> int:
        return len(self._entries)

    def _load(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"Recorder: {self.path} is not a readable recording ({type(error).__name__})"
            ) from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"Recorder: {self.path} is not a {FORMAT} file")
        if document.get("version") != VERSION:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"Recorder: {self.path} has version {document.get('version')}, not {VERSION}"
            )
        entries = document.get("entries")
        if not isinstance(entries, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("request"), str) for entry in entries
        ):
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"Recorder: {self.path} has malformed entries")
        return {entry["request"]: entry for entry in entries}

    def chat(self, inner: ChatClient | None) -> RecordingChat:
        """A chat client answering from the recording; ``inner`` is called only to record."""
        if inner is None and self.mode == "record":
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "Recorder: record mode needs a chat client to record")
        return RecordingChat(self, inner)

    def embedder(self, inner: Embedder | None, dimensions: int) -> RecordingEmbedder:
        """An embedder answering from the recording; ``dimensions`` is part of each request's hash."""
        if inner is None and self.mode == "record":
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "Recorder: record mode needs an embedder to record")
        return RecordingEmbedder(self, inner, dimensions)

    def lookup(self, request: str, kind: str) -> dict[str, Any] | None:
        """The entry for a request hash, or ``None``; replay raises :class:`RecordingMissing` instead."""
        entry = self._entries.get(request)
        if entry is not None and entry.get("kind") == kind:
            return entry
        if self.mode == "replay":
            raise RecordingMissing(
                ErrorCode.RECORDING_MISSING, f"no recorded {kind} reply for request {request} in {self.path}"
            )
        return None

    def store(self, entry: dict[str, Any], *, hint_source: str | None = None) -> None:
        """Check ``entry`` (and where its hint was cut from ``hint_source``) for secrets, keep it, save atomically."""
        check_secrets(entry, hint_source, hint_length=HINT_LENGTH)
        with self._lock:
            self._entries[entry["request"]] = entry
            self._lines.pop(entry["request"], None)
            self.save()

    def save(self) -> None:
        """Write every entry, one per line sorted by request hash, through a temporary file."""
        lines = []
        for request in sorted(self._entries):
            line = self._lines.get(request)
            if line is None:
                line = json.dumps(self._entries[request], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                self._lines[request] = line
            lines.append(line)
        header = json.dumps({"format": FORMAT, "version": VERSION})[:-1]
        text = header + ',"entries":[\n' + ",\n".join(lines) + "\n]}\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def recorded(self, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The distinct models and dates of the entries of ``kind``, each sorted."""
        with self._lock:
            entries = [entry for entry in self._entries.values() if entry.get("kind") == kind]
        models = sorted({str(entry["model"]) for entry in entries if entry.get("model")})
        dates = sorted({str(entry["date"]) for entry in entries if entry.get("date")})
        return tuple(models), tuple(dates)

    @staticmethod
    def today() -> str:
        """The recording date of new entries (UTC, ``YYYY-MM-DD``)."""
        return datetime.now(UTC).date().isoformat()


def _reply_of(entry: dict[str, Any]) -> ChatReply:
    usage = entry.get("usage")
    return ChatReply(
        text=entry["text"],
        usage=ChatUsage.model_validate(usage) if usage is not None else None,
        finish_reason=entry.get("finishReason"),
        model=entry.get("model"),
    )


class RecordingChat:
    """A :class:`~graphrag_orm.chat.base.ChatClient` backed by a :class:`Recorder`."""

    def __init__(self, recorder: Recorder, inner: ChatClient | None) -> None:
        self.recorder = recorder
        self.inner = inner

    @property
    def model(self) -> str | None:
        """The inner client's model, else the model(s) the recording's chat replies name."""
        inner = getattr(self.inner, "model", None)
        if isinstance(inner, str) and inner:
            return inner
        models, _ = self.recorder.recorded("chat")
        return ", ".join(models) or None

    @property
    def label(self) -> str:
        """What wrote the replies, for reports: the recorded model and its dates, never a class name."""
        inner = getattr(self.inner, "model", None)
        if isinstance(inner, str) and inner:
            return f"{inner} (recording)"
        models, dates = self.recorder.recorded("chat")
        when = f"{dates[0]} to {dates[-1]}" if len(dates) > 1 else "".join(dates)
        model = ", ".join(models) or "an unnamed model"
        return f"{model}, recorded {when}" if when else f"{model}, recorded"

    def _inner(self) -> ChatClient:
        if self.inner is None:  # only replay mode has no inner client, and it never gets here
            raise RecordingMissing(ErrorCode.RECORDING_MISSING, "no chat client to record with")
        return self.inner

    def _store(self, request: ChatRequest, key: str, reply: ChatReply) -> None:
        source = _chat_hint_source(request)
        self.recorder.store(
            {
                "request": key,
                "kind": "chat",
                "hint": _hint(source),
                "text": reply.text,
                "finishReason": reply.finish_reason,
                "usage": reply.usage.model_dump(by_alias=True) if reply.usage is not None else None,
                "model": reply.model,
                "date": Recorder.today(),
            },
            hint_source=source,
        )

    async def complete(self, request: ChatRequest) -> ChatReply:
        """The recorded reply; in record mode the inner client's reply, recorded first."""
        key = request.fingerprint()
        entry = self.recorder.lookup(key, "chat")
        if entry is not None:
            return _reply_of(entry)
        inner = self._inner()
        self.recorder.model_calls += 1
        reply = await inner.complete(request)
        self._store(request, key, reply)
        return reply

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ChatChunk, None]:
        """The recorded reply in pieces; in record mode the inner stream, recorded when complete.

        A stream closed before its end records nothing.
        """
        key = request.fingerprint()
        entry = self.recorder.lookup(key, "chat")
        if entry is not None:
            reply = _reply_of(entry)
            for start in range(0, len(reply.text), STREAM_PIECE):
                await asyncio.sleep(0)  # as a network stream would: a reader can be cancelled between pieces
                yield ChatChunk(delta=reply.text[start : start + STREAM_PIECE])
            await asyncio.sleep(0)
            yield ChatChunk(reply=reply)
            return
        inner = self._inner()
        self.recorder.model_calls += 1
        parts: list[str] = []
        final: ChatReply | None = None
        chunks = inner.stream(request)
        try:
            async for chunk in chunks:
                if chunk.reply is not None:
                    final = chunk.reply
                    break
                parts.append(chunk.delta)
                yield chunk
        finally:
            # Closing this stream closes the inner one, which ends its HTTP call.
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()
        if final is None:
            final = ChatReply(text="".join(parts))
        self._store(request, key, final)
        yield ChatChunk(reply=final)


class RecordingEmbedder:
    """An :class:`~graphrag_orm.embeddings.base.Embedder` backed by a :class:`Recorder`.

    Vectors are float32 values in record and replay alike, so both return the
    same numbers.
    """

    def __init__(self, recorder: Recorder, inner: Embedder | None, dimensions: int) -> None:
        self.recorder = recorder
        self.inner = inner
        self.dimensions = dimensions
        model = getattr(inner, "model", None)
        self.model = model if isinstance(model, str) else None

    async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
        """The recorded vectors and token count; in record mode the inner embedder's, recorded first."""
        key = embedding_request_hash(texts, self.dimensions)
        entry = self.recorder.lookup(key, "embedding")
        if entry is not None:
            return EmbeddingVectors(entry["vectors"], input_tokens=entry.get("inputTokens"))
        if self.inner is None:  # only replay mode has no inner embedder, and it never gets here
            raise RecordingMissing(ErrorCode.RECORDING_MISSING, "no embedder to record with")
        self.recorder.model_calls += 1
        result = await self.inner.embed(texts)
        vectors = [_float32(vector) for vector in result]
        tokens = getattr(result, "input_tokens", None)
        self.recorder.store(
            {
                "request": key,
                "kind": "embedding",
                "hint": _hint(texts[0]) if texts else "",
                "dimensions": self.dimensions,
                "vectors": vectors,
                "inputTokens": tokens if isinstance(tokens, int) else None,
                "model": self.model,
                "date": Recorder.today(),
            },
            hint_source=texts[0] if texts else None,
        )
        return EmbeddingVectors(vectors, input_tokens=tokens if isinstance(tokens, int) else None)
