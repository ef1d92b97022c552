"""The many-workers benchmark at a tiny size: it runs, its invariants hold, it leaves nothing behind.

``benchmarks/scale/workers.py`` runs as a subprocess against its own local server (port
7706, home ``home-workers-test``; the benchmark wipes its database): two CLI workers on
this host and on two simulated hosts at 1 ms, plus a run where one worker is SIGKILLed
and the other finishes the documents it held once their 10 s leases expire. Needs root and
``ip netns`` (network namespaces); skipped with the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphrag_orm.localdb import LocalDbSettings, status

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCALE = ROOT / "benchmarks" / "scale"
PORT, HOME, DOCUMENTS = 7706, "home-workers-test", 60
RESULT = ROOT / ".benchmarks" / "scale" / "workers-test.json"

sys.path.insert(0, str(SCALE))
sys.path.insert(0, str(ROOT / "benchmarks"))
hosts = pytest.importorskip("hosts")


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    reason = hosts.netns_permitted()
    if reason:
        pytest.skip(reason)
    RESULT.unlink(missing_ok=True)
    command = [
        sys.executable,
        str(SCALE / "workers.py"),
        *("--documents", str(DOCUMENTS), "--workers", "2", "--latency", "0,1", "--kill", "--contenders", "ours"),
        *("--port", str(PORT), "--home", HOME, "--out", str(RESULT), "--warmup", "1"),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "| Contender" in done.stdout  # the side-by-side table was printed
    data: dict[str, Any] = json.loads(RESULT.read_text(encoding="utf-8"))
    return data


def test_every_document_was_ingested_once_by_the_workers(result: dict[str, Any]) -> None:
    plain = [run for run in result["runs"] if run["kill"] is None]
    assert [(run["workers"], run["latency_ms"]) for run in plain] == [(2, 0), (2, 1)]
    for run in plain:
        workers = run["per_worker"]
        assert all(worker["exit_code"] == 0 for worker in workers)
        assert sum(worker["ingested"] for worker in workers) == DOCUMENTS
        assert sum(worker["ingested"] + worker["unchanged"] for worker in workers) >= DOCUMENTS
        assert sum(worker["chunks"] for worker in workers) == run["chunks"] > DOCUMENTS
        assert all(worker["lease_held"] == 0 and worker["other_failed"] == 0 for worker in workers)
    assert {worker["host"] for worker in plain[1]["per_worker"]} == {"grb-h1", "grb-h2"}


def test_a_killed_worker_is_finished_by_the_other(result: dict[str, Any]) -> None:
    (run,) = [run for run in result["runs"] if run["kill"] is not None]
    victim, survivor = run["per_worker"]
    assert victim["killed"] and not survivor["killed"] and survivor["exit_code"] == 0
    assert run["kill"]["victim_leases_at_kill"] >= 1
    kill = run["kill"]
    # Each document it held was committed by it before it died, written by the survivor
    # before the victim took that lease (the victim, on a stale state, would have found it
    # Unchanged under it), or written by the survivor only after that lease expired; how
    # many of each is the race's, that none was taken early is not.
    held = kill["held_committed_by_victim"] + kill["held_already_stored"] + kill["held_taken_over"]
    assert held == kill["victim_leases_at_kill"]
    assert kill["held_missing"] == 0 and kill["taken_over_before_expiry"] == 0
    if kill["held_taken_over"]:
        assert kill["expiry_to_first_takeover_seconds"] >= 0
    # Every document was written by one of the two: the victim before it died, or the survivor.
    assert survivor["ingested"] + run["kill"]["victim_documents"] == DOCUMENTS
    # The kill came mid-run, and the victim wrote nothing after it but what it held: the
    # documents stored at the kill (by either worker) bound what it wrote before, so its
    # count may be below them (the survivor wrote some too), never above them plus those.
    assert kill["killed_after_documents"] >= 1
    assert kill["victim_documents"] <= kill["killed_after_documents"] + kill["held_committed_by_victim"]


def test_the_workers_started_from_bytecode(result: dict[str, Any]) -> None:
    # Every worker is a new process: without bytecode each would compile what it imports.
    assert result["bytecode"] == "compiled"
    for module in (ROOT / "graphrag_orm" / "cli" / "__init__.py", ROOT / "graphrag_orm" / "ingestion" / "service.py"):
        cached = Path(importlib.util.cache_from_source(str(module)))
        assert cached.exists() and cached.stat().st_mtime >= module.stat().st_mtime


def test_nothing_is_left_behind(result: dict[str, Any]) -> None:
    assert hosts.leftovers() == {"namespaces": [], "links": [], "proxy": []}
    binary = hosts.TOXIPROXY_BIN.resolve()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                assert Path(os.readlink(entry / "exe")) != binary, f"Toxiproxy still running as pid {entry.name}"
            except OSError:
                continue
    assert not status(LocalDbSettings.from_env(home_name=HOME, port=PORT)).running
