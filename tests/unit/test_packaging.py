"""What the wheel holds and declares: every package, the local server's launcher, the extras, the version.

The wheel itself is built and installed into a fresh venv by ``scripts/check_wheel.sh``
(CI, ``make wheel-check``); these checks read the same declarations in seconds.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import graphrag_orm

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "graphrag-orm")


def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def _source_packages() -> set[str]:
    """Every folder of the shipped trees holding an ``__init__.py``, by the name it ships under."""
    found: set[str] = set()
    for tree, prefix in (("graphrag_orm", "graphrag_orm"), ("ontologies", "graphrag_orm.ontologies")):
        for init in (ROOT / tree).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / tree).parts
            if "__pycache__" not in parts:
                found.add(".".join((prefix, *parts)))
    if (ROOT / "migrations" / "__init__.py").is_file():
        found.add("graphrag_orm.migrations")
    return found


def test_every_package_folder_of_the_source_tree_is_listed_for_the_wheel() -> None:
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    missing = _source_packages() - listed
    assert not missing, f"pyproject.toml [tool.setuptools] packages misses {sorted(missing)}: the wheel would lack them"


def test_the_local_servers_launcher_and_pom_ship_as_package_data() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    assert "graphrag_orm._neo4j" in setuptools["packages"]
    folder = ROOT / setuptools["package-dir"]["graphrag_orm._neo4j"]
    shipped = setuptools["package-data"]["graphrag_orm._neo4j"]
    assert sorted(shipped) == ["Launcher.java", "pom.xml"]
    assert all((folder / name).is_file() for name in shipped)
    assert folder == ROOT / "tools" / "neo4j"  # the checkout's place stays the one the Makefile and tests use


def test_optional_packages_are_extras_and_the_dev_extra_holds_all_of_them() -> None:
    project = _pyproject()["project"]
    extras = {name: _names(requirements) for name, requirements in project["optional-dependencies"].items()}
    assert extras["pdf"] == {"pypdf"}
    assert extras["server"] == {"fastapi", "uvicorn"}
    assert extras["tracing"] == {"opentelemetry-sdk"}
    assert {"onnxruntime", "tokenizers"} <= extras["local"]
    core = _names(project["dependencies"])
    assert "platformdirs" in core
    assert not core & {"pypdf", "fastapi", "uvicorn", "opentelemetry-sdk", "onnxruntime", "tokenizers"}
    optional = set().union(*(packages for name, packages in extras.items() if name != "dev"))
    assert optional | {"platformdirs"} <= extras["dev"], "the suite installs the dev extra only"


def test_graphrag_orm_version_prints_the_installed_distributions_version() -> None:
    result = subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"graphrag-orm {metadata.version('graphrag-orm')}"
    assert metadata.version("graphrag-orm") == _pyproject()["project"]["version"]


def test_each_public_name_is_loaded_from_the_module_the_type_checker_sees() -> None:
    """The package imports its names lazily: the table it loads from matches its TYPE_CHECKING imports."""
    tree = ast.parse((ROOT / "graphrag_orm" / "__init__.py").read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    seen = {
        alias.name: node.module for node in guarded.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    exports: dict[str, str] = vars(graphrag_orm)["_EXPORTS"]
    assert seen == exports
    assert sorted(exports) == sorted(graphrag_orm.__all__)
    for name in graphrag_orm.__all__:
        assert getattr(graphrag_orm, name) is getattr(sys.modules[exports[name]], name)
