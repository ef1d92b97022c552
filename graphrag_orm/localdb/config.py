"""A home's configuration file and its initial password, written before each start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb.settings import LocalDbSettings

__all__ = ["classpath", "set_initial_password", "write_config"]


def write_config(settings: LocalDbSettings) -> Path:
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
        # A transaction's timeout is enforced by a monitor that looks every 2 s by default,
        # so a 0.5 s timeout could stop a query only after 2.5 s: look every 100 ms, so the
        # server's timeout, not only the sandbox's deadline a second after it, stops a read.
        "db.transaction.monitor.check.interval=100ms",
    ]
    # An extra setting replaces the base line of the same key (a benchmark's larger
    # transaction bound), rather than repeating the key.
    replaced = {key for key, _ in settings.extra_config}
    lines = [line for line in lines if line.split("=", 1)[0] not in replaced]
    lines += [f"{key}={value}" for key, value in settings.extra_config]
    (conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")
    return conf_dir


def classpath(settings: LocalDbSettings) -> str:
    return str(settings.lib_dir / "*")


def set_initial_password(settings: LocalDbSettings, java: Path, conf_dir: Path) -> None:
    marker = settings.home / "data" / ".initial-password-set"
    if marker.is_file():
        return
    env = dict(os.environ, NEO4J_HOME=str(settings.home), NEO4J_CONF=str(conf_dir))
    result = subprocess.run(
        [
            str(java),
            "-cp",
            classpath(settings),
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
