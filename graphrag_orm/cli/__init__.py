"""The ``graphrag-orm`` command line (typer + rich)."""

from __future__ import annotations

import typer

from graphrag_orm.cli import ask, ingest, maintain, migrations, neo4j
from graphrag_orm.cli._common import errors
from graphrag_orm.errors import GraphRagError

__all__ = ["main"]

app = typer.Typer(
    name="graphrag-orm",
    help="GraphRAG on Neo4j: ingest documents, answer with verified citations, keep the graph healthy.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(neo4j.app, name="neo4j")
app.add_typer(migrations.app, name="migrations")
app.command("ingest")(ingest.ingest)
app.command("search")(ingest.search)
app.command("ask")(ask.ask)
for _command in (maintain.check, maintain.remove, maintain.reset, maintain.orphans):
    app.command(_command.__name__)(_command)
app.command("fail-stale-runs")(maintain.fail_stale_runs)


def main() -> None:
    """The console script: a deliberate error prints its message and code, never a stack trace."""
    try:
        app()
    except GraphRagError as error:
        errors.print(f"[bold red]error[/] {error.message} [dim]({error.code})[/]")
        raise SystemExit(1) from None
