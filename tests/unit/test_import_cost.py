"""Importing the package, its public names and its command line loads no optional heavy package.

Each check runs in a fresh interpreter, so nothing this test process imported counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# Optional, slow to import, or both: loaded only by the code that calls them.
HEAVY = (
    "openai",
    "pypdf",
    "onnxruntime",
    "tokenizers",
    "fastapi",
    "uvicorn",
    "opentelemetry.sdk",
    "mcp",
    "langchain_core",
    "llama_index",
    "selenium",
)


def _loaded_after(code: str, watched: tuple[str, ...] = HEAVY) -> list[str]:
    """The modules of ``watched`` that running ``code`` in a fresh interpreter loaded."""
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {watched!r} if m in sys.modules]))"
    named = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHRAG_EMBEDDING_MODEL", "GRAPHRAG_EMBEDDING_DIMENSIONS")
    environment = {key: value for key, value in os.environ.items() if key not in named}  # the offline default
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False, env=environment
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "code",
    [
        "import graphrag_orm",
        "import graphrag_orm\nfor name in graphrag_orm.__all__: getattr(graphrag_orm, name)",
        "import graphrag_orm.cli",
        "import graphrag_orm.environment\ngraphrag_orm.environment.models_from_env()",
        "from graphrag_orm.loaders import LoaderRegistry",
        "import graphrag_orm.server, graphrag_orm.tools, graphrag_orm.adapters",
    ],
    ids=["package", "public-names", "cli", "offline-models", "loaders", "serving-packages"],
)
def test_importing_loads_no_optional_heavy_package(code: str) -> None:
    assert _loaded_after(code) == []


def test_a_named_model_still_loads_the_openai_client_when_it_is_used() -> None:
    code = "from graphrag_orm.chat.openai import OpenAIChat\nOpenAIChat('gpt-4.1-mini', api_key='sk-test')"
    assert "openai" in _loaded_after(code)


# What an ingestion worker (``graphrag-orm ingest``) does not use: the other commands'
# modules, the services the facade builds on first access, the HTTP client (imported
# by the model clients that call one) and the progress bar (not drawn with --json).
# graphrag_orm.answers, .retrieval, .maintenance and .reembedding are not listed: the
# options (``graphrag_orm.options``, which ingest needs) import their packages.
COMMAND_MODULES = (
    "ask",
    "catalog",
    "communities",
    "evaluate",
    "graph",
    "maintain",
    "mcp",
    "migrations",
    "neo4j",
    "reembed",
)
OTHER_COMMANDS = tuple(f"graphrag_orm.cli.{name}" for name in (*COMMAND_MODULES, "resolve", "serve"))
NOT_FOR_INGEST = (
    *OTHER_COMMANDS,
    "graphrag_orm.catalog",
    "graphrag_orm.communities",
    "graphrag_orm.text2cypher",
    "graphrag_orm.resolution",
    "graphrag_orm.evaluation",
    "graphrag_orm.localdb",
    "graphrag_orm.server",
    "graphrag_orm.tools",
    "graphrag_orm.adapters",
    "graphrag_orm.sync",
    "httpx",
    "rich.progress",
)
# The command line's own start loads no service and not the driver: only the command run does.
NOT_FOR_THE_COMMAND_LINE = (
    *NOT_FOR_INGEST,
    "graphrag_orm.cli.ingest",
    "graphrag_orm.cli._common",
    "graphrag_orm.environment",
    "graphrag_orm.facade",
    "graphrag_orm.options",
    "graphrag_orm.ingestion",
    "graphrag_orm.answers",
    "graphrag_orm.retrieval",
    "graphrag_orm.maintenance",
    "graphrag_orm.reembedding",
    "neo4j",
    "neomodel",
)
# Resolving ``ingest`` through the top-level group, as ``graphrag-orm ingest PATH`` does,
# then building its GraphRag from the (offline) environment, as the command does.
INGEST_PATH = """
import typer.main
from graphrag_orm.cli import app
group = typer.main.get_command(app)
context = group.make_context("graphrag-orm", ["ingest", "--help"], resilient_parsing=True)
command = group.get_command(context, "ingest")
assert command is not None and command.name == "ingest" and command.callback is not None, command
assert "graphrag_orm.cli.ingest" in sys.modules
import os
os.environ["GRAPHRAG_MODEL_MODE"] = "offline"
from graphrag_orm.environment import graphrag_from_env
rag, choice = graphrag_from_env()
assert rag.ingestion is not None and choice.mode == "offline"
"""


def test_importing_the_command_line_loads_no_command_and_no_service() -> None:
    assert _loaded_after("import graphrag_orm.cli", NOT_FOR_THE_COMMAND_LINE) == []


def test_the_ingest_path_loads_neither_the_other_commands_nor_the_services_it_does_not_use() -> None:
    assert _loaded_after(INGEST_PATH, NOT_FOR_INGEST) == []


def test_the_services_are_loaded_when_first_used() -> None:
    used = INGEST_PATH + "rag.catalog, rag.retriever, rag.maintenance, rag.answers\n"
    assert _loaded_after(used, NOT_FOR_INGEST) == ["graphrag_orm.catalog"]
    listed = (
        "from typer.testing import CliRunner\nfrom graphrag_orm.cli import app\nCliRunner().invoke(app, ['--help'])"
    )
    assert set(_loaded_after(listed, NOT_FOR_INGEST)) >= set(OTHER_COMMANDS)  # --help lists them all


def test_importing_the_facade_loads_only_the_services_it_builds_with_the_object() -> None:
    """Its docstring's promise: ingestion (and the extraction it may run) now, every other service on first use."""
    probe = (
        "import json, sys\nimport graphrag_orm.facade\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('graphrag_orm.') and m.endswith('service'))))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [
        "graphrag_orm.extraction.service",
        "graphrag_orm.ingestion.service",
    ]


def test_classifying_a_model_error_imports_no_http_client() -> None:
    # An httpx error exists only once httpx is imported (test_retry.py classifies them).
    code = (
        "from graphrag_orm.retry import is_transient_default, status_of\n"
        "assert is_transient_default(ConnectionError()) and not is_transient_default(ValueError())\n"
        "assert status_of(ValueError()) is None"
    )
    assert _loaded_after(code, ("httpx", "httpx2")) == []
