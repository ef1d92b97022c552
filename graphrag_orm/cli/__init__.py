"""The ``graphrag-orm`` command line (typer + rich)."""

from __future__ import annotations

from importlib import metadata

import typer

from graphrag_orm.cli import (
    ask,
    catalog,
    evaluate,
    graph,
    ingest,
    maintain,
    mcp,
    migrations,
    neo4j,
    reembed,
    resolve,
    serve,
)
from graphrag_orm.cli._common import error_line, errors
from graphrag_orm.errors import GraphRagError

__all__ = ["main"]

app = typer.Typer(
    name="graphrag-orm",
    help="GraphRAG on Neo4j: ingest documents, answer with verified citations, keep the graph healthy.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        try:
            version = metadata.version("graphrag-orm")
        except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
            version = "unknown (not installed)"
        typer.echo(f"graphrag-orm {version}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the installed version and exit."
    ),
) -> None:
    """GraphRAG on Neo4j: ingest documents, answer with verified citations, keep the graph healthy."""


app.add_typer(neo4j.app, name="neo4j")
app.add_typer(migrations.app, name="migrations")
app.command("ingest")(ingest.ingest)
app.command("search")(ingest.search)
app.command("ask")(ask.ask)
for _command in (maintain.check, maintain.remove, maintain.reset, maintain.orphans):
    app.command(_command.__name__)(_command)
app.command("fail-stale-runs")(maintain.fail_stale_runs)
for _listing in (catalog.documents, catalog.runs, catalog.show):
    app.command(_listing.__name__)(_listing)
app.command("serve")(serve.serve)
app.command("mcp")(mcp.mcp)
app.add_typer(graph.app, name="graph")
app.add_typer(resolve.app, name="resolve")
app.add_typer(reembed.app, name="reembed")
app.command("eval")(evaluate.evaluate)


def main() -> None:
    """The console script: a deliberate error prints its message and code, never a stack trace."""
    try:
        app()
    except GraphRagError as error:
        errors.print(error_line(error.message, error.code))
        raise SystemExit(1) from None
