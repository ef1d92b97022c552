"""Starting, stopping and inspecting a home's server process, never signalling what is not ours.

What this module never does: kill a process by name, or signal a PID whose command
line is not this launcher for this home (a stale PID file is removed instead); or
report "started" for a server it did not start. ``start`` refuses a port that anything
already holds (``port-in-use``, naming the holder when the system can tell), records
the port in the home (``run/port``, which ``status`` reads), and before it reports
success checks that what answers on the port is its own process for this home.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb import ports
from graphrag_orm.localdb.config import classpath, set_initial_password, write_config
from graphrag_orm.localdb.java import find_java_home
from graphrag_orm.localdb.maven import install_plugins, resolve_jars
from graphrag_orm.localdb.settings import LocalDbSettings, LocalDbStatus, Progress, home_name
from graphrag_orm.store.connection import answers_return_one

__all__ = ["bolt_answers", "log_tail", "recorded_port", "running_servers", "start", "status", "stop"]

#: The homes outside the runtime folder that a start used (``--home-dir``), one path a line.
_STARTED_HOMES = Path("target") / "started-homes"


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
    name = home_name(settings.home, settings.tools_dir)
    if running_port != settings.port:
        raise LocalDbError(
            ErrorCode.RUNNING_ON_ANOTHER_PORT,
            f"the local Neo4j of home {name} already runs (pid {pid}) on port {running_port}, "
            f"not {settings.port}: use NEO4J_URI=bolt://127.0.0.1:{running_port}, or stop it first",
        )
    deadline = time.monotonic() + settings.start_timeout_seconds
    while time.monotonic() < deadline and _is_our_process(pid, settings):
        if ports.answered_by_own(pid, settings.port) is not False and bolt_answers(settings, timeout=2.0):
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
    holder = ports.port_holder(settings)
    if holder is not None:
        raise LocalDbError(
            ErrorCode.PORT_IN_USE,
            f"port {settings.port} is already in use by {holder}; nothing was started: choose another --port",
        )
    java_home = find_java_home()
    java = java_home / "bin" / "java"
    resolve_jars(settings, java_home=java_home, progress=progress)
    conf_dir = write_config(settings)
    install_plugins(settings)
    if progress is not None and not (settings.home / "data" / ".initial-password-set").is_file():
        progress("setting the initial password (first start of this home)")
    set_initial_password(settings, java, conf_dir)
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
                classpath(settings),
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
    _remember(settings)
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
            if ports.answered_by_own(process.pid, settings.port) is False:
                holder = ports.port_holder(settings) or "another process"
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


def _remember(settings: LocalDbSettings) -> None:
    """Record a home outside the runtime folder, so :func:`running_servers` finds it later."""
    if settings.home.parent == settings.tools_dir:
        return
    registry = settings.tools_dir / _STARTED_HOMES
    known = set(registry.read_text().splitlines()) if registry.is_file() else set()
    if str(settings.home) not in known:
        registry.parent.mkdir(parents=True, exist_ok=True)
        with registry.open("a") as lines:
            lines.write(f"{settings.home}\n")


def running_servers(tools_dir: Path) -> list[LocalDbStatus]:
    """Every server started from this runtime folder that still runs, on the port each recorded.

    The homes looked at: each folder of the runtime folder with a PID file, and each
    ``--home-dir`` home a start recorded (``target/started-homes``). Only processes that
    are this launcher for that home count (never a PID that now names another program).
    """
    homes = {child for child in tools_dir.iterdir() if (child / "run" / "neo4j.pid").is_file()}
    registry = tools_dir / _STARTED_HOMES
    if registry.is_file():
        homes |= {Path(line) for line in registry.read_text().splitlines() if line.strip()}
    found: list[LocalDbStatus] = []
    for home in sorted(homes):
        settings = LocalDbSettings(tools_dir=tools_dir, home=home)
        pid = _read_pid(settings)
        if pid is not None and _is_our_process(pid, settings):
            port = recorded_port(settings) or settings.port
            uri = replace(settings, port=port).uri
            found.append(LocalDbStatus(True, pid, uri, home, f"running (pid {pid}) on {uri}"))
    return found
