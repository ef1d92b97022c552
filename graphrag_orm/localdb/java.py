"""Finding a JDK to run the server on (Neo4j 2026.x needs Java 21 or later)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError

__all__ = ["MIN_JAVA", "find_java_home", "java_major_version"]

MIN_JAVA = 21
_JVM_ROOTS = ("/usr/lib/jvm", "/usr/java", "/opt/java", "/Library/Java/JavaVirtualMachines")


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
