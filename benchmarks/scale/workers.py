"""Many workers, many simulated hosts: N ingestion processes on one manifest, coordinated only by leases.

One corpus folder is given whole to N worker processes running the real CLI
(``graphrag-orm ingest FOLDER --json --lease-seconds S --wait-for-leases W``), all in
the same order (the realistic case: each skips what another holds, then waits for what
is still held) and, with ``--order shuffled``, each in its own seeded order. At 0 ms the
workers run on this host; at 1 and 5 ms they are spread round robin over simulated
hosts (network namespaces, see hosts.py), each reaching Neo4j through its host's
Toxiproxy address. At the contenders' latency (the largest, 5 ms by default) the
hand-written floor (``ingest_floor`` of benchmarks/ingest/run.py, one subprocess per
worker inside the namespaces; it has no leases, so each gets a disjoint share of the
files) and neo4j-graphrag (its side script pointed at a proxy address, disjoint shares
too) run as well. Every run starts on a fresh database and is checked afterwards:
every document stored once, the planned chunk count, no duplicate chunk id, no lease
left, every worker exited 0 (a failed check stops the benchmark).

``--kill``: N >= 2 workers on >= 2 hosts with a short lease; one is SIGKILLed after a
share of the documents is written (while it holds leases); the others finish its
documents once its leases expire. Reported: the time from the kill to the last
document written.

    .venv/bin/python benchmarks/scale/workers.py --documents 200 --workers 1,2 --latency 0,5
    .venv/bin/python benchmarks/scale/workers.py --documents 60 --workers 2 --latency 0,1 --kill \\
        --contenders ours --port 7706 --home home-workers-test

Writes .benchmarks/scale/workers-<time>.json; removes its corpus, namespaces and proxy.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # common, and ingest.run (not this folder's run.py)

from common import (
    BASE_URI,
    BENCH_HOME,
    BENCH_PORT,
    REPO,
    SCRATCH,
    BenchServer,
    LoadProbe,
    LoadReport,
    generate_corpus,
    machine_description,
    print_table,
    reset_database,
    server_version,
)
from hosts import PYTHON, Host, SimulatedHosts, netns_permitted, raise_terminated
from ingest.run import ingest_floor, ingest_neo4j_graphrag, markdown_files, write_chunk_plan

from graphrag_orm.ingestion import IngestionOptions
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_driver

CLI = REPO / ".venv" / "bin" / "graphrag-orm"


@dataclass
class WorkerResult:
    """One worker process: where it ran, how it ended, and its receipt's counts."""

    index: int
    host: str
    exit_code: int
    seconds: float
    ingested: int = 0
    unchanged: int = 0
    lease_held: int = 0
    other_failed: int = 0
    chunks: int = 0
    killed: bool = False
    limits: list[str] = field(default_factory=list)
    run_id: str = ""


@dataclass
class RunResult:
    """One contender at one (workers, latency, order): wall time, throughput, workers, load, checks."""

    contender: str
    workers: int
    latency_ms: int
    hosts: int
    order: str
    wall_seconds: float
    chunks: int
    per_worker: list[WorkerResult]
    machine_busy: float = 0.0
    others_busy: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    note: str = ""
    kill: dict[str, Any] | None = None

    @classmethod
    def of(cls, load: LoadReport, **fields: Any) -> RunResult:
        """A result with ``load``'s machine and CPU figures (``fields``: the rest, by name)."""
        return cls(
            **fields,
            machine_busy=load.machine_busy,
            others_busy=load.others_busy,
            client_cpu=load.client_cpu,
            server_cpu=load.server_cpu,
        )

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.wall_seconds if self.wall_seconds else 0.0


@dataclass(frozen=True)
class Plan:
    """The corpus: its folder, files, chunk count, and neo4j-graphrag's chunk-text plan."""

    folder: Path
    files: list[Path]
    chunks: int
    chunk_plan: Path


@dataclass(frozen=True)
class Setting:
    """What one run is given: the database, the hosts (None at 0 ms) and the bounds."""

    settings: ConnectionSettings
    hosts: list[Host] | None
    lease_seconds: float
    wait_seconds: float
    in_flight: int


