"""The top-level command group loads each command's module on first use, and still shows them all.

``graphrag-orm ingest`` imports only what ``ingest`` needs (``test_import_cost.py``
holds that in a fresh interpreter); here: ``--help`` lists every command with its help,
in the order it always had, the groups keep their commands, a mistyped command is still
suggested, and ``--version`` and ``main()``'s one-line errors still work.
"""

from __future__ import annotations

import inspect

import pytest
import typer.main
from typer.testing import CliRunner

import graphrag_orm.cli
from graphrag_orm.cli import app, main
from graphrag_orm.errors import ConfigurationError

COMMANDS = [
    "ingest",
    "search",
    "ask",
    "check",
    "remove",
    "reset",
    "orphans",
    "fail-stale-runs",
    "remove-tenant",
    "tenants",
    "documents",
    "runs",
    "show",
    "serve",
    "mcp",
    "eval",
    "neo4j",
    "migrations",
    "graph",
    "resolve",
    "reembed",
    "models",
    "communities",
]
GROUPS = {
    "neo4j": ["start", "stop", "status", "logs"],
    "migrations": ["init", "revision", "plan", "apply", "status", "check", "downgrade"],
    "graph": ["ask"],
    "resolve": ["suggest", "apply", "undo"],
    "reembed": ["plan", "backfill", "complete", "cleanup"],
    "models": ["list", "fetch"],
    "communities": ["build", "list"],
}
runner = CliRunner()


def invoke(*arguments: str) -> str:
    result = runner.invoke(app, list(arguments), env={"COLUMNS": "240"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_group_lists_every_command_in_order_and_each_resolves_to_its_own() -> None:
    group = typer.main.get_command(app)
    context = group.make_context("graphrag-orm", ["--help"], resilient_parsing=True)
    assert group.list_commands(context) == COMMANDS  # type: ignore[attr-defined]
    for name in COMMANDS:
        command = group.get_command(context, name)  # type: ignore[attr-defined]
        assert command is not None and command.name == name
    assert group.get_command(context, "no-such-command") is None  # type: ignore[attr-defined]


def test_help_shows_every_command_with_its_help() -> None:
    shown = invoke("--help")
    group = typer.main.get_command(app)
    context = group.make_context("graphrag-orm", ["--help"], resilient_parsing=True)
    for name in COMMANDS:
        command = group.get_command(context, name)  # type: ignore[attr-defined]
        first_words = " ".join(inspect.cleandoc(command.help or "").split()[:4])
        assert f"│ {name} " in shown and first_words in " ".join(shown.split()), name


@pytest.mark.parametrize(("group", "commands"), list(GROUPS.items()))
def test_a_group_of_commands_keeps_its_commands(group: str, commands: list[str]) -> None:
    shown = invoke(group, "--help")
    for name in commands:
        assert f"│ {name} " in shown, (group, name)


def test_a_command_that_is_not_loaded_yet_gets_its_own_help() -> None:
    shown = invoke("ingest", "--help")
    assert "Ingest documents: one transaction per document" in shown and "--wait-for-leases" in shown


def test_a_mistyped_command_is_still_suggested() -> None:
    result = runner.invoke(app, ["ingset"], env={"COLUMNS": "240"})
    assert result.exit_code == 2
    assert "No such command 'ingset'. Did you mean 'ingest'?" in result.output


def test_version_prints_the_version() -> None:
    assert invoke("--version").startswith("graphrag-orm ")


def test_main_prints_a_deliberate_error_as_one_line_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse() -> None:
        raise ConfigurationError("invalid-option", "the setting is out of bounds")

    monkeypatch.setattr(graphrag_orm.cli, "app", refuse)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["error the setting is out of bounds (invalid-option)"]
