"""``graphrag-orm resolve suggest --out``, ``apply FILE`` and ``undo RUN`` against the suite's Neo4j.

The graph is written in Python (the real ingestion, the novel ontology, scripted extraction:
the duplicates of tests/integration/test_resolution_graph.py), then resolved by the real CLI
in a subprocess. Undoing every run, last first, restores the full dump.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from graphrag_orm.ontologies import novel
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from tests.e2e.test_cli import cli
from tests.integration.knowledge_support import ontology_schema
from tests.integration.test_resolution_graph import TEXTS, dump, facade


@pytest.fixture
async def duplicates(store: Store, graph: None) -> AsyncIterator[None]:
    async with ontology_schema(store, novel.ONTOLOGY):
        receipt = await facade(store).ingestion.ingest([Sources.text(name, text) for name, text in TEXTS.items()])
        assert receipt.failed == 0
        yield


async def test_suggest_edit_apply_and_undo_from_the_command_line(
    duplicates: None, store: Store, tmp_path: Path
) -> None:
    before = await dump(store)
    listed = cli("resolve", "suggest", "--ontology", "novel", check=True)
    assert "the Caterpillar" in listed.stdout and "same-name" in listed.stdout
    out = tmp_path / "suggestions.json"
    written = cli("resolve", "suggest", "--ontology", "novel", "--out", str(out), check=True)
    assert "wrote 3 suggestions" in written.stdout
    file = json.loads(out.read_text(encoding="utf-8"))
    assert set(file) == {"suggestions", "limitsReached"}
    # A person keeps two of the three: the Wood Folk stay apart.
    file["suggestions"] = [s for s in file["suggestions"] if s["kind"] == "Character"]
    out.write_text(json.dumps(file), encoding="utf-8")

    applied = cli("resolve", "apply", str(out), "--yes", "--ontology", "novel", check=True)
    runs = [line for line in applied.stdout.splitlines() if line.startswith("merge-")]
    assert len(runs) == 2, applied.stdout
    assert "re-pointed" in applied.stdout and "applied 2 merges" in applied.stdout
    assert await dump(store) != before

    again = cli("resolve", "apply", str(out), "--yes", "--ontology", "novel")
    assert again.returncode == 1 and "(merge-blocked)" in again.stderr and "thing-gone" in again.stdout

    for run in reversed(runs):
        undone = cli("resolve", "undo", run, "--ontology", "novel", check=True)
        assert f"undid {run}" in undone.stdout
    assert await dump(store) == before
    twice = cli("resolve", "undo", runs[0], "--ontology", "novel")
    assert twice.returncode == 1 and twice.stderr.strip().endswith("(already-undone)")


def test_resolve_needs_an_ontology(graph: None) -> None:
    result = cli("resolve", "suggest")
    assert result.returncode == 1 and "(invalid-option)" in result.stderr
