"""``graphrag-orm documents``, ``graphrag-orm runs`` and ``graphrag-orm show DOCUMENT``: what the graph holds.

Each reads only. Lists are bounded (``--limit``, default 50, at most 1,000) and say how
many more there are when cut; ``--json`` prints the value the catalog service returns
(:mod:`graphrag_orm.catalog`). ``show`` takes a document as every command does: its id,
a unique prefix of it (at least six hex digits, such as the twelve the tables show),
its source URI, or the path it was ingested from.
"""

from __future__ import annotations

from datetime import datetime

import typer
from rich.table import Column, Table
from rich.text import Text

from graphrag_orm.catalog import (
    DEFAULT_CHUNK_LIMIT,
    DEFAULT_LIST_LIMIT,
    MAX_CHUNK_LIMIT,
    MAX_LIST_LIMIT,
    DocumentDetail,
    DocumentList,
    RunList,
)
from graphrag_orm.cli._common import console, print_json, run, stored, with_graphrag

__all__ = ["SHOWN_ID", "documents", "runs", "show", "shown_time"]

#: Characters of an id the tables show; any unique prefix of six or more is accepted back.
SHOWN_ID = 12

LimitOption = typer.Option(
    DEFAULT_LIST_LIMIT, "--limit", min=1, max=MAX_LIST_LIMIT, help=f"At most this many (1..{MAX_LIST_LIMIT:,})."
)
JsonOption = typer.Option(False, "--json", help="Print JSON (camelCase) instead of a table.")


def shown_time(value: datetime | None) -> str:
    """A stored time as ``2026-12-02 01:05:33`` (UTC, to the second); empty when absent."""
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else ""


def _more(shown: int, total: int, what: str) -> None:
    if total > shown:
        console.print(f"[yellow]limit reached[/] showing {shown:,} of {total:,}: {total - shown:,} more {what}")


def documents(limit: int = LimitOption, as_json: bool = JsonOption) -> None:
    """List stored documents: id (a prefix), source, title, chunks, run and when ingested."""
    found: DocumentList = run(with_graphrag(lambda rag: rag.catalog.documents(limit)))
    if as_json:
        print_json(found.to_json())
        return
    if not found.documents:
        console.print("no documents: `graphrag-orm ingest PATH` adds some")
        return
    table = Table(
        Column("document", no_wrap=True),
        Column("source", overflow="fold"),
        Column("title", overflow="fold"),
        Column("chunks", justify="right"),
        Column("run", no_wrap=True),
        Column("ingested (UTC)", no_wrap=True),
    )
    for item in found.documents:
        table.add_row(
            item.id[:SHOWN_ID],
            stored(item.source_uri),
            stored(item.title),
            str(item.chunks),
            stored((item.run_id or "")[:SHOWN_ID]),
            shown_time(item.ingested_at),
        )
    console.print(table)
    console.print(f"[dim]{found.total:,} documents[/]")
    _more(len(found.documents), found.total, "documents (raise --limit)")


def runs(limit: int = LimitOption, as_json: bool = JsonOption) -> None:
    """List ingestion runs, newest first: id, status, started, completed and counts."""
    found: RunList = run(with_graphrag(lambda rag: rag.catalog.runs(limit)))
    if as_json:
        print_json(found.to_json())
        return
    if not found.runs:
        console.print("no runs")
        return
    # The run id whole: ``reset --run`` takes it as shown.
    reasons = any(item.failure_reason for item in found.runs)
    columns = [
        Column("run", no_wrap=True, min_width=max(len(item.id) for item in found.runs)),
        Column("status", no_wrap=True),
        Column("started (UTC)"),
        Column("completed (UTC)"),
        Column("documents", justify="right"),
        Column("chunks", justify="right"),
    ]
    if reasons:
        columns.append(Column("reason", overflow="fold"))
    table = Table(*columns, caption="documents: ingested/unchanged/failed")
    for item in found.runs:
        row: list[str | Text] = [
            stored(item.id),
            item.status,
            shown_time(item.started_at),
            shown_time(item.completed_at),
            f"{item.documents_ingested}/{item.documents_unchanged}/{item.documents_failed}",
            str(item.chunks_written),
        ]
        if reasons:
            row.append(stored(item.failure_reason))
        table.add_row(*row)
    console.print(table)
    _more(len(found.runs), found.total, "runs (raise --limit)")


def show(
    document: str = typer.Argument(..., help="Id, id prefix (6+ hex digits), source URI or path."),
    chunks: int = typer.Option(
        DEFAULT_CHUNK_LIMIT,
        "--chunks",
        min=1,
        max=MAX_CHUNK_LIMIT,
        help=f"At most this many chunk spans (1..{MAX_CHUNK_LIMIT:,}).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Show one document's metadata and chunk spans (order, bytes, tokens, section); never its text."""
    detail: DocumentDetail = run(with_graphrag(lambda rag: rag.catalog.document(document, chunk_limit=chunks)))
    if as_json:
        print_json(detail.to_json())
        return
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    for label, value in (
        ("id", detail.id),
        ("source", detail.source_uri),
        ("title", detail.title),
        ("media type", detail.media_type),
        ("bytes", f"{detail.length_bytes:,}" if detail.length_bytes is not None else None),
        ("pages", str(detail.pages) if detail.pages else None),
        ("content hash", detail.content_hash),
        ("run", detail.run_id),
        ("ingested (UTC)", shown_time(detail.ingested_at)),
        ("published", detail.published),
        ("publisher", detail.publisher),
        ("url", detail.url),
        ("text origin", detail.text_origin),
        ("sections", str(detail.sections)),
        ("chunks", str(detail.chunk_count)),
    ):
        if value:
            facts.add_row(label, stored(value))
    console.print(facts)
    table = Table(
        Column("#", justify="right"),
        Column("bytes", no_wrap=True),
        Column("tokens", justify="right"),
        Column("section", overflow="fold"),
        title="chunk spans (end exclusive)",
    )
    for span in detail.chunks:
        table.add_row(
            str(span.order),
            f"{span.start_byte}-{span.end_byte}",
            "" if span.token_count is None else str(span.token_count),
            stored(span.section),
        )
    console.print(table)
    _more(len(detail.chunks), detail.chunk_count, "chunks (raise --chunks)")
