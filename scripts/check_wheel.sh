#!/usr/bin/env bash
# The built wheel, used as a newcomer uses it (CI runs this after `make test`; `make wheel-check`).
#
# Builds the sdist and the wheel from the sdist (uv build), makes a fresh venv in a temp
# folder outside the repository, installs the wheel with its `local` extra resolved from
# PyPI (not requirements/lock.txt), checks every module of the source tree imports from
# the wheel, then from a temp folder outside the repository runs: graphrag-orm --version,
# neo4j start (a free port, a home of its own; skipped when NEO4J_URI is set: that server
# is used), then, with no embedding variable set, as the README's first steps: migrations
# apply (it must build the local model's 384-dimension vector index), ingest of markdown
# files it writes, one with paragraphs far longer than the model reads (the preview must
# count with the model's tokenizer, the receipt say 0 chunks cut), ask (the ExtractiveChat
# stand-in answers: the cited sentence and the citations table must be printed, and the
# local model embedded), reset, neo4j stop.
# The user's data directory is a temp folder too (XDG_DATA_HOME), so the server's
# launcher, pom and jars are laid out as on a machine that never saw the repository
# (Maven's own cache, ~/.m2, is shared: the jars are copied from it, not downloaded again).
#
# Environment: PYTHON (the interpreter the venv is made from), WHEEL_EXTRAS (default
# local,server: the offline model and `graphrag-orm serve`, asked over HTTP once), UV (default the repository's .venv/bin/uv), KEEP_WHEEL_CHECK=1 keeps the temp folder.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$(command -v python3.11 || command -v python3)}
uv=${UV:-$repo/.venv/bin/uv}
extras=${WHEEL_EXTRAS:-local,server}
work=$(mktemp -d "${TMPDIR:-/tmp}/graphrag-wheel-check.XXXXXX")
began=$(date +%s)
started_server=""
demo_server=""
serve_pid=""
home="$work/neo4j-home"
demo_home="$work/demo-home"

