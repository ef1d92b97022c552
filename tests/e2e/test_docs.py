"""Every ```python block of README.md and docs/*.md runs, each alone, against the suite's Neo4j.

A block runs in its own process, from an empty folder, offline (no OPENAI_* in its
environment), with the suite's NEO4J_* settings and a timeout. It must leave the graph as
it found it, so pages can be followed in any order: no document, chunk or thing left
behind, and the toolkit's schema unchanged. Blocks that are not meant to run
(fragments, signatures) are fenced ```python no-run; a fence that looks like Python but
is neither (```py, ```python3, ```python skip) fails the page. A failing block is named
by its page and line, and its traceback's line numbers are the page's.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.database import MARKER_LABEL

__all__ = ["Block", "find_blocks"]

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
RUN = "python"
NO_RUN = "python no-run"
PYTHON_LIKE = ("py", "python", "python3", "py3", "pycon", "ipython")
TIMEOUT_SECONDS = 180
#: What a block may leave behind: the journal, the locks, the suite's marker and run records.
KEPT_LABELS = ("GraphRagMigration", "GraphRagMigrationLock", MARKER_LABEL, "IngestionRun")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<ticks>`{3,})(?P<info>[^`]*)$")
OFFLINE = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line of its opening fence, its info string and its code."""

    page: Path
    line: int
    info: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page}:{self.line}"

    @property
    def python_like(self) -> bool:
        words = self.info.split()
        return bool(words) and words[0].lower() in PYTHON_LIKE

    @property
    def runs(self) -> bool:
        return self.info == RUN

    @property
    def marked(self) -> bool:
        return self.info == NO_RUN


def find_blocks(page: Path, text: str | None = None) -> list[Block]:
    """The fenced blocks of a Markdown page: a run of three or more backticks, indented up to
    three spaces, closed by a bare run at least as long (so a ````python block may hold ```)."""
    lines = (page.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    opened: tuple[int, str, str, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        fence = FENCE.match(line)
        if opened is None:
            if fence:
                opened, body = (number, fence["info"].strip(), fence["indent"], fence["ticks"]), []
        elif fence and len(fence["ticks"]) >= len(opened[3]) and not fence["info"].strip():
            start, info, indent, _ = opened
            blocks.append(Block(page, start, info, "".join(b.removeprefix(indent) + "\n" for b in body)))
            opened = None
        else:
            body.append(line)
    if opened is not None:
        blocks.append(Block(page, opened[0], opened[1], "".join(b + "\n" for b in body)))
    return blocks


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in find_blocks(page)]


RUNNABLE = [block for block in all_blocks() if block.runs]


def test_the_block_finder_counts_run_marked_and_unmarked_python_blocks() -> None:
    page = ROOT / "docs" / "example.md"
    text = "\n".join(
        [
            "```python", "print(1)", "```",
            "```python no-run", "fragment(...)", "```",
            "```py", "print(2)", "```",
            "  ```text", "  output", "  ```",
            "```", "$ graphrag-orm neo4j start", "```",
            "````python", "```text", "inside", "```", "````",
        ]
    )  # fmt: skip
    blocks = find_blocks(page, text)
    assert [(b.line, b.info) for b in blocks] == [
        (1, "python"),
        (4, "python no-run"),
        (7, "py"),
        (10, "text"),
        (13, ""),
        (16, "python"),
    ]
    assert [b.where for b in blocks if b.python_like and not (b.runs or b.marked)] == ["docs/example.md:7"]
    assert blocks[0].code == "print(1)\n" and blocks[3].code == "output\n"
    assert blocks[5].code == "```text\ninside\n```\n"


def test_every_python_block_of_the_docs_runs_or_is_marked_no_run() -> None:
    unmarked = [f"{b.where} (```{b.info})" for b in all_blocks() if b.python_like and not (b.runs or b.marked)]
    assert not unmarked, "Python blocks neither run nor marked ```python no-run: " + ", ".join(unmarked)
    for page in PAGES:
        blocks = find_blocks(page)
        run, skipped = sum(b.runs for b in blocks), sum(b.marked for b in blocks)
        print(f"{page.relative_to(ROOT)}: {run} run, {skipped} marked no-run")
    assert len(RUNNABLE) >= 25, "the docs lost their runnable blocks (or the fence parser broke)"


async def leftovers(store: Store) -> dict[str, int]:
    rows = await store.read(
        "MATCH (n) WHERE none(label IN labels(n) WHERE label IN $kept) "
        "UNWIND labels(n) AS label RETURN label, count(*) AS nodes ORDER BY label",
        {"kept": list(KEPT_LABELS)},
    )
    return {row["label"]: row["nodes"] for row in rows}


@pytest.mark.parametrize("block", RUNNABLE, ids=[block.where for block in RUNNABLE])
async def test_the_docs_block_runs_alone_and_leaves_the_graph_as_it_found_it(
    block: Block, graph: None, store: Store, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    # Blank lines first, so the traceback's line numbers are the page's.
    script = tmp_path / f"{block.page.stem}_line_{block.line}.py"
    script.write_text("\n" * block.line + block.code, encoding="utf-8")
    environment = {name: value for name, value in os.environ.items() if name not in OFFLINE}
    environment.update(
        NEO4J_URI=neo4j_settings.uri,
        NEO4J_USER=neo4j_settings.user,
        NEO4J_PASSWORD=neo4j_settings.password,
        COLUMNS="120",
        GRAPHRAG_EMBEDDING_MODEL="hashing",  # the stand-in, named: the suite's schema is its set
    )
    if neo4j_settings.database:
        environment["NEO4J_DATABASE"] = neo4j_settings.database
    try:
        result = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(script)],
            cwd=tmp_path,
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: the block did not finish within {TIMEOUT_SECONDS} s")
    assert result.returncode == 0, (
        f"{block.where}: the block failed (exit {result.returncode})\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )
    left = await leftovers(store)
    assert not left, f"{block.where}: the block left nodes behind (it must reset what it made): {left}"
    check = await Migrator(store, Chain.load()).check()
    assert check.ok, f"{block.where}: the block changed the toolkit's schema: {check}"
