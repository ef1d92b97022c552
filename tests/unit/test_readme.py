"""The README's first screen and its install block: what it says exists, in the order a fresh clone needs it.

The install block is read from README.md as a newcomer copies it. Each line is checked
against what would run it: a Make target of the Makefile, the uv that an earlier
``make venv`` installs into .venv, the wheel's file name (the version of pyproject.toml)
and extra, and every ``graphrag-orm`` command (its ``--help`` through the real command
line). Running the wheel part from outside the repository is ``make wheel-check``'s.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from graphrag_orm.cli import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _block(heading: str) -> list[str]:
    """The commands of the first code block after ``heading``, comments and blank lines left out."""
    after = README[README.index(heading) :]
    body = re.search(r"```\w*\n(.*?)```", after, re.DOTALL)
    assert body, f"no code block after {heading}"
    lines = (line.split("  #")[0].strip() for line in body.group(1).splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_make_demo_and_make_test_are_the_first_two_commands() -> None:
    assert _block("# graphrag-orm")[:2] == ["make demo", "make test"]


def test_the_first_screen_says_what_it_is_and_why_against_the_others() -> None:
    first = README[: README.index("## Install it as a library")]
    assert "toolkit for graph-based retrieval-augmented generation on Neo4j" in first
    for other in ("neo4j-graphrag", "LangChain", "LlamaIndex"):
        assert other in first, other
    for point in ("Verified citations", "Leased ingestion", "Reviewed migrations", "Deletes", "Evaluation"):
        assert f"**{point}" in first, point


def test_every_command_of_the_install_block_exists_in_the_order_a_fresh_clone_needs() -> None:
    commands = _block("## Install it as a library")
    runner = CliRunner()
    uv_installed = False
    for line in commands:
        words = shlex.split(line)
        if words[0] == "make":
            assert re.search(rf"^{re.escape(words[1])}:", MAKEFILE, re.MULTILINE), line
            uv_installed |= words[1] == "venv"
        elif words[0] == ".venv/bin/uv":
            assert uv_installed, "a fresh clone has no .venv/bin/uv before `make venv`"
            assert re.search(r'\$\(BIN\)/python -m pip install .*"uv==', MAKEFILE), "make venv installs uv"
            assert re.search(r"^VENV := \.venv$", MAKEFILE, re.MULTILINE)
        elif words[0] == "pip":
            wheel = re.fullmatch(r"dist/graphrag_orm-(.+)-py3-none-any\.whl\[(\w+)\]", words[2])
            assert words[1] == "install" and wheel, line
            assert wheel.group(1) == PROJECT["version"], "the wheel uv builds is named after the version"
            assert wheel.group(2) in PROJECT["optional-dependencies"], "an extra the package has"
        else:
            assert words[0] == "graphrag-orm", line
            arguments = words[1:] if words[1:] == ["--version"] else [*words[1:], "--help"]
            result = runner.invoke(app, arguments)
            assert result.exit_code == 0, f"{line}: {result.output}"
    assert [shlex.split(c)[0] for c in commands[:2]] == ["make", ".venv/bin/uv"]
