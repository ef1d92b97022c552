"""``graphrag-orm ingest PATH... [--base-uri] [--preview] [--json] [--lease-seconds] [--wait-for-leases]
[--no-fit-chunks] [--ontology]`` and ``graphrag-orm search``.

No text goes unembedded: the default local model embeds a chunk longer than its window
whole (its windows pooled), so chunks keep the chunker's sizes. With an embedder that
reads only so much of a text (a window and no pooling), chunks are sized to that window,
counted with its own tokenizer; ``--no-fit-chunks`` then keeps the chunker's own sizes,
and a line says how many chunks are longer than the embedder reads (embedded in part).

The exit code is 1 when a document failed, in table and ``--json`` mode alike; when
the model endpoint is not reachable (``model-unreachable``) that is also said once on
stderr. Several workers may ingest the same paths at once, on one host or many:
they share the work through leases, and ``--wait-for-leases`` makes each finish what
another dropped (docs/scale.md). A folder that gives no file says how many it skipped and why (pattern, media
type), and nothing is ingested when no path gives any.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from graphrag_orm.cli._common import (
    OntologyOption,
    console,
    errors,
    fail,
    load_ontology,
    print_json,
    resolve_documents,
    run,
    stored,
)
from graphrag_orm.cli.collect import DEFAULT_PATTERNS, Collected, collect_sources
from graphrag_orm.cli.receipts import PDF_EXTRA_MISSING, pdf_extra_missing, preview_table, receipt_table
from graphrag_orm.codes import DocumentErrorCode, ErrorCode
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.ingestion import (
    DocumentOutcome,
    DocumentStatus,
    IngestionOptions,
    IngestionPreview,
    IngestionReceipt,
)
from graphrag_orm.options import GraphRagOptions

if TYPE_CHECKING:
    from graphrag_orm.evidence import Evidence
    from graphrag_orm.sources import Source

__all__ = ["DEFAULT_PATTERNS", "collect_sources", "ingest", "preview_table", "receipt_table", "search"]


def _collected(paths: list[Path], base_uri: str | None, patterns: tuple[str, ...]) -> Collected:
    """The sources of ``paths``; a folder that gave none is described on stderr; none at all fails."""
    try:
        collected = collect_sources(paths, base_uri, patterns)
    except GraphRagError as error:
        fail(error.message, error.code)
    for folder in collected.folders:
        if folder.taken == 0:
            errors.print(f"[yellow]nothing taken[/] {escape(folder.describe(patterns))}")
    if not collected.sources:
        fail(
            "nothing to ingest: no file given or found matches the patterns and has a loader "
            "(use --pattern to choose other file names)",
            ErrorCode.INVALID_SOURCE,
        )
    return collected


def _unreachable(receipt: IngestionReceipt) -> None:
    """One line on stderr when the model endpoint was never reached: every document that needed it failed."""
    failed = sum(1 for o in receipt.documents if o.error_code == DocumentErrorCode.MODEL_UNREACHABLE)
    if failed:
        errors.print(
            f"[bold red]error[/] the model endpoint is not reachable: {failed} document{'' if failed == 1 else 's'} "
            "not ingested; check "
            f"OPENAI_BASE_URL, or set GRAPHRAG_MODEL_MODE=offline for the offline stand-ins [dim]({ErrorCode.MODEL_UNREACHABLE})[/]"
        )


def _pdf_extra(receipt: IngestionReceipt) -> None:
    """One line on stderr naming the ``pdf`` extra when PDFs were refused for want of it."""
    refused = sum(1 for o in receipt.documents if pdf_extra_missing(o.error_code, o.source_uri))
    if refused:
        errors.print(
            f"[bold red]error[/] {refused} PDF{'' if refused == 1 else 's'} not ingested: "
            f"{escape(PDF_EXTRA_MISSING)} [dim]({ErrorCode.MISSING_EXTRA})[/]"
        )


def _interrupted(sources: list[Source], settled: dict[str, DocumentOutcome]) -> NoReturn:
    """Ctrl-C: what was stored and what not, on stderr; exit code 130 (as a shell reports SIGINT)."""
    kept = [o for o in settled.values() if o.status != DocumentStatus.FAILED]
    ingested = sum(1 for o in kept if o.status == DocumentStatus.INGESTED)
    left = [source.source_uri for source in sources if source.source_uri not in settled]
    first = f"; the first not stored: {escape(left[0])}" if left else ""
    errors.print(
        f"[bold red]interrupted[/] {len(kept)} of {len(sources)} documents stored ({ingested} ingested, "
        f"{len(kept) - ingested} unchanged), {len(settled) - len(kept)} failed, {len(left)} not stored "
        f"(one being written when interrupted keeps nothing){first}; the run is recorded Failed with these "
        f"counts (graphrag-orm runs); ingest again to store the rest [dim]({ErrorCode.INTERRUPTED})[/]"
    )
    raise typer.Exit(130)


def _options(lease_seconds: float | None, wait_for_leases: float, fit_chunks: bool) -> GraphRagOptions:
    """The ingestion options the flags set (``ConfigurationError("invalid-option")`` outside their bounds)."""
    fields: dict[str, float] = {"wait_for_leases_seconds": wait_for_leases}
    if lease_seconds is not None:
        fields["lease_duration_seconds"] = lease_seconds
    return GraphRagOptions(ingestion=IngestionOptions(**fields, fit_chunks_to_embedder=fit_chunks))


def _over_window(chunks: int, verb: str) -> None:
    """One line when chunks are longer than the embedder reads (fitting turned off): how many, and the flag."""
    if chunks:
        console.print(
            f"[yellow]{chunks} chunk{'' if chunks == 1 else 's'} cut[/]: longer than the embedder reads, only "
            f"their start {verb} embedded (--no-fit-chunks; by default chunks fit the embedder's window)",
            soft_wrap=True,
        )


def ingest(
    paths: list[Path] = typer.Argument(..., exists=True, help="Files and folders to ingest."),
    base_uri: str | None = typer.Option(None, "--base-uri", help="Name files by this URI instead of their path."),
    pattern: list[str] = typer.Option(list(DEFAULT_PATTERNS), "--pattern", help="File-name patterns for folders."),
    preview: bool = typer.Option(False, "--preview", help="Count chunks, calls and tokens; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the receipt (or preview) as JSON."),
    lease_seconds: float | None = typer.Option(
        None, "--lease-seconds", help="How long a document's lease lasts unless renewed (default 600)."
    ),
    wait_for_leases: float = typer.Option(
        0.0,
        "--wait-for-leases",
        help="Seconds to keep trying documents another worker holds, until released or expired (many workers, one manifest).",
    ),
    fit_chunks: bool = typer.Option(
        True,
        "--fit-chunks/--no-fit-chunks",
        help="With an embedder that reads only its window of a text: size chunks to it (default), or keep the "
        "chunker's sizes and embed only the start of longer chunks (the count is printed). The default local "
        "model embeds long chunks whole, so it needs neither.",
    ),
    ontology: str | None = OntologyOption,
) -> None:
    """Ingest documents: one transaction per document, leases, a receipt (with --ontology, extraction too)."""
    patterns = tuple(pattern)
    sources = _collected(paths, base_uri, patterns).sources
    chosen = load_ontology(ontology)
    try:
        options = _options(lease_seconds, wait_for_leases, fit_chunks)
        rag, choice = graphrag_from_env(options=options, ontology=chosen)
    except GraphRagError as error:
        fail(error.message, error.code)

    # Each document's outcome as it settles, by source: what a Ctrl-C reports as stored.
    settled: dict[str, DocumentOutcome] = {}

    def note(outcome: DocumentOutcome) -> None:
        settled[outcome.source_uri] = outcome

    async def work() -> IngestionReceipt | IngestionPreview:
        await rag.connect()
        try:
            if preview:
                return await rag.ingestion.preview(sources)
            if as_json:
                return await rag.ingestion.ingest(sources, progress=note)
            # Imported here: a worker writing --json never draws a bar.
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
                    note(outcome)
                    totals["chunks"] += outcome.chunks
                    totals["calls"] += outcome.embedding_calls
                    totals["failed"] += 1 if outcome.error_code else 0
                    bar.update(task, advance=1, chunks=totals["chunks"], calls=totals["calls"], failed=totals["failed"])

                return await rag.ingestion.ingest(sources, progress=advance)
        finally:
            await rag.close()

    try:
        result = run(work())
    except KeyboardInterrupt:
        _interrupted(sources, settled)
    if as_json:
        print_json(result.to_json())
        if isinstance(result, IngestionReceipt):
            _unreachable(result)
            _pdf_extra(result)
            if result.failed:
                raise typer.Exit(1)
        return
    embedded_by = f"[dim]embedded by {escape(choice.embedder_label)}[/]"
    if isinstance(result, IngestionPreview):
        console.print(preview_table(result))
        counted = "counted" if result.tokens_counted else "estimated at 4 bytes per token"
        console.print(
            f"{result.chunks} chunks, {result.embedding_calls} embedding calls, {result.input_tokens} input tokens ({counted})"
        )
        console.print(embedded_by, soft_wrap=True)
        _over_window(result.chunks_over_window, "would be")
        return
    console.print(receipt_table(result))
    console.print(
        f"{result.status.value}: {result.ingested} ingested, {result.unchanged} unchanged, {result.failed} failed; "
        f"{result.chunks_written} chunks, {result.embedding_calls} embedding calls in {result.elapsed_seconds:.1f} s"
    )
    console.print(embedded_by, soft_wrap=True)
    _over_window(result.chunks_over_window, "was")
    if chosen is not None:
        console.print(f"[dim]extraction by {choice.chat_label}[/]")
    for limit in result.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} = {limit.value}")
    if result.retries.retries:
        console.print(f"retries: {result.retries.retries} ({result.retries.rate_limited} rate-limited)")
    _unreachable(result)
    _pdf_extra(result)
    if result.failed:
        raise typer.Exit(1)


#: How much of a passage's stored text ``search`` shows (``--json`` has all of it), as stored: lines kept.
SHOWN_CHARACTERS = 160


def search(
    query: str = typer.Argument(..., help="What to look for."),
    limit: int = typer.Option(8, "--limit", min=1, max=128),
    scope_document: list[str] = typer.Option(
        [], "--scope-document", help="Search only these documents (id, id prefix, source URI or path)."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Retrieve passages (evidence to read, not an answer) with their documents and byte spans."""
    from graphrag_orm.retrieval import DocumentsScope, RetrievalOptions  # here: ingest (this module) needs neither

    try:
        rag, _ = graphrag_from_env()
    except GraphRagError as error:
        fail(error.message, error.code)
    options = RetrievalOptions(max_items=limit)

    async def work() -> Evidence:
        await rag.connect()
        try:
            chosen = options
            if scope_document:
                ids = await resolve_documents(rag, scope_document)
                chosen = options.with_scope(DocumentsScope(document_ids=ids))
            return await rag.retriever.retrieve(query, chosen)
        finally:
            await rag.close()

    evidence = run(work())
    if as_json:
        print_json(evidence.to_json())
        return
    table = Table("#", "document", "bytes", "score", "routes", "text")
    for position, item in enumerate(evidence.items, start=1):
        routes = ", ".join(f"{r.route}#{r.rank}" for r in item.routes)
        excerpt = item.text.strip()
        table.add_row(
            str(position),
            stored(f"{item.title}\n{item.source_uri}" if item.title else item.source_uri),
            f"{item.start_byte}-{item.end_byte}",
            f"{item.score:.4f}",
            routes,
            stored(excerpt[:SHOWN_CHARACTERS] + ("…" if len(excerpt) > SHOWN_CHARACTERS else "")),
        )
    console.print(table)
    for limit_reached in evidence.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit_reached.name} = {limit_reached.value}")
    console.print(f"[dim]{len(evidence.context)} context passages; {evidence.omitted_items} left out[/]")
