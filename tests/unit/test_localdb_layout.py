"""Where the local server lives outside a checkout, how homes are named, and what a first start says.

No server is started here: the runtime folder and the homes are plain folders, and
Maven is stood in for by a script on PATH that prints what Maven prints (the real
resolve downloads some 160 MB and is run by the wheel check and the first start).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb import (
    RUNTIME_FILES,
    LocalDbSettings,
    MavenProgress,
    find_tools_dir,
    packaged_runtime,
    prepare_runtime,
    resolve_jars,
    user_runtime_dir,
)

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")

# Lines as Maven 3.8.7 prints them in batch mode (colour codes included, as apoc.txt recorded them).
MAVEN_OUTPUT = """\
[INFO] Scanning for projects...
[INFO] Downloading from central: https://repo.maven.apache.org/maven2/org/neo4j/neo4j/2026.09.0/neo4j-2026.09.0.pom
[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/neo4j/neo4j/2026.09.0/neo4j-2026.09.0.pom (4.2 kB at 21 kB/s)
\x1b[0m[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/neo4j/neo4j-kernel/2026.09.0/neo4j-kernel-2026.09.0.jar (12 MB at 5.1 MB/s)
[INFO] --- maven-dependency-plugin:3.8.1:copy-dependencies (server-jars) @ local-neo4j ---
[INFO] BUILD SUCCESS
"""


def test_the_runtime_folder_is_filled_from_the_package_and_left_alone_when_unchanged(tmp_path: Path) -> None:
    source = packaged_runtime()
    assert source is not None
    runtime = prepare_runtime(tmp_path / "data" / "neo4j", source)
    assert sorted(path.name for path in runtime.iterdir()) == sorted(RUNTIME_FILES)
    assert (runtime / "pom.xml").read_bytes() == (source / "pom.xml").read_bytes()
    stamp = (runtime / "pom.xml").stat().st_mtime_ns
    prepare_runtime(runtime, source)
    assert (runtime / "pom.xml").stat().st_mtime_ns == stamp  # the jars resolved for it stay valid
    (runtime / "pom.xml").write_text("<project/>")  # an older package's pom
    prepare_runtime(runtime, source)
    assert (runtime / "pom.xml").read_bytes() == (source / "pom.xml").read_bytes()


def test_outside_a_checkout_the_runtime_is_in_the_users_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_runtime_dir() == tmp_path / "xdg" / "graphrag-orm" / "neo4j"


def test_graphrag_localdb_dir_naming_an_empty_folder_gets_the_packaged_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHRAG_LOCALDB_DIR", str(tmp_path / "server"))
    assert find_tools_dir() == tmp_path / "server"
    assert all((tmp_path / "server" / name).is_file() for name in RUNTIME_FILES)
    settings = LocalDbSettings.from_env(home_name="mine", port=7800)
    assert settings.home == tmp_path / "server" / "mine"
    assert settings.lib_dir == tmp_path / "server" / "target" / "lib"


def test_a_home_given_as_a_folder_is_used_as_given_and_a_name_stays_in_the_runtime_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    given = LocalDbSettings.from_env(home_dir=Path("homes/mine"), port=7800)
    assert given.home == tmp_path / "homes" / "mine"
    assert given.tools_dir == ROOT / "tools" / "neo4j"  # a checkout: the jars stay in tools/neo4j/target
    assert LocalDbSettings.from_env(home_name="home-test", port=7800).home == ROOT / "tools" / "neo4j" / "home-test"


@pytest.mark.parametrize("name", ["../elsewhere", "a/b", "", "..", "target"])
def test_a_home_name_that_is_a_path_or_the_runtimes_own_folder_is_refused(name: str) -> None:
    with pytest.raises(LocalDbError) as refused:
        LocalDbSettings.from_env(home_name=name, port=7800)
    assert refused.value.code == "invalid-option"


def test_a_port_variable_that_is_not_a_number_is_refused_with_a_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRAG_NEO4J_PORT", "seven")
    with pytest.raises(LocalDbError) as refused:
        LocalDbSettings.from_env()
    assert refused.value.code == "invalid-option" and "GRAPHRAG_NEO4J_PORT" in refused.value.message


def test_mavens_output_becomes_a_count_of_the_files_downloaded_and_their_size() -> None:
    tracker = MavenProgress()
    lines = [tracker.feed(line) for line in MAVEN_OUTPUT.splitlines()]
    shown = [line for line in lines if line is not None]
    assert shown == [
        "resolving jars: 1 downloaded (0.0 MB) (neo4j-2026.09.0.pom)",
        "resolving jars: 2 downloaded (12.0 MB) (neo4j-kernel-2026.09.0.jar)",
    ]


def _fake_maven(folder: Path, *, exit_code: int) -> dict[str, str]:
    """A ``mvn`` on PATH that prints Maven's lines and exits with ``exit_code``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "output.txt").write_text(MAVEN_OUTPUT + ("[ERROR] Could not transfer artifact: network down\n"))
    script = folder / "mvn"
    script.write_text(f'#!/bin/sh\ncat "{folder / "output.txt"}"\nexit {exit_code}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_a_first_resolve_reports_each_download_and_a_failure_shows_mavens_error_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _fake_maven(tmp_path / "bin", exit_code=1)["PATH"])
    runtime = prepare_runtime(tmp_path / "runtime")
    settings = LocalDbSettings(tools_dir=runtime, home=tmp_path / "home")
    seen: list[str] = []
    with pytest.raises(LocalDbError) as failed:
        resolve_jars(settings, java_home=tmp_path, progress=seen.append)
    assert failed.value.code == "jars-not-resolved"
    assert "[ERROR] Could not transfer artifact: network down" in failed.value.message
    assert "BUILD SUCCESS" not in failed.value.message  # the error lines, not the whole log
    assert any(line.startswith("resolving jars: 2 downloaded (12.0 MB)") for line in seen)


def test_neo4j_start_from_a_fresh_folder_prints_mavens_progress_and_fails_with_a_code(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = dict(os.environ, GRAPHRAG_LOCALDB_DIR=str(tmp_path / "runtime"), COLUMNS="200")
    environment.update(_fake_maven(tmp_path / "bin", exit_code=1))
    result = subprocess.run(
        [CLI, "neo4j", "start", "--port", str(port), "--home-dir", str(tmp_path / "home")],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "neo4j: resolving jars with Maven" in result.stdout
    assert "neo4j: resolving jars: 2 downloaded (12.0 MB)" in result.stdout
    assert "(jars-not-resolved)" in result.stderr and "network down" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "NEO4J_URI" not in result.stdout


def test_neo4j_commands_refuse_a_home_given_both_by_name_and_by_folder(tmp_path: Path) -> None:
    result = subprocess.run(
        [CLI, "neo4j", "status", "--home", "home", "--home-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1 and "(invalid-option)" in result.stderr


def test_a_maven_run_that_leaves_no_jars_is_a_coded_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _fake_maven(tmp_path / "bin", exit_code=0)["PATH"])
    settings = LocalDbSettings(tools_dir=prepare_runtime(tmp_path / "runtime"), home=tmp_path / "home")
    with pytest.raises(LocalDbError) as failed:
        resolve_jars(settings, java_home=tmp_path)
    assert failed.value.code == "jars-not-resolved" and "left no jars" in failed.value.message
