"""The interop suite: collected only when asked for by path (``make interop``: ``pytest tests/interop``).

A run of the whole ``tests`` folder (``make test`` passes ``--ignore=tests/interop`` and
then runs ``make interop``) skips this folder's modules without importing them, because
they need neo4j-graphrag's own venv (``.venv-interop``, made by ``scripts/setup_interop.sh``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _named(config: pytest.Config) -> bool:
    """Whether an argument of this run is this folder or a path inside it."""
    for argument in config.args:
        path = Path(argument.split("::", 1)[0])
        path = (path if path.is_absolute() else Path(config.invocation_params.dir) / path).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.resolve() != HERE and not _named(config):
        return True
    return None
