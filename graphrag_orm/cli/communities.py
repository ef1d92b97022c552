"""``graphrag-orm communities build|refresh|reports|list``: communities of the knowledge graph and their reports.

``build`` reads the facts of the ontology's fact types, detects communities (the
``communities`` extra) and replaces the stored ones in one transaction, with a progress
line while it works, then writes their reports (``--reports extractive``, the default, is
the offline stand-in; ``model`` the environment's chat model; ``none`` writes none).
``refresh`` detects again but keeps every report whose inputs did not change (the same
community, the fingerprint it was written from, no retracted finding, every cited chunk
stored) and writes only the others. ``reports`` writes the reports of the stored communities again (``--preview`` prints what
the model writer would cost and calls nothing); ``list`` prints the stored communities,
coarsest level first, with their reports' titles and findings (``--findings`` prints each
finding with its citations). All take ``--json``. An ontology is required (its fact types
are what joins things).
"""

from __future__ import annotations

import json
from enum import StrEnum

import typer
from rich.markup import escape
from rich.table import Table

from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.cli._common import OntologyOption, console, fail, load_ontology, print_json, run
from graphrag_orm.codes import ErrorCode
from graphrag_orm.communities import (
    ChatReportWriter,
    CommunitiesBuilt,
    CommunityListing,
    CommunityOptions,
    CommunityService,
    ReportListing,
    ReportOptions,
    ReportPreview,
    ReportService,
    ReportsWritten,
)
from graphrag_orm.communities.service import DEFAULT_LISTED_COMMUNITIES
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.facade import GraphRag

__all__ = ["app"]

app = typer.Typer(
    help="Communities of the knowledge graph: build them, write their reports, list them.", no_args_is_help=True
)


class Writer(StrEnum):
    """Who writes the reports: the offline extractive stand-in, the environment's chat model, or nobody."""

    EXTRACTIVE = "extractive"
    MODEL = "model"
    NONE = "none"


MaxReportsOption = typer.Option(200, "--max-reports", help="Communities reported on, one call each (1 to 10,000).")
MaxOutputOption = typer.Option(1_200, "--max-output-tokens", help="Tokens of one model reply (64 to 16,000).")


def _reports(rag: GraphRag, writer: Writer, max_reports: int, max_output_tokens: int) -> ReportService:
    """The report service of ``writer``; the model writer refuses the offline stand-in (``invalid-option``)."""
    try:
        options = ReportOptions(max_reports=max_reports, max_output_tokens=max_output_tokens)
    except GraphRagError as error:
        fail(error.message, error.code)
    ontology = rag.ontology
    assert ontology is not None  # _service requires one
    if writer is Writer.MODEL:
        if rag.chat is None or isinstance(rag.chat, ExtractiveChat):
            fail(
                "the model writer needs a chat model (GRAPHRAG_MODEL_MODE=live, record or replay); "
                "offline, use --reports extractive",
                ErrorCode.INVALID_OPTION,
            )
        return ReportService(rag.store, ontology, options, writer=ChatReportWriter(rag.chat, options), model=rag.model)
    return ReportService(rag.store, ontology, options, model=rag.model)


def _print_written(written: ReportsWritten) -> None:
    dropped = ", ".join(f"{code} {count:,}" for code, count in written.dropped.items() if count) or "none"
    console.print(
        f"{written.reports:,} reports with {written.findings:,} cited findings by {written.writer} "
        f"({written.calls:,} calls, {written.input_tokens:,} tokens in, {written.output_tokens:,} out); "
        f"dropped: {dropped}"
    )
    for limit in written.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")


def _service(ontology_name: str | None, options: CommunityOptions | None = None) -> tuple[GraphRag, CommunityService]:
    try:
        ontology = load_ontology(ontology_name)
        if ontology is None:
            fail("communities need the ontology extraction used: pass --ontology", ErrorCode.INVALID_OPTION)
        rag, _ = graphrag_from_env(ontology=ontology)
    except GraphRagError as error:
        fail(error.message, error.code)
    return rag, CommunityService(rag.store, ontology, options, model=rag.model)


TransactionRowsOption = typer.Option(
    20_000,
    "--transaction-rows",
    help="Rows (communities, parent links, memberships) written per transaction (1 to 1,000,000).",
)


