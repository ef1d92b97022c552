"""``graphrag-orm neo4j start|stop|status|logs``: the local development server.

``start`` and ``status`` print the ``NEO4J_URI`` to connect with: the port the home's
server runs on (recorded in the home at its start), whatever ``--port`` says for
``status``. ``start`` refuses a port another program or another home's server holds
(``port-in-use``) and never reports a server it did not start.
"""

from __future__ import annotations

import time

import typer
from rich.markup import escape

from graphrag_orm import localdb
from graphrag_orm.cli._common import console, errors
from graphrag_orm.errors import LocalDbError

__all__ = ["logs", "start", "status", "stop"]

app = typer.Typer(help="The local Neo4j server (development and tests).", no_args_is_help=True)

PortOption = typer.Option(None, "--port", help="Bolt port (default GRAPHRAG_NEO4J_PORT or 7687).")
HomeOption = typer.Option("home", "--home", help="Home folder name under tools/neo4j.")


def _fail(error: LocalDbError) -> typer.Exit:
    errors.print(f"[bold red]error[/] {escape(error.message)} [dim]({error.code})[/]")
    return typer.Exit(1)


def _settings(port: int | None, home: str) -> localdb.LocalDbSettings:
    try:
        return localdb.LocalDbSettings.from_env(home_name=home, port=port)
    except LocalDbError as error:
        raise _fail(error) from None


@app.command()
def start(port: int | None = PortOption, home: str = HomeOption) -> None:
    """Start the server (resolving its jars once) and wait until Bolt answers."""
    settings = _settings(port, home)
    began = time.monotonic()
    try:
        with console.status("starting Neo4j (the first start downloads its jars with Maven)..."):
            result = localdb.start(settings)
    except LocalDbError as error:
        raise _fail(error) from None
    console.print(f"neo4j: {result.message} on {result.uri} in {time.monotonic() - began:.1f} s")
    console.print(f"NEO4J_URI={result.uri}", markup=False)
    console.print(f"[dim]{localdb.apoc_note(settings)}; data in {settings.home / 'data'}[/]")


@app.command()
def stop(port: int | None = PortOption, home: str = HomeOption) -> None:
    """Stop the server by its PID file (SIGTERM)."""
    try:
        result = localdb.stop(_settings(port, home))
    except LocalDbError as error:
        raise _fail(error) from None
    console.print(f"neo4j: {result.message}")


@app.command()
def status(port: int | None = PortOption, home: str = HomeOption) -> None:
    """Say whether the server runs, and on which port it was started; exit code 3 when it does not."""
    result = localdb.status(_settings(port, home))
    console.print(f"neo4j: {result.message}")
    if not result.running:
        raise typer.Exit(3)
    console.print(f"NEO4J_URI={result.uri}", markup=False)


@app.command()
def logs(
    port: int | None = PortOption,
    home: str = HomeOption,
    lines: int = typer.Option(60, "--lines", min=1, max=5000),
) -> None:
    """Print the tail of the server's logs."""
    console.print(localdb.log_tail(_settings(port, home), lines), markup=False)
