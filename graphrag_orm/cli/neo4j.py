"""``graphrag-orm neo4j start|stop|status|logs``: the local development server.

``start`` and ``status`` print the ``NEO4J_URI`` to connect with: the port the home's
server runs on (recorded in the home at its start), whatever ``--port`` says for
``status``. ``start`` refuses a port another program or another home's server holds
(``port-in-use``) and never reports a server it did not start. A home is named
(``--home NAME``: ``tools/neo4j/NAME`` in a checkout, else in the user's data
directory) or given as a folder (``--home-dir PATH``). The first start says what
Maven is downloading instead of being silent for minutes.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import typer
from rich.markup import escape

from graphrag_orm import localdb
from graphrag_orm.cli._common import console, errors
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb.settings import home_name, home_option

__all__ = ["logs", "start", "status", "stop"]

app = typer.Typer(help="The local Neo4j server (development and tests).", no_args_is_help=True)

PortOption = typer.Option(None, "--port", help="Bolt port (default GRAPHRAG_NEO4J_PORT or 7687).")
HomeOption = typer.Option(
    None,
    "--home",
    help="Home folder name (default home): tools/neo4j/NAME in a checkout, else in the user's data directory.",
)
HomeDirOption = typer.Option(None, "--home-dir", help="Home folder path, instead of a name (--home).")

# Outside a terminal (CI logs, pipes) a progress line is printed at most this often.
_PLAIN_PROGRESS_SECONDS = 5.0


def _fail(error: LocalDbError) -> typer.Exit:
    errors.print(f"[bold red]error[/] {escape(error.message)} [dim]({error.code})[/]")
    return typer.Exit(1)


def _settings(port: int | None, home: str | None, home_dir: Path | None) -> localdb.LocalDbSettings:
    try:
        if home is not None and home_dir is not None:
            raise LocalDbError(ErrorCode.INVALID_OPTION, "give the home as --home NAME or --home-dir PATH, not both")
        return localdb.LocalDbSettings.from_env(home_name=home or "home", port=port, home_dir=home_dir)
    except LocalDbError as error:
        raise _fail(error) from None


class _StartProgress:
    """Shows a start's progress: the spinner's text in a terminal, bounded plain lines elsewhere."""

    def __init__(self) -> None:
        self.status = console.status("starting Neo4j...")
        self._printed_at = 0.0
        self._pending: str | None = None

    def __call__(self, line: str) -> None:
        self.status.update(f"{escape(line)}...")
        if console.is_terminal:
            return
        # A step is always printed; Maven's per-jar lines only every few seconds.
        now = time.monotonic()
        if line.startswith("resolving jars:") and now - self._printed_at < _PLAIN_PROGRESS_SECONDS:
            self._pending = line
            return
        self._pending = None
        self._printed_at = now
        console.print(f"neo4j: {line}", markup=False)

    def flush(self) -> None:
        if self._pending is not None and not console.is_terminal:
            console.print(f"neo4j: {self._pending}", markup=False)
        self._pending = None


@app.command()
def start(port: int | None = PortOption, home: str | None = HomeOption, home_dir: Path | None = HomeDirOption) -> None:
    """Start the server (resolving its jars once, with progress) and wait until Bolt answers."""
    settings = _settings(port, home, home_dir)
    began = time.monotonic()
    progress = _StartProgress()
    try:
        with progress.status:
            result = localdb.start(settings, progress=progress)
    except LocalDbError as error:
        progress.flush()
        raise _fail(error) from None
    progress.flush()
    console.print(f"neo4j: {result.message} on {result.uri} in {time.monotonic() - began:.1f} s")
    console.print(f"NEO4J_URI={result.uri}", markup=False)
    console.print(f"[dim]{escape(localdb.apoc_note(settings))}; data in {escape(str(settings.home / 'data'))}[/]")


@app.command()
def stop(
    port: int | None = PortOption,
    home: str | None = HomeOption,
    home_dir: Path | None = HomeDirOption,
    every: bool = typer.Option(False, "--all", help="Stop every server started from this runtime folder."),
) -> None:
    """Stop a server by its PID file (SIGTERM); with no home named, the one the toolkit started, or list them.

    ``--home``/``--home-dir`` name the home. Otherwise, the default home when it runs;
    else the servers started from this runtime folder (any home, any port) are looked
    up: ``--port`` picks the one started on that port, a single one is stopped, several
    are listed with the command for each (exit 1) unless ``--all`` stops them all.
    """
    try:
        if home is not None or home_dir is not None:
            _stopped(localdb.stop(_settings(port, home, home_dir)))
            return
        default = _settings(port, None, None)
        if port is None and not every and localdb.status(default).running:
            _stopped(localdb.stop(default))
            return
        running = localdb.running_servers(default.tools_dir)
        chosen = [server for server in running if port is None or server.uri == f"bolt://127.0.0.1:{port}"]
        if every or len(chosen) == 1:
            for server in chosen:
                _stopped(localdb.stop(dataclasses.replace(default, home=server.home)))
            if chosen:
                return
        if not chosen:
            _stopped(localdb.stop(default))
            return
    except LocalDbError as error:
        raise _fail(error) from None
    console.print(
        f"neo4j: {len(chosen)} servers started by graphrag-orm are running; name one, or stop all with --all:"
    )
    for server in chosen:
        console.print(
            f"  {server.uri} (pid {server.pid}): graphrag-orm neo4j stop {home_option(server.home, default.tools_dir)}"
        )
    raise typer.Exit(1)


def _stopped(result: localdb.LocalDbStatus) -> None:
    name = home_name(result.home, localdb.find_tools_dir())
    console.print(f"neo4j: {escape(result.message)} [dim](home {escape(name)})[/]")


@app.command()
def status(port: int | None = PortOption, home: str | None = HomeOption, home_dir: Path | None = HomeDirOption) -> None:
    """Say whether the server runs, and on which port it was started; exit code 3 when it does not."""
    result = localdb.status(_settings(port, home, home_dir))
    console.print(f"neo4j: {result.message}")
    if not result.running:
        raise typer.Exit(3)
    console.print(f"NEO4J_URI={result.uri}", markup=False)


@app.command()
def logs(
    port: int | None = PortOption,
    home: str | None = HomeOption,
    home_dir: Path | None = HomeDirOption,
    lines: int = typer.Option(60, "--lines", min=1, max=5000),
) -> None:
    """Print the tail of the server's logs."""
    console.print(localdb.log_tail(_settings(port, home, home_dir), lines), markup=False)