@app.command("build")
def build(
    ontology: str | None = OntologyOption,
    max_levels: int = typer.Option(3, "--max-levels", help="Levels of the hierarchy kept (1 to 8)."),
    max_community_size: int = typer.Option(50, "--max-size", help="A larger community is split (2 to 10,000)."),
    max_facts: int = typer.Option(100_000, "--max-facts", help="Facts read (1 to 1,000,000)."),
    seed: int = typer.Option(42, "--seed", help="The detection's seed: the same graph and seed, the same result."),
    transaction_rows: int = TransactionRowsOption,
    reports: Writer = typer.Option(Writer.EXTRACTIVE, "--reports", help="Who writes the communities' reports."),
    max_reports: int = MaxReportsOption,
    max_output_tokens: int = MaxOutputOption,
    as_json: bool = typer.Option(False, "--json", help="Print the build (and its reports) as JSON."),
) -> None:
    """Detect the communities of the stored facts, replace the stored communities with them, write their reports."""
    try:
        options = CommunityOptions(
            max_levels=max_levels,
            max_community_size=max_community_size,
            max_facts=max_facts,
            seed=seed,
            transaction_rows=transaction_rows,
        )
    except GraphRagError as error:
        fail(error.message, error.code)
    rag, service = _service(ontology, options)
    writer = None if reports is Writer.NONE else _reports(rag, reports, max_reports, max_output_tokens)

    async def work() -> tuple[CommunitiesBuilt, ReportsWritten | None]:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            with console.status("reading facts, detecting and writing communities"):
                built = await service.build()
            if writer is None:
                return built, None
            with console.status("writing the communities' reports"):
                return built, await writer.write()
        finally:
            await rag.close()

    built, written = run(work())
    if as_json:
        body = json.loads(built.to_json())
        body["reports"] = json.loads(written.to_json()) if written is not None else None
        print_json(json.dumps(body))
        return
    levels = ", ".join(f"level {level}: {count:,}" for level, count in enumerate(built.per_level)) or "none"
    console.print(
        f"{built.communities:,} communities ({levels}) over {built.things:,} things and "
        f"{built.facts_read:,} facts in {built.seconds:.2f} s ({built.transactions:,} transactions); "
        f"{built.removed:,} replaced"
    )
    for limit in built.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")
    if written is not None:
        _print_written(written)


@app.command("refresh")
def refresh(
    ontology: str | None = OntologyOption,
    max_levels: int = typer.Option(3, "--max-levels", help="Levels of the hierarchy kept (1 to 8)."),
    max_community_size: int = typer.Option(50, "--max-size", help="A larger community is split (2 to 10,000)."),
    max_facts: int = typer.Option(100_000, "--max-facts", help="Facts read (1 to 1,000,000)."),
    seed: int = typer.Option(42, "--seed", help="The detection's seed: the same graph and seed, the same result."),
    transaction_rows: int = TransactionRowsOption,
    reports: Writer = typer.Option(Writer.EXTRACTIVE, "--reports", help="Who writes the reports whose inputs changed."),
    max_reports: int = MaxReportsOption,
    max_output_tokens: int = MaxOutputOption,
    as_json: bool = typer.Option(False, "--json", help="Print the refresh (and its reports) as JSON."),
) -> None:
    """Detect again, keep every report whose inputs did not change, write only the others."""
    try:
        options = CommunityOptions(
            max_levels=max_levels,
            max_community_size=max_community_size,
            max_facts=max_facts,
            seed=seed,
            transaction_rows=transaction_rows,
        )
    except GraphRagError as error:
        fail(error.message, error.code)
    rag, service = _service(ontology, options)
    writer = None if reports is Writer.NONE else _reports(rag, reports, max_reports, max_output_tokens)

    async def work() -> tuple[CommunitiesBuilt, ReportsWritten | None]:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            with console.status("reading facts, detecting and writing communities"):
                built = await service.refresh()
            if writer is None:
                return built, None
            with console.status("writing the reports whose inputs changed"):
                return built, await writer.write(only_missing=True)
        finally:
            await rag.close()

    built, written = run(work())
    if as_json:
        body = json.loads(built.to_json())
        body["reports"] = json.loads(written.to_json()) if written is not None else None
        print_json(json.dumps(body))
        return
    levels = ", ".join(f"level {level}: {count:,}" for level, count in enumerate(built.per_level)) or "none"
    console.print(
        f"{built.communities:,} communities ({levels}) over {built.things:,} things and "
        f"{built.facts_read:,} facts in {built.seconds:.2f} s; communities kept: {built.communities_kept:,}, "
        f"replaced: {built.communities_replaced:,}, added: {built.communities_added:,}; "
        f"reports kept: {built.reports_kept:,}, removed (inputs changed): {built.reports_removed:,}"
    )
    for limit in built.limits_reached:
        console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")
    if written is not None:
        _print_written(written)


