"""`make demo` (examples/recall/run.py), run as a user runs it, twice, against the suite's Neo4j.

The demo applies its own chain (the toolkit's revision, the bikes ontology's, and one
more for a local embedding model), so it runs on a bare database and the toolkit's
schema is restored afterwards (the ``bare_database`` fixture).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from graphrag_orm.store.connection import ConnectionSettings

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "recall" / "run.py"
OFFLINE = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS")


def run_demo(settings: ConnectionSettings, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if name not in OFFLINE}
    environment.update(NEO4J_URI=settings.uri, NEO4J_PASSWORD=settings.password, COLUMNS="160", **extra)
    return subprocess.run(
        [sys.executable, str(DEMO)], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=240
    )


def test_the_demo_answers_completely_with_every_link_cited_and_refuses_twice_in_a_row(
    bare_database: None, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    first = run_demo(neo4j_settings, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.stdout
    assert "ingested 28, unchanged 0, failed 0" in out
    # What ran is named: the embedder (the local model, or the labelled stand-in) and the replies.
    assert "local model, offline" in out or "HashingEmbedder (offline stand-in" in out
    assert "replies written by hand (stand-in: no model)" in out
    # Rich wraps long lines at the terminal's width: each section is read as one line.
    # 1. plain hybrid retrieval misses a product (answered incomplete, or refused).
    plain = " ".join(out.split("1. plain hybrid retrieval", 1)[1].split("2. hybrid + the graph route", 1)[0].split())
    assert re.search(r"missed: .*(City 3|Trail 5)", plain), plain
    # 2. the graph route: complete, and all four links cited from the stored bytes.
    graph = " ".join(out.split("2. hybrid + the graph route", 1)[1].split("3. Q:", 1)[0].split())
    assert "City 3 and Trail 5 are affected." in graph
    for quote in (
        "Kestrel Components recalls brake caliper BC-310",
        "BC-310 hydraulic calipers front and rear",
        "brake kit BK-7",
        "two BC-310 calipers",
    ):
        assert quote in graph, quote
    assert "every citation against its stored bytes: all hold" in graph
    # 3. the invented answer is refused; 4. the health report; the timings.
    refusal = out.split("3. Q:", 1)[1].split("4. health report", 1)[0]
    assert "refused: citation-not-found" in refusal
    assert "healthy: no findings" in out
    assert "what ran, and how long it took" in out and "demo complete" in out

    second = run_demo(neo4j_settings, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "migrations: up to date" in second.stdout
    assert "ingested 0, unchanged 28, failed 0" in second.stdout
    assert "City 3 and Trail 5 are affected." in second.stdout and "demo complete" in second.stdout


def test_the_demo_names_the_stand_in_embedder_when_asked_for_it(
    bare_database: None, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    result = run_demo(neo4j_settings, tmp_path, GRAPHRAG_DEMO_EMBEDDER="hashing")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "HashingEmbedder (offline stand-in: feature hashing" in result.stdout
    assert "City 3 and Trail 5 are affected." in result.stdout