def placement(setting: Setting, workers: int) -> list[Host | None]:
    """Worker i's host, round robin over the simulated hosts (None: this host, no proxy)."""
    if not setting.hosts:
        return [None] * workers
    return [setting.hosts[i % len(setting.hosts)] for i in range(workers)]


def worker_env(setting: Setting, host: Host | None) -> dict[str, str]:
    """The CLI's environment: the database (via the host's proxy) and the offline hashing embedder."""
    return dict(
        os.environ,
        NEO4J_URI=host.uri if host is not None else setting.settings.uri,
        NEO4J_USER=setting.settings.user,
        NEO4J_PASSWORD=setting.settings.password,
        GRAPHRAG_MODEL_MODE="offline",
    )


def host_name(host: Host | None) -> str:
    return host.name if host is not None else "local"


def in_host(host: Host | None, argv: list[str]) -> list[str]:
    return host.command(argv) if host is not None else argv


def shares(files: Sequence[Path], parts: int, scratch: Path) -> list[Path]:
    """``parts`` disjoint folders of symlinks (file i in share i mod parts), for contenders without leases."""
    folders = []
    for part in range(parts):
        folder = scratch / f"share-{parts}-{part}"
        if not folder.exists():
            folder.mkdir(parents=True)
            for path in files[part::parts]:
                (folder / path.name).symlink_to(path)
        folders.append(folder)
    return folders


# ------------------------------------------------------------------ graphrag-orm workers


def cli_command(plan: Plan, setting: Setting, order: str, index: int) -> list[str]:
    """The real CLI on the whole manifest: the folder, or (shuffled) its files in a seeded order."""
    sources: list[str] = [str(plan.folder)]
    if order == "shuffled":
        files = [str(p) for p in plan.files]
        random.Random(index).shuffle(files)
        sources = files
    return [
        str(CLI),
        "ingest",
        *sources,
        "--base-uri",
        BASE_URI,
        "--json",
        "--lease-seconds",
        f"{setting.lease_seconds:g}",
        "--wait-for-leases",
        f"{setting.wait_seconds:g}",
    ]


def read_receipt(result: WorkerResult, stdout: bytes) -> None:
    """Count the receipt's per-document outcomes into ``result`` (nothing when the worker was killed)."""
    if result.killed:
        return
    text = stdout.decode("utf-8", "replace")
    try:
        receipt = json.loads(text[text.index("{") :])
    except ValueError as error:
        raise SystemExit(
            f"worker {result.index} printed no receipt (exit {result.exit_code}):\n{text[-2000:]}"
        ) from error
    for outcome in receipt["documents"]:
        if outcome["status"] == "Ingested":
            result.ingested += 1
            result.chunks += outcome["chunks"]
        elif outcome["status"] == "Unchanged":
            result.unchanged += 1
        elif outcome.get("errorCode") == "lease-held":
            result.lease_held += 1
        else:
            result.other_failed += 1
    result.limits = [limit["name"] for limit in receipt.get("limitsReached", [])]
    result.run_id = receipt["runId"]


@dataclass
class Killer:
    """Kills worker ``victim`` once ``after`` of the planned documents are written, and notes when."""

    victim: int
    after: int
    #: The victim's run id, read when it started (it starts alone, before the others).
    victim_run: str | None = None
    killed_at: datetime | None = None
    documents_at_kill: int = 0
    leases_at_kill: list[dict[str, Any]] = field(default_factory=list)
    #: Per victim lease key: when the last poll that did not see it began (its lease was
    #: taken after that); absent for a lease already there at the first poll.
    taken_after: dict[str, datetime] = field(default_factory=dict)


async def victim_run(store: Store, process: asyncio.subprocess.Process) -> str:
    """The run id of the one worker started so far, once its run node is written."""
    while process.returncode is None:
        rows = await store.read(
            "MATCH (r:IngestionRun {status: 'Running'}) RETURN r.id AS id", name="bench.kill.victim"
        )
        if len(rows.records) == 1:
            return str(rows.records[0]["id"])
        await asyncio.sleep(0.05)
    raise SystemExit("--kill: the victim ended before its run began")


