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


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
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
