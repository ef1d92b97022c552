#!/usr/bin/env bash
# Creates .venv-interop: neo4j-graphrag 1.22.0 in a venv of its own, for the interop suite (tests/interop).
#
# neo4j-graphrag wants a newer neo4j driver (>= 6.3) than graphrag-orm pins (6.1), so the
# suite runs it as a subprocess in this venv. The packages are pinned with hashes in
# tests/interop/requirements.txt; a stamp of that file makes a second run a no-op (~0 s).
# The venv is git-ignored. `make interop` runs this first.
#
#   bash scripts/setup_interop.sh
#
# PYTHON picks the interpreter (default: python3.11, else python3); UV the installer
# (default: the repository's .venv/bin/uv, else pip).
# Regenerate the pins after a version change:
#   echo 'neo4j-graphrag==1.22.0' | .venv/bin/uv pip compile - --python-version 3.11 \
#     --generate-hashes --no-header -o tests/interop/requirements.txt
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv-interop"
requirements="$repo/tests/interop/requirements.txt"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
uv="${UV:-$repo/.venv/bin/uv}"
stamp="$venv/.installed-$(sha256sum "$requirements" | cut -c1-12)"

if [ -f "$stamp" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
if [ -x "$uv" ]; then
  # Copies, not hard links from uv's cache (see docs/interop.md on NLTK and hard links).
  "$uv" pip install -q --python "$venv/bin/python" --link-mode=copy --require-hashes -r "$requirements"
else
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes -r "$requirements"
fi
rm -f "$venv"/.installed-*
touch "$stamp"
"$venv/bin/python" - <<'PY'
from importlib.metadata import version

print(f"interop venv: neo4j-graphrag {version('neo4j-graphrag')}, neo4j driver {version('neo4j')}")
PY
