"""``graphrag-orm neo4j stop`` finds the servers the toolkit started, on any home and port, or lists them.

The servers here are stand-ins whose command line is a launcher's for their home (so the
PID checks accept them); they are started and reaped by the test's own handles.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphrag_orm.cli import app
from graphrag_orm.localdb import RUNTIME_FILES, LocalDbSettings, packaged_runtime, running_servers
from graphrag_orm.localdb.process import _remember

_PRETEND = "import time; time.sleep(120)"


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime folder of its own (GRAPHRAG_LOCALDB_DIR), so no real server of this machine is seen."""
    folder = tmp_path / "runtime"
    folder.mkdir()
    source = packaged_runtime()
    assert source is not None
    for name in RUNTIME_FILES:
        shutil.copy2(source / name, folder / name)
    monkeypatch.setenv("GRAPHRAG_LOCALDB_DIR", str(folder))
    monkeypatch.delenv("GRAPHRAG_NEO4J_PORT", raising=False)
    return folder


@pytest.fixture
def launched() -> Iterator[list[subprocess.Popen[bytes]]]:
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def _serve(home: Path, port: int, runtime: Path, processes: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """A stand-in server of ``home``: a live process whose command line is the launcher's for it."""
    process = subprocess.Popen([sys.executable, "-c", _PRETEND, "Launcher.java", f"--home-dir={home}"])
    processes.append(process)
    settings = LocalDbSettings(tools_dir=runtime, home=home, port=port)
    settings.pid_file.parent.mkdir(parents=True)
    settings.pid_file.write_text(f"{process.pid}\n")
    settings.port_file.write_text(f"{port}\n")
    _remember(settings)
    return process


def _stop(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["neo4j", "stop", *args])
    # Compared without whitespace: a long path may wrap in a narrow console.
    return result.exit_code, "".join(result.output.split())


def test_stop_without_a_home_stops_the_one_server_the_toolkit_started_on_another_port(
    runtime: Path, launched: list[subprocess.Popen[bytes]]
) -> None:
    demo = _serve(runtime / "home-recall", 7686, runtime, launched)
    code, output = _stop()
    assert code == 0, output
    assert "stopped" in output and "home-recall" in output
    assert demo.wait(timeout=10) is not None
    assert running_servers(runtime) == []


def test_several_servers_are_listed_with_the_command_for_each_and_none_is_stopped(
    runtime: Path, tmp_path: Path, launched: list[subprocess.Popen[bytes]]
) -> None:
    inside = _serve(runtime / "home-recall", 7686, runtime, launched)
    outside = _serve(tmp_path / "elsewhere", 7695, runtime, launched)
    code, output = _stop()
    assert code == 1
    assert "--homehome-recall" in output and f"--home-dir{tmp_path / 'elsewhere'}" in output
    assert "bolt://127.0.0.1:7686" in output and "bolt://127.0.0.1:7695" in output
    assert inside.poll() is None and outside.poll() is None


def test_a_port_picks_the_server_started_on_it_and_all_stops_the_rest(
    runtime: Path, tmp_path: Path, launched: list[subprocess.Popen[bytes]]
) -> None:
    first = _serve(runtime / "home-a", 7686, runtime, launched)
    second = _serve(tmp_path / "b", 7695, runtime, launched)
    third = _serve(runtime / "home-c", 7696, runtime, launched)
    code, output = _stop("--port", "7695")
    assert code == 0, output
    assert second.wait(timeout=10) is not None
    assert first.poll() is None and third.poll() is None
    code, output = _stop("--all")
    assert code == 0, output
    assert first.wait(timeout=10) is not None and third.wait(timeout=10) is not None


def test_nothing_running_says_so_and_succeeds(runtime: Path) -> None:
    code, output = _stop()
    assert code == 0
    assert "notrunning" in output
