"""A local Neo4j Community server for development and tests, started by the project itself.

The jars come from Maven Central through ``tools/neo4j/pom.xml`` (resolved once,
then cached in ``tools/neo4j/target``); ``tools/neo4j/Launcher.java`` is the entry
point, run in Java's source-file mode on a JDK 21 or later. The server's home
(configuration, data, logs, PID file) is a git-ignored folder, so data persists
between starts.

What this module never does: kill a process by name, or signal a PID whose command
line is not this launcher for this home (a stale PID file is removed instead).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError

__all__ = [
    "DEFAULT_PORT",
    "LOCAL_PASSWORD",
    "MIN_JAVA",
    "LocalDbSettings",
    "LocalDbStatus",
    "apoc_note",
    "bolt_answers",
    "find_java_home",
    "find_tools_dir",
    "jar_download_bytes",
    "java_major_version",
    "log_tail",
    "main",
    "resolve_jars",
    "start",
    "status",
    "stop",
]

#: The password the local server is given at its first start, unless NEO4J_PASSWORD is set.
LOCAL_PASSWORD = "graphrag-local"
DEFAULT_PORT = 7687
MIN_JAVA = 21
_JVM_ROOTS = ("/usr/lib/jvm", "/usr/java", "/opt/java", "/Library/Java/JavaVirtualMachines")


@dataclass(frozen=True)
class LocalDbSettings:
    """Where the runtime lives and how the server is configured.

    ``home`` holds ``conf/``, ``data/``, ``logs/``, ``plugins/`` and ``run/neo4j.pid``.
    Heap and page cache are bounded because tests and benchmarks run beside it.
    """

    tools_dir: Path
    home: Path
    port: int = DEFAULT_PORT
    password: str = LOCAL_PASSWORD
    heap: str = "1g"
    page_cache: str = "256m"
    start_timeout_seconds: float = 180.0
    stop_timeout_seconds: float = 60.0
    extra_config: tuple[tuple[str, str], ...] = field(default=())

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "neo4j.pid"

    @property
    def console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def lib_dir(self) -> Path:
        return self.tools_dir / "target" / "lib"

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @classmethod
    def from_env(cls, *, home_name: str = "home", port: int | None = None) -> LocalDbSettings:
        """Settings from the environment: GRAPHRAG_LOCALDB_DIR, GRAPHRAG_NEO4J_PORT, NEO4J_PASSWORD."""
        tools = find_tools_dir()
        chosen_port = port or int(os.environ.get("GRAPHRAG_NEO4J_PORT", DEFAULT_PORT))
        return cls(
            tools_dir=tools,
            home=tools / home_name,
            port=chosen_port,
            password=os.environ.get("NEO4J_PASSWORD", LOCAL_PASSWORD),
        )


@dataclass(frozen=True)
class LocalDbStatus:
    running: bool
    pid: int | None
    uri: str
    home: Path
    message: str


def find_tools_dir() -> Path:
    """``tools/neo4j`` of this checkout: GRAPHRAG_LOCALDB_DIR, then upwards from the CWD and the package."""
    configured = os.environ.get("GRAPHRAG_LOCALDB_DIR")
    if configured:
        path = Path(configured).resolve()
        if (path / "pom.xml").is_file():
            return path
        raise LocalDbError(ErrorCode.LOCALDB_NOT_FOUND, f"GRAPHRAG_LOCALDB_DIR={configured} holds no pom.xml")
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            candidate = folder / "tools" / "neo4j"
            if (candidate / "pom.xml").is_file() and (candidate / "Launcher.java").is_file():
                return candidate
    raise LocalDbError(
        ErrorCode.LOCALDB_NOT_FOUND,
        "the local Neo4j runtime needs this repository's tools/neo4j (pom.xml and Launcher.java); "
        "run from a checkout, set GRAPHRAG_LOCALDB_DIR, or point NEO4J_URI at your own server",
    )


def java_major_version(java_home: Path) -> int | None:
    """The major version recorded in a JDK's ``release`` file, or None when it is not a JDK."""
    release = java_home / "release"
    if not (java_home / "bin" / "java").is_file() or not release.is_file():
        return None
    match = re.search(r'JAVA_VERSION="(\d+)', release.read_text(errors="replace"))
    return int(match.group(1)) if match else None


