"""Resolving the server's jars (and APOC core, when Maven Central has it) once, with progress."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import deque
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb.java import find_java_home
from graphrag_orm.localdb.settings import LocalDbSettings, Progress

__all__ = ["MavenProgress", "apoc_note", "install_plugins", "jar_download_bytes", "resolve_jars"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_DOWNLOADED = re.compile(r"Downloaded from [^:]+: (\S+)(?: \((\d+(?:\.\d+)?) ?([kKMG]?B))?")
_UNIT_BYTES = {"B": 1, "kB": 1_000, "KB": 1_000, "MB": 1_000_000, "GB": 1_000_000_000}
_MAVEN_TAIL_LINES = 30


class MavenProgress:
    """Counts what Maven reports while it resolves the jars, for a line of progress.

    Reads Maven's batch-mode transfer lines (``Downloaded from central: URL (4.2 kB at ...)``);
    any other line says nothing new (the dependency plugin copies the jars from the
    local repository without a line per jar). Colour codes are ignored.
    """

    def __init__(self) -> None:
        self.downloaded = 0
        self.downloaded_bytes = 0

    def feed(self, line: str) -> str | None:
        """The progress line after ``line`` of Maven's output, or None when it changes nothing."""
        text = _ANSI.sub("", line)
        downloaded = _DOWNLOADED.search(text)
        if downloaded:
            self.downloaded += 1
            if downloaded.group(2):
                self.downloaded_bytes += int(float(downloaded.group(2)) * _UNIT_BYTES[downloaded.group(3)])
            return f"{self.summary()} ({downloaded.group(1).rsplit('/', 1)[-1]})"
        return None

    def summary(self) -> str:
        """``resolving jars: 37 downloaded (12.4 MB)`` (the size once Maven reported one)."""
        size = f" ({self.downloaded_bytes / 1e6:.1f} MB)" if self.downloaded_bytes else ""
        return f"resolving jars: {self.downloaded} downloaded{size}"


def _run_maven(
    command: list[str], env: dict[str, str], tracker: MavenProgress, progress: Progress | None
) -> str | None:
    """Run Maven, passing its progress on; None on success, else the lines that say why it failed."""
    tail: deque[str] = deque(maxlen=_MAVEN_TAIL_LINES)
    errors: deque[str] = deque(maxlen=_MAVEN_TAIL_LINES)
    with subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    ) as process:
        assert process.stdout is not None
        for raw in process.stdout:
            line = _ANSI.sub("", raw.rstrip())
            tail.append(line)
            if line.startswith("[ERROR]"):
                errors.append(line)
            update = tracker.feed(line)
            if update is not None and progress is not None:
                progress(update)
    if process.returncode == 0:
        return None
    return "\n".join(errors or tail)


def resolve_jars(settings: LocalDbSettings, *, java_home: Path | None = None, progress: Progress | None = None) -> Path:
    """Resolve the server jars with Maven once; later calls reuse ``target/lib``.

    ``progress`` receives a line per file Maven downloads
    (``resolving jars: 37 downloaded (12.4 MB) (neo4j-kernel-....jar)``), so a first
    start that fetches some 160 MB is not silent. Raises ``maven-not-found``, or
    ``jars-not-resolved`` with Maven's error lines.
    """
    marker = settings.lib_dir / ".resolved"
    pom = settings.tools_dir / "pom.xml"
    pom_stamp = f"{pom.stat().st_mtime_ns}:{pom.stat().st_size}"
    if marker.is_file() and marker.read_text() == pom_stamp:
        return settings.lib_dir
    mvn = shutil.which("mvn")
    if mvn is None:
        raise LocalDbError(ErrorCode.MAVEN_NOT_FOUND, "Maven (mvn) is needed once to fetch Neo4j's jars")
    env = dict(os.environ)
    env["JAVA_HOME"] = str(java_home or find_java_home())
    tracker = MavenProgress()
    if progress is not None:
        progress(f"resolving jars with Maven into {settings.lib_dir} (once)")
    failure = _run_maven([mvn, "-B", "-Dstyle.color=never", "-f", str(pom), "package"], env, tracker, progress)
    if failure is not None:
        raise LocalDbError(ErrorCode.JARS_NOT_RESOLVED, f"Maven could not resolve Neo4j's jars:\n{failure}")
    if not any(settings.lib_dir.glob("*.jar")):
        raise LocalDbError(
            ErrorCode.JARS_NOT_RESOLVED, f"Maven finished but left no jars in {settings.lib_dir} ({pom})"
        )
    if progress is not None:
        progress(f"{tracker.summary()}; looking for APOC core (optional)")
    _resolve_apoc(settings, mvn, env, pom)
    marker.write_text(pom_stamp)
    if progress is not None:
        progress(tracker.summary().replace("resolving", "resolved"))
    return settings.lib_dir


def _resolve_apoc(settings: LocalDbSettings, mvn: str, env: dict[str, str], pom: Path) -> None:
    """Try the optional APOC core profile; record why it is absent instead of failing the start."""
    plugins = settings.tools_dir / "target" / "plugins"
    command = [mvn, "-B", "-Dstyle.color=never", "-Papoc", "-f", str(pom), "package"]
    failure = _run_maven(command, env, MavenProgress(), None)
    note = settings.tools_dir / "target" / "apoc.txt"
    note.parent.mkdir(parents=True, exist_ok=True)
    if failure is None and any(plugins.glob("apoc-core-*.jar")):
        note.write_text("APOC core resolved from Maven Central\n")
    else:
        reason = next((line for line in (failure or "").splitlines() if "apoc-core" in line), "")
        note.write_text(f"APOC core not available from Maven Central for this Neo4j version\n{reason[:500]}\n")


def apoc_note(settings: LocalDbSettings) -> str:
    """Whether APOC core was resolved, as recorded at the last resolution."""
    note = settings.tools_dir / "target" / "apoc.txt"
    return note.read_text().splitlines()[0] if note.is_file() else "APOC core not resolved yet"


def install_plugins(settings: LocalDbSettings) -> None:
    source = settings.tools_dir / "target" / "plugins"
    target = settings.home / "plugins"
    for jar in source.glob("*.jar") if source.is_dir() else ():
        if not (target / jar.name).exists():
            shutil.copy2(jar, target / jar.name)


def jar_download_bytes(settings: LocalDbSettings) -> int:
    """The resolved jars' total size in bytes (0 before the first resolution)."""
    if not settings.lib_dir.is_dir():
        return 0
    return sum(path.stat().st_size for path in settings.lib_dir.glob("*.jar"))
