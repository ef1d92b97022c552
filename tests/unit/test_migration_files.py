"""Revision files are checked whole when read, before any checksum is trusted (no database)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphrag_orm.errors import ConfigurationError, MigrationError
from graphrag_orm.migrate import Chain, Revision
from graphrag_orm.migrate.revisions import (
    MAX_CHAIN_REVISIONS,
    MAX_REVISION_FILE_BYTES,
    MAX_REVISION_MESSAGE_CHARS,
    MAX_REVISION_STEPS,
)
from graphrag_orm.schema import (
    CreateStep,
    FullTextIndex,
    RangeIndex,
    RelationshipUniqueConstraint,
    UniqueConstraint,
    VectorIndex,
)
from tests.support.revisions import (
    INJECTED_FIELDS,
    create,
    raw_checksum,
    unique_constraint,
    write_raw_revision,
)


def _refused(folder: Path) -> MigrationError:
    with pytest.raises(MigrationError) as refused:
        Chain.load(folder)
    return refused.value


@pytest.mark.parametrize("field, definition", INJECTED_FIELDS, ids=[field for field, _ in INJECTED_FIELDS])
def test_a_step_injecting_through_any_field_is_refused_when_read(
    tmp_path: Path, field: str, definition: dict[str, Any]
) -> None:
    folder = tmp_path / "chain"
    write_raw_revision(folder, "0001_x", [create(unique_constraint()), create(definition)])
    refused = _refused(folder)
    assert refused.code == "invalid-revision", field
    assert refused.message.startswith("0001_x.json: step 2 ") and "\n" not in refused.message


def test_a_drop_step_injecting_its_name_is_refused_when_read(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    step = {"action": "drop", "definition": unique_constraint(name="x IF EXISTS DROP INDEX y //")}
    write_raw_revision(folder, "0001_x", [step])
    assert _refused(folder).code == "invalid-revision"


@pytest.mark.parametrize(
    "definition",
    [
        UniqueConstraint.model_construct(
            name="x IF NOT EXISTS FOR (n:A) REQUIRE n.b IS UNIQUE //", label="A", property="b"
        ),
        UniqueConstraint.model_construct(name="x", label="A) //", property="b"),
        RelationshipUniqueConstraint.model_construct(name="x", type="R]-() //", property="b"),
        RangeIndex.model_construct(name="x", label="A", properties=("b) //",)),
        VectorIndex.model_construct(
            name="x", label="A", property="e", dimensions="8}} //", similarity="cosine", filter_properties=()
        ),
        FullTextIndex.model_construct(name="x", labels=("A",), properties=("t",), analyzer="english'}} //"),
    ],
    ids=["name", "label", "type", "properties", "dimensions", "analyzer"],
)
def test_a_definition_built_around_validation_does_not_render(definition: Any) -> None:
    with pytest.raises(ConfigurationError) as refused:
        definition.create_cypher()
        definition.drop_cypher()
    assert refused.value.code == "invalid-layout"


def test_a_name_built_around_validation_does_not_render_its_drop() -> None:
    with pytest.raises(ConfigurationError):
        UniqueConstraint.model_construct(name="x IF EXISTS //", label="A", property="b").drop_cypher()


@pytest.mark.parametrize("where", ["revision", "down_revision"])
def test_a_revision_id_that_is_a_path_is_refused_when_read(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "chain"
    if where == "revision":
        write_raw_revision(folder, "../../etc/passwd", [], file_name="0001_x.json")
    else:
        write_raw_revision(folder, "0001_x", [], down_revision="../../etc/passwd")
    refused = _refused(folder)
    assert refused.code == "invalid-revision"
    assert "'../../etc/passwd' must match" in refused.message


def test_a_file_not_named_after_its_revision_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    write_raw_revision(folder, "0001_x", [], file_name="0001_other.json")
    refused = _refused(folder)
    assert refused.code == "invalid-revision" and "name it 0001_x.json" in refused.message


def test_a_link_out_of_the_folder_is_refused_even_to_a_valid_revision(tmp_path: Path) -> None:
    outside = write_raw_revision(tmp_path / "elsewhere", "0001_x", [create(unique_constraint())])
    folder = tmp_path / "chain"
    folder.mkdir()
    (folder / "0001_x.json").symlink_to(Path("..") / ".." / outside.relative_to(tmp_path.parent))
    refused = _refused(folder)
    assert refused.code == "invalid-revision" and "links outside" in refused.message


def test_a_pipe_named_like_a_revision_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    folder.mkdir()
    os.mkfifo(folder / "0001_x.json")
    found: list[BaseException] = []

    def load() -> None:
        try:
            Chain.load(folder)
        except MigrationError as error:
            found.append(error)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=5)
    assert found and isinstance(found[0], MigrationError) and found[0].code == "invalid-revision"


def test_a_revision_over_the_step_bound_is_refused_before_any_step_is_parsed(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    steps = [create(unique_constraint(name=f"probe_{i}_unique")) for i in range(MAX_REVISION_STEPS + 1)]
    write_raw_revision(folder, "0001_x", steps)
    started = time.perf_counter()
    refused = _refused(folder)
    assert refused.code == "revision-too-large"
    assert f"{MAX_REVISION_STEPS + 1:,} steps" in refused.message
    assert time.perf_counter() - started < 1.0
    write_raw_revision(folder, "0001_x", steps[:MAX_REVISION_STEPS])
    assert len(Chain.load(folder).revisions[0].steps) == MAX_REVISION_STEPS


def test_a_file_over_the_byte_bound_is_refused_unread(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    write_raw_revision(folder, "0001_x", [], message="m" * 10, extra={})
    path = folder / "0001_x.json"
    path.write_text(path.read_text() + " " * MAX_REVISION_FILE_BYTES)
    refused = _refused(folder)
    assert refused.code == "revision-too-large"


def test_a_folder_over_the_chain_bound_is_refused_before_any_file_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    folder.mkdir()
    for number in range(MAX_CHAIN_REVISIONS + 1):
        (folder / f"{number:05d}.json").write_text("{}")
    refused = _refused(folder)
    assert refused.code == "chain-too-long"
    with pytest.raises(MigrationError) as built:
        Chain.from_revisions([Revision.new(f"{n:05d}", None, "m", []) for n in range(MAX_CHAIN_REVISIONS + 1)])
    assert built.value.code == "chain-too-long"


def test_json_nested_too_deeply_is_an_invalid_revision(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    folder.mkdir()
    (folder / "0001_x.json").write_text("[" * 200_000 + "]" * 200_000)
    assert _refused(folder).code == "invalid-revision"


@pytest.mark.parametrize(
    "changes",
    [
        {"message": "applied\x1b[2K\rnothing to see"},
        {"message": "two\nlines"},
        {"message": "m" * (MAX_REVISION_MESSAGE_CHARS + 1)},
        {"extra": {"run": "MATCH (n) DETACH DELETE n"}},
    ],
    ids=["escape", "newline", "long", "unknown-key"],
)
def test_a_message_or_key_the_format_does_not_allow_is_refused(tmp_path: Path, changes: dict[str, Any]) -> None:
    folder = tmp_path / "chain"
    write_raw_revision(folder, "0001_x", [create(unique_constraint())], **changes)
    assert _refused(folder).code == "invalid-revision"


def test_a_checksum_that_is_not_sha256_hex_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    path = write_raw_revision(folder, "0001_x", [])
    body = json.loads(path.read_text())
    body["checksum"] = raw_checksum("0001_x", None, []) + "; DROP"
    path.write_text(json.dumps(body))
    assert _refused(folder).code == "invalid-revision"


def test_new_refuses_what_reading_would() -> None:
    step = CreateStep(definition=UniqueConstraint(name="probe_unique", label="A", property="b"))
    for revision, down_revision, message in (
        ("0002_x", "../0001", "m"),
        ("0002_x", None, "line\nbreak"),
    ):
        with pytest.raises(MigrationError) as refused:
            Revision.new(revision, down_revision, message, [step])
        assert refused.value.code == "invalid-revision"
    with pytest.raises(MigrationError) as large:
        Revision.new("0002_x", None, "m", [step] * (MAX_REVISION_STEPS + 1))
    assert large.value.code == "revision-too-large"
