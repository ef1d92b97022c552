"""``graphrag-orm reembed plan | backfill | complete | cleanup``: re-embedding as a reviewed plan (issue 15)."""

from __future__ import annotations

import typer

__all__ = ["app"]

app = typer.Typer(
    help="Re-embedding as a reviewed plan: a staged index, a resumable backfill, a cut-over, a cleanup.",
    no_args_is_help=True,
)
