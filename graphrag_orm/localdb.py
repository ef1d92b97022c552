"""A local Neo4j Community server for development and tests, started by the project itself.

The jars come from Maven Central through ``pom.xml`` (resolved once, then cached in
the runtime folder's ``target/``); ``Launcher.java`` is the entry point, run in Java's
source-file mode on a JDK 21 or later. Both ship in the package (``graphrag_orm/_neo4j``,
built from the repository's ``tools/neo4j``). The runtime folder (:func:`find_tools_dir`)
is ``GRAPHRAG_LOCALDB_DIR`` when set, else a checkout's ``tools/neo4j``, else the user's
data directory (``platformdirs.user_data_dir("graphrag-orm")/neo4j``), filled from the
package. A home named ``NAME`` is the runtime folder's ``NAME/``; a home given as a
path (``home_dir``) is that folder. The home (configuration, data, logs, PID file)
persists between starts.

What this module never does: kill a process by name, or signal a PID whose command
line is not this launcher for this home (a stale PID file is removed instead); or
report "started" for a server it did not start. ``start`` refuses a port that anything
already holds (``port-in-use``, naming the holder when the system can tell), records
the port in the home (``run/port``, which ``status`` reads), and before it reports
success checks that what answers on the port is its own process for this home.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

import platformdirs

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError
from graphrag_orm.store.connection import LOCAL_PASSWORD, answers_return_one

__all__ = [
    "DEFAULT_PORT",
    "LOCAL_PASSWORD",
    "MIN_JAVA",
    "RUNTIME_FILES",
    "LocalDbSettings",
    "LocalDbStatus",
    "MavenProgress",
    "Progress",
    "apoc_note",
    "bolt_answers",
    "find_java_home",
    "find_tools_dir",
    "jar_download_bytes",
    "java_major_version",
    "listener_pids",
    "log_tail",
    "main",
    "packaged_runtime",
    "port_holder",
    "prepare_runtime",
    "recorded_port",
    "resolve_jars",
    "start",
    "status",
    "stop",
    "user_runtime_dir",
]

DEFAULT_PORT = 7687
MIN_JAVA = 21
_JVM_ROOTS = ("/usr/lib/jvm", "/usr/java", "/opt/java", "/Library/Java/JavaVirtualMachines")
#: What the package ships of the runtime (graphrag_orm/_neo4j, from the repository's tools/neo4j).
RUNTIME_FILES = ("pom.xml", "Launcher.java")
#: Names a home may not take: the runtime's own entries.
_RESERVED_HOMES = frozenset({"target", *RUNTIME_FILES})

Progress = Callable[[str], None]
"""Receives one line saying what a start is doing (resolving jars, waiting for Bolt)."""


@dataclass(frozen=True)
class LocalDbSettings:
    """Where the runtime lives and how the server is configured.

    ``home`` holds ``conf/``, ``data/``, ``logs/``, ``plugins/`` and ``run/neo4j.pid``.
    Heap and page cache are bounded because tests and benchmarks run beside it.
    """

    tools_dir: Path
    home: Path
    port: int = DEFAULT_PORT
    # Never in repr: settings end up in logs, tracebacks and test reports.
    password: str = field(default=LOCAL_PASSWORD, repr=False)
    heap: str = "1g"
    page_cache: str = "256m"
    start_timeout_seconds: float = 180.0
    stop_timeout_seconds: float = 60.0
    extra_config: tuple[tuple[str, str], ...] = field(default=())

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "neo4j.pid"

    @property
    def port_file(self) -> Path:
        """The Bolt port the running server was started with (``status`` reads it)."""
        return self.home / "run" / "port"

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
    def from_env(
        cls, *, home_name: str = "home", port: int | None = None, home_dir: Path | None = None
    ) -> LocalDbSettings:
        """Settings from the environment: GRAPHRAG_LOCALDB_DIR, GRAPHRAG_NEO4J_PORT, NEO4J_PASSWORD.

        The home is ``home_dir`` when given (made absolute), else the runtime folder's
        ``home_name`` (a plain folder name: ``tools/neo4j/NAME`` in a checkout). A name
        that is a path, or a port that is not a number, is ``invalid-option``.
        """
        tools = find_tools_dir()
        if home_dir is not None:
            home = Path(home_dir).expanduser().resolve()
        else:
            if Path(home_name).name != home_name or home_name in ("", ".", "..") or home_name in _RESERVED_HOMES:
                raise LocalDbError(
                    ErrorCode.INVALID_OPTION,
                    f"home {home_name!r} is not a plain folder name; give a folder with --home-dir instead",
                )
            home = tools / home_name
        configured = os.environ.get("GRAPHRAG_NEO4J_PORT", str(DEFAULT_PORT))
        if port is None and not configured.strip().isdigit():
            raise LocalDbError(ErrorCode.INVALID_OPTION, f"GRAPHRAG_NEO4J_PORT={configured!r} is not a port number")
        return cls(
            tools_dir=tools,
            home=home,
            port=port or int(configured),
            password=os.environ.get("NEO4J_PASSWORD", LOCAL_PASSWORD),
        )


@dataclass(frozen=True)
class LocalDbStatus:
    running: bool
    pid: int | None
    uri: str
    home: Path
    message: str


def _is_runtime(folder: Path) -> bool:
    return all((folder / name).is_file() for name in RUNTIME_FILES)


def packaged_runtime() -> Path | None:
    """The launcher and pom this package ships: ``graphrag_orm/_neo4j`` when installed, else the checkout's."""
    here = Path(__file__).resolve().parent
    return next((folder for folder in (here / "_neo4j", here.parent / "tools" / "neo4j") if _is_runtime(folder)), None)


