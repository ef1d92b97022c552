"""Hostile revision files against the real server: refused when read, and the schema stays as it was."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from graphrag_orm.errors import MigrationError
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.migrate.revisions import MAX_REVISION_STEPS
from graphrag_orm.store import Store
from tests.support.revisions import INJECTED_FIELDS, create, unique_constraint, write_raw_revision


async def _schema(store: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every constraint and index as the server lists them (SHOW CONSTRAINTS, SHOW INDEXES)."""
    constraints = await store.read("SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties RETURN *")
    indexes = await store.read("SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options RETURN *")
    return (
        sorted(constraints.records, key=lambda row: str(row["name"])),
        sorted(indexes.records, key=lambda row: str(row["name"])),
    )


async def _attempt(store: Store, folder: Path) -> MigrationError | None:
    """Load the chain and apply it, as ``migrations apply`` does; the refusal, or None if it ran."""
    try:
        await Migrator(store, Chain.load(folder), index_timeout_seconds=30).apply()
    except MigrationError as error:
        return error
    return None


async def test_a_revision_injecting_through_any_field_is_refused_and_the_schema_is_unchanged(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    before = await _schema(store)
    not_refused: list[str] = []
    for number, (field, definition) in enumerate(INJECTED_FIELDS):
        # A plain first step: had anything of the revision run, its constraint would be there.
        folder = tmp_path / f"chain{number}"
        write_raw_revision(folder, "0001_hostile", [create(unique_constraint()), create(definition)])
        refused = await _attempt(store, folder)
        if refused is None or refused.code != "invalid-revision" or "0001_hostile.json" not in refused.message:
            not_refused.append(f"{field}: {refused!r}")
    assert not_refused == [], "\n".join(not_refused)
    assert await _schema(store) == before
    assert await Migrator(store, Chain.load()).journal() == []


async def test_a_revision_id_that_is_a_path_is_refused_before_it_is_journalled(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    before = await _schema(store)
    in_id = write_raw_revision(
        tmp_path / "in_id", "../../etc/passwd", [create(unique_constraint())], file_name="x.json"
    )
    as_predecessor = write_raw_revision(
        tmp_path / "as_predecessor", "0001_x", [create(unique_constraint())], down_revision="../../etc/passwd"
    )
    for path in (in_id, as_predecessor):
        refused = await _attempt(store, path.parent)
        assert refused is not None and refused.code == "invalid-revision", path
    assert await _schema(store) == before
    assert (await store.read("MATCH (m:GraphRagMigration) RETURN m")).records == []


async def test_a_revision_over_the_step_bound_runs_nothing(bare_database: None, store: Store, tmp_path: Path) -> None:
    before = await _schema(store)
    steps = [
        create(unique_constraint(name=f"probe_{n}_unique", property=f"p{n}")) for n in range(MAX_REVISION_STEPS + 1)
    ]
    write_raw_revision(tmp_path / "chain", "0001_large", steps)
    started = time.perf_counter()
    refused = await _attempt(store, tmp_path / "chain")
    assert refused is not None and refused.code == "revision-too-large"
    assert time.perf_counter() - started < 2.0
    assert await _schema(store) == before