async def watch_and_kill(store: Store, process: asyncio.subprocess.Process, killer: Killer) -> None:
    """Poll the stored document count; SIGKILL the victim once ``after`` are written and it holds a lease.

    Each poll also notes when each of the victim's leases first showed: it was taken after
    the previous poll began, which tells a document another worker wrote *before* the
    victim took its lease (the victim holds it only to find it ``Unchanged``) from one
    written while the lease was live (a breach).
    """
    previous: datetime | None = None
    seen: set[str] = set()
    while process.returncode is None:
        began = datetime.now(UTC)
        written = (await store.read("MATCH (d:Document) RETURN count(d) AS n", name="bench.kill.poll")).records[0]["n"]
        leases = await store.read(
            "MATCH (l:GraphRagLease) RETURN l.key AS key, l.runId AS run, l.expiresAt AS expires",
            name="bench.kill.leases",
        )
        victims = {row["key"] for row in leases.records if row["run"] == killer.victim_run}
        for key in victims - seen:
            if previous is not None:
                killer.taken_after[key] = previous
            else:
                killer.taken_after.pop(key, None)
        seen, previous = victims, began
        if written >= killer.after and victims:
            process.send_signal(signal.SIGKILL)
            killer.killed_at = datetime.now(UTC)
            killer.documents_at_kill = written
            killer.leases_at_kill = [dict(row) for row in leases.records]
            return
        await asyncio.sleep(0.05)


