"""Recordings of real model calls: record once, replay at zero calls.

A recording is one JSON file of entries keyed by a hash of the request (field
``request``). A chat entry keeps the reply text, finish reason, usage, model
name and date; an embedding entry keeps the vectors (float32 values, exact) and
the token count. Neither keeps an endpoint, a key, or request text beyond an
80-character ``hint`` for the person reading the file.

An entry is refused before it is stored (``secret-in-recording``) when it holds what a
secret scanner would flag: the value of a variable whose name contains PASS, SECRET,
TOKEN, KEY, AUTH or CREDENTIAL (any case; also the password after ``user/`` or
``user:``, as in ``NEO4J_AUTH``), or the userinfo of a URL in any variable
(``DATABASE_URL=postgres://app:pw@db``). Each value is found upper- or lower-cased,
split by whitespace, base64-encoded (standard or URL-safe, alone or inside a longer
encoded string) or percent-encoded, and a hint is refused when the value starts inside
it, even if the 80 characters cut it short. Values of 4 to 7 characters are matched
as whole words only; shorter values and flag words (``true``, ``none``...) are never
secrets, because they would match everywhere and protect nothing. A URL with a
password (``scheme://user:password@host``) is refused wherever it comes from, unless
the password is a placeholder (``<password>``, ``${DB_PASSWORD}``, ``***``, ``password``).

Known limit: a replay needs the request to be byte-identical; a changed prompt,
schema or chunking needs a new recording.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import re
import tempfile
import threading
from array import array
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, unquote

from graphrag_orm.chat.base import ChatChunk, ChatClient, ChatReply, ChatRequest, ChatUsage
from graphrag_orm.chat.scripted import STREAM_PIECE
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

SECRET_NAME = re.compile(r"pass|secret|token|key|auth|credential", re.IGNORECASE)
"""Variable names whose values are secrets, as secret scanners read them (``NEO4J_AUTH``, ``SMTP_PASS``)."""
MIN_SECRET_LENGTH = 4
"""Shorter values (``1``, ``on``) would match everywhere and protect nothing."""
WORD_SECRET_LENGTH = 8
"""Values shorter than this are matched as whole words only, so ``q7Zx`` does not refuse ``q7Zxa``."""
_FLAG_WORDS = frozenset({"true", "false", "yes", "none", "null", "unset", "enabled", "disabled"})
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#@]+)@")
_USER_PASSWORD = re.compile(r"[^\s/:]+[/:]([^\s/:]+)")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:([^\s/?#@]+)@")
_PLACEHOLDER = re.compile(r"<[^>]*>|\$\{?\w+\}?|\{\w*\}|%s|\*+|x+|password|passwd|pass|pwd|secret", re.IGNORECASE)
_IGNORED = re.compile(r"[\s\u200b\u200c\u200d\u2060\ufeff]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_MIN_ENCODED = 6

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


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


@dataclass(frozen=True)
class _SecretForm:
    """One form of one secret value: ``text`` is searched in text with whitespace removed."""

    variable: str
    text: str
    folded: bool  # compared with ASCII letters lower-cased (the value itself, not an encoding)
    word: re.Pattern[str] | None = None  # a short value: whole words of the original text only


def _secret_values(environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(variable, value) for every value a secret scanner would flag in ``environ``."""
    for name, value in environ.items():
        pieces: list[str] = []
        if SECRET_NAME.search(name):
            pieces.append(value)
            user_password = _USER_PASSWORD.fullmatch(value.strip())
            if user_password and "://" not in value:
                pieces.append(user_password.group(1))
        for match in _URL_USERINFO.finditer(value):
            userinfo = match.group(1)
            user, colon, password = userinfo.partition(":")
            # Without a password, the user name is the secret (``https://<token>@host``).
            pieces.extend((userinfo, password, unquote(password)) if colon else (user, unquote(user)))
        for piece in dict.fromkeys(piece.strip() for piece in pieces):
            if len(piece) >= MIN_SECRET_LENGTH and piece.lower() not in _FLAG_WORDS:
                yield name, piece