def user_runtime_dir() -> Path:
    """``platformdirs.user_data_dir("graphrag-orm")/neo4j``: the runtime folder outside a checkout."""
    return Path(platformdirs.user_data_dir("graphrag-orm", appauthor=False)) / "neo4j"


def prepare_runtime(folder: Path, source: Path | None = None) -> Path:
    """``folder`` holding the packaged ``pom.xml`` and ``Launcher.java`` (copied when absent or different).

    An unchanged file is left alone, so the jars resolved for its pom stay valid; a
    changed one (a new package version) is replaced and its jars resolved again.
    Raises ``localdb-not-found`` when the package ships no launcher or the folder
    cannot be written.
    """
    origin = source if source is not None else packaged_runtime()
    if origin is None:
        raise LocalDbError(
            ErrorCode.LOCALDB_NOT_FOUND,
            "this installation of graphrag-orm ships no Neo4j launcher (graphrag_orm/_neo4j); "
            "reinstall the package, or point NEO4J_URI at your own server",
        )
    if origin.resolve() == folder.resolve():
        return folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name in RUNTIME_FILES:
            wanted = (origin / name).read_bytes()
            target = folder / name
            if not target.is_file() or target.read_bytes() != wanted:
                partial = target.with_name(f".{name}.partial")
                partial.write_bytes(wanted)
                partial.replace(target)
    except OSError as error:
        raise LocalDbError(
            ErrorCode.LOCALDB_NOT_FOUND,
            f"cannot prepare the local Neo4j folder {folder} ({type(error).__name__}); "
            "set GRAPHRAG_LOCALDB_DIR to a folder you can write",
        ) from None
    return folder


def find_tools_dir() -> Path:
    """The runtime folder (``pom.xml``, ``Launcher.java``, ``target/`` and the named homes).

    In this order: ``GRAPHRAG_LOCALDB_DIR`` (used as it is when it holds a ``pom.xml``,
    else filled from the package); a checkout's ``tools/neo4j``, upwards from the CWD
    and from the package; else :func:`user_runtime_dir`, filled from the package.
    """
    configured = os.environ.get("GRAPHRAG_LOCALDB_DIR")
    if configured:
        path = Path(configured).expanduser().resolve()
        return path if (path / "pom.xml").is_file() else prepare_runtime(path)
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            candidate = folder / "tools" / "neo4j"
            if _is_runtime(candidate):
                return candidate
    return prepare_runtime(user_runtime_dir())


