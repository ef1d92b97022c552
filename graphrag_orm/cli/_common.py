"""What every command shares: running async work, connecting, and failing without a stack trace."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console

from graphrag_orm.errors import GraphRagError
from graphrag_orm.store import Store
from graphrag_orm.store.connection import open_store

__all__ = ["T", "fail", "run", "with_database"]

T = TypeVar("T")

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)


def run(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``; a GraphRagError ends the command with its message and exit code 1."""
    try:
        return asyncio.run(work)
    except GraphRagError as error:
        errors.print(f"[bold red]error[/] {error.message} [dim]({error.code})[/]")
        raise typer.Exit(1) from None


async def with_database(action: Callable[[Store], Awaitable[T]]) -> T:
    """Open a store from NEO4J_* settings, run ``action`` with it, close its driver."""
    store = await open_store()
    try:
        return await action(store)
    finally:
        await store.driver.close()


def fail(message: str, code: str) -> None:
    errors.print(f"[bold red]error[/] {message} [dim]({code})[/]")
    raise typer.Exit(1)
