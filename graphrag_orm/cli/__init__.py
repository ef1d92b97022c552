"""The ``graphrag-orm`` command line (typer + rich)."""

from __future__ import annotations

import typer

from graphrag_orm.cli import migrations, neo4j

app = typer.Typer(
    name="graphrag-orm",
    help="GraphRAG on Neo4j: ingest documents, answer with verified citations, keep the graph healthy.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(neo4j.app, name="neo4j")
app.add_typer(migrations.app, name="migrations")


def main() -> None:
    app()