async def run_ours(
    store: Store, plan: Plan, setting: Setting, workers: int, order: str, killer: Killer | None = None
) -> tuple[float, list[WorkerResult]]:
    """N CLI workers on the whole manifest; (wall seconds from first start to last exit, each worker)."""
    hosts = placement(setting, workers)
    began = time.perf_counter()
    processes = []
    for index, host in enumerate(hosts):
        command = in_host(host, cli_command(plan, setting, order, index))
        processes.append(
            await asyncio.create_subprocess_exec(
                *command,
                env=worker_env(setting, host),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        )
        if killer is not None and index == killer.victim:
            # The victim starts alone, so its run (and so its leases) can be told apart.
            killer.victim_run = await victim_run(store, processes[-1])
    watcher = None
    if killer is not None:
        watcher = asyncio.create_task(watch_and_kill(store, processes[killer.victim], killer))

    async def finished(index: int, process: asyncio.subprocess.Process) -> tuple[WorkerResult, bytes, bytes]:
        stdout, stderr = await process.communicate()
        killed = killer is not None and index == killer.victim and killer.killed_at is not None
        name = host_name(hosts[index])
        result = WorkerResult(index, name, process.returncode or 0, time.perf_counter() - began, killed=killed)
        return result, stdout, stderr

    try:
        ended = await asyncio.gather(*(finished(i, p) for i, p in enumerate(processes)))
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
        if watcher is not None:
            watcher.cancel()
    wall = time.perf_counter() - began
    results = []
    for result, stdout, stderr in ended:
        read_receipt(result, stdout)
        if result.exit_code != 0 and not result.killed:
            raise SystemExit(
                f"worker {result.index} on {result.host} exited {result.exit_code}:\n"
                f"{stderr.decode('utf-8', 'replace')[-2000:]}"
            )
        results.append(result)
    return wall, results


# ------------------------------------------------------------------ the floor and neo4j-graphrag


async def run_floor(plan: Plan, setting: Setting, workers: int, scratch: Path) -> tuple[float, list[WorkerResult]]:
    """N floor subprocesses (in the namespaces), each on a disjoint share of the files."""
    hosts = placement(setting, workers)
    began = time.perf_counter()
    processes = []
    for host, folder in zip(hosts, shares(plan.files, workers, scratch), strict=True):
        argv = [str(PYTHON), __file__, "--floor-worker", str(folder), "--in-flight", str(setting.in_flight)]
        processes.append(
            await asyncio.create_subprocess_exec(
                *in_host(host, argv), env=worker_env(setting, host), stdout=asyncio.subprocess.PIPE
            )
        )
    outputs = await asyncio.gather(*(p.communicate() for p in processes))
    wall = time.perf_counter() - began
    results = []
    for index, (process, (stdout, _)) in enumerate(zip(processes, outputs, strict=True)):
        name = host_name(hosts[index])
        if process.returncode != 0:
            raise SystemExit(f"floor worker {index} on {name} exited {process.returncode}")
        report = json.loads(stdout.decode().strip().splitlines()[-1])
        results.append(WorkerResult(index, name, 0, report["seconds"], report["documents"], chunks=report["chunks"]))
    return wall, results


async def floor_worker(folder: Path, in_flight: int) -> None:
    """Inside a worker subprocess: the floor on ``folder``, against NEO4J_URI; prints one JSON line."""
    settings = ConnectionSettings.from_env()
    driver = await open_driver(settings)
    try:
        outcome = await ingest_floor(driver, settings.database, folder, in_flight)
    finally:
        await driver.close()
    print(json.dumps({"seconds": outcome.seconds, "documents": outcome.documents, "chunks": outcome.chunks}))


async def run_neo4j_graphrag(
    plan: Plan, setting: Setting, workers: int, scratch: Path
) -> tuple[float, list[WorkerResult]]:
    """neo4j-graphrag's side script, one per disjoint share, each pointed at a host's proxy address."""
    hosts = placement(setting, workers)
    began = time.perf_counter()

    def one(host: Host | None, folder: Path) -> WorkerResult:
        settings = setting.settings
        if host is not None:
            settings = ConnectionSettings(uri=host.uri, user=settings.user, password=settings.password)
        outcome = ingest_neo4j_graphrag(folder, plan.chunk_plan, settings, "apoc-free", setting.in_flight)
        return WorkerResult(0, host_name(host), 0, outcome.seconds, outcome.documents, chunks=outcome.chunks)

    folders = shares(plan.files, workers, scratch)
    results = await asyncio.gather(*(asyncio.to_thread(one, h, f) for h, f in zip(hosts, folders, strict=True)))
    for index, result in enumerate(results):
        result.index = index
    return time.perf_counter() - began, list(results)


# ------------------------------------------------------------------ the invariants


async def check_invariants(store: Store, plan: Plan, label: str) -> None:
    """Fail loudly unless every document is stored once, chunks match the plan, no duplicate, no lease.

    neo4j-graphrag's documents carry ``path`` and its chunks no ``id``: a document is
    then counted by its path and a chunk by its node.
    """
    documents = (
        await store.read(
            "MATCH (d:Document) RETURN count(d) AS n, count(DISTINCT coalesce(d.sourceUri, d.path, d.id)) AS distinct",
            name="bench.check.documents",
        )
    ).records[0]
    chunks = (
        await store.read(
            "MATCH (c:Chunk) RETURN count(c) AS n, count(DISTINCT coalesce(c.id, elementId(c))) AS distinct",
            name="bench.check.chunks",
        )
    ).records[0]
    leases = (await store.read("MATCH (l:GraphRagLease) RETURN count(l) AS n", name="bench.check.leases")).records[0]
    problems = []
    if documents["n"] != len(plan.files) or documents["distinct"] != len(plan.files):
        problems.append(f"{documents['n']} documents ({documents['distinct']} distinct), planned {len(plan.files)}")
    if chunks["n"] != plan.chunks:
        problems.append(f"{chunks['n']} chunks, planned {plan.chunks}")
    if chunks["distinct"] != chunks["n"]:
        problems.append(f"{chunks['n'] - chunks['distinct']} duplicate chunk ids")
    if leases["n"]:
        problems.append(f"{leases['n']} lease nodes left")
    if problems:
        raise SystemExit(f"INVARIANT BROKEN after {label}: " + "; ".join(problems))


def native(value: Any) -> Any:
    """A driver temporal value as Python's (others as they are)."""
    return value.to_native() if hasattr(value, "to_native") else value


async def kill_report(store: Store, killer: Killer, wall: float) -> dict[str, Any]:
    """When the victim was killed, what it held, and what became of each document it held.

    The victim's leases are those of the snapshot at the kill under the victim's run id
    (read when it started, alone). A document it held was committed by the victim before
    it died (its lease then expires unreleased and is cleared by whoever reads the
    document next), written by another worker before the victim took the lease (the
    victim read a stale state and held it only to find it ``Unchanged``; told by the
    polls, see :func:`watch_and_kill`), or taken over by another worker, which may only
    write it once the lease expired: ``taken_over_before_expiry`` counts the breaches and
    must be 0. The snapshot's expiry is a lower bound (a renewal between the snapshot and
    the signal only moves it later), and ``ingestedAt`` is stamped after the takeover.
    """
    row = (await store.read("MATCH (d:Document) RETURN max(d.ingestedAt) AS last", name="bench.kill.last")).records[0]
    wrote = await store.read(
        "MATCH (d:Document {runId: $run}) RETURN count(d) AS n", {"run": killer.victim_run}, name="bench.kill.victim"
    )
    held = {
        lease["key"]: native(lease["expires"]) for lease in killer.leases_at_kill if lease["run"] == killer.victim_run
    }
    stored = await store.read(
        "MATCH (d:Document) WHERE d.id IN $keys RETURN d.id AS key, d.runId AS run, d.ingestedAt AS at",
        {"keys": sorted(held)},
        name="bench.kill.held",
    )
    committed = [r for r in stored.records if r["run"] == killer.victim_run]
    others = [r for r in stored.records if r["run"] != killer.victim_run]
    # Written by another worker before the victim's lease existed: the victim took the
    # lease on a stale state and would have found the document Unchanged under it.
    before = [r for r in others if r["key"] in killer.taken_after and native(r["at"]) <= killer.taken_after[r["key"]]]
    taken = [r for r in others if r not in before]
    # Seconds from each held lease's expiry to the other worker's write (negative would be a breach).
    margins = [(native(r["at"]) - held[r["key"]]).total_seconds() for r in taken]
    assert killer.killed_at is not None
    return {
        "killed_after_documents": killer.documents_at_kill,
        # Committed by the victim, counted afterwards: it may commit one more between the poll and the signal.
        "victim_documents": int(wrote.value("n", 0)),
        "victim_leases_at_kill": len(held),
        "leases_at_kill": len(killer.leases_at_kill),
        "held_committed_by_victim": len(committed),
        "held_already_stored": len(before),
        "held_taken_over": len(taken),
        "held_missing": len(held) - len(stored.records),
        "taken_over_before_expiry": sum(1 for m in margins if m < 0),
        "expiry_to_first_takeover_seconds": min(margins) if margins else None,
        "kill_to_last_document_seconds": (native(row["last"]) - killer.killed_at).total_seconds(),
        "wall_seconds": wall,
    }


# ------------------------------------------------------------------ the runs


@dataclass
class Bench:
    """The database, the corpus, the hosts and the flags one benchmark run shares."""

    store: Store
    server_pid: int | None
    plan: Plan
    scratch: Path
    hosts: SimulatedHosts | None
    args: argparse.Namespace
    settings: ConnectionSettings

    def setting(self, latency: int, lease_seconds: float | None = None) -> Setting:
        """The hosts at ``latency`` (the proxy set to it), or this host at 0 ms."""
        hosts = None
        if latency > 0:
            if self.hosts is None:
                raise SystemExit("latency > 0 needs the simulated hosts")
            self.hosts.set_latency(latency)
            hosts = self.hosts.hosts
        return Setting(
            self.settings,
            hosts,
            lease_seconds if lease_seconds is not None else self.args.lease_seconds,
            self.args.wait_for_leases,
            self.args.in_flight,
        )

    async def one(self, contender: str, workers: int, latency: int, order: str = "same") -> RunResult:
        """One contender on a fresh database, measured and checked."""
        await reset_database(self.store)
        setting = self.setting(latency)
        with LoadProbe(self.server_pid) as probe:
            if contender == "ours":
                wall, per_worker = await run_ours(self.store, self.plan, setting, workers, order)
            elif contender == "floor":
                wall, per_worker = await run_floor(self.plan, setting, workers, self.scratch)
            elif contender == "neo4j-graphrag":
                wall, per_worker = await run_neo4j_graphrag(self.plan, setting, workers, self.scratch)
            else:
                raise SystemExit(f"unknown contender {contender!r}")
        load = probe.report()
        label = f"{contender}, {workers} workers, {latency} ms" + (f", {order} order" if contender == "ours" else "")
        await check_invariants(self.store, self.plan, label)
        note = "" if contender == "ours" else "disjoint shares (no leases)"
        result = RunResult.of(
            load,
            contender=contender,
            workers=workers,
            latency_ms=latency,
            hosts=len(setting.hosts[:workers]) if setting.hosts else 0,
            order=order if contender == "ours" else "share",
            wall_seconds=wall,
            chunks=self.plan.chunks,
            per_worker=per_worker,
            note=note,
        )
        print(f"{label}: {result.wall_seconds:.1f} s, {result.chunks_per_second:,.0f} chunks/s; {load.describe()}")
        return result

    async def killed(self, workers: int, latency: int) -> RunResult:
        """N workers on >= 2 hosts, one SIGKILLed mid-run; the others finish its documents."""
        if workers < 2 or latency <= 0 or self.hosts is None or len(self.hosts.hosts) < 2:
            raise SystemExit("--kill needs at least 2 workers and a latency > 0 (2 or more simulated hosts)")
        await reset_database(self.store)
        setting = self.setting(latency, lease_seconds=self.args.kill_lease_seconds)
        killer = Killer(victim=0, after=max(1, int(len(self.plan.files) * self.args.kill_after)))
        with LoadProbe(self.server_pid) as probe:
            wall, per_worker = await run_ours(self.store, self.plan, setting, workers, "same", killer)
        load = probe.report()
        if killer.killed_at is None:
            raise SystemExit("--kill: the victim finished before it could be killed (use more --documents)")
        await check_invariants(self.store, self.plan, f"kill run, {workers} workers, {latency} ms")
        kill = await kill_report(self.store, killer, wall)
        kill["lease_seconds"] = setting.lease_seconds
        result = RunResult.of(
            load,
            contender="ours, one killed",
            workers=workers,
            latency_ms=latency,
            hosts=min(workers, len(self.hosts.hosts)),
            order="same",
            wall_seconds=wall,
            chunks=self.plan.chunks,
            per_worker=per_worker,
            note=f"lease {setting.lease_seconds:g} s",
            kill=kill,
        )
        print(
            f"kill run: victim killed after {kill['killed_after_documents']} documents holding "
            f"{kill['victim_leases_at_kill']} leases ({kill['held_committed_by_victim']} of them already "
            f"committed, {kill['held_already_stored']} stored by another before it, "
            f"{kill['held_taken_over']} taken over, {kill['taken_over_before_expiry']} before "
            f"expiry); last document written {kill['kill_to_last_document_seconds']:.1f} s after the kill"
        )
        if kill["taken_over_before_expiry"] or kill["held_missing"]:
            raise SystemExit(f"INVARIANT BROKEN in the kill run: {kill}")
        return result


def prepare_corpus(args: argparse.Namespace, scratch: Path) -> Plan:
    """The seeded corpus written into ``scratch`` (removed at the end) and its chunk plan."""
    folder = generate_corpus(args.seed, args.documents).write(scratch / "corpus")
    chunk_plan = scratch / "plan.json"
    chunks = write_chunk_plan(folder, chunk_plan)
    return Plan(folder, markdown_files(folder), chunks, chunk_plan)


async def benchmark(
    args: argparse.Namespace, scratch: Path, hosts: SimulatedHosts | None, server: BenchServer
) -> list[RunResult]:
    """Every configuration the flags ask for, in order: ours, the kill run, then the contenders."""
    plan = prepare_corpus(args, scratch)
    print(f"corpus: {len(plan.files):,} documents, {plan.chunks:,} chunks (seed {args.seed})")
    driver = await open_driver(server.settings)
    store = Store(driver, database=server.settings.database)
    bench = Bench(store, server.server_pid, plan, scratch, hosts, args, server.settings)
    results: list[RunResult] = []
    try:
        print(f"server: Neo4j {await server_version(store)} at {server.settings.uri}\n")
        contenders = args.contenders.split(",")
        if args.warmup:
            # Untimed: a cold server needs about a thousand documents before its JIT settles
            # (benchmarks/ingest/README.md, Method); every measured run then meets it warm.
            for contender in [c for c in ("ours", "floor") if c in contenders]:
                for _ in range(args.warmup):
                    await bench.one(contender, 2, 0)
            print("(the runs above warmed the server up and are not reported)\n")
        for latency in args.latency:
            for workers in args.workers:
                if "ours" in contenders:
                    for order in args.order.split(","):
                        results.append(await bench.one("ours", workers, latency, order))
        if args.kill:
            results.append(await bench.killed(max(args.workers), max(args.latency)))
        contender_latency = max(args.latency)
        if "floor" in contenders:
            for workers in args.workers:
                results.append(await bench.one("floor", workers, contender_latency))
        if "neo4j-graphrag" in contenders:
            for workers in args.graphrag_workers:
                results.append(await bench.one("neo4j-graphrag", workers, contender_latency))
        await reset_database(store)
    finally:
        await driver.close()
    return results


def report(results: Sequence[RunResult]) -> None:
    """The runs side by side, then the kill run."""
    rows = []
    for r in results:
        each = r.per_worker
        rows.append(
            [
                r.contender,
                f"{r.latency_ms} ms",
                str(r.workers),
                str(r.hosts) if r.hosts else "local",
                r.order,
                f"{r.wall_seconds:.1f} s",
                f"{r.chunks:,}",
                f"{r.chunks_per_second:,.0f}",
                " / ".join(str(w.ingested) for w in each),
                " / ".join(str(w.unchanged) for w in each),
                " / ".join(str(w.lease_held) for w in each),
                f"{r.client_cpu:.1f} s",
                f"{r.server_cpu:.1f} s",
                f"{r.machine_busy:.0%} ({r.others_busy:.0%})",
                r.note,
            ]
        )
    print()
    print_table(
        [
            "Contender",
            "Added RTT",
            "Workers",
            "Hosts",
            "Order",
            "Wall",
            "Chunks",
            "Chunks/s",
            "Ingested each",
            "Unchanged each",
            "Lease-held each",
            "Client CPU",
            "Server CPU",
            "Machine busy (others)",
            "Note",
        ],
        rows,
    )
    killed = [r for r in results if r.kill]
    if killed:
        print()
        print_table(
            [
                "Workers",
                "Hosts",
                "Added RTT",
                "Lease",
                "Killed after",
                "Victim's leases",
                "Committed / stored before / taken over",
                "Expiry to first takeover",
                "Kill to last write",
                "Wall",
            ],
            [
                [
                    str(r.workers),
                    str(r.hosts),
                    f"{r.latency_ms} ms",
                    f"{r.kill['lease_seconds']:g} s",
                    f"{r.kill['killed_after_documents']} documents",
                    str(r.kill["victim_leases_at_kill"]),
                    f"{r.kill['held_committed_by_victim']} / {r.kill['held_already_stored']} / "
                    f"{r.kill['held_taken_over']}",
                    "-"
                    if r.kill["expiry_to_first_takeover_seconds"] is None
                    else f"{r.kill['expiry_to_first_takeover_seconds']:.1f} s",
                    f"{r.kill['kill_to_last_document_seconds']:.1f} s",
                    f"{r.wall_seconds:.1f} s",
                ]
                for r in killed
                if r.kill is not None
            ],
        )


def compile_bytecode() -> str:
    """Compile this checkout's modules (those out of date) and check the venv's, so every worker
    starts as installed code does.

    Each worker is a new process. Where ``PYTHONDONTWRITEBYTECODE`` is set (this machine)
    and the packages were installed without bytecode (uv's default), every process compiles
    every module it imports (``benchmarks/cli/run.py``: 1.7 s more CPU at the command
    line's start, 1.6 s at the floor worker's), which the contenders would pay eight times
    over and no pip-installed deployment pays at all (pip compiles at install; ``make
    venv`` does too).
    """
    skip = re.compile(r"[/\\]\.venv")  # the neo4j-graphrag venv under benchmarks/ is pip's, compiled
    compiled = all(compileall.compile_dir(REPO / folder, quiet=1, rx=skip) for folder in ("graphrag_orm", "benchmarks"))
    if not compiled:
        raise SystemExit("bytecode: compileall failed for this checkout")
    import neo4j  # the installed packages: compiled at install by make venv, else a warning

    installed = Path(importlib.util.cache_from_source(neo4j.__file__)).exists()
    return "compiled" if installed else "the venv's packages have no bytecode: run `make venv` again"


def main(args: argparse.Namespace) -> None:
    if args.floor_worker:
        asyncio.run(floor_worker(Path(args.floor_worker), args.in_flight))
        return
    signal.signal(signal.SIGTERM, raise_terminated)  # clean up on SIGTERM as on Ctrl-C
    print(f"machine: {machine_description()}")
    bytecode = compile_bytecode()
    print(f"bytecode: {bytecode}")
    needs_hosts = max(args.latency) > 0
    if needs_hosts:
        reason = netns_permitted()
        if reason:
            raise SystemExit(f"latency > 0 needs simulated hosts: {reason}")
    (SCRATCH / "scale").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="workers-", dir=SCRATCH / "scale") as temporary:
        scratch = Path(temporary)
        with BenchServer(port=args.port, home=args.home) as server:
            port = int(server.settings.uri.rsplit(":", 1)[1])
            if needs_hosts:
                with SimulatedHosts(min(args.hosts, max(args.workers)), port, args.api_port) as hosts:
                    results = asyncio.run(benchmark(args, scratch, hosts, server))
            else:
                results = asyncio.run(benchmark(args, scratch, None, server))
        shutil.rmtree(scratch, ignore_errors=True)
    report(results)
    out = args.out or SCRATCH / "scale" / f"workers-{time.strftime('%Y%m%d-%H%M%S')}.json"
    runs = [dict(asdict(r), chunks_per_second=r.chunks_per_second) for r in results]
    out.write_text(json.dumps({"args": vars(args), "bytecode": bytecode, "runs": runs}, indent=2, default=str))
    print(f"\nwritten: {out.relative_to(REPO)}")


