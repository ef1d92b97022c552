"""``graphrag-orm resolve suggest | apply FILE | undo RUN``: entity resolution with exact undo.

``suggest`` prints the things of one class that are probably one (``--json``: the
suggestions as JSON; ``--out FILE``: the suggestions file a person edits, deleting the
ones not accepted). ``apply FILE`` previews the file's suggestions (counts and blockers),
asks unless ``--yes``, applies them one merge at a time with a progress bar and prints each
merge's run id. ``undo RUN`` puts one merge back and prints what it restored. Each needs
``--ontology``, the ontology extraction used. A refusal ends the command with its code.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from graphrag_orm.cli._common import (
    OntologyOption,
    console,
    fail,
    load_ontology,
    print_json,
    run,
    stored,
    with_graphrag,
)
from graphrag_orm.codes import ErrorCode
from graphrag_orm.facade import GraphRag
from graphrag_orm.ontology import Ontology
from graphrag_orm.resolution import MergePreview, Resolution, Suggestions, SuggestOptions, UndoReport
from graphrag_orm.resolution.values import DEFAULT_MAX_SUGGESTIONS, DEFAULT_MAX_THINGS

__all__ = ["app"]

app = typer.Typer(
    help="Entity resolution: suggest merges, apply the accepted ones, undo a merge exactly.", no_args_is_help=True
)


def _ontology(name: str | None) -> Ontology:
    chosen = load_ontology(name)
    if chosen is None:
        fail(
            "resolve needs --ontology: the ontology extraction used (generic, novel, article or module:ATTRIBUTE)",
            ErrorCode.INVALID_OPTION,
        )
    return chosen


def _table(suggestions: Suggestions) -> Table:
    table = Table("kind", "rule", "keep", "merge")
    for s in suggestions.suggestions:
        table.add_row(
            s.kind,
            s.rule.value,
            stored(f"{s.kept.name} ({s.kept.mentions})"),
            stored(f"{s.merged.name} ({s.merged.mentions})"),
        )
    return table


@app.command()
def suggest(
    as_json: bool = typer.Option(False, "--json", help="Print the suggestions as JSON."),
    out: Path | None = typer.Option(None, "--out", help="Write the suggestions file to edit, then apply."),
    max_things: int = typer.Option(DEFAULT_MAX_THINGS, "--max-things", help="Things read per class."),
    max_suggestions: int = typer.Option(DEFAULT_MAX_SUGGESTIONS, "--max-suggestions", help="Suggestions returned."),
    ontology: str | None = OntologyOption,
) -> None:
    """Suggest merges of things of one class that are probably one (nothing is written)."""
    chosen = _ontology(ontology)
    options = SuggestOptions(max_things=max_things, max_suggestions=max_suggestions)

    async def work(rag: GraphRag) -> Suggestions:
        return await Resolution(rag).suggest(options)

    found = run(with_graphrag(work, ontology=chosen))
    if out is not None:
        out.write_text(json.dumps(found.model_dump(mode="json", by_alias=True), indent=2) + "\n", encoding="utf-8")
    if as_json:
        print_json(found.to_json())
    else:
        console.print(_table(found))
    for limit in found.limits_reached:
        console.print(f"[yellow]bound reached:[/] {limit.name.value} ({limit.value})")
    if out is not None:
        console.print(
            f"wrote {len(found.suggestions)} suggestions to {out}: delete the ones you do not accept, "
            f"then run graphrag-orm resolve apply {out} --ontology {ontology}"
        )


def _read_suggestions(path: Path) -> Suggestions:
    try:
        return Suggestions.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror or type(error).__name__}", ErrorCode.INVALID_OPTION)
    except ValidationError as error:
        fail(f"{path} is not a suggestions file ({error.error_count()} problems)", ErrorCode.INVALID_OPTION)


def _print_preview(preview: MergePreview) -> None:
    table = Table("merge", "kind", "mentions", "quotes", "re-pointed", "unioned", "self dropped", "aliases")
    for m in preview.merges:
        table.add_row(
            str(m.merge + 1),
            m.kind,
            *(
                str(v)
                for v in (
                    m.mentions,
                    m.quotes,
                    m.facts_repointed,
                    m.facts_unioned,
                    m.self_facts_dropped,
                    m.aliases_added,
                )
            ),
        )
    console.print(table)
    for blocker in preview.blockers:
        console.print(
            f"[red]blocked:[/] merge {blocker.merge + 1}: {blocker.code.value} (thing {blocker.thing_id[:12]})"
        )


@app.command()
def apply(
    file: Path = typer.Argument(..., help="A suggestions file (from resolve suggest --out), edited."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before merging."),
    ontology: str | None = OntologyOption,
) -> None:
    """Preview, then apply the file's suggestions, each merge in its own transaction; print the run ids."""
    chosen = _ontology(ontology)
    accepted = _read_suggestions(file).suggestions

    async def preview(rag: GraphRag) -> MergePreview:
        return await Resolution(rag).plan(accepted).preview()

    planned = run(with_graphrag(preview, ontology=chosen))
    _print_preview(planned)
    if planned.blocked:
        fail(f"the plan has {len(planned.blockers)} blockers; edit {file} and try again", ErrorCode.MERGE_BLOCKED)
    if not accepted:
        console.print("nothing to merge")
        return
    if not yes and not typer.confirm(f"apply {len(accepted)} merges?"):
        raise typer.Exit(1)

    async def merge(rag: GraphRag) -> tuple[str, ...]:
        with Progress(TextColumn("merging"), BarColumn(), MofNCompleteColumn(), console=console) as bar:
            task = bar.add_task("merging", total=len(accepted))
            return await Resolution(rag).plan(accepted).apply(lambda done, _total: bar.update(task, completed=done))

    runs = run(with_graphrag(merge, ontology=chosen))
    console.print(f"applied {len(runs)} merges; undo one with graphrag-orm resolve undo RUN (last first):")
    for run_id in runs:
        console.print(run_id)


def _restored(report: UndoReport) -> str:
    return (
        f"undid {report.run_id}: recreated thing {report.merged_id[:12]} ({report.kind}) with "
        f"{report.mentions} mentions, {report.quotes} quotes and {report.facts_restored} facts; "
        f"removed {report.facts_removed} moved facts, reset {report.facts_reset} unioned facts "
        f"and the aliases of {report.kept_id[:12]}"
    )


@app.command()
def undo(
    run_id: str = typer.Argument(..., metavar="RUN", help="A merge's run id (printed by resolve apply)."),
    ontology: str | None = OntologyOption,
) -> None:
    """Put one merge back exactly, or refuse with the graph unchanged."""
    chosen = _ontology(ontology)

    async def work(rag: GraphRag) -> UndoReport:
        return await Resolution(rag).undo(run_id)

    console.print(_restored(run(with_graphrag(work, ontology=chosen))))
