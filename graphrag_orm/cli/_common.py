"""What every command shares: running async work, connecting, loading an ontology, and failing
without a stack trace (one line on stderr: the message, then the code in parentheses)."""

from __future__ import annotations

import asyncio
import errno
import importlib
import importlib.util
import json
import os
import re
import socket
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.text import Text

from graphrag_orm.codes import ErrorCode
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import DocumentNotResolved, GraphRagError
from graphrag_orm.facade import GraphRag
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Store
from graphrag_orm.store.connection import open_store

__all__ = [
    "SHIPPED_ONTOLOGIES",
    "OntologyOption",
    "T",
    "error_line",
    "fail",
    "listen",
    "load_ontology",
    "print_json",
    "require_extra",
    "resolve_documents",
    "run",
    "stored",
    "with_database",
    "with_graphrag",
    "written_by",
]

T = TypeVar("T")

_FULL_ID = re.compile(r"[0-9a-f]{64}")

#: The width output written to a pipe or file is laid out at (unless COLUMNS says otherwise):
#: wider than any line a command prints, so nothing a script reads is wrapped.
PIPED_WIDTH = 1_000_000


class _Output(Console):
    """Standard output: a terminal's own width; piped, as wide as its lines (no wrapping at 80)."""

    @property
    def size(self) -> ConsoleDimensions:
        found = super().size
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(PIPED_WIDTH, found.height)
        return found

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


console = _Output(highlight=False)
# soft_wrap: an error stays one line however narrow the terminal (scripts read it by line).
errors = Console(stderr=True, highlight=False, soft_wrap=True)

SHIPPED_ONTOLOGIES = ("generic", "novel", "article")

OntologyOption = typer.Option(
    None,
    "--ontology",
    help="generic, novel, article, or module:ATTRIBUTE naming your own Ontology (its keys and names index).",
)


def print_json(text: str) -> None:
    """JSON on standard output, indented: highlighted on a terminal, written as is when piped.

    The same text either way (two-space indent, UTF-8 as typed). rich's highlighter grows
    with the receipt, and every worker of a shared manifest would pay it for colours a
    script reading the output never sees (``benchmarks/cli/run.py`` measures both).
    """
    if console.is_terminal:
        console.print_json(text)
        return
    sys.stdout.write(json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def stored(value: str | None) -> Text:
    """Stored text (a quote, a passage, a title, a source) for Rich as plain text, never as markup.

    Brackets, backslashes and ``:emoji:`` codes print exactly as stored; every command
    hands stored text to Rich through this one helper.
    """
    return Text(value or "")


def written_by(label: str, verb: str = "written") -> Text:
    """Who wrote an answer or a query, on its own dim line: never cropped to a panel's width, never markup."""
    return Text(f"{verb} by {label}", style="dim")


def error_line(message: str, code: str) -> str:
    """The one line an error prints: its message (markup escaped, so paths and ids show as typed) and code."""
    return f"[bold red]error[/] {escape(message)} [dim]({escape(str(code))})[/]"


def run(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``; a GraphRagError ends the command with its message and exit code 1."""
    try:
        return asyncio.run(work)
    except GraphRagError as error:
        errors.print(error_line(error.message, error.code))
        raise typer.Exit(1) from None


async def with_database(action: Callable[[Store], Awaitable[T]]) -> T:
    """Open a store from NEO4J_* settings, run ``action`` with it, close its driver."""
    store = await open_store()
    try:
        return await action(store)
    finally:
        await store.driver.close()


async def with_graphrag(action: Callable[[GraphRag], Awaitable[T]], *, ontology: Ontology | None = None) -> T:
    """Connect a ``GraphRag`` from the environment (with ``ontology``, if any), run ``action``, close.

    The vector index is not checked on connecting: listing, showing and maintenance do
    not need it (``check`` reports a missing one as a finding).
    """
    rag = graphrag_from_env(ontology=ontology)[0]
    await rag.connect(check_schema=False, neomodel=False)
    try:
        return await action(rag)
    finally:
        await rag.close()


async def resolve_documents(rag: GraphRag, references: list[str]) -> tuple[str, ...]:
    """The ids of the documents ``references`` name (id, prefix, source URI or path), each once.

    A full id with no document is kept as it is: sections and chunks may still be
    stored under it (orphans), and removal reports it as not found.
    """
    resolved: list[str] = []
    for reference in references:
        try:
            found = await rag.catalog.resolve(reference)
        except DocumentNotResolved as error:
            if error.code != ErrorCode.DOCUMENT_NOT_FOUND or not _FULL_ID.fullmatch(reference.strip().lower()):
                raise
            found = reference.strip().lower()
        if found not in resolved:
            resolved.append(found)
    return tuple(resolved)


def fail(message: str, code: str) -> NoReturn:
    errors.print(error_line(message, code))
    raise typer.Exit(1)


def load_ontology(name: str | None) -> Ontology | None:
    """A shipped ontology by name, or ``package.module:ATTRIBUTE`` for an application's own."""
    if name is None:
        return None
    if name in SHIPPED_ONTOLOGIES:
        module = importlib.import_module(f"graphrag_orm.ontologies.{name}")
        found: object = module.ONTOLOGY
    else:
        module_name, _, attribute = name.partition(":")
        if not attribute:
            raise typer.BadParameter("an ontology is generic, novel, article, or module:ATTRIBUTE")
        sys.path.insert(0, os.getcwd())  # an application's module, run from its checkout
        try:
            found = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise typer.BadParameter(f"cannot load {name}: {type(error).__name__}") from None
    if not isinstance(found, Ontology):
        raise typer.BadParameter(f"{name} is not an Ontology")
    return found


def require_extra(command: str, extra: str, *modules: str) -> None:
    """Fail with ``missing-extra`` (one line naming the pip install) when a module of ``extra`` is absent."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        fail(
            f"graphrag-orm {command} needs the {extra} extra ({', '.join(missing)} not installed): "
            f"pip install 'graphrag-orm[{extra}]'",
            ErrorCode.MISSING_EXTRA,
        )


def listen(host: str, port: int) -> socket.socket:
    """A bound, listening socket (inheritable), so a taken port fails with its code before anything connects."""
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            fail(f"port {port} on {host} is in use", ErrorCode.PORT_IN_USE)
        fail(f"cannot listen on {host}:{port}: {error.strerror or type(error).__name__}", ErrorCode.INVALID_OPTION)
    listener.listen(128)
    listener.set_inheritable(True)
    return listener
