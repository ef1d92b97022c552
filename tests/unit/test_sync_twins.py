"""The blocking twins behind ``GraphRag.sync()``: typed for mypy, current, and safe on their loop (no database)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from graphrag_orm.sync._loop import LoopThread

ROOT = Path(__file__).resolve().parents[2]

REVEAL = """\
from graphrag_orm import GraphRag


def use(rag: GraphRag) -> None:
    reveal_type(rag.sync().answers.answer("When does the maker space open?"))
    reveal_type(rag.sync().retriever.retrieve("When does the maker space open?"))
"""


def test_mypy_reveals_an_answer_through_the_sync_facade_as_answer(tmp_path: Path) -> None:
    # A module name of its own each run: mypy's cache would otherwise replay notes naming an earlier path.
    script = tmp_path / f"reveal_sync_{uuid.uuid4().hex}.py"
    script.write_text(REVEAL, encoding="utf-8")
    # MYPYPATH: the editable install is an import hook mypy cannot follow.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--strict", str(script)],
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith(str(script))]
    assert f'{script}:5: note: Revealed type is "graphrag_orm.answers.values.Answer"' in lines, result.stdout
    assert f'{script}:6: note: Revealed type is "graphrag_orm.evidence.Evidence"' in lines, result.stdout
    assert not [line for line in lines if ": error:" in line]


def test_the_checked_in_twins_are_what_the_generator_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_sync.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


async def _double(value: int) -> int:
    await asyncio.sleep(0)
    return value * 2


def test_a_blocking_call_returns_the_result_and_raises_the_error() -> None:
    runner = LoopThread()
    try:
        assert runner.run(_double, 21) == 42

        async def fail() -> None:
            raise ValueError("on the loop")

        with pytest.raises(ValueError, match="on the loop"):
            runner.run(fail)
    finally:
        runner.stop()


def test_leaving_a_for_early_closes_the_async_iterator_on_the_loop() -> None:
    runner = LoopThread()
    closed: list[bool] = []

    async def numbers() -> AsyncIterator[int]:
        try:
            for number in range(10):
                yield number
        finally:
            closed.append(True)

    try:
        for number in runner.iterate(numbers):
            if number == 2:
                break
        assert closed == [True]
        assert list(runner.iterate(numbers)) == list(range(10))
    finally:
        runner.stop()


def test_a_blocking_call_from_the_loop_thread_or_after_stop_is_refused_not_a_hang() -> None:
    runner = LoopThread()

    async def nested() -> int:
        return runner.run(_double, 1)

    try:
        with pytest.raises(RuntimeError, match="own thread"):
            runner.run(nested)
    finally:
        runner.stop()
    with pytest.raises(RuntimeError, match="closed"):
        runner.run(_double, 1)
    assert runner.stopped