def find_java_home() -> Path:
    """A JDK of version 21 or later: GRAPHRAG_JAVA_HOME, JAVA_HOME, then the newest under the usual roots."""
    for variable in ("GRAPHRAG_JAVA_HOME", "JAVA_HOME"):
        value = os.environ.get(variable)
        if value and (java_major_version(Path(value)) or 0) >= MIN_JAVA:
            return Path(value)
    candidates: list[tuple[int, str, Path]] = []
    for root in _JVM_ROOTS:
        base = Path(root)
        if not base.is_dir():
            continue
        for child in base.iterdir():
            for home in (child, child / "Contents" / "Home"):
                version = java_major_version(home)
                if version is not None and version >= MIN_JAVA:
                    # Prefer Temurin at equal versions: it is what the project tests on.
                    candidates.append((version, "1" if "temurin" in child.name else "0", home))
    on_path = shutil.which("java")
    if on_path:
        home = Path(on_path).resolve().parent.parent
        version = java_major_version(home)
        if version is not None and version >= MIN_JAVA:
            candidates.append((version, "0", home))
    if not candidates:
        raise LocalDbError(
            ErrorCode.JAVA_NOT_FOUND,
            f"Neo4j 2026.x needs Java {MIN_JAVA} or later and none was found "
            f"(looked at GRAPHRAG_JAVA_HOME, JAVA_HOME, {', '.join(_JVM_ROOTS)} and PATH)",
        )
    candidates.sort(reverse=True)
    return candidates[0][2]


