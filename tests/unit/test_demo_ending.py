"""The demo says, at its end, that the Neo4j it started is still running and how to stop it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from rich.console import Console

from examples.recall import run


def test_a_server_the_demo_started_is_named_with_the_command_that_stops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(record=True, width=1000)
    monkeypatch.setattr(run, "console", console)
    monkeypatch.setattr(run, "SERVER_LEFT_RUNNING", [("home-recall", "bolt://127.0.0.1:7686")])
    finished = SimpleNamespace(ok=True, timings=[("start Neo4j", 1.0)], embedder_label="e", chat_label="c")

    async def demo() -> SimpleNamespace:
        return finished

    monkeypatch.setattr(run, "run_demo", demo)
    assert asyncio.run(run.main()) == 0
    out = console.export_text()
    assert "still running on bolt://127.0.0.1:7686 (home home-recall" in out
    assert "graphrag-orm neo4j stop --home home-recall" in out


def test_a_server_the_demo_did_not_start_is_not_mentioned(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(record=True, width=1000)
    monkeypatch.setattr(run, "console", console)
    monkeypatch.setattr(run, "SERVER_LEFT_RUNNING", [])

    async def demo() -> SimpleNamespace:
        return SimpleNamespace(ok=True, timings=[], embedder_label="e", chat_label="c")

    monkeypatch.setattr(run, "run_demo", demo)
    asyncio.run(run.main())
    assert "still running" not in console.export_text()
