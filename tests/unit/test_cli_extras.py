"""Commands that need an optional extra say which one, in one line with a code, when it is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run_without(modules: tuple[str, ...], *arguments: str) -> subprocess.CompletedProcess[str]:
    # A module set to None in sys.modules cannot be imported or found: as if the extra were not installed.
    hide = "; ".join(f"sys.modules[{name!r}] = None" for name in modules)
    code = f"import sys; {hide}; from graphrag_orm.cli import main; sys.argv = ['graphrag-orm', *{arguments!r}]; main()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("modules", "arguments", "extra"),
    [
        (("fastapi",), ("serve",), "server"),
        (("uvicorn",), ("serve", "--no-explorer"), "server"),
        (("mcp",), ("mcp",), "mcp"),
        (("uvicorn",), ("mcp", "--transport", "http"), "mcp"),
    ],
)
def test_a_missing_extra_is_one_coded_line_naming_the_install(
    modules: tuple[str, ...], arguments: tuple[str, ...], extra: str
) -> None:
    result = _run_without(modules, *arguments)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"pip install 'graphrag-orm[{extra}]'" in lines[0] and "(missing-extra)" in lines[0]
