"""Ctrl-C during ``ingest``: the command says what was stored and what not, and the run record agrees.

A user's SIGINT, sent to the real CLI while it ingests a folder against the suite's
Neo4j. The run must record the documents it stored (not ``Failed 0/0/0``), and a run
whose every document failed is Failed, never Completed.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

from tests.e2e.test_cli import CLI, ROOT, cli

DOCUMENTS = 400


def _stored() -> int:
    return int(json.loads(cli("documents", "--json", "--limit", "1", check=True).stdout)["total"])


def _as_in_a_terminal() -> None:
    """Ctrl-C reaches a command a terminal runs: a suite started as a background job of a script
    (``bash .ci/run &``) inherits SIGINT ignored, and Python then never turns it into
    KeyboardInterrupt, so the CLI is started with SIGINT back at its default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_ingest_says_what_was_stored_and_the_run_counts_it(graph: None, tmp_path: Path) -> None:
    for number in range(DOCUMENTS):
        (tmp_path / f"page-{number:03}.md").write_text(f"# Page {number}\n\nPage {number} is about topic {number}.\n")
    process = subprocess.Popen(
        [CLI, "ingest", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_in_a_terminal,
    )
    deadline = time.monotonic() + 120
    while _stored() < 5 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, "the ingest ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, out + err
    assert "Traceback" not in err and "(interrupted)" in err
    said = re.search(r"(\d+) of 400 documents stored \((\d+) ingested, 0 unchanged\), 0 failed, (\d+) not stored", err)
    assert said, err
    kept, ingested, left = (int(group) for group in said.groups())
    assert kept == ingested and kept + left == DOCUMENTS and 0 < kept < DOCUMENTS
    assert _stored() == kept, "what it says it stored is what the graph holds"
    (run,) = json.loads(cli("runs", "--json", check=True).stdout)["runs"]
    assert run["status"] == "Failed" and run["documentsIngested"] == kept, "not Failed 0/0/0"


def test_a_run_whose_every_document_failed_is_failed_not_completed(graph: None, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"\xff\xfe not utf-8")
    (tmp_path / "b.md").write_bytes(b"# B\n\n\xc3\x28 broken\n")
    receipt = json.loads(cli("ingest", str(tmp_path), "--json").stdout)
    assert [d["status"] for d in receipt["documents"]] == ["Failed", "Failed"]
    assert receipt["status"] == "Failed"
    (run,) = json.loads(cli("runs", "--json", check=True).stdout)["runs"]
    assert run["status"] == "Failed" and run["documentsFailed"] == 2