def resolve_jars(settings: LocalDbSettings, *, java_home: Path | None = None) -> Path:
    """Resolve the server jars with Maven once; later calls reuse ``target/lib``."""
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
    result = subprocess.run(
        [mvn, "-B", "-q", "-f", str(pom), "package"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
        raise LocalDbError(ErrorCode.JARS_NOT_RESOLVED, f"Maven could not resolve Neo4j's jars:\n{tail}")
    _resolve_apoc(settings, mvn, env, pom)
    marker.write_text(pom_stamp)
    return settings.lib_dir


def _resolve_apoc(settings: LocalDbSettings, mvn: str, env: dict[str, str], pom: Path) -> None:
    """Try the optional APOC core profile; record why it is absent instead of failing the start."""
    plugins = settings.tools_dir / "target" / "plugins"
    result = subprocess.run(
        [mvn, "-B", "-q", "-Papoc", "-f", str(pom), "package"], env=env, capture_output=True, text=True, check=False
    )
    note = settings.tools_dir / "target" / "apoc.txt"
    if result.returncode == 0 and any(plugins.glob("apoc-core-*.jar")):
        note.write_text("APOC core resolved from Maven Central\n")
    else:
        reason = next((line for line in (result.stdout + result.stderr).splitlines() if "apoc-core" in line), "")
        note.write_text(f"APOC core not available from Maven Central for this Neo4j version\n{reason[:500]}\n")


def apoc_note(settings: LocalDbSettings) -> str:
    """Whether APOC core was resolved, as recorded at the last resolution."""
    note = settings.tools_dir / "target" / "apoc.txt"
    return note.read_text().splitlines()[0] if note.is_file() else "APOC core not resolved yet"


def _install_plugins(settings: LocalDbSettings) -> None:
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


def _write_config(settings: LocalDbSettings) -> Path:
    conf_dir = settings.home / "conf"
    for folder in ("conf", "data", "logs", "plugins", "run"):
        (settings.home / folder).mkdir(parents=True, exist_ok=True)
    lines = [
        f"server.bolt.listen_address=127.0.0.1:{settings.port}",
        f"server.bolt.advertised_address=127.0.0.1:{settings.port}",
        "server.bolt.enabled=true",
        "server.http.enabled=false",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        # New databases (and the default one created at first start) speak Cypher 25.
        "db.query.default_language=CYPHER_25",
        f"server.memory.pagecache.size={settings.page_cache}",
        "dbms.usage_report.enabled=false",
        f"server.directories.data={settings.home / 'data'}",
        f"server.directories.logs={settings.home / 'logs'}",
        f"server.directories.plugins={settings.home / 'plugins'}",
        f"server.directories.run={settings.home / 'run'}",
        "dbms.security.procedures.unrestricted=apoc.*",
        "db.transaction.timeout=0",
        *(f"{key}={value}" for key, value in settings.extra_config),
    ]
    (conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")
    return conf_dir


def _classpath(settings: LocalDbSettings) -> str:
    return str(settings.lib_dir / "*")


def _set_initial_password(settings: LocalDbSettings, java: Path, conf_dir: Path) -> None:
    marker = settings.home / "data" / ".initial-password-set"
    if marker.is_file():
        return
    env = dict(os.environ, NEO4J_HOME=str(settings.home), NEO4J_CONF=str(conf_dir))
    result = subprocess.run(
        [
            str(java),
            "-cp",
            _classpath(settings),
            "org.neo4j.server.startup.Neo4jAdminCommand",
            "dbms",
            "set-initial-password",
            settings.password,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise LocalDbError(ErrorCode.PASSWORD_NOT_SET, f"could not set the initial password: {result.stderr[-2000:]}")
    marker.write_text("set by graphrag-orm at first start\n")


def _read_pid(settings: LocalDbSettings) -> int | None:
    try:
        return int(settings.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def _is_our_process(pid: int, settings: LocalDbSettings) -> bool:
    """True only when ``pid`` is alive and its command line is this launcher for this home."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.is_file():
        args = cmdline.read_bytes().split(b"\0")
        text = b" ".join(args).decode(errors="replace")
        return "Launcher.java" in text and f"--home-dir={settings.home}" in text
    # Without /proc (macOS), ask ps for this one PID's command line.
    result = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, check=False)
    return "Launcher.java" in result.stdout and f"--home-dir={settings.home}" in result.stdout


def bolt_answers(settings: LocalDbSettings, *, timeout: float = 5.0) -> bool:
    """True when the server answers ``RETURN 1`` with the local credentials."""
    from graphrag_orm.store.connection import answers_return_one

    return answers_return_one(settings.uri, "neo4j", settings.password, timeout=timeout)


def log_tail(settings: LocalDbSettings, lines: int = 40) -> str:
    """The last lines of the console log and neo4j.log, for error messages and ``logs``."""
    parts: list[str] = []
    for path in (settings.console_log, settings.home / "logs" / "neo4j.log"):
        if path.is_file():
            content = path.read_text(errors="replace").splitlines()
            parts.append(f"--- {path.name} ---")
            parts.extend(line for line in content[-lines:] if "sun.misc.Unsafe" not in line)
    return "\n".join(parts) if parts else "(no log yet)"


def status(settings: LocalDbSettings) -> LocalDbStatus:
    pid = _read_pid(settings)
    if pid is not None and _is_our_process(pid, settings):
        answering = bolt_answers(settings)
        message = f"running (pid {pid}) on {settings.uri}" + ("" if answering else ", not answering yet")
        return LocalDbStatus(True, pid, settings.uri, settings.home, message)
    return LocalDbStatus(False, None, settings.uri, settings.home, "not running")


def start(settings: LocalDbSettings, *, progress: Iterator[None] | None = None) -> LocalDbStatus:
    """Start the server in the background and wait until Bolt answers ``RETURN 1``.

    A second start while it runs says so and reuses it. A stale PID file (the process
    is gone, or the PID now belongs to another program) is removed, never signalled.
    Raises ``LocalDbError("start-timeout")`` with the log tail when the server does not
    answer within ``settings.start_timeout_seconds``, after stopping what it started.
    """
    current = status(settings)
    if current.running:
        return LocalDbStatus(True, current.pid, settings.uri, settings.home, f"already {current.message}")
    settings.pid_file.unlink(missing_ok=True)
    java_home = find_java_home()
    java = java_home / "bin" / "java"
    resolve_jars(settings, java_home=java_home)
    conf_dir = _write_config(settings)
    _install_plugins(settings)
    _set_initial_password(settings, java, conf_dir)
    settings.console_log.parent.mkdir(parents=True, exist_ok=True)
    with settings.console_log.open("ab") as console:
        process = subprocess.Popen(
            [
                str(java),
                f"-Xms{settings.heap}",
                f"-Xmx{settings.heap}",
                "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseG1GC",
                "-cp",
                _classpath(settings),
                str(settings.tools_dir / "Launcher.java"),
                f"--home-dir={settings.home}",
                f"--config-dir={conf_dir}",
            ],
            cwd=settings.tools_dir,
            stdout=console,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    settings.pid_file.write_text(f"{process.pid}\n")
    deadline = time.monotonic() + settings.start_timeout_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            settings.pid_file.unlink(missing_ok=True)
            raise LocalDbError(
                ErrorCode.START_FAILED,
                f"Neo4j exited with code {process.returncode} while starting:\n{log_tail(settings)}",
            )
        if bolt_answers(settings, timeout=2.0):
            return LocalDbStatus(True, process.pid, settings.uri, settings.home, f"started (pid {process.pid})")
        time.sleep(0.5)
    stop(settings)
    raise LocalDbError(
        ErrorCode.START_TIMEOUT,
        f"Neo4j did not answer on {settings.uri} within {settings.start_timeout_seconds:.0f} s:\n{log_tail(settings)}",
    )


def stop(settings: LocalDbSettings) -> LocalDbStatus:
    """Stop the server by its PID with SIGTERM and wait for it to exit (bounded)."""
    pid = _read_pid(settings)
    if pid is None:
        return LocalDbStatus(False, None, settings.uri, settings.home, "not running (no PID file)")
    if not _is_our_process(pid, settings):
        settings.pid_file.unlink(missing_ok=True)
        return LocalDbStatus(False, None, settings.uri, settings.home, f"not running (stale PID file {pid} removed)")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + settings.stop_timeout_seconds
    while time.monotonic() < deadline:
        if not _is_our_process(pid, settings):
            settings.pid_file.unlink(missing_ok=True)
            return LocalDbStatus(False, None, settings.uri, settings.home, f"stopped (pid {pid})")
        time.sleep(0.25)
    raise LocalDbError(
        ErrorCode.STOP_TIMEOUT,
        f"Neo4j (pid {pid}) did not stop within {settings.stop_timeout_seconds:.0f} s of SIGTERM; it is still running",
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m graphrag_orm.localdb start|stop|status|logs [--home NAME] [--port N]`` (used by make)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m graphrag_orm.localdb")
    parser.add_argument("command", choices=("start", "stop", "status", "logs"))
    parser.add_argument("--home", default="home", help="home folder name under tools/neo4j")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        settings = LocalDbSettings.from_env(home_name=args.home, port=args.port)
        if args.command == "logs":
            print(log_tail(settings, 80))
            return 0
        began = time.monotonic()
        result = {"start": start, "stop": stop, "status": status}[args.command](settings)
        took = f" in {time.monotonic() - began:.1f} s" if args.command == "start" else ""
        print(f"neo4j: {result.message}{took}")
        return 0 if (result.running or args.command != "status") else 3
    except LocalDbError as error:
        print(f"neo4j: {error.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
