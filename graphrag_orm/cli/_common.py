"""What every command shares: running async work, connecting, and failing without a stack trace."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console

from graphrag_orm.connection import connect, disconnect
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET, EmbeddingSet, Similarity
from graphrag_orm.errors import GraphRagError

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


async def with_database(action: Callable[[], Awaitable[T]]) -> T:
    """Connect from NEO4J_* settings, run ``action``, disconnect."""
    driver = await connect()
    try:
        return await action()
    finally:
        await disconnect(driver)


def fail(message: str, code: str) -> None:
    errors.print(f"[bold red]error[/] {message} [dim]({code})[/]")
    raise typer.Exit(1)


def embedding_set_from_env(
    model: str | None = None, dimensions: int | None = None, similarity: Similarity = Similarity.COSINE
) -> EmbeddingSet:
    """The embedding set named by the arguments, else by GRAPHRAG_EMBEDDING_MODEL and
    GRAPHRAG_EMBEDDING_DIMENSIONS; neither gives the offline set. Only one of the two
    (or dimensions that are not a number) is ``typer.BadParameter``."""
    model = model or os.environ.get("GRAPHRAG_EMBEDDING_MODEL")
    configured = os.environ.get("GRAPHRAG_EMBEDDING_DIMENSIONS")
    if dimensions is None and configured:
        try:
            dimensions = int(configured)
        except ValueError:
            raise typer.BadParameter(f"GRAPHRAG_EMBEDDING_DIMENSIONS must be a number, not {configured!r}") from None
    if model is None and dimensions is None:
        return OFFLINE_EMBEDDING_SET
    if model is None or dimensions is None:
        raise typer.BadParameter("give both the embedding model and its dimensions (or neither for the offline set)")
    return EmbeddingSet(model=model, dimensions=dimensions, similarity=similarity)
