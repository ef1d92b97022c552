"""The runtime folder: where the launcher, the pom, the resolved jars and the named homes live.

It is ``GRAPHRAG_LOCALDB_DIR`` when set, else a checkout's ``tools/neo4j``, else the
user's data directory (``platformdirs.user_data_dir("graphrag-orm")/neo4j``), filled
from what the package ships (``graphrag_orm/_neo4j``).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError

__all__ = ["RUNTIME_FILES", "find_tools_dir", "packaged_runtime", "prepare_runtime", "user_runtime_dir"]

#: What the package ships of the runtime (graphrag_orm/_neo4j, from the repository's tools/neo4j).
RUNTIME_FILES = ("pom.xml", "Launcher.java")
_PACKAGE = Path(__file__).resolve().parent.parent


def _is_runtime(folder: Path) -> bool:
    return all((folder / name).is_file() for name in RUNTIME_FILES)


def packaged_runtime() -> Path | None:
    """The launcher and pom this package ships: ``graphrag_orm/_neo4j`` when installed, else the checkout's."""
    here = _PACKAGE
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
    for start in (Path.cwd(), _PACKAGE):
        for folder in (start, *start.parents):
            candidate = folder / "tools" / "neo4j"
            if _is_runtime(candidate):
                return candidate
    return prepare_runtime(user_runtime_dir())
