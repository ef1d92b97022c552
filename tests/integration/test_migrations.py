"""Reviewed migrations against the real server: apply, status, plan, check, downgrade, refusals."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import MigrationError
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import (
    Chain,
    Migrator,
    RevisionState,
    initial_revision,
    next_revision,
    write_revision,
)
from graphrag_orm.migrate.lock import LOCK_CONSTRAINT, ensure_lock_constraint
from graphrag_orm.schema import Schema
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.store.connection import ConnectionSettings, open_store
from graphrag_orm.store.introspection import read_live_schema

SET_64 = EmbeddingSet(model="test-model", dimensions=64)


def _chain_dir(tmp_path: Path, embedding_set: EmbeddingSet = SET_64) -> Path:
    folder = tmp_path / "chain"
    write_revision(folder, initial_revision(Layout.DEFAULT, embedding_set, revision="0001_app"))
    return folder


async def test_apply_creates_every_definition_online_and_records_the_revision(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    migrator = Migrator(store, Chain.load(_chain_dir(tmp_path)))
    before = await migrator.status()
    assert before.database_head is None
    assert [r.state for r in before.revisions] == [RevisionState.PENDING]

    report = await migrator.apply()

    assert report.applied == ("0001_app",)
    live = await read_live_schema(store)
    for definition in Schema.definitions(Layout.DEFAULT, SET_64):
        assert definition.name in live
        assert live[definition.name].state == "ONLINE"
    after = await migrator.status()
    assert after.database_head == "0001_app" and after.up_to_date
    assert (await migrator.check()).ok


async def test_apply_twice_changes_nothing(bare_database: None, store: Store, tmp_path: Path) -> None:
    migrator = Migrator(store, Chain.load(_chain_dir(tmp_path)))
    await migrator.apply()
    again = await migrator.apply()
    assert again.applied == () and again.statements == 0


async def test_plan_prints_exact_cypher_and_changes_nothing(bare_database: None, store: Store, tmp_path: Path) -> None:
    migrator = Migrator(store, Chain.load(_chain_dir(tmp_path)))
    plan = await migrator.plan()
    (revision,) = plan.revisions
    assert any("CREATE VECTOR INDEX" in c and "`vector.dimensions`: 64" in c for c in revision.cypher)
    assert await read_live_schema(store) == {}
    assert (await migrator.status()).database_head is None


async def test_an_applied_revision_edited_afterwards_is_refused(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    folder = _chain_dir(tmp_path)
    await Migrator(store, Chain.load(folder)).apply()
    path = folder / "0001_app.json"
    body = json.loads(path.read_text())
    body["steps"] = body["steps"][:-1]
    # A reviewer who also updated the checksum still cannot change an applied revision.
    from graphrag_orm.migrate import Revision

    edited = Revision.new("0001_app", None, body["message"], Revision.from_file(path, path.read_text()).steps[:-1])
    path.write_text(edited.to_file_json())
    with pytest.raises(MigrationError) as refused:
        await Migrator(store, Chain.load(folder)).apply()
    assert refused.value.code == "checksum-mismatch"
    status = await Migrator(store, Chain.load(folder)).status()
    assert status.revisions[0].state == RevisionState.CHECKSUM_MISMATCH


def test_a_file_edited_without_its_checksum_is_refused_on_load(tmp_path: Path) -> None:
    folder = _chain_dir(tmp_path)
    path = folder / "0001_app.json"
    body = json.loads(path.read_text())
    body["steps"][0]["definition"]["property"] = "other"
    path.write_text(json.dumps(body))
    with pytest.raises(MigrationError) as refused:
        Chain.load(folder)
    assert refused.value.code == "unreviewed-edit"


def test_a_folder_holding_a_file_that_is_not_utf8_is_refused_as_an_invalid_revision(tmp_path: Path) -> None:
    folder = _chain_dir(tmp_path)
    (folder / "0002_latin1.json").write_bytes('{"message": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(MigrationError) as refused:
        Chain.load(folder)
    assert refused.value.code == "invalid-revision"
    assert "0002_latin1.json" in refused.value.message


def test_a_folder_holding_an_unreadable_revision_is_refused_as_an_invalid_revision(tmp_path: Path) -> None:
    folder = _chain_dir(tmp_path)
    (folder / "0002_folder.json").mkdir()
    with pytest.raises(MigrationError) as refused:
        Chain.load(folder)
    assert refused.value.code == "invalid-revision"
    assert "0002_folder.json" in refused.value.message


def test_the_walk_orders_by_predecessor_and_refuses_branches_gaps_repeats_and_cycles() -> None:
    from graphrag_orm.migrate.chain import linear_walk

    pairs = [("b", "a"), ("a", None), ("c", "b")]
    assert linear_walk(pairs, key=lambda p: p[0], parent=lambda p: p[1], source="test") == [
        ("a", None),
        ("b", "a"),
        ("c", "b"),
    ]
    for broken, code in (
        ([("a", None), ("b", "a"), ("c", "a")], "branched-chain"),
        ([("a", None), ("c", "b")], "broken-chain"),
        ([("a", None), ("a", None)], "broken-chain"),
        ([("a", "b"), ("b", "a")], "broken-chain"),
    ):
        with pytest.raises(MigrationError) as refused:
            linear_walk(broken, key=lambda p: p[0], parent=lambda p: p[1], source="test")
        assert refused.value.code == code


def test_two_revisions_claiming_one_predecessor_are_refused(tmp_path: Path) -> None:
    folder = _chain_dir(tmp_path)
    chain = Chain.load(folder)
    other = SET_64.model_copy(update={"dimensions": 32})
    first = next_revision(chain, Layout.DEFAULT, other, revision="0002_a", message="a")
    second = next_revision(
        chain, Layout.DEFAULT.replace(fulltext_index="graphrag_text_b"), SET_64, revision="0002_b", message="b"
    )
    assert first is not None and second is not None
    write_revision(folder, first)
    write_revision(folder, second)
    with pytest.raises(MigrationError) as refused:
        Chain.load(folder)
    assert refused.value.code == "branched-chain"


async def test_a_vector_index_with_other_dimensions_is_a_conflict(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    vector = Schema.vector_index(Layout.DEFAULT, SET_64)
    await store.execute(
        f"CREATE VECTOR INDEX {vector.name} FOR (n:Chunk) ON (n.embedding) "
        "OPTIONS {indexConfig: {`vector.dimensions`: 32, `vector.similarity_function`: 'cosine'}}"
    )
    migrator = Migrator(store, Chain.load(_chain_dir(tmp_path)))
    check = await migrator.check()
    assert [d.name for d in check.different] == [vector.name]
    assert "dimensions=32" in (check.different[0].actual or "")
    with pytest.raises(MigrationError) as refused:
        await migrator.apply()
    assert refused.value.code == "schema-conflict"
    assert (await migrator.status()).database_head is None


async def test_an_equivalent_index_under_another_name_stops_for_review(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    await store.execute("CREATE FULLTEXT INDEX my_chunk_text FOR (n:Chunk) ON EACH [n.text]")
    migrator = Migrator(store, Chain.load(_chain_dir(tmp_path)))
    with pytest.raises(MigrationError) as refused:
        await migrator.apply()
    assert refused.value.code == "equivalent-schema"
    assert "my_chunk_text" in refused.value.message
    assert (await migrator.status()).database_head is None


async def test_next_revision_moves_to_a_new_embedding_set_and_downgrade_restores(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    folder = _chain_dir(tmp_path)
    await Migrator(store, Chain.load(folder)).apply()
    bigger = SET_64.model_copy(update={"dimensions": 128})
    revision = next_revision(Chain.load(folder), Layout.DEFAULT, bigger, revision="0002_bigger", message="128 dims")
    assert revision is not None
    assert [step.action for step in revision.steps] == ["drop", "create"]
    write_revision(folder, revision)
    migrator = Migrator(store, Chain.load(folder))
    await migrator.apply()
    live = await read_live_schema(store)
    assert Schema.vector_index(Layout.DEFAULT, bigger).name in live
    assert Schema.vector_index(Layout.DEFAULT, SET_64).name not in live

    down = await migrator.downgrade("0001_app")
    assert down.applied == ("0002_bigger",)
    live = await read_live_schema(store)
    assert Schema.vector_index(Layout.DEFAULT, SET_64).name in live
    assert (await migrator.status()).database_head == "0001_app"

    await migrator.downgrade("base")
    assert set(await read_live_schema(store)) == {"graphrag_migration_revision_unique", LOCK_CONSTRAINT}


async def test_check_reports_missing_and_unexpected_without_changing_anything(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    migrator = Migrator(store, Chain.load(_chain_dir(tmp_path)))
    await migrator.apply()
    await store.execute("DROP INDEX graphrag_chunk_text")
    await store.execute("CREATE INDEX graphrag_stray_index FOR (n:Chunk) ON (n.stray)")
    check = await migrator.check()
    assert [d.name for d in check.missing] == ["graphrag_chunk_text"]
    assert [d.name for d in check.unexpected] == ["graphrag_stray_index"]
    assert "graphrag_chunk_text" not in await read_live_schema(store)


async def test_the_toolkit_chain_matches_the_declared_default_schema() -> None:
    from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET

    chain = Chain.load()
    declared = {d.name: d for d in Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET)}
    assert chain.definitions_at() == declared


async def _lock_rows(store: Store) -> int:
    return int((await store.read("MATCH (l:GraphRagMigrationLock) RETURN count(l) AS n")).value("n", 0))


async def _hold_lock(store: Store, *, expires_in_seconds: int) -> None:
    """A lock as another process would leave it: held by someone else until ``expires_in_seconds`` from now."""
    await ensure_lock_constraint(store)

    async def work(tx: StoreTransaction) -> None:
        await tx.run(
            "CREATE (:GraphRagMigrationLock {id: 'lock', owner: 'someone-else', holder: 'build-7 pid 4242', "
            "since: datetime(), expiresAt: datetime() + duration({seconds: $seconds})})",
            {"seconds": expires_in_seconds},
        )

    await store.write(work)


async def test_two_applies_at_once_on_a_bare_database_apply_once_and_the_other_finds_it_up_to_date(
    bare_database: None, store: Store, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    folder = _chain_dir(tmp_path)
    other = await open_store(neo4j_settings)  # a second driver, as a second process would have
    try:
        reports = await asyncio.gather(
            Migrator(store, Chain.load(folder)).apply(), Migrator(other, Chain.load(folder)).apply()
        )
    finally:
        await other.driver.close()
    assert sorted(report.applied for report in reports) == [(), ("0001_app",)]
    migrator = Migrator(store, Chain.load(folder))
    assert [entry.revision for entry in await migrator.journal()] == ["0001_app"]
    assert (await migrator.check()).ok
    assert await _lock_rows(store) == 0


async def test_an_apply_while_another_process_holds_the_lock_is_refused_with_migration_in_progress(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    await _hold_lock(store, expires_in_seconds=300)
    began = time.monotonic()
    with pytest.raises(MigrationError) as refused:
        await Migrator(store, Chain.load(_chain_dir(tmp_path)), lock_wait_seconds=1).apply()
    assert 1.0 <= time.monotonic() - began < 10.0
    assert refused.value.code == "migration-in-progress"
    assert "build-7 pid 4242" in refused.value.message
    assert set(await read_live_schema(store)) == {LOCK_CONSTRAINT}  # nothing applied, not even the journal
    assert await _lock_rows(store) == 1  # the other's lock is left alone


async def test_an_apply_waits_for_the_lock_and_goes_on_once_it_is_released(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    await _hold_lock(store, expires_in_seconds=300)

    async def release_later() -> None:
        await asyncio.sleep(1.5)
        await store.execute("MATCH (l:GraphRagMigrationLock) DELETE l")

    releaser = asyncio.create_task(release_later())
    report = await Migrator(store, Chain.load(_chain_dir(tmp_path)), lock_wait_seconds=30).apply()
    await releaser
    assert report.applied == ("0001_app",)
    assert await _lock_rows(store) == 0


async def test_a_lock_left_by_a_killed_apply_is_taken_over_once_it_has_expired(
    bare_database: None, store: Store, tmp_path: Path
) -> None:
    await _hold_lock(store, expires_in_seconds=-1)
    report = await Migrator(store, Chain.load(_chain_dir(tmp_path)), lock_wait_seconds=0).apply()
    assert report.applied == ("0001_app",)
    assert await _lock_rows(store) == 0


def test_the_lock_wait_is_bounded(tmp_path: Path) -> None:
    chain = Chain.load(_chain_dir(tmp_path))
    for wait in (-1.0, 3601.0):
        with pytest.raises(MigrationError) as refused:
            Migrator(Store(), chain, lock_wait_seconds=wait)
        assert refused.value.code == "invalid-option"