def _numbers(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2_000, help="documents in the corpus (~10 chunks each)")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--workers", type=_numbers, default=[1, 2, 4, 8], help="worker counts, comma-separated")
    parser.add_argument("--latency", type=_numbers, default=[0, 1, 5], help="added round trips in ms; 0 = this host")
    parser.add_argument("--contenders", default="ours,floor,neo4j-graphrag", help="ours, floor, neo4j-graphrag")
    parser.add_argument("--graphrag-workers", type=_numbers, default=[1], help="neo4j-graphrag processes (shares)")
    parser.add_argument("--order", default="same", help="same, shuffled or both (same,shuffled)")
    parser.add_argument("--hosts", type=int, default=4, help="at most this many simulated hosts (round robin)")
    parser.add_argument("--lease-seconds", type=float, default=IngestionOptions().lease_duration_seconds)
    parser.add_argument("--wait-for-leases", type=float, default=300.0, help="each worker's --wait-for-leases")
    parser.add_argument(
        "--in-flight",
        type=int,
        default=IngestionOptions().documents_in_flight,
        help="documents in flight for the floor and neo4j-graphrag (ours: the CLI's default)",
    )
    parser.add_argument(
        "--warmup", type=int, default=2, help="untimed runs of ours and the floor (2 workers, this host) first"
    )
    parser.add_argument("--kill", action="store_true", help="also a run with one worker SIGKILLed mid-run")
    parser.add_argument("--kill-lease-seconds", type=float, default=10.0, help="the lease in the kill run")
    parser.add_argument("--kill-after", type=float, default=0.25, help="kill once this share of documents is written")
    parser.add_argument("--port", type=int, default=BENCH_PORT, help="the local Neo4j's bolt port")
    parser.add_argument("--home", default=BENCH_HOME, help="the local Neo4j's home under tools/neo4j")
    parser.add_argument("--api-port", type=int, default=8479, help="Toxiproxy's HTTP API port")
    parser.add_argument("--out", type=Path, help="the JSON's path (default .benchmarks/scale/workers-<time>.json)")
    parser.add_argument("--floor-worker", help=argparse.SUPPRESS)  # internal: one floor worker on this folder
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
