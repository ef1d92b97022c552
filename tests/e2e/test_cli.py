"""The command line and the demo, run as a user runs them (subprocesses against the suite's Neo4j)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.database import TEST_PORT
from tests.support.revisions import create, unique_constraint, write_raw_revision

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")
QUICKSTART = ROOT / "examples" / "quickstart" / "docs"


def cli(
    *args: str, env: dict[str, str] | None = None, check: bool = False, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "COLUMNS": "160"}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS"):
        environment.pop(name, None)  # never a paid model by accident: only what a test names
    environment["GRAPHRAG_EMBEDDING_MODEL"] = "hashing"  # the stand-in, named: the suite's schema is its set
    environment.update(env or {})
    result = subprocess.run([CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_migrations_status_shows_the_toolkit_chain_applied(graph: None) -> None:
    result = cli("migrations", "status", check=True)
    assert "0001_lexical_schema" in result.stdout and "applied" in result.stdout
    assert cli("migrations", "check", check=True).stdout.strip() == "schema matches the chain's head"


def test_ingest_search_ask_and_export(graph: None, tmp_path: Path) -> None:
    preview = cli("ingest", str(QUICKSTART), "--preview", "--json", check=True)
    assert json.loads(preview.stdout)["chunks"] > 0
    receipt = json.loads(
        cli("ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/", "--json", check=True).stdout
    )
    assert receipt["status"] == "Completed"
    assert [d["status"] for d in receipt["documents"]] == ["Ingested"] * 3
    again = cli("ingest", str(QUICKSTART), "--base-uri", "https://example.org/q/", check=True)
    assert "3 unchanged" in again.stdout

    search = cli("search", "maker space laser cutter", check=True)
    assert "laser cutter" in search.stdout

    export = tmp_path / "answer.json"
    asked = cli("ask", "How many items can a member borrow at a time?", "--export", str(export), check=True)
    assert "Members can borrow up to twelve items at a time." in asked.stdout
    assert "offline stand-in" in asked.stdout
    document = json.loads(export.read_text())
    assert document["format"] == "graphrag-orm-answer/1"
    assert document["answer"]["disposition"] == "Answered"

    refused = cli("ask", "Who won the 1998 football World Cup?")
    assert refused.returncode == 2
    assert "refused: model-declined" in refused.stdout


def test_the_demo_answers_with_checked_citations_and_refuses(graph: None) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    result = subprocess.run(
        [sys.executable, "examples/quickstart/demo.py"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "demo complete" in result.stdout
    assert "all hold" in result.stdout
    assert "refused: model-declined" in result.stdout


def test_an_unreachable_database_is_a_clear_message_without_a_stack_trace() -> None:
    result = cli("migrations", "status", env={"NEO4J_URI": "bolt://127.0.0.1:1"})
    assert result.returncode == 1
    assert "graphrag-orm neo4j start" in result.stderr and "NEO4J_URI" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_neo4j_status_of_a_server_that_is_not_running() -> None:
    result = cli("neo4j", "status", "--home", "home-never-started", "--port", "7999")
    assert result.returncode == 3
    assert "not running" in result.stdout


@pytest.mark.parametrize("args", [["ingest", "--base-uri", "relative/path", str(QUICKSTART)], ["search", ""]])
def test_bad_input_is_refused_with_a_code(graph: None, args: list[str]) -> None:
    result = cli(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert "(" in result.stderr  # the stable code in parentheses


def test_migrations_revision_takes_an_ontology(tmp_path: Path) -> None:
    chain = tmp_path / "chain"
    cli("migrations", "init", str(chain), check=True)
    made = cli(
        "migrations",
        "revision",
        str(chain),
        "--id",
        "0002_article",
        "-m",
        "article",
        "--ontology",
        "article",
        check=True,
    )
    assert "8 steps" in made.stdout
    body = json.loads((chain / "0002_article.json").read_text())
    names = {step["definition"]["name"] for step in body["steps"]}
    assert {"graphrag_person_id_unique", "graphrag_quoted_key_unique", "graphrag_entity_names"} <= names
    again = cli(
        "migrations", "revision", str(chain), "--id", "0003_same", "-m", "same", "--ontology", "article", check=True
    )
    assert "nothing to do" in again.stdout
    for bad in ("nowhere", "no.such.module:ONTOLOGY", "graphrag_orm.layout:Layout"):
        wrong = cli("migrations", "revision", str(chain), "--id", "0003_bad", "-m", "bad", "--ontology", bad)
        assert wrong.returncode != 0 and "Traceback" not in wrong.stderr, bad


def test_migrations_status_exits_non_zero_when_the_database_and_the_chain_disagree(
    bare_database: None, tmp_path: Path
) -> None:
    pending = cli("migrations", "status")
    assert pending.returncode == 1 and "pending" in pending.stdout
    assert "(schema-mismatch)" in pending.stderr and "migrations apply" in pending.stderr
    chain = tmp_path / "chain"
    cli("migrations", "init", str(chain), check=True)
    cli("migrations", "apply", "--dir", str(chain), check=True)
    assert cli("migrations", "status", "--dir", str(chain)).returncode == 0, "its own chain agrees"
    other = cli("migrations", "status")
    assert other.returncode == 1 and "unknown" in other.stderr and "pending" in other.stderr
    assert "Traceback" not in other.stderr


def test_two_migrations_apply_processes_at_once_apply_once_without_a_traceback(
    bare_database: None, tmp_path: Path
) -> None:
    chain = tmp_path / "chain"
    cli("migrations", "init", str(chain), check=True)
    environment = dict(os.environ, COLUMNS="160")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS"):
        environment.pop(name, None)
    processes = [
        subprocess.Popen(
            [CLI, "migrations", "apply", "--dir", str(chain)],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=300) for process in processes]
    everything = "".join(out + err for out, err in outputs)
    assert [process.returncode for process in processes] == [0, 0], everything
    assert "Traceback" not in everything
    assert sorted("applied 0001_graphrag_schema" in out for out, _ in outputs) == [False, True], everything
    assert sum("nothing to apply" in out for out, _ in outputs) == 1, everything
    assert "0001_graphrag_schema" in cli("migrations", "status", "--dir", str(chain), check=True).stdout


def test_neo4j_start_on_a_port_another_program_holds_is_refused_with_a_code() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = cli("neo4j", "start", "--home", "home-never-started", "--port", str(port))
    assert result.returncode == 1
    assert "(port-in-use)" in result.stderr and f"port {port}" in result.stderr
    assert "started" not in result.stdout and "NEO4J_URI" not in result.stdout
    assert "Traceback" not in result.stderr + result.stdout


def test_neo4j_start_and_status_print_the_uri_of_the_port_the_home_runs_on(graph: None) -> None:
    home = "home-test" if TEST_PORT == 7688 else f"home-test-{TEST_PORT}"
    if not (ROOT / "tools" / "neo4j" / home / "run" / "port").is_file():
        pytest.skip("the suite runs against a server it did not start")
    started = cli("neo4j", "start", "--home", home, "--port", str(TEST_PORT), check=True)
    assert "already running" in started.stdout
    assert f"NEO4J_URI=bolt://127.0.0.1:{TEST_PORT}" in started.stdout
    status = cli("neo4j", "status", "--home", home, env={"GRAPHRAG_NEO4J_PORT": "7999"}, check=True)
    assert f"NEO4J_URI=bolt://127.0.0.1:{TEST_PORT}" in status.stdout


def test_a_chain_folder_holding_a_file_that_is_not_utf8_is_refused_without_a_traceback(tmp_path: Path) -> None:
    chain = tmp_path / "chain"
    chain.mkdir()
    (chain / "0001_latin1.json").write_bytes('{"message": "caf\u00e9"}'.encode("latin-1"))
    result = cli("migrations", "apply", "--dir", str(chain))
    assert result.returncode == 1
    assert "(invalid-revision)" in result.stderr and "0001_latin1.json" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_migrations_plan_apply_and_status_refuse_an_injected_revision_with_one_coded_line(
    graph: None, tmp_path: Path
) -> None:
    chain = tmp_path / "chain"
    injected = unique_constraint(name="x IF NOT EXISTS FOR (n:Injected) REQUIRE n.b IS UNIQUE //")
    write_raw_revision(chain, "0001_injected", [create(injected)])
    for command in ("plan", "apply", "status"):
        result = cli("migrations", command, "--dir", str(chain))
        assert result.returncode == 1, command
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("error 0001_injected.json: step 1 create unique-constraint name:"), line
        assert line.endswith("(invalid-revision)") and "Traceback" not in result.stdout + result.stderr
        assert "CREATE CONSTRAINT" not in result.stdout


def test_a_pdf_refused_without_the_pdf_extra_names_the_extra(graph: None, tmp_path: Path) -> None:
    hidden = tmp_path / "no-extra" / "pypdf"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('pypdf is not installed here')\n")
    page = tmp_path / "scan.pdf"
    page.write_bytes(b"%PDF-1.4\n%%EOF\n")
    without = {"PYTHONPATH": str(hidden.parent)}
    shown = cli("ingest", str(page), env=without)
    assert shown.returncode == 1
    assert "pdf extra" in shown.stdout and "no loader reads" not in shown.stdout, "the receipt's message"
    assert "pip install 'graphrag-orm[pdf]'" in shown.stderr and "(missing-extra)" in shown.stderr
    as_json = cli("ingest", str(page), "--json", env=without)
    assert as_json.returncode == 1 and "pip install 'graphrag-orm[pdf]'" in as_json.stderr
