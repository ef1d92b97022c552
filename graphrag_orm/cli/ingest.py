"""``graphrag-orm ingest PATH... [--base-uri] [--preview] [--json]`` and ``graphrag-orm search``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graphrag_orm.cli._common import console, fail, run
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.evidence import Evidence
from graphrag_orm.ingestion import DocumentOutcome, IngestionPreview, IngestionReceipt
from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions
from graphrag_orm.sources import Source, Sources

__all__ = ["DEFAULT_PATTERNS", "collect_sources", "ingest", "preview_table", "receipt_table", "search"]

DEFAULT_PATTERNS = ("*.md", "*.markdown", "*.txt", "*.pdf")


def collect_sources(paths: list[Path], base_uri: str | None, patterns: tuple[str, ...]) -> list[Source]:
    """Files as given, folders expanded by ``patterns`` (stable order), URIs from ``base_uri``."""
    found: list[Source] = []
    seen: set[str] = set()
    for path in paths:
        if path.is_dir():
            batch: list[Source] = []
            for pattern in patterns:
                batch.extend(Sources.folder(path, pattern=pattern, base_uri=base_uri))
            batch.sort(key=lambda s: s.source_uri)
        else:
            uri = base_uri.rstrip("/") + "/" + path.name if base_uri else None
            batch = [Sources.file(path, uri=uri)]
        for source in batch:
            if source.source_uri not in seen:
                seen.add(source.source_uri)
                found.append(source)
    return found


def receipt_table(receipt: IngestionReceipt) -> Table:
    table = Table("document", "source", "status", "code", "chunks", title=f"run {receipt.run_id}")
    for outcome in receipt.documents:
        table.add_row(
            outcome.document_id[:12],
            outcome.source_uri,
            outcome.status.value,
            outcome.error_code or "",
            str(outcome.chunks),
        )
    return table


def preview_table(preview: IngestionPreview) -> Table:
    table = Table(
        "document",
        "source",
        "status",
        "code",
        "chunks",
        "embedding calls",
        "input tokens",
        title="preview (nothing written)",
    )
    for item in preview.documents:
        table.add_row(
            item.document_id[:12],
            item.source_uri,
            item.status.value,
            item.error_code or "",
            str(item.chunks),
            str(item.embedding_calls),
            str(item.input_tokens),
        )
    return table


def ingest(
    paths: list[Path] = typer.Argument(..., exists=True, help="Files and folders to ingest."),
    base_uri: str | None = typer.Option(None, "--base-uri", help="Name files by this URI instead of their path."),
    pattern: list[str] = typer.Option(list(DEFAULT_PATTERNS), "--pattern", help="File-name patterns for folders."),
    preview: bool = typer.Option(False, "--preview", help="Count chunks, calls and tokens; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the receipt (or preview) as JSON."),
) -> None:
    """Ingest documents: one transaction per document, leases, a receipt."""
    try:
        sources = collect_sources(paths, base_uri, tuple(pattern))
    except GraphRagError as error:
        fail(error.message, error.code)
    rag, choice = graphrag_from_env()

    async def work() -> IngestionReceipt | IngestionPreview:
        await rag.connect()
        try:
            if preview:
                return await rag.ingestion.preview(sources)
            if as_json:
                return await rag.ingestion.ingest(sources)
            columns = (
                TextColumn("[bold]ingesting"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(
                    "{task.fields[chunks]} chunks, {task.fields[calls]} embedding calls, {task.fields[failed]} failed"
                ),
                TimeElapsedColumn(),
            )
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task("documents", total=len(sources), chunks=0, calls=0, failed=0)
                totals = {"chunks": 0, "calls": 0, "failed": 0}

                def advance(outcome: DocumentOutcome) -> None:
                    totals["chunks"] += outcome.chunks
                    totals["calls"] += outcome.embedding_calls
                    totals["failed"] += 1 if outcome.error_code else 0
                    bar.update(task, advance=1, chunks=totals["chunks"], calls=totals["calls"], failed=totals["failed"])

                return await rag.ingestion.ingest(sources, progress=advance)
        finally:
            await rag.close()

    result = run(work())
    if as_json:
        console.print_json(result.to_json())
        return
    if isinstance(result, IngestionPreview):
        console.print(preview_table(result))
        counted = "counted" if result.tokens_counted else "estimated at 4 bytes per token"
        console.print(
            f"{result.chunks} chunks, {result.embedding_calls} embedding calls, {result.input_tokens} input tokens ({counted})"
        )
        return
    console.print(receipt_table(result))
    console.print(
        f"{result.status.value}: {result.ingested} ingested, {result.unchanged} unchanged, {result.failed} failed; "
        f"{result.chunks_written} chunks, {result.embedding_calls} embedding calls in {result.elapsed_seconds:.1f} s "
        f"[dim]({choice.embedder_label})[/]"
    )
    for limit in result.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} = {limit.value}")
    if result.retries.retries:
        console.print(f"retries: {result.retries.retries} ({result.retries.rate_limited} rate-limited)")
    if result.failed:
        raise typer.Exit(1)


def search(
    query: str = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(8, "--limit", min=1, max=128),
    scope_document: list[str] = typer.Option([], "--scope-document", help="Search only these document ids."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Retrieve passages (evidence to read, not an answer) with their documents and byte spans."""
    rag, _ = graphrag_from_env()
    options = RetrievalOptions(max_items=limit)
    if scope_document:
        options = options.with_scope(DocumentsScope(document_ids=tuple(scope_document)))

    async def work() -> Evidence:
        await rag.connect()
        try:
            return await rag.retriever.retrieve(query, options)
        finally:
            await rag.close()

    evidence = run(work())
    if as_json:
        console.print_json(evidence.to_json())
        return
    table = Table("#", "document", "bytes", "score", "routes", "text")
    for position, item in enumerate(evidence.items, start=1):
        routes = ", ".join(f"{r.route.value}#{r.rank}" for r in item.routes)
        snippet = " ".join(item.text.split())
        table.add_row(
            str(position),
            item.title or item.source_uri,
            f"{item.start_byte}-{item.end_byte}",
            f"{item.score:.4f}",
            routes,
            snippet[:160] + ("…" if len(snippet) > 160 else ""),
        )
    console.print(table)
    for limit_reached in evidence.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit_reached.name} = {limit_reached.value}")
    console.print(f"[dim]{len(evidence.context)} context passages; {evidence.omitted_items} left out[/]")
