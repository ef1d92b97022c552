"""The ``graphrag-orm`` command line (typer + rich).

Commands are loaded lazily: the top-level group knows every command's name and where it
is defined (:data:`_COMMANDS`), and imports a command's module the first time the command
is looked up. ``graphrag-orm ingest ...`` (run by every ingestion worker) so imports
only what ``ingest`` needs; ``graphrag-orm --help`` loads them all to list them with
their help. ``tests/unit/test_import_cost.py`` holds the first, ``tests/unit/test_cli_lazy.py``
that the listing stays complete.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup
from typer.main import get_group

from graphrag_orm.errors import GraphRagError
from graphrag_orm.tenancy import TENANT_ENV

if TYPE_CHECKING:
    from typer._click import Command

__all__ = ["main"]


@dataclass(frozen=True)
class _Lazy:
    """A command not loaded yet: the ``graphrag_orm.cli`` module defining it and the name it has there
    (a command function, or the ``app`` of a group of commands)."""

    module: str
    attribute: str
    group: bool = False

    def load(self, name: str) -> Command:
        """Import the module and build the command as ``app.command(name)`` / ``app.add_typer(name=)`` would."""
        found = getattr(importlib.import_module(f"graphrag_orm.cli.{self.module}"), self.attribute)
        # A Typer holding this one command, with the settings of the top-level app that
        # typer passes on when it builds a command of a group.
        holder = typer.Typer(
            rich_markup_mode=app.rich_markup_mode,
            suggest_commands=app.suggest_commands,
            pretty_exceptions_short=app.pretty_exceptions_short,
        )
        if self.group:
            holder.add_typer(found, name=name)
        else:
            holder.command(name)(found)
        return get_group(holder).commands[name]


#: Every top-level command, in the order ``--help`` lists them (commands, then groups of commands).
_COMMANDS: dict[str, _Lazy] = {
    "ingest": _Lazy("ingest", "ingest"),
    "search": _Lazy("ingest", "search"),
    "ask": _Lazy("ask", "ask"),
    "check": _Lazy("maintain", "check"),
    "remove": _Lazy("maintain", "remove"),
    "reset": _Lazy("maintain", "reset"),
    "orphans": _Lazy("maintain", "orphans"),
    "fail-stale-runs": _Lazy("maintain", "fail_stale_runs"),
    "remove-tenant": _Lazy("maintain", "remove_tenant"),
    "tenants": _Lazy("maintain", "tenants"),
    "documents": _Lazy("catalog", "documents"),
    "runs": _Lazy("catalog", "runs"),
    "show": _Lazy("catalog", "show"),
    "serve": _Lazy("serve", "serve"),
    "mcp": _Lazy("mcp", "mcp"),
    "eval": _Lazy("evaluate", "evaluate"),
    "neo4j": _Lazy("neo4j", "app", group=True),
    "migrations": _Lazy("migrations", "app", group=True),
    "graph": _Lazy("graph", "app", group=True),
    "resolve": _Lazy("resolve", "app", group=True),
    "reembed": _Lazy("reembed", "app", group=True),
    "models": _Lazy("models", "app", group=True),
    "communities": _Lazy("communities", "app", group=True),
}


class _Commands(MutableMapping[str, "Command"]):
    """A group's commands by name: every name of :data:`_COMMANDS` is a key from the start, and its
    command is built (its module imported) when first read.

    A mapping rather than ``get_command``/``list_commands`` overrides alone, because typer
    also reads the group's ``commands`` directly (the names it suggests for a mistyped command).
    """

    def __init__(self, built: MutableMapping[str, Command]) -> None:
        self._entries: dict[str, Command | _Lazy] = {**_COMMANDS, **built}

    def __getitem__(self, name: str) -> Command:
        entry = self._entries[name]
        if isinstance(entry, _Lazy):
            entry = self._entries[name] = entry.load(name)
        return entry

    def __setitem__(self, name: str, command: Command) -> None:
        self._entries[name] = command

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries  # without loading it

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


class _LazyGroup(TyperGroup):
    """The top-level group, whose commands are :class:`_Commands`."""

    def __init__(self, **attributes: Any) -> None:
        super().__init__(**attributes)
        self.commands = _Commands(self.commands)


app = typer.Typer(
    name="graphrag-orm",
    cls=_LazyGroup,
    help="GraphRAG on Neo4j: ingest documents, answer with verified citations, keep the graph healthy.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib import metadata

        try:
            version = metadata.version("graphrag-orm")
        except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
            version = "unknown (not installed)"
        typer.echo(f"graphrag-orm {version}")
        raise typer.Exit()


#: Commands that never read or write documents: the server, the schema, the model files.
#: They run without a tenant in a tenanted graph (the schema is the graph's, not a tenant's).
ADMINISTRATIVE_COMMANDS = frozenset({"neo4j", "migrations", "models"})
#: Commands a tenanted graph refuses whatever the tenant (``tenant-refused``): they cannot be
#: fenced to one tenant (Text2Cypher runs a model's Cypher). ``communities`` and ``resolve``
#: are the tenant's (docs/tenancy.md).
UNFENCED_COMMANDS = frozenset({"graph"})
#: Groups whose subcommands decide for themselves whether they need a tenant (``reembed``:
#: each tenant's plan needs one, ``reembed status`` reads across tenants and takes none).
SPLIT_COMMANDS = frozenset({"reembed"})
#: Commands that read across every tenant (the operator's): they take no tenant, and one given is
#: ``tenant-refused``.
ACROSS_TENANTS_COMMANDS = frozenset({"tenants"})


@app.callback()
def _root(
    context: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the installed version and exit."
    ),
    tenant: str | None = typer.Option(
        None,
        "--tenant",
        envvar=TENANT_ENV,
        show_envvar=True,
        help="The tenant every command that opens the graph is bound to (a tenanted graph: GRAPHRAG_TENANCY=required).",
    ),
) -> None:
    """GraphRAG on Neo4j: ingest documents, answer with verified citations, keep the graph healthy."""
    # A command's --help opens nothing: it is shown whatever the tenant (click has handed the
    # command its arguments by now, so they are read from the command line).
    _bind_tenant(tenant, None if "--help" in sys.argv[1:] else context.invoked_subcommand)


def _bind_tenant(value: str | None, command: str | None) -> None:
    """Validate ``--tenant`` / GRAPHRAG_TENANT and hand it on, through GRAPHRAG_TENANT, to every
    GraphRag the command builds from the environment (and to any process it starts).

    In a tenanted graph (GRAPHRAG_TENANCY=required), a command that opens the graph without
    a tenant ends here with ``tenant-required``: nothing is connected, read or written.
    """
    import os

    from graphrag_orm.codes import ErrorCode
    from graphrag_orm.tenancy import Tenant, refuse_in_tenanted_graph, require_administrative, tenancy_from_env

    # The error line is _common's, imported only on failing: `neo4j` and `ingest` load what they need alone.
    try:
        tenant = Tenant(value.strip()) if value and value.strip() else None
        tenanted = tenancy_from_env() == "required"
        if tenant is not None:
            os.environ[TENANT_ENV] = tenant.value
        if command in UNFENCED_COMMANDS:
            refuse_in_tenanted_graph(tenanted, f"graphrag-orm {command}")
        if command in ACROSS_TENANTS_COMMANDS and tenant is not None:
            require_administrative(False, tenant, f"graphrag-orm {command}")
    except GraphRagError as error:
        from graphrag_orm.cli._common import fail

        fail(error.message, error.code)
    exempt = ADMINISTRATIVE_COMMANDS | SPLIT_COMMANDS | ACROSS_TENANTS_COMMANDS
    if tenanted and tenant is None and command is not None and command not in exempt:
        from graphrag_orm.cli._common import fail

        fail(
            "this graph is tenanted (GRAPHRAG_TENANCY=required): name the tenant with --tenant or GRAPHRAG_TENANT",
            ErrorCode.TENANT_REQUIRED,
        )


def main() -> None:
    """The console script: a deliberate error prints its message and code, never a stack trace."""
    try:
        app()
    except GraphRagError as error:
        from graphrag_orm.cli._common import error_line, errors

        errors.print(error_line(error.message, error.code))
        raise SystemExit(1) from None