def _base64_forms(value: str) -> set[str]:
    """The characters of ``value``'s base64 that hold at each of the three byte alignments.

    A value encoded inside a longer string (``Basic base64(user:password)``) starts at
    any offset modulo 3; the characters shared with its neighbours' bytes are left out.
    """
    raw = value.encode("utf-8")
    forms: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode("ascii")
        middle = encoded[(shift * 8 + 5) // 6 : (shift + len(raw)) // 3 * 4]
        if len(middle) >= _MIN_ENCODED:
            forms.update((middle, middle.replace("+", "-").replace("/", "_")))
    return forms


def _secret_forms(environ: Mapping[str, str]) -> list[_SecretForm]:
    forms: list[_SecretForm] = []
    for name, value in _secret_values(environ):
        compact = _IGNORED.sub("", value).translate(_ASCII_LOWER)
        if len(compact) < WORD_SECRET_LENGTH:
            word = re.compile(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])", re.IGNORECASE)
            forms.append(_SecretForm(name, compact, folded=True, word=word))
        else:
            forms.append(_SecretForm(name, compact, folded=True))
        escaped = quote(value, safe="")
        if escaped != value and len(escaped) >= WORD_SECRET_LENGTH:
            forms.append(_SecretForm(name, escaped.translate(_ASCII_LOWER), folded=True))
        forms.extend(_SecretForm(name, encoded, folded=False) for encoded in sorted(_base64_forms(value)))
    return forms


def _find_secret(text: str, forms: Sequence[_SecretForm], *, starting_before: int | None = None) -> str | None:
    """The variable whose secret ``text`` holds (one starting before ``starting_before``, when given)."""
    compact = _IGNORED.sub("", text)
    folded = compact.translate(_ASCII_LOWER)
    # Where each compact character sits in ``text``; built only when a start must be placed.
    places = [i for i, c in enumerate(text) if not _IGNORED.fullmatch(c)] if starting_before is not None else None
    for form in forms:
        if form.word is not None:
            match = form.word.search(text)
            if match and (starting_before is None or match.start() < starting_before):
                return form.variable
            continue
        found = (folded if form.folded else compact).find(form.text)
        if found >= 0 and (places is None or places[found] < (starting_before or 0)):
            return form.variable
    return None


def _url_password_at(text: str) -> int | None:
    """Where the first URL password that is not a placeholder starts in ``text``, or None."""
    for match in _URL_PASSWORD.finditer(text):
        if not _PLACEHOLDER.fullmatch(unquote(match.group(1))):
            return match.start(1)
    return None


def _check_secrets(entry: dict[str, Any], hint_source: str | None = None) -> None:
    """Refuse an entry holding a secret (numbers are not searched), or whose hint starts one."""
    request = entry.get("request")
    forms = _secret_forms(os.environ)
    for text in _strings(entry):
        variable = _find_secret(text, forms) if forms else None
        if variable is not None:
            raise RecordingRefused(
                ErrorCode.SECRET_IN_RECORDING,
                f"refused to record request {request}: it contains the value of ${variable}",
            )
        if _url_password_at(text) is not None:
            raise RecordingRefused(
                ErrorCode.SECRET_IN_RECORDING,
                f"refused to record request {request}: it contains a URL with a password (scheme://user:…@host)",
            )
    if hint_source is None:
        return
    # The hint is cut at HINT_LENGTH characters: a secret starting inside it leaks its first characters.
    widest = max((len(form.text) for form in forms), default=0)
    window = " ".join(hint_source.split())[: HINT_LENGTH + max(2 * widest, 1000)]
    variable = _find_secret(window, forms, starting_before=HINT_LENGTH) if forms else None
    url_password = _url_password_at(window)
    if variable is not None or (url_password is not None and url_password < HINT_LENGTH):
        what = f"the value of ${variable}" if variable is not None else "a URL's password"
        raise RecordingRefused(
            ErrorCode.SECRET_IN_RECORDING, f"refused to record request {request}: its hint holds the start of {what}"
        )


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
        _check_secrets(entry, hint_source)
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
