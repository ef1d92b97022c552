"""A small OpenAI-compatible HTTP server on loopback, scripted per test.

Real HTTP, no mocks of the SDK: the openai client talks to this server exactly as
it would to a provider, so request shapes, streaming, dropped connections and
timeouts are the SDK's real behaviour. It never reaches the internet.

Scripting:

- ``faults``: consumed one per request, in order (``fail``, ``rate_limit``,
  ``drop_connection``, ``delay``, ``cut_stream``); a request with no fault left
  is answered normally.
- ``chat_responder(body) -> text`` for ``/v1/chat/completions``; it may return a
  :class:`ScriptedReply` instead, whose ``tool_calls`` (:class:`ScriptedToolCall`) the
  server sends as the assistant's function calls, whole or streamed, with the finish
  reason ``tool_calls``; ``embed_function(text, dimensions) -> vector`` for ``/v1/embeddings``.
- ``chat_usage`` / ``embedding_tokens`` for the usage figures;
  ``mangle_embeddings(data) -> data`` to reorder or drop vectors of a response.
- ``rerank_reply(body) -> payload`` for ``/v1/rerank`` (the Cohere/Jina-style rerank API):
  by default each document scored by the share of the query's words it holds, best first.
- ``requests``: every request body received, in order, faults included.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

DEFAULT_CHAT_REPLY = '{"answer": "scripted answer", "citations": []}'

FaultKind = Literal["status", "drop", "delay", "cut"]


@dataclass
class Fault:
    """What goes wrong with one request.

    ``status``: answer ``status`` with an OpenAI error body (its ``message``) and ``headers``.
    ``drop``: close the connection without any response.
    ``delay``: wait ``seconds`` (past the client's timeout), then answer normally.
    ``cut``: stream ``after_chunks`` content chunks, then close mid-body.
    """

    kind: FaultKind
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    after_chunks: int = 1
    message: str | None = None


@dataclass
class ScriptedToolCall:
    """One function call of a scripted reply: the tool's name, its arguments as JSON text,
    and its id (``call_<position>`` when not given)."""

    name: str
    arguments: str
    id: str | None = None


@dataclass
class ScriptedReply:
    """A scripted assistant message: text, function calls, or both."""

    content: str | None = None
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)

    @property
    def finish_reason(self) -> str | None:
        """``tool_calls`` when the reply calls a tool; otherwise the server's own finish reason."""
        return "tool_calls" if self.tool_calls else None


Responder = Callable[[dict[str, Any]], "str | ScriptedReply"]


@dataclass
class ReceivedRequest:
    """One request as the server saw it: path, JSON body and headers (lower-case names)."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]


def default_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic, non-zero vector derived from the text's SHA-256."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend((byte - 127.5) / 127.5 for byte in digest)
        counter += 1
    return values[:dimensions]


def word_count(texts: list[str]) -> int:
    """Default embedding usage: whitespace-separated words."""
    return sum(len(text.split()) for text in texts)


class OpenAIServer:
    """The scripted server; :attr:`url` is the ``base_url`` for the openai SDK (ends in ``/v1``)."""

    def __init__(self) -> None:
        self.faults: deque[Fault] = deque()
        self.chat_responder: Responder = lambda body: DEFAULT_CHAT_REPLY
        self.embed_function: Callable[[str, int], list[float]] = default_embedding
        self.embedding_dimensions = 8
        self.embedding_tokens: Callable[[list[str]], int] | None = word_count
        self.mangle_embeddings: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
        self.rerank_reply: Callable[[dict[str, Any]], Any] = word_share_rerank
        self.chat_usage: dict[str, int] | None = {
            "prompt_tokens": 11,
            "completion_tokens": 7,
            "reasoning_tokens": 3,
        }
        self.finish_reason = "stop"
        self.stream_piece = 5
        self.stream_delay = 0.0
        self.requests: list[ReceivedRequest] = []
        self.stream_aborted = threading.Event()
        self.streams_completed = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ scripting

    def fail(
        self,
        status: int,
        *,
        times: int = 1,
        retry_after: str | None = None,
        retry_after_ms: str | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next ``times`` requests with ``status`` (retry hints and the error's message, when given)."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = retry_after
        if retry_after_ms is not None:
            headers["retry-after-ms"] = retry_after_ms
        for _ in range(times):
            self.faults.append(Fault("status", status=status, headers=dict(headers), message=message))

    def rate_limit(self, *, times: int = 1, retry_after: str | None = None, retry_after_ms: str | None = None) -> None:
        """Answer the next ``times`` requests with 429."""
        self.fail(429, times=times, retry_after=retry_after, retry_after_ms=retry_after_ms)

    def drop_connection(self, *, times: int = 1) -> None:
        """Close the connection of the next ``times`` requests without a response."""
        for _ in range(times):
            self.faults.append(Fault("drop"))

    def delay(self, seconds: float, *, times: int = 1) -> None:
        """Hold the next ``times`` requests for ``seconds`` before answering."""
        for _ in range(times):
            self.faults.append(Fault("delay", seconds=seconds))

    def cut_stream(self, *, after_chunks: int = 1) -> None:
        """Stream the next reply for ``after_chunks`` content chunks, then close mid-body."""
        self.faults.append(Fault("cut", after_chunks=after_chunks))

    def requests_to(self, path: str) -> list[ReceivedRequest]:
        """The requests received on ``path`` (``/v1/embeddings``, ``/v1/chat/completions``)."""
        with self._lock:
            return [request for request in self.requests if request.path == path]

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> OpenAIServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.state = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ internals

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else None

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _wait(self, seconds: float) -> None:
        # Returns early when the server stops, so a test never waits out a long delay.
        self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    state: OpenAIServer


def word_share_rerank(body: dict[str, Any]) -> dict[str, Any]:
    """A rerank reply: each document scored by the share of the query's words it holds, best first."""
    wanted = set(re.findall(r"\w+", str(body.get("query", "")).lower()))
    scores = [
        len(wanted & set(re.findall(r"\w+", str(document).lower()))) / max(1, len(wanted))
        for document in body.get("documents", [])
    ]
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[: int(body.get("top_n") or len(scores))]
    return {"results": [{"index": i, "relevance_score": scores[i]} for i in ranked]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests assert on :attr:`OpenAIServer.requests` instead."""

    # ------------------------------------------------------------------ dispatch

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        state._record(ReceivedRequest(path=path, body=body, headers={k.lower(): v for k, v in self.headers.items()}))
        fault = state._next_fault()
        try:
            if fault is not None and fault.kind == "drop":
                self._drop()
                return
            if fault is not None and fault.kind == "delay":
                state._wait(fault.seconds)
            if fault is not None and fault.kind == "status":
                self._send_error(fault.status, fault.headers, fault.message)
                return
            if path.endswith("/chat/completions"):
                if body.get("stream"):
                    self._stream_chat(body, fault if fault is not None and fault.kind == "cut" else None)
                else:
                    self._complete_chat(body)
            elif path.endswith("/embeddings"):
                self._embeddings(body)
            elif path.endswith("/rerank"):
                self._send_json(200, state.rerank_reply(body))
            else:
                self._send_error(404, {})
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            # The client went away (timed out, or closed a stream): nothing to answer.
            self.close_connection = True

    # ------------------------------------------------------------------ responses

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):  # the client may be gone already
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(self, status: int, headers: dict[str, str], message: str | None = None) -> None:
        kind = "rate_limit_exceeded" if status == 429 else ("invalid_request_error" if status < 500 else "server_error")
        text = message or f"scripted failure {status}"
        payload = {"error": {"message": text, "type": kind, "code": None, "param": None}}
        self._send_json(status, payload, headers)

    def _usage(self) -> dict[str, Any] | None:
        usage = self.server.state.chat_usage
        if usage is None:
            return None
        prompt = usage.get("prompt_tokens", 0)
        completion = usage.get("completion_tokens", 0)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "completion_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
        }

    def _complete_chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        reply = _as_reply(state.chat_responder(body))
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{index}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for index, call in enumerate(reply.tool_calls)
            ]
        payload: dict[str, Any] = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish_reason or state.finish_reason,
                }
            ],
        }
        usage = self._usage()
        if usage is not None:
            payload["usage"] = usage
        self._send_json(200, payload)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    def _event(self, payload: Any) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        self._write_chunk(f"data: {text}\n\n".encode())

    def _stream_chat(self, body: dict[str, Any], cut: Fault | None) -> None:
        state = self.server.state
        reply = _as_reply(state.chat_responder(body))
        model = body.get("model", "test-model")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        try:
            self._event(chunk({"role": "assistant", "content": ""}))
            for number, delta in enumerate(_stream_deltas(reply, state.stream_piece)):
                if cut is not None and number >= cut.after_chunks:
                    self._drop()  # mid-body: no final chunk, no [DONE]
                    return
                if state.stream_delay:
                    state._wait(state.stream_delay)
                self._event(chunk(delta))
            self._event(chunk({}, reply.finish_reason or state.finish_reason))
            usage = self._usage()
            if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
                self._event({**chunk({}), "choices": [], "usage": usage})
            # Counted before [DONE]: the client may finish reading before this thread runs again.
            with state._lock:
                state.streams_completed += 1
            self._event("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            state.stream_aborted.set()
            self.close_connection = True

    def _embeddings(self, body: dict[str, Any]) -> None:
        state = self.server.state
        inputs = body.get("input", [])
        texts: list[str] = [inputs] if isinstance(inputs, str) else [str(item) for item in inputs]
        dimensions = int(body.get("dimensions") or state.embedding_dimensions)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = state.embed_function(text, dimensions)
            encoded: Any = base64.b64encode(array("f", vector).tobytes()).decode("ascii") if as_base64 else vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        if state.mangle_embeddings is not None:
            data = state.mangle_embeddings(data)
        payload: dict[str, Any] = {"object": "list", "data": data, "model": body.get("model", "test-embedding")}
        if state.embedding_tokens is not None:
            tokens = state.embedding_tokens(texts)
            payload["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send_json(200, payload)


def _as_reply(scripted: str | ScriptedReply) -> ScriptedReply:
    return scripted if isinstance(scripted, ScriptedReply) else ScriptedReply(content=scripted)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stream_deltas(reply: ScriptedReply, size: int) -> Iterator[dict[str, Any]]:
    """The content in pieces, then each tool call: its id and name first, then its arguments in pieces."""
    for piece in _pieces(reply.content or "", size):
        yield {"content": piece}
    for index, call in enumerate(reply.tool_calls):
        yield {
            "tool_calls": [
                {
                    "index": index,
                    "id": call.id or f"call_{index}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }
            ]
        }
        for piece in _pieces(call.arguments, size):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def running_server() -> Iterator[OpenAIServer]:
    """A started server, stopped when the generator closes (the fixture's body)."""
    server = OpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()
