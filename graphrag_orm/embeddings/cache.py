"""Where fetched model files live: light enough to ask without importing a runtime or the driver."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from graphrag_orm.embeddings.cards import LocalModel

__all__ = ["model_dir", "models_root"]


def models_root() -> Path:
    """Where fetched models live: ``GRAPHRAG_MODELS_DIR``, else the user data directory's ``models``."""
    override = (os.environ.get("GRAPHRAG_MODELS_DIR") or "").strip()
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("graphrag-orm", appauthor=False)) / "models"


def model_dir(card: LocalModel) -> Path:
    return models_root() / card.name