def _home_name(home: Path, tools_dir: Path) -> str:
    """A home as the user named it: its folder name inside the runtime folder, else its path."""
    return home.name if home.parent == tools_dir else str(home)


def _home_option(home: Path, tools_dir: Path) -> str:
    """The command-line option that names ``home``: ``--home NAME`` or ``--home-dir PATH``."""
    return f"--home {home.name}" if home.parent == tools_dir else f"--home-dir {home}"


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
    for folder in ("conf", "data", "logs", "plugins", "run", "import"):
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
        # One document's write transaction is bounded (max_chunks_per_document), and so is
        # its memory: a transaction over it fails with a transient MemoryPoolOutOfMemoryError
        # instead of taking the 1 GiB heap down (docs/ingest.md, "How large a document can be").
        "db.memory.transaction.max=450m",
        "dbms.memory.transaction.total.max=640m",
        "dbms.usage_report.enabled=false",
        f"server.directories.data={settings.home / 'data'}",
        f"server.directories.logs={settings.home / 'logs'}",
        f"server.directories.plugins={settings.home / 'plugins'}",
        f"server.directories.run={settings.home / 'run'}",
        # Defence in depth behind the sandbox: LOAD CSV never reads the server's files,
        # and file URLs resolve inside an empty folder of the home (docs/security.md).
        "dbms.security.allow_csv_import_from_file_urls=false",
        f"server.directories.import={settings.home / 'import'}",
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
        try:
            args = [arg.decode(errors="replace") for arg in cmdline.read_bytes().split(b"\0")]
        except OSError:  # it exited between the signal check and the read
            return False
    else:
        # Without /proc (macOS), ask ps for this one PID's command line.
        result = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, check=False)
        args = result.stdout.split()
    # The whole argument, so home "home-test" is not taken for "home-test-7704".
    return any(arg.endswith("Launcher.java") for arg in args) and f"--home-dir={settings.home}" in args


