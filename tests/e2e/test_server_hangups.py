"""Clients that hang up mid-answer, over real HTTP: uvicorn on a loopback port, the suite's Neo4j.

200 clients (at most 20 at a time) ask one question each with httpx and httpx-sse and
leave at one of four points of the stream: before ``retrieved`` (right after the
headers), after ``retrieved``, after the first ``delta``, and in the middle of the
deltas. The stand-in's answer is some 5,800 deltas long, so every hang-up comes while it
still has deltas to send. The server must cancel each stream (one log line each, one
cancelled ``GraphRag.Answer`` span each), write nothing after a disconnect (asyncio's
``socket.send() raised exception.`` never appears), and leave no transaction open.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections import Counter
from typing import Any

import httpx
import pytest
from httpx_sse import aconnect_sse

from graphrag_orm import GraphRag
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.chat.base import ChatRequest
from graphrag_orm.chat.evidence_block import parse_evidence
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.server import create_app
from graphrag_orm.store import Store
from tests.database import open_transactions
from tests.e2e.test_server_http import PREFIX, QUESTION, ingest_two, serving
from tests.support.tracing import captured_spans

CLIENTS = 200
AT_ONCE = 20
POINTS = ("before-retrieved", "after-retrieved", "first-delta", "mid-deltas")
MID_DELTAS = 25
#: 40,800 characters of answer: some 5,800 deltas of seven characters.
LONG_ANSWER = "The Skerry Point lighthouse was first lit in 1857. " * 800
CANCELLED = re.compile(r"^ask stream cancelled after (\d+) events \(last: (none|retrieved|delta)\)$")


def long_reply(request: ChatRequest) -> str:
    prompt = next(m.content for m in reversed(request.messages) if m.role == "user")
    chunk = next((chunk_id for chunk_id, text in parse_evidence(prompt) if "first lit" in text), "none")
    return json.dumps({"answer": LONG_ANSWER, "citations": [{"chunkId": chunk, "quote": "first lit in 1857"}]})


async def hang_up(http: httpx.AsyncClient, point: str) -> list[str]:
    """Ask, read up to ``point``, and leave: closing the unread response closes the connection."""
    seen: list[str] = []
    async with aconnect_sse(http, "POST", f"{PREFIX}/ask", json={"question": QUESTION}) as source:
        assert source.response.status_code == 200
        if point == "before-retrieved":
            return seen
        async for event in source.aiter_sse():
            seen.append(event.event)
            if point == "after-retrieved" and event.event == "retrieved":
                break
            if point == "first-delta" and event.event == "delta":
                break
            if point == "mid-deltas" and seen.count("delta") == MID_DELTAS:
                break
    return seen


async def test_clients_hanging_up_at_four_points_cancel_their_streams_quietly(
    graph: None, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    await ingest_two(store)
    chat = ScriptedChat(long_reply)
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions), chat=chat
    )
    gate = asyncio.Semaphore(AT_ONCE)
    limits = httpx.Limits(max_connections=AT_ONCE, max_keepalive_connections=AT_ONCE)

    async def one(http: httpx.AsyncClient, index: int) -> tuple[str, list[str]]:
        point = POINTS[index % len(POINTS)]
        async with gate:
            return point, await hang_up(http, point)

    def cancelled_lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "graphrag_orm.server"]

    with captured_spans() as exporter, caplog.at_level(logging.INFO), serving(create_app(rag)) as url:
        began = time.monotonic()
        async with httpx.AsyncClient(base_url=url, timeout=30, trust_env=False, limits=limits) as http:
            results = await asyncio.wait_for(asyncio.gather(*(one(http, i) for i in range(CLIENTS))), 60)
        clients_done = time.monotonic() - began
        # The server notices the last hang-ups a moment after the clients have left.
        for _ in range(400):  # 20 s at most
            if len(cancelled_lines()) >= CLIENTS:
                break
            await asyncio.sleep(0.05)
        all_cancelled = time.monotonic() - began
        for _ in range(100):  # 10 s at most
            transactions = await open_transactions(store)
            if not transactions:
                break
            await asyncio.sleep(0.1)
    print(f"\n{CLIENTS} hang-ups: clients done in {clients_done:.2f} s, all cancelled in {all_cancelled:.2f} s")

    # Each client left where it meant to, before the end of the answer.
    reached = Counter(point for point, _ in results)
    assert reached == dict.fromkeys(POINTS, CLIENTS // len(POINTS))
    for point, seen in results:
        assert not {"verified", "refused", "error"} & set(seen)
        expected = {
            "before-retrieved": [],
            "after-retrieved": ["retrieved"],
            "first-delta": ["retrieved", "delta"],
            "mid-deltas": ["retrieved", *["delta"] * MID_DELTAS],
        }[point]
        assert seen == expected, (point, seen[:5])

    # Nothing was written after a disconnect.
    sent_after = [r for r in caplog.records if "socket.send() raised exception" in r.getMessage()]
    assert sent_after == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR
    ][:3]

    # Every answer was cancelled, its model call closed: one cancelled answer span each.
    answers = [span for span in exporter.get_finished_spans() if span.name == "GraphRag.Answer"]
    codes: Counter[Any] = Counter((span.attributes or {}).get("graphrag.error_code") for span in answers)
    assert codes == {"cancelled": CLIENTS}
    assert chat.call_count <= CLIENTS

    # One line per stream the server cancelled, and nothing else from the server.
    lines = cancelled_lines()
    assert len(lines) == CLIENTS, Counter(lines).most_common(3)
    parsed = [CANCELLED.match(line) for line in lines]
    assert all(parsed), [line for line, match in zip(lines, parsed, strict=True) if match is None][:3]
    # No stream was sent to its end: each stopped short of the answer's 5,800 deltas.
    sent = [int(match.group(1)) for match in parsed if match]
    assert max(sent) < 5_000
    # Within one part: the answers made at most one delta more per stream than were sent.
    made = 0
    for span in answers:
        deltas = (span.attributes or {}).get("graphrag.deltas", 0)
        assert isinstance(deltas, int)
        made += deltas
    assert made <= sum(max(n - 1, 0) for n in sent) + CLIENTS
    last = dict(Counter(match.group(2) for match in parsed if match))
    print(f"cancelled after: {last}, events sent at most {max(sent)}, deltas made {made}")

    assert transactions == []
    assert all_cancelled < 60
