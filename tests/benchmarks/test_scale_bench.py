"""The scale benchmark at a tiny size, so it cannot rot: it runs, its figures hold, it leaves nothing behind.

``benchmarks/scale/run.py`` runs as a subprocess against its own local server (port
7705, home ``home-scale-test``: never the suite's 7688, since the benchmark wipes its
database), and its JSON is checked: the counts equal the chunker's plan, the
invariants held, each scope strategy ran as forced, both resets left no node, and the
server it started is stopped afterwards. The cold figures need a server restart (half a
minute), so the test leaves them out (``--cold-questions 0``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphrag_orm.localdb import LocalDbSettings, status

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks" / "scale" / "run.py"
PORT, HOME, DOCUMENTS = 7705, "home-scale-test", 30
RESULT = ROOT / ".benchmarks" / "scale" / f"result-{DOCUMENTS}-documents-256.json"


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    RESULT.unlink(missing_ok=True)
    command = [
        sys.executable,
        str(RUN),
        *("--documents", str(DOCUMENTS), "--contenders", "ours,floor", "--port", str(PORT), "--home", HOME),
        *("--questions", "10", "--cold-questions", "0", "--scope-questions", "5", "--rounds", "1"),
        *("--warmup-documents", "20"),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "| Contender" in done.stdout  # the side-by-side table was printed
    data: dict[str, Any] = json.loads(RESULT.read_text(encoding="utf-8"))
    return data


def test_every_contender_wrote_the_planned_graph(result: dict[str, Any]) -> None:
    planned = sum(result["corpus"]["slice_chunks"])
    assert result["corpus"]["documents"] == DOCUMENTS and planned > DOCUMENTS
    for contender in ("ours", "floor"):
        ingest, held = result[contender]["ingest"], result[contender]["invariants"]
        assert len(ingest["slices"]) == 10
        assert ingest["chunks"] == planned and ingest["documents"] == DOCUMENTS
        assert held == {
            "documents": DOCUMENTS,
            "chunks": planned,
            "duplicate_chunk_ids": 0,
            "leases": 0,
            "held": True,
        }


def test_the_three_scope_strategies_ran_and_were_measured(result: dict[str, Any]) -> None:
    scoped = result["ours"]["scoped"]
    assert set(scoped) == {"exact", "over-fetch", "in-index"}  # run.py fails loudly on another strategy
    assert scoped["exact"]["recall_of_exact"] == 1.0
    assert all(figures["questions"] == 5 and figures["p95"] > 0 for figures in scoped.values())
    assert result["ours"]["vector_filter_seconds"] > 0


def test_latency_store_and_memory_are_reported(result: dict[str, Any]) -> None:
    ours = result["ours"]
    assert "cold" not in ours  # --cold-questions 0: no restart, to keep the test short
    assert ours["warm"]["ours"]["p95"] > 0 and ours["warm"]["floor"]["p95"] > 0
    assert ours["store_bytes"]["store"] > 0
    assert ours["memory"]["page_cache_configured"]


def test_both_resets_left_no_node_and_the_server_stopped(result: dict[str, Any]) -> None:
    assert result["ours"]["reset"]["left"] == 0 and result["floor"]["reset"]["left"] == 0
    assert not status(LocalDbSettings.from_env(home_name=HOME, port=PORT)).running
