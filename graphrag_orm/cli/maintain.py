"""``graphrag-orm check``, ``remove DOCUMENT_ID``, ``reset [--run ID]... [--document ID]... [--yes]``, ``orphans``,
``fail-stale-runs``.

The services are built from the environment: NEO4J_* for the connection, the default
layout, and the embedding set of GRAPHRAG_EMBEDDING_MODEL and
GRAPHRAG_EMBEDDING_DIMENSIONS (neither: the offline set). A refusal, such as
``foreign-graph``, ends the command with its code and exit code 1.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
from rich.table import Table

from graphrag_orm.cli._common import console, errors, run
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.maintenance import HealthReport, MaintenanceService, RemovalReport, ResetScope

__all__ = ["check", "counted", "fail_stale_runs", "health_table", "orphans", "removal_summary", "remove", "reset"]

T = TypeVar("T")


async def _with_service(action: Callable[[MaintenanceService], Awaitable[T]]) -> T:
    """Connect the facade from the environment, run ``action`` on its maintenance service, close.

    The vector index is not checked on connecting: ``check`` reports a missing one
    as a finding, and removal does not need it.
    """
    rag = graphrag_from_env()[0]
    await rag.connect(check_schema=False, neomodel=False)
    try:
        return await action(rag.maintenance)
    finally:
        await rag.close()


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


def _print_removal(report: RemovalReport) -> None:
    console.print(removal_summary(report))
    if report.facts_updated:
        console.print(f"{counted(report.facts_updated, 'fact')} kept, without the removed documents")
    if report.refused:
        limits = ", ".join(f"{limit.name} {limit.value}" for limit in report.limits_reached)
        console.print(f"refused ({limits}), left whole: {', '.join(report.refused)}")


def check() -> None:
    """Print the health report; exit code 1 when it has findings."""
    report = run(_with_service(lambda service: service.check()))
    if report.healthy:
        console.print("healthy: no findings")
        return
    console.print(health_table(report))
    raise typer.Exit(1)


def remove(document_id: str = typer.Argument(..., help="The document's id (SHA-256 of its source URI).")) -> None:
    """Remove one document with its sections, chunks and links, in one transaction."""
    report = run(_with_service(lambda service: service.remove_source(document_id)))
    if report.not_found:
        errors.print(f"document {document_id} not found: nothing is stored under that id")
        raise typer.Exit(1)
    _print_removal(report)


def reset(
    run_ids: list[str] | None = typer.Option(None, "--run", help="Remove the documents this run wrote (repeatable)."),
    document_ids: list[str] | None = typer.Option(None, "--document", help="Remove this document (repeatable)."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before deleting."),
) -> None:
    """Remove documents by run or id; with neither, every document the toolkit wrote (the schema stays)."""
    try:
        scope = ResetScope(
            run_ids=tuple(run_ids) if run_ids else None, document_ids=tuple(document_ids) if document_ids else None
        )
    except ConfigurationError as error:
        raise typer.BadParameter(error.message) from None
    if not yes:
        preview = run(_with_service(lambda service: service.preview(scope)))
        chosen = (
            "every document the toolkit wrote" if scope.is_everything else "the documents of the given runs and ids"
        )
        console.print(
            f"this removes {chosen}: {counted(preview.documents, 'document')}, "
            f"{counted(preview.sections, 'section')} and {counted(preview.chunks, 'chunk')}"
        )
        if not typer.confirm("remove them?"):
            raise typer.Exit(1)
    _print_removal(run(_with_service(lambda service: service.reset(scope))))


def orphans() -> None:
    """Remove sections and chunks whose document is gone, and expired leases."""
    report = run(_with_service(lambda service: service.remove_orphans()))
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
    report = run(_with_service(lambda service: service.fail_stale_runs()))
    if not report.runs:
        console.print("no stale runs")
        return
    console.print(f"marked {counted(len(report.runs), 'stale run')} Failed ({report.reason}): {', '.join(report.runs)}")
    for limit in report.limits_reached:
        console.print(f"stopped at {limit.name} {limit.value}: run it again for the rest")
