"""Who holds a TCP port: free, this home's server, another home's, or another program."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Collection
from pathlib import Path

from graphrag_orm.localdb.settings import LocalDbSettings, home_name, home_option

__all__ = ["answered_by_own", "listener_pids", "port_busy", "port_holder"]


def port_busy(port: int) -> bool:
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
        name, option = home_name(home, settings.tools_dir), home_option(home, settings.tools_dir)
        return f"the local Neo4j of home {name} (pid {pid}; stop it with `graphrag-orm neo4j stop {option}`)"
    program = Path(command[0]).name if command else "unknown"
    return f"another program (pid {pid}, {program})"


def port_holder(settings: LocalDbSettings, port: int | None = None) -> str | None:
    """What holds ``port`` (default: the settings' port) in words, or None when it is free."""
    chosen = settings.port if port is None else port
    if not port_busy(chosen):
        return None
    pids = listener_pids(chosen)
    if not pids:
        return "another program"
    return ", ".join(_describe_process(pid, settings) for pid in sorted(pids))


def answered_by_own(pid: int, port: int) -> bool | None:
    """Whether ``pid`` is what listens on ``port``; None when this system cannot tell."""
    found = listener_pids(port, among=(pid,))
    return None if found is None else pid in found