case "$work" in "$repo"/*) echo "wheel-check: the temp folder $work is inside the repository" >&2; exit 1 ;; esac

step() { echo "wheel-check: [$(( $(date +%s) - began )) s] $*"; }
fail() { echo "wheel-check: FAILED: $*" >&2; exit 1; }

cleanup() {
  status=$?
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$started_server" ]; then
    (cd "$work/run" && "$work/venv/bin/graphrag-orm" neo4j stop --home-dir "$home") || true
  fi
  if [ -n "$demo_server" ]; then
    (cd "$work/run" && "$work/venv/bin/graphrag-orm" neo4j stop --home-dir "$demo_home") || true
  fi
  if [ "${KEEP_WHEEL_CHECK:-}" = 1 ]; then
    echo "wheel-check: kept $work"
  else
    rm -rf "$work"
  fi
  echo "wheel-check: $([ $status = 0 ] && echo passed || echo failed) in $(( $(date +%s) - began )) s"
}
trap cleanup EXIT

step "building the sdist and the wheel (uv build) into $work/dist"
"$uv" build --quiet --out-dir "$work/dist" "$repo"
wheel=$(ls "$work"/dist/graphrag_orm-*.whl)

step "a fresh venv ($python) and the wheel with [$extras], resolved from PyPI without the lock"
"$python" -m venv "$work/venv"
"$uv" pip install --quiet --python "$work/venv/bin/python" "graphrag-orm[$extras] @ file://$wheel"
cli="$work/venv/bin/graphrag-orm"

mkdir -p "$work/run" "$work/data" "$work/docs"
cd "$work/run"
# Nothing of the repository or of the caller's settings leaks in.
unset PYTHONPATH GRAPHRAG_LOCALDB_DIR OPENAI_API_KEY OPENAI_BASE_URL GRAPHRAG_EMBEDDING_MODEL \
  GRAPHRAG_EMBEDDING_DIMENSIONS GRAPHRAG_MIGRATIONS_DIR GRAPHRAG_NEO4J_PORT VIRTUAL_ENV
export XDG_DATA_HOME="$work/data" COLUMNS=160

step "every module of the source tree imports from the installed wheel"
modules=$(cd "$repo" && find graphrag_orm ontologies migrations -name '*.py' -not -path '*/__pycache__/*' \
  | sed -e 's/\.py$//' -e 's#/__init__$##' -e 's#/#.#g' -e 's/^ontologies/graphrag_orm.ontologies/' \
    -e 's/^migrations/graphrag_orm.migrations/' | sort)
"$work/venv/bin/python" - "$repo" $modules <<'EOF'
import importlib, sys
from pathlib import Path
import graphrag_orm
repo, names = Path(sys.argv[1]), sys.argv[2:]
assert repo not in Path(graphrag_orm.__file__).resolve().parents, f"imported from the repository: {graphrag_orm.__file__}"
missing = []
for name in names:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").startswith("graphrag_orm"):
            missing.append(f"{name} ({error})")
    except ImportError:  # an optional dependency the installed extras do not bring
        pass
assert not missing, "missing from the wheel: " + ", ".join(missing)
installed = Path(graphrag_orm.__file__).parent
absent = [
    str(path.relative_to(repo))
    for path in (repo / "graphrag_orm").rglob("*")
    if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    and not (installed / path.relative_to(repo / "graphrag_orm")).is_file()
]
assert not absent, "files of the source package missing from the wheel: " + ", ".join(sorted(absent))
launcher = installed / "_neo4j"
assert (launcher / "Launcher.java").is_file() and (launcher / "pom.xml").is_file(), "no launcher in the wheel"
print(f"wheel-check: {len(names)} modules import from {Path(graphrag_orm.__file__).parent}")
EOF

expected=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml" | head -1)
version=$("$cli" --version)
[ "$version" = "graphrag-orm $expected" ] || fail "--version printed '$version', not 'graphrag-orm $expected'"
step "$version"

if [ -n "${NEO4J_URI:-}" ]; then
  step "using NEO4J_URI=$NEO4J_URI"
else
  port=$("$work/venv/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
  step "neo4j start --port $port --home-dir $home"
  "$cli" neo4j start --port "$port" --home-dir "$home" | tee "$work/start.txt"
  started_server=1
  grep -q "^NEO4J_URI=bolt://127.0.0.1:$port$" "$work/start.txt" || fail "start printed no NEO4J_URI for port $port"
  [ -f "$work/data/graphrag-orm/neo4j/pom.xml" ] || fail "the runtime was not laid out in the user's data directory"
  export NEO4J_URI="bolt://127.0.0.1:$port"
  export NEO4J_PASSWORD="${NEO4J_PASSWORD:-graphrag-local}"
  "$cli" neo4j status --home-dir "$home" | grep -q "NEO4J_URI=$NEO4J_URI" || fail "status did not print $NEO4J_URI"
fi

step "migrations apply (no embedding variable: the local model's set)"
"$cli" migrations apply | tee "$work/apply.txt"
grep -q "e5-small-v2-int8:384:cosine" "$work/apply.txt" || fail "migrations apply did not take the local model's set"
"$cli" migrations status | tee "$work/status.txt"
grep -q "embedding_384_cosine_.*applied" "$work/status.txt" || fail "no applied revision builds the 384-dimension index"

cat > "$work/docs/ferries.md" <<'EOF'
# Ferries of the harbour

The ferry to Lindholm leaves the north pier every forty minutes.
Bicycles travel free on every ferry.
EOF
cat > "$work/docs/library.md" <<'EOF'
# The harbour library

Members can borrow up to twelve items at a time.
The reading room closes at nine in the evening.
EOF
cat > "$work/docs/market.md" <<'EOF'
# The fish market

The fish market opens at five in the morning on weekdays.
EOF

"$work/venv/bin/python" - "$work/docs/lighthouse.md" <<'EOF'
import sys
words = " ".join(f"lantern{n} keeper shipwright tidewater" for n in range(100))
paragraphs = [f"Paragraph {n} of the lighthouse log runs on: {words}." for n in range(4)]
open(sys.argv[1], "w", encoding="utf-8").write("# The lighthouse log\n\n" + "\n\n".join(paragraphs) + "\n")
EOF

step "ingest --preview $work/docs (the local model's tokenizer counts)"
"$cli" ingest "$work/docs" --preview | tee "$work/preview.txt"
grep -q "input tokens (counted)" "$work/preview.txt" || fail "the preview did not count with the model's tokenizer"
grep -q "embedded by LocalEmbedder" "$work/preview.txt" || fail "the preview did not name the local model"

step "ingest $work/docs (no chunk longer than the model reads)"
"$cli" ingest "$work/docs" --json > "$work/receipt.json"
"$work/venv/bin/python" - "$work/receipt.json" <<'EOF' || fail "the receipt: $(cat "$work/receipt.json")"
import json, sys
receipt = json.load(open(sys.argv[1], encoding="utf-8"))
ingested = [d for d in receipt["documents"] if d["status"] == "Ingested"]
assert len(ingested) == 4, f"{len(ingested)} of 4 documents ingested"
assert receipt["chunksOverWindow"] == 0, f"{receipt['chunksOverWindow']} chunks cut"
assert not [limit for limit in receipt["limitsReached"] if limit["name"] == "EmbedderWindow"], receipt["limitsReached"]
print(f"wheel-check: 4 ingested, {receipt['chunksWritten']} chunks, 0 cut")
EOF

step "ask (the ExtractiveChat stand-in answers; the local model embeds)"
"$cli" ask "How many items can a member borrow at a time?" | tee "$work/ask.txt"
grep -q "embedded by LocalEmbedder" "$work/ask.txt" || fail "ask did not name the local model"
grep -q "Members can borrow up to twelve items at a time." "$work/ask.txt" || fail "the answer does not quote the sentence"
grep -q "citations" "$work/ask.txt" || fail "no citations table was printed"
grep -q "The harbour library" "$work/ask.txt" || fail "the citation does not name its document"

step "serve: the explorer page at /, then POST /graphrag/ask read as server-sent events (extra server)"
serve_port=$("$work/venv/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$cli" serve --port "$serve_port" > "$work/serve.txt" 2>&1 &
serve_pid=$!
"$work/venv/bin/python" - "$serve_port" <<'EOF' || fail "serve did not stream a verified answer (its output: $work/serve.txt)"
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 90
while True:
    try:
        page = urllib.request.urlopen(base + "/", timeout=5).read().decode()
        break
    except OSError:
        if time.monotonic() > deadline:
            raise SystemExit("wheel-check: serve did not answer within 90 s")
        time.sleep(0.5)
assert "<title>graphrag-orm explorer</title>" in page, "the explorer page was not served at /"
question = json.dumps({"question": "How many items can a member borrow at a time?"}).encode()
request = urllib.request.Request(base + "/graphrag/ask", data=question, headers={"Content-Type": "application/json"})
body = urllib.request.urlopen(request, timeout=60).read().decode()
events = [line[len("event: "):] for line in body.splitlines() if line.startswith("event: ")]
assert events and events[0] == "retrieved" and events[-1] == "verified", events
verified = json.loads([line for line in body.splitlines() if line.startswith("data: ")][-1][len("data: "):])
assert any("twelve items" in citation["quote"] for citation in verified["citations"]), verified
print(f"wheel-check: serve streamed {', '.join(dict.fromkeys(events))}; {len(verified['citations'])} citation(s)")
EOF
kill -INT "$serve_pid"
wait "$serve_pid" || fail "serve did not exit 0 on SIGINT"
serve_pid=""

step "reset"
"$cli" reset --yes | tee "$work/reset.txt"
"$cli" ask "How many items can a member borrow at a time?" > "$work/after-reset.txt" && fail "an answer after reset"

if [ -n "$started_server" ]; then
  step "neo4j stop"
  "$cli" neo4j stop --home-dir "$home"
  started_server=""
fi

# The demo as a newcomer runs it: examples/ copied outside the repository, the installed
# wheel (with its local model), a server of its own (the demo's chain is its own, so it
# never shares the database above).
step "the recall demo (examples/ copied to $work/examples) on a server of its own"
cp -r "$repo/examples" "$work/examples"
find "$work/examples" -name __pycache__ -prune -exec rm -rf {} +
demo_port=$("$work/venv/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$cli" neo4j start --port "$demo_port" --home-dir "$demo_home" > "$work/demo-start.txt"
demo_server=1
NEO4J_URI="bolt://127.0.0.1:$demo_port" NEO4J_PASSWORD="${NEO4J_PASSWORD:-graphrag-local}" \
  "$work/venv/bin/python" "$work/examples/recall/run.py" | tee "$work/demo.txt" || fail "the demo exited non-zero"
grep -q "demo complete" "$work/demo.txt" || fail "the demo did not complete"
grep -q "LocalEmbedder e5-small-v2" "$work/demo.txt" || fail "the demo did not run the local embedding model"
"$cli" neo4j stop --home-dir "$demo_home"
demo_server=""
