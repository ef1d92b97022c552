"""A local Neo4j Community server for development and tests, started by the project itself.

The jars come from Maven Central through ``pom.xml`` (resolved once, then cached in
the runtime folder's ``target/``, :mod:`.maven`); ``Launcher.java`` is the entry point,
run in Java's source-file mode on a JDK 21 or later (:mod:`.java`). Both ship in the
package (``graphrag_orm/_neo4j``, built from the repository's ``tools/neo4j``). The
runtime folder (:func:`find_tools_dir`, :mod:`.runtime`) is ``GRAPHRAG_LOCALDB_DIR`` when
set, else a checkout's ``tools/neo4j``, else the user's data directory, filled from the
package. A home named ``NAME`` is the runtime folder's ``NAME/``; a home given as a path
(``home_dir``) is that folder (:mod:`.settings`). The home (configuration, data, logs,
PID file, :mod:`.config`) persists between starts. Starting and stopping never signal a
process that is not this launcher for this home (:mod:`.process`); who holds a port is
told by :mod:`.ports`.
"""

from graphrag_orm.localdb.cli import main
from graphrag_orm.localdb.java import MIN_JAVA, find_java_home, java_major_version
from graphrag_orm.localdb.maven import MavenProgress, apoc_note, jar_download_bytes, resolve_jars
from graphrag_orm.localdb.ports import listener_pids, port_holder
from graphrag_orm.localdb.process import bolt_answers, log_tail, recorded_port, running_servers, start, status, stop
from graphrag_orm.localdb.runtime import (
    RUNTIME_FILES,
    find_tools_dir,
    packaged_runtime,
    prepare_runtime,
    user_runtime_dir,
)
from graphrag_orm.localdb.settings import DEFAULT_PORT, LocalDbSettings, LocalDbStatus, Progress
from graphrag_orm.store.connection import LOCAL_PASSWORD

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
    "running_servers",
    "start",
    "status",
    "stop",
    "user_runtime_dir",
]