@app.command("reports")
def write_reports(
    ontology: str | None = OntologyOption,
    writer: Writer = typer.Option(Writer.EXTRACTIVE, "--writer", help="Who writes the reports."),
    max_reports: int = MaxReportsOption,
    max_output_tokens: int = MaxOutputOption,
    preview: bool = typer.Option(False, "--preview", help="Print the calls and tokens it would cost; call nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the run (or preview) as JSON."),
) -> None:
    """Write the reports of the stored communities again, replacing the stored ones; every finding cited."""
    if writer is Writer.NONE:
        fail("--writer none writes nothing: choose extractive or model", ErrorCode.INVALID_OPTION)
    rag, _ = _service(ontology)
    service = _reports(rag, writer, max_reports, max_output_tokens)

    async def work() -> ReportPreview | ReportsWritten:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            if preview:
                return await service.preview()
            with console.status("writing the communities' reports"):
                return await service.write()
        finally:
            await rag.close()

    done = run(work())
    if as_json:
        print_json(done.to_json())
    elif isinstance(done, ReportPreview):
        console.print(
            f"{done.communities:,} communities: {done.calls:,} calls to {done.writer}, about "
            f"{done.input_tokens:,} input tokens, at most {done.max_output_tokens:,} output tokens"
        )
        for limit in done.limits_reached:
            console.print(f"[yellow]limit reached[/] {limit.name} ({limit.value:,})")
    else:
        _print_written(done)


@app.command("list")
def list_communities(
    ontology: str | None = OntologyOption,
    limit: int = typer.Option(DEFAULT_LISTED_COMMUNITIES, "--limit", help="Communities listed (1 to 10,000)."),
    findings: bool = typer.Option(False, "--findings", help="Print each report's findings with their citations."),
    as_json: bool = typer.Option(False, "--json", help="Print the listing (communities and reports) as JSON."),
) -> None:
    """The stored communities, coarsest level first, with their reports."""
    rag, service = _service(ontology)
    assert rag.ontology is not None
    reports = ReportService(rag.store, rag.ontology, model=rag.model)

    async def work() -> tuple[CommunityListing, ReportListing]:
        await rag.connect(check_schema=False, neomodel=False)
        try:
            return await service.list(limit=limit), await reports.list(limit=limit)
        finally:
            await rag.close()

    listing, written = run(work())
    if as_json:
        body = json.loads(listing.to_json())
        body["reports"] = json.loads(written.to_json())
        print_json(json.dumps(body))
        return
    report_of = {report.community_id: report for report in written.reports}
    table = Table("level", "id", "things", "facts", "parent", "report", "findings")
    for community in listing.communities:
        report = report_of.get(community.id)
        table.add_row(
            str(community.level),
            community.id,
            f"{community.size:,}",
            f"{community.facts:,}",
            community.parent_id or "",
            escape(report.title) if report else "",
            f"{len(report.findings):,}" if report else "",
        )
    console.print(table)
    if findings:
        for report in written.reports:
            # Titles, findings and quotes are stored text: escaped, never read as markup.
            console.print(f"[bold]{escape(report.title)}[/] ({report.community_id}, by {escape(report.writer)})")
            for finding in report.findings:
                console.print(f"  - {escape(finding.text)}", soft_wrap=True, highlight=False)
                for citation in finding.citations:
                    console.print(
                        f"    [dim]{citation.chunk_id} bytes {citation.start_byte}-{citation.end_byte}:[/] "
                        f"{escape(citation.quote)}",
                        soft_wrap=True,
                        highlight=False,
                    )
    for reached in (*listing.limits_reached, *written.limits_reached):
        console.print(f"[yellow]limit reached[/] {reached.name} ({reached.value:,})")
