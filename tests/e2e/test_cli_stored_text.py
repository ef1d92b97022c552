"""Stored text reaches the terminal exactly as stored, and piped output is not wrapped.

Run as a user runs the CLI (subprocesses against the suite's Neo4j), piped and with no
COLUMNS set, as a script reading the output would: brackets that look like Rich markup,
Markdown links, backslashes and emoji print as the bytes the database holds, in ``ask``,
``search``, ``documents`` and ``show``; every citation names its source.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.test_cli import CLI, ROOT

TITLE = "Maker [bold]guide[/bold] \\ [/opt/maker]"
SENTENCE = "The laser cutter config lives in [/opt/maker] per [isort](../g/i.md) \\n [bold]x[/bold] :thumbs_up: 🎉 \\"
QUESTION = "Where does the laser cutter config live?"


def piped(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with its output piped and no COLUMNS: what a script reading it sees."""
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    result = subprocess.run([CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result


def test_ask_search_documents_and_show_print_the_stored_bytes_exactly_and_unwrapped(
    graph: None, tmp_path: Path
) -> None:
    page = tmp_path / "maker [draft].md"
    page.write_text(f"# {TITLE}\n\n{SENTENCE}\n", encoding="utf-8")
    piped("ingest", str(page))
    listed = json.loads(piped("documents", "--json").stdout)["documents"][0]
    title, source = listed["title"], listed["sourceUri"]
    assert "[bold]" in title and "[/opt/maker]" in title, "the title is stored with its brackets"

    asked = piped("ask", QUESTION).stdout
    assert SENTENCE in asked, "the answer and its quote are the stored sentence, on one line"
    assert source in asked and title in asked, "the citation names its document's title and source"

    found = piped("search", "laser cutter config").stdout
    passage = json.loads(piped("search", "laser cutter config", "--json").stdout)["items"][0]["text"]
    assert SENTENCE in passage and source in found
    assert all(line in found for line in passage.splitlines()), "the passage's stored lines, each whole"

    documents = piped("documents").stdout
    assert title in documents and source in documents
    shown = piped("show", source).stdout
    assert title in shown and source in shown


def test_citations_tell_two_documents_of_one_title_apart(graph: None, tmp_path: Path) -> None:
    for folder, text in (
        ("first", "Tea is brewed at eighty degrees."),
        ("second", "Bread rises overnight in the cellar."),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "basics.md").write_text(f"# The basics\n\n{text}\n", encoding="utf-8")
    piped("ingest", str(tmp_path))
    listed = json.loads(piped("documents", "--json").stdout)["documents"]
    second = next(d["sourceUri"] for d in listed if "second" in d["sourceUri"])

    asked = piped("ask", "Where does bread rise overnight?").stdout
    assert second in asked, "the table names the cited file, not only its title"
    answer = json.loads(piped("ask", "Where does bread rise overnight?", "--json").stdout)["answer"]
    (citation,) = answer["citations"]
    assert citation["sourceUri"] == second and citation["title"] == "The basics" and citation["documentId"]


def test_piped_output_is_not_wrapped_at_80_columns(graph: None, tmp_path: Path) -> None:
    title = "A title far longer than eighty columns, " * 4
    (tmp_path / "long.md").write_text(f"# {title.strip()}\n\nShort body.\n", encoding="utf-8")
    piped("ingest", str(tmp_path))
    listed = piped("documents").stdout
    assert title.strip() in listed, "one table row, one line, however long"
    assert max(len(line) for line in listed.splitlines()) > 160
