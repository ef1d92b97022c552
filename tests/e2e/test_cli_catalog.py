"""The CLI on a real graph: listing documents and runs, showing one, and naming documents as people do.

Run as a user runs it (subprocesses against the suite's Neo4j). A document is named by
its id, a unique prefix (the twelve characters the tables show), its source URI or the
path it was ingested from, everywhere a document is taken.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from graphrag_orm.sources import Sources
from tests.e2e.test_cli import QUICKSTART, cli

BASE = "https://example.org/q/"


def _ingest_quickstart() -> dict[str, str]:
    """Ingest the quickstart pages under BASE; their ids by file name."""
    receipt = json.loads(cli("ingest", str(QUICKSTART), "--base-uri", BASE, "--json", check=True).stdout)
    assert [d["status"] for d in receipt["documents"]] == ["Ingested"] * 3
    return {Path(d["sourceUri"]).name: d["documentId"] for d in receipt["documents"]}


def test_documents_lists_source_title_chunks_and_run_and_json_says_the_same(graph: None) -> None:
    ids = _ingest_quickstart()
    listed = json.loads(cli("documents", "--json", check=True).stdout)
    assert listed["total"] == 3 and not listed["limitsReached"]
    by_uri = {d["sourceUri"]: d for d in listed["documents"]}
    borrowing = by_uri[BASE + "borrowing.md"]
    assert borrowing["id"] == ids["borrowing.md"]
    assert borrowing["title"] == "Borrowing at the Harbor Street Library"
    assert borrowing["chunks"] > 0 and borrowing["runId"].startswith("run-") and borrowing["ingestedAt"]
    table = cli("documents", check=True).stdout
    assert ids["borrowing.md"][:12] in table and BASE + "borrowing.md" in table and "3 documents" in table

    runs = json.loads(cli("runs", "--json", check=True).stdout)
    assert runs["total"] == 1
    (run,) = runs["runs"]
    assert run["id"] == borrowing["runId"] and run["status"] == "Completed" and run["documentsIngested"] == 3
    assert run["startedAt"] and run["completedAt"]
    assert run["id"] in cli("runs", check=True).stdout


def test_a_list_cut_at_its_limit_says_how_many_more(graph: None) -> None:
    _ingest_quickstart()
    cut = cli("documents", "--limit", "1", check=True).stdout
    assert "2 more documents" in cut
    listed = json.loads(cli("documents", "--limit", "1", "--json", check=True).stdout)
    assert len(listed["documents"]) == 1 and listed["total"] == 3
    assert listed["limitsReached"] == [{"name": "MaxListed", "value": 1}]
    assert cli("documents", "--limit", "1001").returncode != 0, "the maximum is enforced"


def test_show_takes_the_prefix_a_table_shows_the_source_uri_or_the_path_and_never_prints_text(
    graph: None, tmp_path: Path
) -> None:
    ids = _ingest_quickstart()
    borrowing = ids["borrowing.md"]
    shown = cli("show", borrowing[:12], check=True).stdout
    assert borrowing in shown and "Membership" in shown, "metadata and the sections of its chunks"
    detail = json.loads(cli("show", BASE + "borrowing.md", "--json", check=True).stdout)
    assert detail["id"] == borrowing and detail["chunkCount"] == len(detail["chunks"]) > 0
    spans = detail["chunks"]
    assert [s["order"] for s in spans] == sorted(s["order"] for s in spans)
    assert all(s["endByte"] > s["startByte"] for s in spans)
    assert "text" not in spans[0] and "Members can borrow" not in json.dumps(detail)
    assert json.loads(cli("show", borrowing[:6], "--json", check=True).stdout)["id"] == borrowing

    page = tmp_path / "page.md"
    shutil.copy(QUICKSTART / "events.md", page)
    cli("ingest", str(page), check=True)
    by_path = json.loads(cli("show", str(page), "--json", check=True).stdout)
    assert by_path["sourceUri"] == Sources.file(page).source_uri

    missing = cli("show", "0123456789ab")
    assert missing.returncode == 1 and "(document-not-found)" in missing.stderr
    assert "Traceback" not in missing.stderr + missing.stdout


def _two_files_sharing_an_id_prefix(folder: Path) -> tuple[Path, Path, str]:
    """Two file names in ``folder`` whose document ids start with the same six hex digits."""
    seen: dict[str, Path] = {}
    for number in range(400_000):
        path = folder / f"{number}.md"
        prefix = hashlib.sha256(Sources.file(path).source_uri.encode()).hexdigest()[:6]
        if prefix in seen:
            return seen[prefix], path, prefix
        seen[prefix] = path
    raise AssertionError("no two names share a prefix")


def test_an_ambiguous_prefix_is_a_coded_error_that_says_how_many_match(graph: None, tmp_path: Path) -> None:
    first, second, prefix = _two_files_sharing_an_id_prefix(tmp_path)
    first.write_text("# One\n\nThe first page.\n", encoding="utf-8")
    second.write_text("# Two\n\nThe second page.\n", encoding="utf-8")
    cli("ingest", str(tmp_path), check=True)
    result = cli("show", prefix)
    assert result.returncode == 1
    assert "(ambiguous-id)" in result.stderr and "2 documents" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    removed = cli("remove", str(first))
    assert removed.returncode == 0, removed.stderr
    assert json.loads(cli("show", prefix, "--json", check=True).stdout)["sourceUri"] == Sources.file(second).source_uri


def test_remove_and_reset_take_a_prefix_a_uri_or_a_path(graph: None) -> None:
    ids = _ingest_quickstart()
    removed = cli("remove", ids["borrowing.md"][:12], check=True)
    assert "removed 1 document" in removed.stdout
    reset = cli("reset", "--document", BASE + "events.md", "--yes", check=True)
    assert "removed 1 document" in reset.stdout
    assert "removing" in reset.stdout and "1/1 documents" in reset.stdout  # the progress bar, per batch
    left = json.loads(cli("documents", "--json", check=True).stdout)
    assert [d["sourceUri"] for d in left["documents"]] == [BASE + "opening-hours.md"]
    scoped = cli("search", "opening hours", "--scope-document", ids["opening-hours.md"][:8], "--json", check=True)
    assert {item["documentId"] for item in json.loads(scoped.stdout)["items"]} == {ids["opening-hours.md"]}
    gone = cli("remove", ids["borrowing.md"][:12])
    assert gone.returncode == 1 and "(document-not-found)" in gone.stderr


@pytest.mark.parametrize(
    "flags", [("--wait-for-leases", "-1"), ("--wait-for-leases", "86401"), ("--lease-seconds", "0.5")]
)
def test_ingest_refuses_lease_flags_outside_their_bounds_in_one_line(tmp_path: Path, flags: tuple[str, str]) -> None:
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    result = cli("ingest", str(tmp_path), *flags)
    assert result.returncode == 1 and "(invalid-option)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_ingest_json_exits_non_zero_when_a_document_failed_and_the_table_explains_the_code(
    graph: None, tmp_path: Path
) -> None:
    (tmp_path / "good.md").write_text("# Good\n\nPlain text.\n", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 latin-1, not UTF-8\n")
    result = cli("ingest", str(tmp_path), "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    receipt = json.loads(result.stdout)
    assert sorted(d["status"] for d in receipt["documents"]) == ["Failed", "Ingested"]
    (tmp_path / "bad.txt").write_bytes(b"still \xff not UTF-8\n")
    table = cli("ingest", str(tmp_path), env={"COLUMNS": "90"})
    assert table.returncode == 1
    assert "invalid-utf8" in table.stdout, "the code is never cut, however narrow the terminal"
    assert "UTF-8" in table.stdout.replace("invalid-utf8", ""), "the table says what the code means"


def test_a_folder_whose_files_match_nothing_says_how_many_it_skipped_and_why(tmp_path: Path) -> None:
    (tmp_path / "notes.rst").write_text("notes", encoding="utf-8")
    (tmp_path / "page.html").write_text("<p>page</p>", encoding="utf-8")
    (tmp_path / "more.rst").write_text("more", encoding="utf-8")
    result = cli("ingest", str(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())
    assert "3 skipped" in said and "match none of *.md" in said and ".rst 2" in said
    assert "(invalid-source)" in said
    everything = " ".join(cli("ingest", str(tmp_path), "--pattern", "*").stderr.split())
    assert "3 have no loader" in everything
