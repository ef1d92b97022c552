"""The local server's start: a taken port is refused, and "started" is said only of its own process.

The other server these tests need is the suite's own (``tests/database.py``), already
running; only the last test launches a server, and that one is refused.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphrag_orm import localdb
from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb import LocalDbSettings, find_tools_dir, start, status
from graphrag_orm.store.connection import ConnectionSettings
from tests.database import TEST_PORT

SUITE_HOME = "home-test" if TEST_PORT == 7688 else f"home-test-{TEST_PORT}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def listener() -> Iterator[int]:
    """A plain TCP listener (not Neo4j) on a free loopback port."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


@pytest.fixture
def suite_server(neo4j_settings: ConnectionSettings) -> LocalDbSettings:
    """The suite's own local server, running; skipped when the suite runs against NEO4J_URI's server."""
    settings = LocalDbSettings.from_env(home_name=SUITE_HOME, port=TEST_PORT)
    if not status(settings).running:
        pytest.skip("the suite runs against a server it did not start")
    return settings


def _other_home(tmp_path: Path, port: int) -> LocalDbSettings:
    return LocalDbSettings(tools_dir=find_tools_dir(), home=tmp_path / "other-home", port=port)


# A process that is not Neo4j but whose command line looks like a launcher's: it listens on a
# free port, prints it, and waits. Started and ended by the test itself, by its own handle.
_PRETEND = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
    "print(s.getsockname()[1], flush=True); time.sleep(120)"
)


@pytest.fixture
def pretend_launcher() -> Iterator[Callable[[Path], tuple[subprocess.Popen[str], int]]]:
    started: list[subprocess.Popen[str]] = []

    def launch(home: Path) -> tuple[subprocess.Popen[str], int]:
        process = subprocess.Popen(
            [sys.executable, "-c", _PRETEND, "Launcher.java", f"--home-dir={home}"], stdout=subprocess.PIPE, text=True
        )
        started.append(process)
        assert process.stdout is not None
        return process, int(process.stdout.readline())

    yield launch
    for process in started:
        process.kill()
        process.wait(timeout=10)


def test_start_refuses_a_port_a_plain_listener_holds_and_launches_nothing(listener: int, tmp_path: Path) -> None:
    settings = _other_home(tmp_path, listener)
    began = time.monotonic()
    with pytest.raises(LocalDbError) as refused:
        start(settings)
    assert refused.value.code == "port-in-use"
    assert f"port {listener} is already in use" in refused.value.message
    assert f"pid {os.getpid()}" in refused.value.message  # this test's process holds it
    assert time.monotonic() - began < 10
    assert not settings.pid_file.exists()


def test_start_refuses_the_port_of_another_homes_server_and_names_it(
    suite_server: LocalDbSettings, tmp_path: Path
) -> None:
    settings = _other_home(tmp_path, suite_server.port)
    with pytest.raises(LocalDbError) as refused:
        start(settings)
    assert refused.value.code == "port-in-use"
    assert f"the local Neo4j of home {SUITE_HOME}" in refused.value.message
    assert not settings.pid_file.exists()
    assert status(suite_server).running


def test_status_reads_the_port_the_home_was_started_with(suite_server: LocalDbSettings) -> None:
    asked_elsewhere = dataclasses.replace(suite_server, port=_free_port())
    result = status(asked_elsewhere)
    assert result.running
    assert result.uri == f"bolt://127.0.0.1:{TEST_PORT}"
    assert (suite_server.home / "run" / "port").read_text().strip() == str(TEST_PORT)


def test_a_second_start_reuses_a_running_home_only_on_its_own_port(suite_server: LocalDbSettings) -> None:
    again = start(suite_server)
    assert again.running and again.message.startswith("already running")
    assert again.uri == f"bolt://127.0.0.1:{TEST_PORT}"
    with pytest.raises(LocalDbError) as refused:
        start(dataclasses.replace(suite_server, port=_free_port()))
    assert refused.value.code == "running-on-another-port"
    assert f"NEO4J_URI=bolt://127.0.0.1:{TEST_PORT}" in refused.value.message


def test_a_server_answering_on_the_port_while_one_starts_is_never_reported_as_started(
    suite_server: LocalDbSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another server takes the port between the check and the bind: the check is made to miss it.
    monkeypatch.setattr(localdb.ports, "port_holder", lambda settings, port=None: None)
    settings = dataclasses.replace(_other_home(tmp_path, suite_server.port), start_timeout_seconds=120.0)
    with pytest.raises(LocalDbError) as refused:
        start(settings)
    assert refused.value.code == "port-in-use"
    assert not status(settings).running
    assert not settings.pid_file.exists()
    assert status(suite_server).running


def test_a_pid_file_naming_another_program_is_removed_and_that_program_is_never_signalled(tmp_path: Path) -> None:
    settings = _other_home(tmp_path, _free_port())
    settings.pid_file.parent.mkdir(parents=True)
    settings.pid_file.write_text(f"{os.getpid()}\n")  # this test's own process: alive, not a launcher
    assert not status(settings).running
    result = localdb.stop(settings)
    assert result.message == f"not running (stale PID file {os.getpid()} removed)"
    assert not settings.pid_file.exists()


def test_a_launcher_of_a_home_whose_name_only_begins_like_this_one_is_not_taken_for_it(
    tmp_path: Path, pretend_launcher: Callable[[Path], tuple[subprocess.Popen[str], int]]
) -> None:
    settings = _other_home(tmp_path, _free_port())
    process, _ = pretend_launcher(Path(f"{settings.home}-7704"))
    settings.pid_file.parent.mkdir(parents=True)
    settings.pid_file.write_text(f"{process.pid}\n")
    assert not status(settings).running
    assert "stale PID file" in localdb.stop(settings).message
    assert process.poll() is None  # never signalled


def test_a_port_held_by_a_home_given_as_a_folder_names_that_folder_in_the_refusal(
    tmp_path: Path, pretend_launcher: Callable[[Path], tuple[subprocess.Popen[str], int]]
) -> None:
    elsewhere = tmp_path / "elsewhere" / "my-home"
    process, port = pretend_launcher(elsewhere)
    with pytest.raises(LocalDbError) as refused:
        start(_other_home(tmp_path, port))
    assert refused.value.code == "port-in-use"
    assert f"the local Neo4j of home {elsewhere} (pid {process.pid}" in refused.value.message
    assert f"graphrag-orm neo4j stop --home-dir {elsewhere}" in refused.value.message
