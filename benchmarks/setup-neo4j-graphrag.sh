#!/usr/bin/env bash
# Creates benchmarks/.venv-neo4j-graphrag: neo4j-graphrag 1.22.0 in a venv of its own.
#
# The ingestion and retrieval benchmarks run neo4j-graphrag as a subprocess in this
# venv, because it wants a newer neo4j driver (>= 6.3) than graphrag-orm pins (6.1).
# The venv is git-ignored (benchmarks/.venv-*/). Run it once; running it again is cheap.
#
#   bash benchmarks/setup-neo4j-graphrag.sh
#
# PYTHON picks the interpreter (default: python3.11, else python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-neo4j-graphrag"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
version="1.22.0"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install -q --disable-pip-version-check "neo4j-graphrag==$version"
"$venv/bin/python" - <<'EOF'
from importlib.metadata import version

print(f"neo4j-graphrag {version('neo4j-graphrag')}, neo4j driver {version('neo4j')}")
EOF