def recorded_port(settings: LocalDbSettings) -> int | None:
    """The port this home's server was started with (``run/port``), or None when none is recorded."""
    try:
        port = int(settings.port_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return port if 0 < port < 65536 else None


def _forget(settings: LocalDbSettings) -> None:
    settings.pid_file.unlink(missing_ok=True)
    settings.port_file.unlink(missing_ok=True)


def _port_busy(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:``port`` or holds its address."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as candidate:
        # As the server binds (SO_REUSEADDR), so a port in TIME_WAIT after a stop is free.
        candidate.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            candidate.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _listening_inodes(port: int) -> set[str] | None:
    """Socket inodes listening on TCP ``port`` (from /proc/net), or None without /proc."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].is_file():
        return None
    inodes: set[str] = set()
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # local_address is HEXIP:HEXPORT; state 0A is LISTEN; field 9 is the inode.
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _holds_socket(pid: int, sockets: set[str]) -> bool:
    try:
        return any(os.readlink(fd) in sockets for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def listener_pids(port: int, *, among: Collection[int] | None = None) -> set[int] | None:
    """The PIDs listening on TCP ``port`` (only those in ``among`` when given); None when this system cannot tell.

    Linux: the LISTEN sockets of /proc/net/tcp{,6} matched to each process's open files.
    Elsewhere: ``lsof``. A socket whose owner this user may not inspect leaves the answer
    None, never a guess.
    """
    inodes = _listening_inodes(port)
    if inodes is None:
        lsof = shutil.which("lsof")
        if lsof is None:
            return None
        result = subprocess.run(
            [lsof, "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-t"], capture_output=True, text=True, check=False
        )
        found = {int(line) for line in result.stdout.split() if line.isdigit()}
        return found & set(among) if among is not None else found
    if not inodes:
        return set()
    sockets = {f"socket:[{inode}]" for inode in inodes}
    candidates = (
        list(among) if among is not None else [int(d.name) for d in Path("/proc").iterdir() if d.name.isdigit()]
    )
    found = {pid for pid in candidates if _holds_socket(pid, sockets)}
    return found if found or among is not None else None


def _describe_process(pid: int, settings: LocalDbSettings) -> str:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        command = [arg.decode(errors="replace") for arg in args if arg]
    except OSError:
        result = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True, check=False)
        command = result.stdout.split()
    homes = [arg.removeprefix("--home-dir=") for arg in command if arg.startswith("--home-dir=")]
    if homes and any(arg.endswith("Launcher.java") for arg in command):
        home = Path(homes[0])
        name, option = _home_name(home, settings.tools_dir), _home_option(home, settings.tools_dir)
        return f"the local Neo4j of home {name} (pid {pid}; stop it with `graphrag-orm neo4j stop {option}`)"
    program = Path(command[0]).name if command else "unknown"
    return f"another program (pid {pid}, {program})"


def port_holder(settings: LocalDbSettings, port: int | None = None) -> str | None:
    """What holds ``port`` (default: the settings' port) in words, or None when it is free."""
    chosen = settings.port if port is None else port
    if not _port_busy(chosen):
        return None
    pids = listener_pids(chosen)
    if not pids:
        return "another program"
    return ", ".join(_describe_process(pid, settings) for pid in sorted(pids))


def _answered_by_own(pid: int, port: int) -> bool | None:
    """Whether ``pid`` is what listens on ``port``; None when this system cannot tell."""
    found = listener_pids(port, among=(pid,))
    return None if found is None else pid in found


def bolt_answers(settings: LocalDbSettings, *, timeout: float = 5.0) -> bool:
    """True when the server answers ``RETURN 1`` with the local credentials."""
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
    """Whether this home's server runs, on the port it was started with (``run/port``), not ``settings.port``."""
    pid = _read_pid(settings)
    if pid is not None and _is_our_process(pid, settings):
        actual = replace(settings, port=recorded_port(settings) or settings.port)
        answering = bolt_answers(actual)
        message = f"running (pid {pid}) on {actual.uri}" + ("" if answering else ", not answering yet")
        return LocalDbStatus(True, pid, actual.uri, settings.home, message)
    return LocalDbStatus(False, None, settings.uri, settings.home, "not running")


def _reuse(settings: LocalDbSettings, pid: int) -> LocalDbStatus:
    """A start of a home that already runs: only on the port it runs on, once that answers as its own."""
    running_port = recorded_port(settings) or settings.port
    name = _home_name(settings.home, settings.tools_dir)
    if running_port != settings.port:
        raise LocalDbError(
            ErrorCode.RUNNING_ON_ANOTHER_PORT,
            f"the local Neo4j of home {name} already runs (pid {pid}) on port {running_port}, "
            f"not {settings.port}: use NEO4J_URI=bolt://127.0.0.1:{running_port}, or stop it first",
        )
    deadline = time.monotonic() + settings.start_timeout_seconds
    while time.monotonic() < deadline and _is_our_process(pid, settings):
        if _answered_by_own(pid, settings.port) is not False and bolt_answers(settings, timeout=2.0):
            return LocalDbStatus(True, pid, settings.uri, settings.home, f"already running (pid {pid})")
        time.sleep(0.5)
    if not _is_our_process(pid, settings):
        _forget(settings)
        raise LocalDbError(
            ErrorCode.START_FAILED,
            f"the local Neo4j of home {name} (pid {pid}) exited while starting",
        )
    raise LocalDbError(
        ErrorCode.START_TIMEOUT,
        f"the local Neo4j of home {name} runs (pid {pid}) but does not answer on {settings.uri} "
        f"as its own process:\n{log_tail(settings)}",
    )


def start(settings: LocalDbSettings, *, progress: Progress | None = None) -> LocalDbStatus:
    """Start the server in the background and wait until Bolt answers ``RETURN 1`` from it.

    A second start while it runs says so and reuses it (``running-on-another-port`` when
    it runs on another port than ``settings.port``). A stale PID file (the process is
    gone, or the PID now belongs to another program) is removed, never signalled. A
    port that anything else holds is refused with ``port-in-use`` before anything is
    launched, and again if another process answers on it while this one starts (the
    one started is then stopped): "started" is reported only when the process answering
    on the port is the one this call started for this home. Raises
    ``LocalDbError("start-timeout")`` with the log tail when the server does not answer
    within ``settings.start_timeout_seconds``, after stopping what it started.
    ``progress`` receives a line per step (Maven's downloads on the first start, the
    initial password, the wait for Bolt).
    """
    if not 0 < settings.port < 65536:
        raise LocalDbError(ErrorCode.INVALID_OPTION, f"port {settings.port} is not a TCP port (1..65535)")
    current = status(settings)
    if current.running and current.pid is not None:
        return _reuse(settings, current.pid)
    _forget(settings)
    holder = port_holder(settings)
    if holder is not None:
        raise LocalDbError(
            ErrorCode.PORT_IN_USE,
            f"port {settings.port} is already in use by {holder}; nothing was started: choose another --port",
        )
    java_home = find_java_home()
    java = java_home / "bin" / "java"
    resolve_jars(settings, java_home=java_home, progress=progress)
    conf_dir = _write_config(settings)
    _install_plugins(settings)
    if progress is not None and not (settings.home / "data" / ".initial-password-set").is_file():
        progress("setting the initial password (first start of this home)")
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
    settings.port_file.write_text(f"{settings.port}\n")
    if progress is not None:
        progress(f"waiting for Bolt on {settings.uri} (pid {process.pid})")
    deadline = time.monotonic() + settings.start_timeout_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _forget(settings)
            tail = log_tail(settings)
            code = ErrorCode.PORT_IN_USE if "Address already in use" in tail else ErrorCode.START_FAILED
            raise LocalDbError(code, f"Neo4j exited with code {process.returncode} while starting:\n{tail}")
        if bolt_answers(settings, timeout=2.0):
            if _answered_by_own(process.pid, settings.port) is False:
                holder = port_holder(settings) or "another process"
                stop(settings)
                raise LocalDbError(
                    ErrorCode.PORT_IN_USE,
                    f"{holder} answered on {settings.uri} while this server was starting; the one started "
                    f"(pid {process.pid}) was stopped: choose another --port",
                )
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
        _forget(settings)
        return LocalDbStatus(False, None, settings.uri, settings.home, f"not running (stale PID file {pid} removed)")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + settings.stop_timeout_seconds
    while time.monotonic() < deadline:
        if not _is_our_process(pid, settings):
            _forget(settings)
            return LocalDbStatus(False, None, settings.uri, settings.home, f"stopped (pid {pid})")
        time.sleep(0.25)
    raise LocalDbError(
        ErrorCode.STOP_TIMEOUT,
        f"Neo4j (pid {pid}) did not stop within {settings.stop_timeout_seconds:.0f} s of SIGTERM; it is still running",
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m graphrag_orm.localdb start|stop|status|logs [--home NAME | --home-dir PATH] [--port N]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m graphrag_orm.localdb")
    parser.add_argument("command", choices=("start", "stop", "status", "logs"))
    parser.add_argument("--home", default="home", help="home folder name in the runtime folder (tools/neo4j)")
    parser.add_argument("--home-dir", type=Path, default=None, help="home folder path (instead of --home)")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        settings = LocalDbSettings.from_env(home_name=args.home, port=args.port, home_dir=args.home_dir)
        if args.command == "logs":
            print(log_tail(settings, 80))
            return 0
        began = time.monotonic()
        if args.command == "start":
            result = start(settings, progress=lambda line: print(f"neo4j: {line}", flush=True))
        else:
            result = {"stop": stop, "status": status}[args.command](settings)
        took = f" in {time.monotonic() - began:.1f} s" if args.command == "start" else ""
        print(f"neo4j: {result.message}{took}")
        if result.running:
            print(f"NEO4J_URI={result.uri}")
        return 0 if (result.running or args.command != "status") else 3
    except LocalDbError as error:
        print(f"neo4j: {error.message} ({error.code})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
