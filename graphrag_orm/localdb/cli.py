"""``python -m graphrag_orm.localdb start|stop|status|logs``: the launcher without the toolkit's CLI."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from graphrag_orm.errors import LocalDbError
from graphrag_orm.localdb.process import log_tail, start, status, stop
from graphrag_orm.localdb.settings import LocalDbSettings

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``python -m graphrag_orm.localdb start|stop|status|logs [--home NAME | --home-dir PATH] [--port N]``."""

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
