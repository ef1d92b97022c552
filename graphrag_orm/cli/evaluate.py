"""``graphrag-orm eval cases.jsonl [--json] [--html FILE] [--compare OTHER.json] [--k 10] [--global --ontology NAME]``.

Runs the cases against the graph the environment names (``graphrag_from_env``: offline
stand-ins unless a model is named), with rich progress on stderr, then prints the
table (or, with ``--json``, the :class:`~graphrag_orm.evaluation.EvaluationReport` on
stdout). A case that fails (a model timeout, any error) is a failed case of the report,
listed with its message and code; the finished cases are always kept. The exit code is
0 when the run completed, whatever the metrics say; 1 when it stopped after
``--max-consecutive-failures`` failed cases in a row (the report is printed first), and
1 with one line on stderr for a coded error (a bad cases file, a bad report to compare
with, no database, ``missing-extra`` for ``--html`` without matplotlib).

``--global`` runs the cases as questions about the whole corpus instead
(:class:`~graphrag_orm.evaluation.GlobalEvaluator`: the map and reduce over the community reports
of ``--ontology``, by the environment's chat model or offline), one case at a time, and prints
:func:`~graphrag_orm.evaluation.render_global_table` (or the
:class:`~graphrag_orm.evaluation.GlobalEvaluationReport` with ``--json``). It needs
``--ontology`` and takes neither ``--html``, ``--compare``, ``--k`` nor ``--concurrency``
(``invalid-option``); the exit codes are the same.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from graphrag_orm.cli._common import OntologyOption, console, fail, load_ontology, require_extra, run
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import GraphRagError
from graphrag_orm.evaluation import (
    EvalCase,
    EvaluationOptions,
    EvaluationReport,
    Evaluator,
    GlobalEvaluationReport,
    GlobalEvaluator,
    compare_reports,
    load_cases,
    load_report,
    render_global_table,
    render_table,
    write_html,
)
from graphrag_orm.evidence import Route
from graphrag_orm.facade import GraphRag

__all__ = ["evaluate"]

_progress_console = Console(stderr=True, highlight=False)
_DEFAULTS = EvaluationOptions()
_COLUMNS = (TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


async def _run(
    rag: GraphRag, cases: tuple[EvalCase, ...], k: int, concurrency: int, max_cases: int, max_failures: int
) -> EvaluationReport:
    await rag.connect()
    try:
        retrieval = rag.retriever.options
        if rag.ontology is not None:  # the graph route needs the ontology's things
            retrieval = retrieval.model_copy(update={"routes": retrieval.routes | {Route.GRAPH}})
        evaluator = Evaluator(
            rag,
            retrieval=retrieval,
            k=k,
            concurrency=concurrency,
            max_cases=max_cases,
            max_consecutive_failures=max_failures,
        )
        with Progress(*_COLUMNS, console=_progress_console, transient=True) as progress:
            task = progress.add_task("cases", total=min(len(cases), max_cases))
            return await evaluator.run(cases, on_case=lambda _: progress.advance(task))
    finally:
        await rag.close()


async def _run_global(
    rag: GraphRag, cases: tuple[EvalCase, ...], max_cases: int, max_failures: int
) -> GlobalEvaluationReport:
    await rag.connect(check_schema=False, neomodel=False)
    try:
        evaluator = GlobalEvaluator(rag, max_cases=max_cases, max_consecutive_failures=max_failures)
        with Progress(*_COLUMNS, console=_progress_console, transient=True) as progress:
            task = progress.add_task("cases", total=min(len(cases), max_cases))
            return await evaluator.run(cases, on_case=lambda _: progress.advance(task))
    finally:
        await rag.close()


def _evaluate_global(
    cases_file: Path, ontology_name: str | None, as_json: bool, max_cases: int, max_failures: int
) -> None:
    try:
        cases = load_cases(cases_file)
        ontology = load_ontology(ontology_name)
        if ontology is None:
            fail("--global needs the ontology the reports were written for: pass --ontology", ErrorCode.INVALID_OPTION)
        rag = graphrag_from_env(ontology=ontology)[0]
    except GraphRagError as error:
        fail(error.message, error.code)
    report = run(_run_global(rag, cases, max_cases, max_failures))
    if as_json:
        typer.echo(report.model_dump_json(by_alias=True, indent=2))
    else:
        render_global_table(report, console)
    if any(limit.name is LimitName.CONSECUTIVE_FAILURES for limit in report.limits_reached):
        raise typer.Exit(1)


def evaluate(
    cases_file: Path = typer.Argument(..., metavar="CASES.jsonl", help="The cases: one JSON object a line."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout instead of the table."),
    html: Path | None = typer.Option(None, "--html", help="Also write a self-contained HTML report to this file."),
    compare: Path | None = typer.Option(
        None, "--compare", help="A report written by --json earlier: show the change per metric and per case."
    ),
    k: int | None = typer.Option(
        None,
        "--k",
        min=1,
        max=128,
        help=f"Items retrieved per case; the k of recall@k and MRR (default {_DEFAULTS.k}).",
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, max=8, help=f"Cases answered at once (1 to 8, default {_DEFAULTS.concurrency})."
    ),
    max_cases: int = typer.Option(1_000, "--max-cases", min=1, max=10_000, help="The most cases run (the first)."),
    max_failures: int = typer.Option(
        5, "--max-consecutive-failures", min=1, max=1_000, help="Stop after this many failed cases in a row."
    ),
    ontology: str | None = OntologyOption,
    global_: bool = typer.Option(
        False, "--global", help="Global cases: answered from the community reports of --ontology (map and reduce)."
    ),
) -> None:
    """Run the evaluation cases: citation validity, answer support, abstention, coverage, recall@k, MRR."""
    if global_:
        given = [name for name, value in (("--html", html), ("--compare", compare), ("--k", k)) if value is not None]
        given += ["--concurrency"] if concurrency is not None else []
        if given:
            fail(f"--global does not take {', '.join(given)}", ErrorCode.INVALID_OPTION)
        _evaluate_global(cases_file, ontology, as_json, max_cases, max_failures)
        return
    k = _DEFAULTS.k if k is None else k
    concurrency = _DEFAULTS.concurrency if concurrency is None else concurrency
    if html is not None:
        require_extra("eval --html", "eval", "matplotlib")
    try:
        cases = load_cases(cases_file)
        baseline = load_report(compare) if compare is not None else None
        rag = graphrag_from_env(ontology=load_ontology(ontology))[0]
    except GraphRagError as error:
        fail(error.message, error.code)
    report = run(_run(rag, cases, k, concurrency, max_cases, max_failures))
    comparison = compare_reports(report, baseline) if baseline is not None else None
    if as_json:
        typer.echo(report.model_dump_json(by_alias=True, indent=2))
    else:
        render_table(report, console, comparison)
    if html is not None:
        try:
            write_html(report, html, compare=baseline)
        except GraphRagError as error:
            fail(error.message, error.code)
        except OSError as error:
            fail(f"cannot write {html}: {error.strerror or type(error).__name__}", ErrorCode.INVALID_OPTION)
        (_progress_console if as_json else console).print(f"[dim]wrote {html}[/]")
    if any(limit.name is LimitName.CONSECUTIVE_FAILURES for limit in report.limits_reached):
        raise typer.Exit(1)
