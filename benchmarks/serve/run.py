"""Streamed answers over HTTP under load: 50 SSE clients for two minutes, against the same answers in-process.

Run from the repository root::

    .venv/bin/python benchmarks/serve/run.py [--clients 50] [--seconds 120] [--documents 200]

What it does, in one run:

1. Its own local Neo4j (port 7697, home ``tools/neo4j/home-bench``, as the other
   benchmarks) unless ``NEO4J_URI`` is set (that database is **wiped**); the toolkit's
   schema; ``--documents`` documents of the shared generated corpus ingested with the
   offline stand-ins (``HashingEmbedder``, 256 dimensions).
2. ``graphrag-orm serve`` as a real subprocess on a free loopback port, offline (the
   hashing stand-in and ``ExtractiveChat``: no model is called), the explorer off.
3. **HTTP**: ``--clients`` concurrent clients, each asking one question after another
   (``POST /graphrag/ask``, read as server-sent events with httpx-sse) until
   ``--seconds`` have passed; for each request the time to the ``retrieved`` event and
   to the final ``verified``/``refused`` event, and the CPU time the HTTP server process
   and the Neo4j server spent per request.
4. **In-process**: the same questions at the same concurrency for the same time,
   through ``rag.answers.stream`` in this process (the floor: everything but HTTP and
   SSE), so the table gives what serving costs as a ratio measured in the same run. The
   load generator shares the machine's two cores with the server in the HTTP run (its 50
   SSE readers are Python too), so the CPU per request of the answering process is the
   fairer comparison of the two.
5. The server's resident memory (``/proc/PID/status`` VmRSS) after one warm-up
   request and after the load; then, with the load stopped, the server's open
   transactions (``SHOW TRANSACTIONS``, the benchmark's own excluded) and Bolt
   connections (``dbms.listConnections``): transactions must be 0, connections at most
   the driver's pool (idle pooled connections are not leaks) and 0 once the HTTP server
   has stopped.

Every figure is printed as a Markdown table; ``--json FILE`` keeps them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from common import (
    REPO,
    SCRATCH,
    BenchServer,
    _process_jiffies,
    generate_corpus,
    generate_questions,
    machine_description,
    print_table,
    reset_database,
)
from httpx_sse import aconnect_sse

from graphrag_orm import GraphRag, Sources
from graphrag_orm.answers import Completed, Retrieved
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.store.connection import open_store

OFFLINE = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS")
PREFIX = "/graphrag"


@dataclass
class Tally:
    """Per-request timings (seconds) and outcome counts of one contender."""

    to_retrieved: list[float] = field(default_factory=list)
    to_final: list[float] = field(default_factory=list)
    verified: int = 0
    refused: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    #: CPU seconds (user + system) of the process that answered, and of the Neo4j server, during the load.
    answer_cpu: float = 0.0
    neo4j_cpu: float = 0.0

    @property
    def requests(self) -> int:
        return len(self.to_final)

    def error(self, code: str) -> None:
        self.errors[code] = self.errors.get(code, 0) + 1

    def summary(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "requests_per_second": self.requests / self.elapsed if self.elapsed else 0.0,
            "verified": self.verified,
            "refused": self.refused,
            "errors": dict(self.errors),
            "retrieved_p50_ms": _percentile(self.to_retrieved, 50),
            "retrieved_p95_ms": _percentile(self.to_retrieved, 95),
            "final_p50_ms": _percentile(self.to_final, 50),
            "final_p95_ms": _percentile(self.to_final, 95),
            "answer_cpu_ms_per_request": 1000 * self.answer_cpu / self.requests if self.requests else 0.0,
            "neo4j_cpu_ms_per_request": 1000 * self.neo4j_cpu / self.requests if self.requests else 0.0,
        }


def _percentile(values: list[float], percent: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1] * 1000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def _ask_over_http(client: httpx.AsyncClient, question: str, tally: Tally) -> None:
    began = time.monotonic()
    final: str | None = None
    async with aconnect_sse(client, "POST", f"{PREFIX}/ask", json={"question": question}) as source:
        if source.response.status_code != 200:
            tally.error(f"http-{source.response.status_code}")
            return
        async for event in source.aiter_sse():
            if event.event == "retrieved":
                tally.to_retrieved.append(time.monotonic() - began)
            elif event.event in ("verified", "refused", "error"):
                final = event.event
                if event.event == "error":
                    tally.error(json.loads(event.data).get("code", "error"))
    if final is None:
        tally.error("stream-ended-early")
        return
    tally.to_final.append(time.monotonic() - began)
    tally.verified += final == "verified"
    tally.refused += final == "refused"


async def _ask_in_process(rag: GraphRag, question: str, tally: Tally) -> None:
    assert rag.answers is not None
    began = time.monotonic()
    async for update in rag.answers.stream(question):
        if isinstance(update, Retrieved):
            tally.to_retrieved.append(time.monotonic() - began)
        elif isinstance(update, Completed):
            tally.to_final.append(time.monotonic() - began)
            if update.answer.answered:
                tally.verified += 1
            else:
                tally.refused += 1


def _cpu_seconds(pid: int) -> float:
    return _process_jiffies(pid) / os.sysconf("SC_CLK_TCK")


async def _load(
    clients: int, seconds: float, questions: list[str], ask: Any, answering_pid: int, neo4j_pid: int | None
) -> Tally:
    """``clients`` workers asking one question after another until ``seconds`` have passed.

    The CPU of ``answering_pid`` (the HTTP server, or this process in-process) and of the
    Neo4j server is read before and after.
    """
    tally = Tally()
    answer_before = _cpu_seconds(answering_pid)
    neo4j_before = _cpu_seconds(neo4j_pid) if neo4j_pid else 0.0
    deadline = time.monotonic() + seconds

    async def worker(index: int) -> None:
        rng = random.Random(index)
        while time.monotonic() < deadline:
            try:
                await ask(rng.choice(questions), tally)
            except (httpx.HTTPError, OSError) as error:
                tally.error(type(error).__name__)

    began = time.monotonic()
    await asyncio.gather(*(worker(index) for index in range(clients)))
    tally.elapsed = time.monotonic() - began
    tally.answer_cpu = _cpu_seconds(answering_pid) - answer_before
    tally.neo4j_cpu = (_cpu_seconds(neo4j_pid) - neo4j_before) if neo4j_pid else 0.0
    return tally


async def _server_state() -> tuple[int, int]:
    """Open transactions (this probe's own excluded) and Bolt connections on the server.

    Connections are compared with a count taken the same way before the HTTP server
    started, so the probe's own connection and the benchmark's pool cancel out.
    """
    store = await open_store()
    try:
        transactions = await store.read(
            "SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery", name="bench.transactions"
        )
        others = [row for row in transactions if not str(row["currentQuery"]).startswith("SHOW TRANSACTIONS")]
        connections = await store.read(
            "CALL dbms.listConnections() YIELD connector WHERE connector = 'bolt' RETURN count(*) AS bolt",
            name="bench.connections",
        )
        return len(others), int(connections.records[0]["bolt"])
    finally:
        await store.driver.close()


async def _wait_ready(base_url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120.0
    async with httpx.AsyncClient(base_url=base_url, timeout=5.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"graphrag-orm serve exited with {process.returncode}")
            try:
                if (await client.get(f"{PREFIX}/documents", params={"limit": 1})).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise SystemExit("graphrag-orm serve did not answer in time")


async def main(arguments: argparse.Namespace) -> dict[str, Any]:
    corpus = generate_corpus(documents=arguments.documents)
    questions = generate_questions(corpus, count=200)
    with BenchServer() as server:
        os.environ["NEO4J_URI"] = server.settings.uri
        os.environ["NEO4J_PASSWORD"] = server.settings.password
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ExtractiveChat(),
        )
        await rag.connect(check_schema=False, neomodel=False)
        try:
            await reset_database(rag.store)
            folder = corpus.write(SCRATCH / "serve-corpus")
            receipt = await rag.ingestion.ingest(Sources.folder(folder, base_uri="https://bench.graphrag-orm.invalid/"))
            print(f"ingested {len(receipt.documents)} documents, {receipt.chunks_written} chunks")
            idle_transactions, idle_connections = await _server_state()

            port = _free_port()
            environment = {key: value for key, value in os.environ.items() if key not in OFFLINE}
            environment["GRAPHRAG_MODEL_MODE"] = "offline"  # the stand-ins it measures, whatever the shell names
            command = [str(REPO / ".venv" / "bin" / "graphrag-orm"), "serve", "--port", str(port), "--no-explorer"]
            SCRATCH.mkdir(parents=True, exist_ok=True)
            server_log = (SCRATCH / "serve-stderr.log").open("wb")
            process = subprocess.Popen(  # noqa: ASYNC220 (started once, before the timing)
                command, env=environment, stdout=subprocess.DEVNULL, stderr=server_log
            )
            base_url = f"http://127.0.0.1:{port}"
            try:
                await _wait_ready(base_url, process)
                limits = httpx.Limits(max_connections=arguments.clients, max_keepalive_connections=arguments.clients)
                async with httpx.AsyncClient(base_url=base_url, timeout=60.0, limits=limits) as client:
                    await _ask_over_http(client, questions[0], Tally())  # warm-up
                    rss_before = _rss_mib(process.pid)
                    print(f"HTTP: {arguments.clients} clients for {arguments.seconds:.0f} s ...")
                    client_before = _cpu_seconds(os.getpid())
                    http = await _load(
                        arguments.clients,
                        arguments.seconds,
                        questions,
                        lambda question, tally: _ask_over_http(client, question, tally),
                        process.pid,
                        server.server_pid,
                    )
                    client_cpu = _cpu_seconds(os.getpid()) - client_before
                rss_after = _rss_mib(process.pid)
                await asyncio.sleep(1.0)
                open_transactions, server_connections = await _server_state()
            finally:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                server_log.close()
            await asyncio.sleep(1.0)
            _, after_stop_connections = await _server_state()

            print(f"in-process: {arguments.clients} workers for {arguments.seconds:.0f} s ...")
            floor = await _load(
                arguments.clients,
                arguments.seconds,
                questions,
                lambda question, tally: _ask_in_process(rag, question, tally),
                os.getpid(),
                server.server_pid,
            )
        finally:
            await rag.close()

    results = {
        "recorded": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_description(),
        "documents": len(receipt.documents),
        "chunks": receipt.chunks_written,
        "clients": arguments.clients,
        "seconds": arguments.seconds,
        "http": http.summary(),
        "in_process": floor.summary(),
        "load_generator_cpu_seconds": round(client_cpu, 1),
        "server_rss_mib_before": round(rss_before, 1),
        "server_rss_mib_after": round(rss_after, 1),
        "open_transactions_after": open_transactions,
        "idle_transactions_before": idle_transactions,
        "server_bolt_connections_after": server_connections - idle_connections,
        "bolt_connections_after_server_stopped": after_stop_connections - idle_connections,
    }
    _print(results)
    return results


def _print(results: dict[str, Any]) -> None:
    http, floor = results["http"], results["in_process"]
    print(
        f"\n{results['machine']}; {results['documents']} documents, {results['chunks']} chunks; "
        f"{results['clients']} clients, {results['seconds']:.0f} s each\n"
    )

    def row(name: str, figures: dict[str, Any]) -> list[str]:
        return [
            name,
            f"{figures['requests']:,}",
            f"{figures['requests_per_second']:.1f}",
            f"{figures['retrieved_p50_ms']:.0f} ms",
            f"{figures['retrieved_p95_ms']:.0f} ms",
            f"{figures['final_p50_ms']:.0f} ms",
            f"{figures['final_p95_ms']:.0f} ms",
            f"{figures['answer_cpu_ms_per_request']:.2f} ms",
            f"{figures['neo4j_cpu_ms_per_request']:.2f} ms",
            f"{figures['verified']:,} / {figures['refused']:,} / {sum(figures['errors'].values()):,}",
        ]

    print_table(
        [
            "Contender",
            "Requests",
            "Requests/s",
            "retrieved p50",
            "retrieved p95",
            "final p50",
            "final p95",
            "answering CPU / request",
            "Neo4j CPU / request",
            "verified / refused / errors",
        ],
        [row("HTTP + SSE (graphrag-orm serve)", http), row("in-process rag.answers.stream", floor)],
    )
    ratio = http["requests_per_second"] / floor["requests_per_second"] if floor["requests_per_second"] else 0.0
    print(f"\nHTTP throughput / in-process: {ratio:.2f}x")
    http_cpu, floor_cpu = http["answer_cpu_ms_per_request"], floor["answer_cpu_ms_per_request"]
    if floor_cpu:
        print(f"answering CPU per request, HTTP server / in-process: {http_cpu / floor_cpu:.2f}x")
    print(f"the load generator's own CPU during the HTTP run: {results['load_generator_cpu_seconds']} s")
    print(
        f"server memory: {results['server_rss_mib_before']} MiB after warm-up, "
        f"{results['server_rss_mib_after']} MiB after the load"
    )
    print(
        f"after the load: {results['open_transactions_after']} open transactions, "
        f"{results['server_bolt_connections_after']} pooled Bolt connections of the HTTP server; "
        f"after it stopped: {results['bolt_connections_after_server_stopped']} connections"
    )
    if http["errors"] or floor["errors"]:
        print(f"errors: HTTP {http['errors']}, in-process {floor['errors']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    options = parser.parse_args()
    found = asyncio.run(main(options))
    if options.json is not None:
        options.json.write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
    if found["open_transactions_after"] or found["bolt_connections_after_server_stopped"] > 0:
        print("LEAK: transactions or connections left open", file=sys.stderr)
        raise SystemExit(1)
