"""The command line's own costs, side by side: its start with and without bytecode, and ``--json`` output.

Start: the CPU seconds (user + system, of the child) of ``python -c "import MODULE"`` for
the command line (``graphrag_orm.cli``), the driver alone (``neo4j``) and the floor
worker of the many-workers benchmark (``benchmarks/scale/workers.py --help``), each with
the bytecode on disk and without it (``-X pycache_prefix`` pointing at an empty folder
and ``PYTHONDONTWRITEBYTECODE=1``, so every module is compiled at every start, as on a
machine that set that variable over an install made without bytecode). The runs are
interleaved, ``--rounds`` each, medians reported.

``--json``: a receipt of ``--documents`` outcomes (400, the many-workers manifest) written
the way the command line writes it piped (``json.dumps``, two-space indent) against
rich's ``Console.print_json`` (what it used before, and still uses on a terminal), on
the same text, in interleaved rounds; both must give the same text.

    .venv/bin/python benchmarks/cli/run.py
    .venv/bin/python benchmarks/cli/run.py --rounds 9 --documents 10000
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import REPO, machine_description, print_table
from rich.console import Console

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.ingestion import DocumentOutcome, DocumentStatus, IngestionReceipt, RunStatus

STARTS = {
    "graphrag-orm command line": ["-c", "import graphrag_orm.cli"],
    "the neo4j driver alone": ["-c", "import neo4j"],
    "the floor worker (workers.py --help)": [str(REPO / "benchmarks" / "scale" / "workers.py"), "--help"],
}


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *argv], env=env, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def starts(rounds: int) -> list[list[str]]:
    with tempfile.TemporaryDirectory(prefix="no-bytecode-") as empty:
        compiled = dict(os.environ)
        compiled.pop("PYTHONDONTWRITEBYTECODE", None)
        for argv in STARTS.values():  # writes whatever bytecode is missing, untimed
            child_cpu(argv, compiled)
        bare = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for name, argv in STARTS.items():
                times.setdefault((name, "with"), []).append(child_cpu(argv, compiled))
                times.setdefault((name, "without"), []).append(
                    child_cpu(["-X", f"pycache_prefix={empty}", *argv], bare)
                )
    rows = []
    for name in STARTS:
        with_, without = statistics.median(times[(name, "with")]), statistics.median(times[(name, "without")])
        rows.append([name, f"{with_:.2f} s", f"{without:.2f} s", f"{without - with_:.2f} s"])
    return rows


def receipt(documents: int) -> IngestionReceipt:
    outcomes = tuple(
        DocumentOutcome(
            document_id=f"{number:064x}",
            source_uri=f"https://example.org/corpus/slice-{number % 10}/doc-{number:06d}.md",
            status=DocumentStatus.INGESTED if number % 7 else DocumentStatus.FAILED,
            error_code=None if number % 7 else DocumentErrorCode.LEASE_HELD,
            chunks=10 if number % 7 else 0,
            embedding_calls=1 if number % 7 else 0,
        )
        for number in range(documents)
    )
    return IngestionReceipt(
        run_id="run-bench",
        status=RunStatus.COMPLETED,
        documents=outcomes,
        chunks_written=sum(o.chunks for o in outcomes),
        embedding_calls=sum(o.embedding_calls for o in outcomes),
        input_tokens=None,
        elapsed_seconds=1.0,
    )


def json_output(documents: int, rounds: int) -> list[list[str]]:
    text = receipt(documents).to_json()
    plain: list[float] = []
    rich: list[float] = []
    for _ in range(rounds):
        began = time.process_time()
        written = json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
        plain.append(time.process_time() - began)
        console = Console(file=io.StringIO(), color_system=None)
        began = time.process_time()
        console.print_json(text)
        rich.append(time.process_time() - began)
        if console.file.getvalue() != written:  # type: ignore[attr-defined]
            raise SystemExit("the two ways gave different text")
    p, r = statistics.median(plain) * 1000, statistics.median(rich) * 1000
    return [[f"{documents:,} documents ({len(text) / 1e3:,.0f} KB)", f"{p:.1f} ms", f"{r:.1f} ms", f"{r / p:.0f}x"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of each measurement")
    parser.add_argument("--documents", type=int, default=400, help="outcomes in the receipt")
    args = parser.parse_args()
    print(f"machine: {machine_description()}\n")
    print("## Start, CPU seconds (median)\n")
    print_table(["Process", "With bytecode", "Compiling at start", "Compiling costs"], starts(args.rounds))
    print("\n## `--json` of an ingest receipt, CPU (median)\n")
    print_table(
        ["Receipt", "Piped (json.dumps)", "rich print_json", "rich / piped"], json_output(args.documents, args.rounds)
    )


if __name__ == "__main__":
    main()
