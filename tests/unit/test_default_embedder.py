"""The local model embeds by default when the ``local`` extra is installed; else the named stand-in.

The extra being absent is a real subprocess whose ``sitecustomize`` makes onnxruntime
unimportable (``sys.modules`` holds ``None`` for it), as an install without the extra is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graphrag_orm.embeddings import HashingEmbedder, LocalEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.environment import HASHING_MODEL_NAME, embedding_set_from_env, models_from_env

PROBE = """
from graphrag_orm.environment import models_from_env
choice = models_from_env({})
print(type(choice.embedder).__name__, choice.embedding_set.model, choice.embedding_set.dimensions)
print(choice.embedder_label)
"""


def test_with_the_extra_installed_the_environment_picks_the_local_model_with_no_variable_set() -> None:
    assert LocalEmbedder.installed()
    choice = models_from_env({})
    assert isinstance(choice.embedder, LocalEmbedder)
    assert (choice.embedding_set.model, choice.embedding_set.dimensions) == ("e5-small-v2-int8", 384)
    assert embedding_set_from_env(environ={}) == choice.embedding_set


def test_hashing_names_the_stand_in_even_with_the_extra_installed() -> None:
    for name in (HASHING_MODEL_NAME, "Hashing"):
        choice = models_from_env({"GRAPHRAG_EMBEDDING_MODEL": name})
        assert isinstance(choice.embedder, HashingEmbedder) and choice.embedding_set == OFFLINE_EMBEDDING_SET
        assert "not installed" not in choice.embedder_label


def test_without_the_extra_the_stand_in_embeds_and_its_label_says_why(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['onnxruntime'] = None\n")
    environ = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "GRAPHRAG_MODEL_MODE": "offline"}
    ran = subprocess.run(
        [sys.executable, "-c", PROBE], env=environ, capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    kind, label = ran.stdout.splitlines()
    assert kind == f"HashingEmbedder {OFFLINE_EMBEDDING_SET.model} {OFFLINE_EMBEDDING_SET.dimensions}"
    assert "the local model is not installed" in label and "graphrag-orm[local]" in label
