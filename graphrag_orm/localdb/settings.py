"""How a local server is configured (its home, port, memory, password) and what a status says."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb.runtime import RUNTIME_FILES, find_tools_dir
from graphrag_orm.store.connection import LOCAL_PASSWORD

__all__ = ["DEFAULT_PORT", "LocalDbSettings", "LocalDbStatus", "Progress", "home_name", "home_option"]

DEFAULT_PORT = 7687
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


def home_name(home: Path, tools_dir: Path) -> str:
    """A home as the user named it: its folder name inside the runtime folder, else its path."""
    return home.name if home.parent == tools_dir else str(home)


def home_option(home: Path, tools_dir: Path) -> str:
    """The command-line option that names ``home``: ``--home NAME`` or ``--home-dir PATH``."""
    return f"--home {home.name}" if home.parent == tools_dir else f"--home-dir {home}"
