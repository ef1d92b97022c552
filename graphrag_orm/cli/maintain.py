"""``graphrag-orm check``, ``remove DOCUMENT``, ``reset [--run ID]... [--document DOCUMENT]... [--yes]``,
``orphans``, ``fail-stale-runs``, ``remove-tenant [--batch-size N] [--dry-run] [--yes]``, ``tenants``.

The services are built from the environment: NEO4J_* for the connection, the default
layout, and the embedding set of GRAPHRAG_EMBEDDING_MODEL and
GRAPHRAG_EMBEDDING_DIMENSIONS (neither: the offline set). A graph that extraction
wrote (things, facts, ``MENTIONED_IN`` and ``SAYS`` links) is maintained like any
other when ``--ontology`` names its ontology: its knowledge is removed and checked
with the documents. The graph does not record which ontology wrote it, so without
``--ontology`` those links are not the toolkit's and removal is refused
(``foreign-graph``; the message says to pass ``--ontology``). A document is named by
its id, a unique id prefix (at least six hex digits), its source URI or the path it was
ingested from. A refusal ends the command with its code and exit code 1.

In a tenanted graph (GRAPHRAG_TENANCY=required) every command is the tenant's that
``--tenant`` / GRAPHRAG_TENANT names: it reads, counts and removes that tenant's nodes only,
and ``remove-tenant`` removes that tenant whole (docs/tenancy.md); ``tenants`` reads across
every tenant (the operator's read) and takes no tenant.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graphrag_orm.cli._common import (
    OntologyOption,
    console,
    fail,
    load_ontology,
    print_json,
    resolve_documents,
    run,
    with_database,
    with_graphrag,
)
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError, GraphRefused
from graphrag_orm.facade import GraphRag
from graphrag_orm.maintenance import (
    DEFAULT_TENANT_BATCH_DOCUMENTS,
    MAX_TENANT_BATCH_DOCUMENTS,
    HealthReport,
    RemovalPreview,
    RemovalProgress,
    RemovalReport,
    ResetScope,
    TenantCounts,
    TenantRemovalReport,
)
from graphrag_orm.maintenance.options import check_tenant_batch
from graphrag_orm.reembedding.tenants import DEFAULT_LISTED_TENANTS, MAX_LISTED_TENANTS

__all__ = [
    "check",
    "counted",
    "fail_stale_runs",
    "health_table",
    "orphans",
    "removal_summary",
    "remove",
    "remove_tenant",
    "reset",
]

T = TypeVar("T")

_ONTOLOGY_HINT = (
    " If extraction wrote these links, pass --ontology with the ontology it used "
    "(generic, novel, article or module:ATTRIBUTE)."
)


def _maintain(action: Callable[[GraphRag], Awaitable[T]], ontology: str | None) -> T:
    """Run ``action`` on a graph connected from the environment, with the ontology named, if any.

    Without an ontology, a ``foreign-graph`` refusal also says how to name one.
    """
    chosen = load_ontology(ontology)

    async def work(rag: GraphRag) -> T:
        try:
            return await action(rag)
        except GraphRefused as error:
            if chosen is None and "relationships the toolkit does not own" in error.message:
                raise GraphRefused(error.code, error.message + _ONTOLOGY_HINT) from None
            raise

    return run(with_graphrag(work, ontology=chosen))


def health_table(report: HealthReport) -> Table:
    table = Table("finding", "count", "detail")
    for item in report.findings:
        table.add_row(item.code.value, str(item.count), item.detail or "")
    return table


def counted(count: int, word: str, plural: str | None = None) -> str:
    """``1 document``, ``2 documents`` (``plural`` when adding an s is wrong)."""
    return f"{count} {word}" if count == 1 else f"{count} {plural or word + 's'}"


def removal_summary(report: RemovalReport) -> str:
    """Documents, sections, chunks and links always; leases, things, facts and runs when any."""
    parts = [
        counted(report.documents, "document"),
        counted(report.sections, "section"),
        counted(report.chunks, "chunk"),
        counted(report.links, "link"),
    ]
    parts += [
        counted(count, word)
        for count, word in (
            (report.leases, "lease"),
            (report.things, "thing"),
            (report.facts, "fact"),
            (report.runs, "run"),
        )
        if count
    ]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"removed {listed} in {counted(report.batches, 'batch', 'batches')} ({report.elapsed_seconds:.2f} s)"


def retraction_summary(retracted: int, trimmed: int, reports: int, *, would: bool = False) -> str:
    """The community report findings a removal retracted (or would), those it trimmed, the reports it removed."""
    verb = "would be " if would else ""
    return (
        f"community reports: {counted(retracted, 'finding')} {verb}retracted (every citation was of a removed "
        f"document), {counted(trimmed, 'finding')} {verb}trimmed, {counted(reports, 'report')} {verb}removed"
    )


def _print_removal(report: RemovalReport) -> None:
    console.print(removal_summary(report))
    if report.facts_updated:
        console.print(f"{counted(report.facts_updated, 'fact')} kept, without the removed documents")
    if report.findings_retracted or report.findings_trimmed or report.reports:
        console.print(retraction_summary(report.findings_retracted, report.findings_trimmed, report.reports))
    if report.refused:
        limits = ", ".join(f"{limit.name} {limit.value}" for limit in report.limits_reached)
        console.print(f"refused ({limits}), left whole: {', '.join(report.refused)}")


def check(ontology: str | None = OntologyOption) -> None:
    """Print the health report (with --ontology, also orphan things and stale facts); exit code 1 when it has findings."""
    report = _maintain(lambda rag: rag.maintenance.check(), ontology)
    if report.healthy:
        console.print("healthy: no findings")
        return
    console.print(health_table(report))
    raise typer.Exit(1)


def remove(
    document: str = typer.Argument(..., help="The document: id, id prefix (6+ hex digits), source URI or path."),
    ontology: str | None = OntologyOption,
) -> None:
    """Remove one document with its sections, chunks and links (and, with --ontology, its knowledge), in one transaction."""

    async def work(rag: GraphRag) -> RemovalReport:
        (document_id,) = await resolve_documents(rag, [document])
        return await rag.maintenance.remove_source(document_id)

    report = _maintain(work, ontology)
    if report.not_found:
        fail(f"document {document} not found: nothing is stored under that id", ErrorCode.DOCUMENT_NOT_FOUND)
    _print_removal(report)


def reset(
    run_ids: list[str] | None = typer.Option(None, "--run", help="Remove the documents this run wrote (repeatable)."),
    documents: list[str] | None = typer.Option(
        None, "--document", help="Remove this document: id, id prefix, source URI or path (repeatable)."
    ),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before deleting."),
    ontology: str | None = OntologyOption,
) -> None:
    """Remove documents by run or id; with neither, every document the toolkit wrote (the schema stays)."""
    try:
        ResetScope(run_ids=tuple(run_ids) if run_ids else None, document_ids=tuple(documents) if documents else None)
    except ConfigurationError as error:
        raise typer.BadParameter(error.message) from None

    async def scope_of(rag: GraphRag) -> ResetScope:
        ids = await resolve_documents(rag, documents) if documents else None
        return ResetScope(run_ids=tuple(run_ids) if run_ids else None, document_ids=ids)

    async def preview(rag: GraphRag) -> tuple[ResetScope, RemovalPreview, str]:
        scope = await scope_of(rag)
        # A tenanted graph's reset is the tenant's (docs/tenancy.md).
        everything = (
            f"every document of tenant {rag.tenant}" if rag.layout.tenanted else "every document the toolkit wrote"
        )
        return scope, await rag.maintenance.preview(scope), everything

    scope, planned, everything = _maintain(preview, ontology)
    if not yes:
        chosen = everything if scope.is_everything else "the documents of the given runs and ids"
        console.print(
            f"this removes {chosen}: {counted(planned.documents, 'document')}, "
            f"{counted(planned.sections, 'section')} and {counted(planned.chunks, 'chunk')}"
        )
        if planned.findings_retracted or planned.findings_trimmed or planned.reports:
            console.print(
                retraction_summary(planned.findings_retracted, planned.findings_trimmed, planned.reports, would=True)
            )
        if not typer.confirm("remove them?"):
            raise typer.Exit(1)
    with _removal_bar(planned.documents) as advance:

        async def remove_scope(rag: GraphRag) -> RemovalReport:
            return await rag.maintenance.reset(scope, progress=advance)

        report = _maintain(remove_scope, ontology)
    _print_removal(report)


@contextmanager
def _removal_bar(documents: int) -> Iterator[Callable[[RemovalProgress], None]]:
    """A rich progress bar of ``documents`` to remove; yields the ``progress`` callback that moves it."""
    columns = (
        TextColumn("[bold]removing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("documents, {task.fields[chunks]} in {task.fields[batches]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(
            "documents", total=documents or None, chunks="0 chunks", batches=counted(0, "batch", "batches")
        )

        def advance(done: RemovalProgress) -> None:
            batches = counted(done.batches, "batch", "batches")
            bar.update(task, completed=done.documents, chunks=counted(done.chunks, "chunk"), batches=batches)

        yield advance


def tenant_summary(counts: TenantCounts) -> str:
    """``2 documents, 6 sections, 6 chunks, 1 run and 0 leases``: what a tenant holds."""
    return (
        f"{counted(counts.documents, 'document')}, {counted(counts.sections, 'section')}, "
        f"{counted(counts.chunks, 'chunk')}, {counted(counts.runs, 'run')} and {counted(counts.leases, 'lease')}"
    )


def remove_tenant(
    batch_size: int = typer.Option(
        DEFAULT_TENANT_BATCH_DOCUMENTS,
        "--batch-size",
        help=f"Documents per batch, one transaction each (1 to {MAX_TENANT_BATCH_DOCUMENTS}).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only count what the tenant holds; remove nothing."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before deleting."),
) -> None:
    """Remove the tenant (--tenant) whole, in batches: its documents, sections, chunks, leases and runs."""
    try:
        check_tenant_batch(batch_size)
    except ConfigurationError as error:
        fail(error.message, error.code)

    async def preview(rag: GraphRag) -> tuple[str, TenantCounts]:
        return str(rag.tenant), await rag.maintenance.preview_tenant()

    tenant, planned = _maintain(preview, None)
    console.print(f"tenant {tenant} holds {tenant_summary(planned)}")
    if dry_run:
        return
    if not yes and not typer.confirm(f"remove tenant {tenant} whole?"):
        raise typer.Exit(1)
    with _removal_bar(planned.documents) as advance:

        async def remove_all(rag: GraphRag) -> TenantRemovalReport:
            return await rag.maintenance.remove_tenant(batch_documents=batch_size, progress=advance)

        report = _maintain(remove_all, None)
    removed = TenantCounts(
        documents=report.documents,
        sections=report.sections,
        chunks=report.chunks,
        runs=report.runs,
        leases=report.leases,
    )
    console.print(
        f"removed {tenant_summary(removed)} of tenant {tenant} in {counted(report.batches, 'batch', 'batches')} "
        f"({report.elapsed_seconds:.2f} s)"
    )
    if report.stale_runs_failed:
        console.print(f"{counted(report.stale_runs_failed, 'stale run')} marked Failed first")
    if not report.complete:
        console.print(f"left: {tenant_summary(report.left)} (written meanwhile): run it again to finish")
        raise typer.Exit(1)


def tenants(
    limit: int = typer.Option(
        DEFAULT_LISTED_TENANTS, "--limit", min=1, max=MAX_LISTED_TENANTS, help="Tenants listed (all are counted)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the overview as JSON."),
) -> None:
    """A tenanted graph's tenants, counted, and the nodes that belong to none (the operator's read).

    Reads across tenants, so it takes no --tenant. Exit code 0, or 2 when lexical nodes carry
    no tenant (no tenant's maintenance reaches them).
    """
    from graphrag_orm.cli.migrations import LAYOUTS, _tenanted
    from graphrag_orm.maintenance.tenants import tenants_overview

    if not _tenanted():
        fail("graphrag-orm tenants is of a tenanted graph (GRAPHRAG_TENANCY=required)", ErrorCode.INVALID_OPTION)
    layout = LAYOUTS["default"].replace(tenancy="required")
    overview = run(with_database(lambda store: tenants_overview(store, layout, limit=limit)))
    if as_json:
        print_json(overview.to_json())
    else:
        for entry in overview.shown:
            console.print(f"  {entry.tenant}: {tenant_summary(entry)}", markup=False, soft_wrap=True)
        more = f" ({len(overview.shown)} shown)" if overview.limits_reached else ""
        console.print(f"{counted(overview.tenants, 'tenant')}{more}")
        if not overview.clean:
            console.print(f"without a tenant: {tenant_summary(overview.untenanted)}")
    if not overview.clean:
        raise typer.Exit(2)


def orphans(ontology: str | None = OntologyOption) -> None:
    """Remove sections and chunks whose document is gone, expired leases, and (with --ontology) orphan things."""
    report = _maintain(lambda rag: rag.maintenance.remove_orphans(), ontology)
    if not (report.sections or report.chunks or report.leases or report.things):
        console.print("no orphans")
        return
    parts = [
        f"{counted(report.sections, 'section')}, {counted(report.chunks, 'chunk')} and "
        f"{counted(report.links, 'link')} of missing documents"
    ]
    if report.leases:
        parts.append(counted(report.leases, "expired lease"))
    if report.things:
        parts.append(f"{counted(report.things, 'thing')} no mention points to, with {counted(report.facts, 'fact')}")
    console.print(f"removed {'; '.join(parts)} ({report.elapsed_seconds:.2f} s)")


def fail_stale_runs() -> None:
    """Mark runs left Running by a process that died (no live lease, no progress for a lease duration) Failed."""
    report = _maintain(lambda rag: rag.maintenance.fail_stale_runs(), None)
    if not report.runs:
        console.print("no stale runs")
        return
    console.print(f"marked {counted(len(report.runs), 'stale run')} Failed ({report.reason}): {', '.join(report.runs)}")
    for limit in report.limits_reached:
        console.print(f"stopped at {limit.name} {limit.value}: run it again for the rest")
