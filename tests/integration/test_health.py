"""The health report against the real server: each finding made to appear, then fixed away."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from neo4j.exceptions import ServiceUnavailable

from graphrag_orm.chunking import Chunker
from graphrag_orm.codes import HealthFinding
from graphrag_orm.embeddings import EmbeddingVectors, HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionOptions, IngestionService, RunStatus
from graphrag_orm.ingestion.leases import Leases
from graphrag_orm.maintenance import HealthReport, MaintenanceOptions
from graphrag_orm.schema import RangeIndex, UniqueConstraint
from graphrag_orm.sources import Sources
from graphrag_orm.store import Result, Store
from tests.integration.maintenance_support import (
    CHUNKER,
    MODEL,
    GraphKnowledge,
    add_fact,
    document_id,
    ingest,
    maintenance,
    manual,
    scalar,
    seed_knowledge,
)

ROOT = Path(__file__).resolve().parents[2]


def only(report: HealthReport, code: HealthFinding) -> int:
    """The finding's count, after checking it is the report's only finding."""
    assert report.codes == (code,), report
    return report.count(code)


async def first_chunk(store: Store, name: str) -> str:
    return str(
        await scalar(store.reader, "MATCH (c:Chunk {documentId: $id, order: 0}) RETURN c.id", {"id": document_id(name)})
    )


async def test_a_freshly_ingested_graph_is_healthy(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b", "c"])
    assert await scalar(store.reader, "MATCH (c:Chunk) WHERE c.text CONTAINS 'Café' RETURN count(c)") == 3
    report = await maintenance(store).check()
    assert report.healthy and report.findings == ()


async def test_an_empty_graph_is_healthy(store: Store, graph: None) -> None:
    assert (await maintenance(store).check()).healthy


async def test_schema_missing_names_the_dropped_constraint_until_it_is_back(store: Store, graph: None) -> None:
    service = maintenance(store)
    lease_key = next(
        d for d in service.expected_schema if isinstance(d, UniqueConstraint) and d.label == "GraphRagLease"
    )
    await store.execute(lease_key.drop_cypher())
    try:
        report = await service.check()
        assert only(report, HealthFinding.SCHEMA_MISSING) == 1 and report.findings[0].detail == lease_key.name
    finally:
        await store.execute(lease_key.create_cypher())
    assert (await service.check()).healthy


async def test_index_not_online_names_a_failed_index_until_it_is_rebuilt(store: Store, graph: None) -> None:
    service = maintenance(store)
    index = next(
        d
        for d in service.expected_schema
        if isinstance(d, RangeIndex) and d.label == "Chunk" and d.properties == ("documentId",)
    )
    await store.execute(index.drop_cypher())
    # A range index cannot hold a value this large, so populating the index fails.
    await store.execute("CREATE (:Chunk {id: 'too-large', documentId: $big})", {"big": "x" * 40_000})
    await store.execute(index.create_cypher())
    try:
        for _ in range(100):
            state = await scalar(
                store.reader, "SHOW INDEXES YIELD name, state WHERE name = $n RETURN state", {"n": index.name}
            )
            if state != "POPULATING":
                break
            await asyncio.sleep(0.05)
        report = await service.check()
        assert report.count(HealthFinding.INDEX_NOT_ONLINE) == 1
        (item,) = [f for f in report.findings if f.code == HealthFinding.INDEX_NOT_ONLINE]
        assert item.detail == f"{index.name} (FAILED)"
    finally:
        await store.execute("MATCH (c:Chunk {id: 'too-large'}) DELETE c")
        await store.execute(index.drop_cypher())
        await store.execute(index.create_cypher())
        await store.execute("CALL db.awaitIndexes(120)")
    assert (await service.check()).healthy


async def test_missing_embedding_counts_chunks_without_a_vector_until_it_is_written(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b"])
    chunk = await first_chunk(store, "a")
    vector = await scalar(store.reader, "MATCH (c:Chunk {id: $id}) RETURN c.embedding", {"id": chunk})
    await store.execute("MATCH (c:Chunk {id: $id}) REMOVE c.embedding", {"id": chunk})
    service = maintenance(store)

    report = await service.check()

    assert only(report, HealthFinding.MISSING_EMBEDDING) == 1
    assert report.findings[0].detail == f"1 chunk of 1 document: {document_id('a')}"
    await store.execute("MATCH (c:Chunk {id: $id}) SET c.embedding = $v", {"id": chunk, "v": vector})
    assert (await service.check()).healthy


async def test_mixed_embedding_sets_name_the_other_set_until_it_is_replaced(store: Store, graph: None) -> None:
    await ingest(store, ["a"])
    own = await scalar(store.reader, "MATCH (c:Chunk) RETURN c.embeddingSetId LIMIT 1")
    await store.execute("MATCH (c:Chunk) WITH c LIMIT 2 SET c.embeddingSetId = 'other-model:256:cosine'")
    service = maintenance(store)

    report = await service.check()

    assert only(report, HealthFinding.MIXED_EMBEDDING_SETS) == 2
    assert "other-model:256:cosine: 2" in (report.findings[0].detail or "")
    await store.execute("MATCH (c:Chunk) SET c.embeddingSetId = $own", {"own": own})
    assert (await service.check()).healthy


async def test_orphans_count_sections_and_chunks_of_a_gone_document_until_removed(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b"])
    gone = document_id("a")
    parts = await scalar(
        store.reader,
        "RETURN COUNT { (s:Section {documentId: $id}) } + COUNT { (c:Chunk {documentId: $id}) }",
        {"id": gone},
    )
    await store.execute("MATCH (d:Document {id: $id})<-[r]-() DELETE r", {"id": gone})
    await store.execute("MATCH (d:Document {id: $id}) DELETE d", {"id": gone})
    service = maintenance(store)

    report = await service.check()

    assert only(report, HealthFinding.ORPHANS) == parts
    assert (report.findings[0].detail or "").endswith(f"of 1 missing document: {gone}")
    await service.remove_orphans()
    assert (await service.check()).healthy


async def test_readback_mismatch_finds_a_span_that_does_not_match_its_text(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b"])
    ascii_chunk = await first_chunk(store, "a")
    accented = await scalar(
        store.reader,
        "MATCH (c:Chunk {documentId: $id}) WHERE c.text CONTAINS 'Café' RETURN c.id",
        {"id": document_id("b")},
    )
    service = maintenance(store)

    # An ASCII chunk one byte short of its span, and a chunk whose 'é' (two bytes) became 'e'.
    await store.execute("MATCH (c:Chunk {id: $id}) SET c.endByte = c.endByte + 1", {"id": ascii_chunk})
    await store.execute("MATCH (c:Chunk {id: $id}) SET c.text = replace(c.text, 'Café', 'Cafe')", {"id": accented})
    report = await service.check()

    assert only(report, HealthFinding.READBACK_MISMATCH) == 2
    assert "bikes" not in (report.findings[0].detail or "")  # ids only, never text
    await store.execute("MATCH (c:Chunk {id: $id}) SET c.endByte = c.endByte - 1", {"id": ascii_chunk})
    await store.execute("MATCH (c:Chunk {id: $id}) SET c.text = replace(c.text, 'Cafe', 'Café')", {"id": accented})
    assert (await service.check()).healthy


async def test_expired_leases_are_found_until_orphan_clean_up_removes_them(store: Store, graph: None) -> None:
    receipt = await ingest(store, ["a"])
    leases = Leases(store, MODEL, 600)
    await leases.acquire("left-behind", receipt.run_id)
    await leases.acquire("held", receipt.run_id)
    await store.execute("MATCH (l:GraphRagLease {key: 'left-behind'}) SET l.expiresAt = datetime() - duration('PT1S')")
    service = maintenance(store)

    report = await service.check()

    assert only(report, HealthFinding.EXPIRED_LEASES) == 1
    assert report.findings[0].detail == "documents left-behind"
    assert (await service.remove_orphans()).leases == 1
    assert (await service.check()).healthy


async def test_knowledge_findings_come_from_the_extension_and_clear_when_fixed(store: Store, graph: None) -> None:
    receipt = await ingest(store, ["a", "b"])
    run = receipt.run_id
    await seed_knowledge(store, run, {"x": "a", "y": "b"})
    await store.execute("CREATE (:TestThing {id: 'lonely', runId: $run})", {"run": run})
    await add_fact(store, run, "x", "y", ["a", "b"])
    gone = document_id("a")
    # Document a goes by hand with its mentions, leaving orphans and a fact that lists it.
    await store.execute("MATCH (c:Chunk {documentId: $id})<-[m:TEST_MENTION]-() DELETE m", {"id": gone})
    await store.execute("MATCH (d:Document {id: $id})<-[r]-() DELETE r", {"id": gone})
    await store.execute("MATCH (d:Document {id: $id}) DELETE d", {"id": gone})
    service = maintenance(store, knowledge=GraphKnowledge())

    report = await service.check()

    assert report.codes == (HealthFinding.ORPHANS, HealthFinding.ORPHAN_ENTITIES, HealthFinding.STALE_FACTS)
    assert (report.count(HealthFinding.ORPHAN_ENTITIES), report.count(HealthFinding.STALE_FACTS)) == (2, 1)
    # Removing the rest of a takes it off the fact; orphan clean-up removes x and lonely.
    removed = await service.remove_source(gone)
    assert (removed.documents, removed.facts_updated) == (0, 1) and removed.chunks > 0
    assert (await service.check()).codes == (HealthFinding.ORPHAN_ENTITIES,)
    orphans = await service.remove_orphans()
    assert (orphans.things, orphans.facts) == (2, 1)
    assert (await service.check()).healthy


async def cli(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from graphrag_orm.cli import main; main()",
        *args,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None, err
    return process.returncode, out.decode()


async def cli_check() -> tuple[int, str]:
    return await cli("check")


async def test_cli_check_prints_findings_and_exits_1_when_unhealthy(store: Store, graph: None) -> None:
    await ingest(store, ["a"])
    assert await cli_check() == (0, "healthy: no findings\n")
    await store.execute("MATCH (c:Chunk) WITH c LIMIT 1 REMOVE c.embedding")

    code, out = await cli_check()

    assert code == 1 and "missing-embedding" in out and document_id("a") in out


# --------------------------------------------------------------------------- stale runs


async def add_run(store: Store, run_id: str, *, status: str = "Running", idle: str = "PT1H") -> None:
    """A run node as a process that died would leave it: started and last stamped ``idle`` ago."""
    await store.execute(
        "CREATE (:IngestionRun {id: $id, status: $status, settingsFingerprint: 'x', "
        "startedAt: datetime() - duration($idle), progressAt: datetime() - duration($idle)})",
        {"id": run_id, "status": status, "idle": idle},
    )


async def run_status(store: Store, run_id: str) -> tuple[str, str | None]:
    row = (
        await store.read(
            "MATCH (r:IngestionRun {id: $id}) RETURN r.status AS status, r.failureReason AS reason", {"id": run_id}
        )
    ).records[0]
    return row["status"], row["reason"]


async def test_stale_runs_are_found_until_fail_stale_runs_marks_them_failed_and_reset_removes_them(
    store: Store, graph: None
) -> None:
    await add_run(store, "run-dead")  # killed an hour ago
    await add_run(store, "run-fresh", idle="PT1S")  # stamped a second ago
    await add_run(store, "run-leased")  # idle, but a live lease carries its id
    await add_run(store, "run-done", status="Completed")
    await Leases(store, MODEL, 600).acquire("some-document", "run-leased")
    service = maintenance(store, options=MaintenanceOptions(stale_run_seconds=60))

    report = await service.check()

    assert only(report, HealthFinding.STALE_RUNS) == 1
    assert report.findings[0].detail == "runs run-dead (no progress for over 60 s)"
    failed = await service.fail_stale_runs()
    assert failed.runs == ("run-dead",) and failed.limits_reached == ()
    status, reason = await run_status(store, "run-dead")
    assert status == "Failed" and reason is not None and "stale" in reason
    assert await run_status(store, "run-fresh") == ("Running", None)
    assert (await service.fail_stale_runs()).runs == ()
    assert (await service.check()).healthy
    await store.execute("MATCH (l:GraphRagLease) DELETE l")
    removed = await service.reset()
    assert removed.runs == 2  # run-dead (Failed) and run-done; the Running ones stay
    assert await scalar(store.reader, "MATCH (r:IngestionRun) RETURN collect(r.id) AS ids") in (
        ["run-fresh", "run-leased"],
        ["run-leased", "run-fresh"],
    )


async def test_fail_stale_runs_is_bounded_by_the_page_and_says_more_remain(store: Store, graph: None) -> None:
    for name in ("run-a", "run-b", "run-c"):
        await add_run(store, name)
    service = maintenance(store, options=MaintenanceOptions(stale_run_seconds=60, page_size=2))

    first = await service.fail_stale_runs()
    second = await service.fail_stale_runs()

    assert first.runs == ("run-a", "run-b")
    assert [(limit.name, limit.value) for limit in first.limits_reached] == [("StaleRuns", 2)]
    assert second.runs == ("run-c",) and second.limits_reached == ()


async def test_a_run_whose_final_write_was_lost_turns_stale_and_is_failed(store: Store, graph: None) -> None:
    class _LosesTheFinish(Store):
        async def execute(
            self, cypher: str, parameters: Mapping[str, Any] | None = None, *, name: str = "execute"
        ) -> Result:
            if name == "ingestion.run.finish":
                raise ServiceUnavailable("the connection was lost")
            return await super().execute(cypher, parameters, name=name)

    losing = _LosesTheFinish(store.driver, database=store.database)
    receipt = await IngestionService(
        losing,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(CHUNKER),
        options=IngestionOptions(lease_duration_seconds=1.0),
    ).ingest([Sources.text("a", manual(0), media_type="text/markdown")])
    assert receipt.status == RunStatus.COMPLETED and receipt.ingested == 1
    assert await run_status(store, receipt.run_id) == ("Running", None)
    service = maintenance(store, options=MaintenanceOptions(stale_run_seconds=1))
    assert (await service.check()).healthy  # it wrote a document just now

    await asyncio.sleep(1.2)

    report = await service.check()
    assert only(report, HealthFinding.STALE_RUNS) == 1 and receipt.run_id in (report.findings[0].detail or "")
    assert (await service.fail_stale_runs()).runs == (receipt.run_id,)
    assert (await run_status(store, receipt.run_id))[0] == "Failed"
    await service.remove_source(document_id("a"))
    assert (await service.reset()).runs == 1
    assert await scalar(store.reader, "MATCH (r:IngestionRun) RETURN count(r) AS n") == 0


async def test_a_running_run_stamps_its_progress_while_it_works(store: Store, graph: None) -> None:
    class _Slow:
        async def embed(self, texts: Sequence[str]) -> EmbeddingVectors:
            await asyncio.sleep(0.5)
            return await HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions).embed(texts)

    ingestion = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        _Slow(),
        chunker=Chunker(CHUNKER),
        options=IngestionOptions(lease_duration_seconds=1.0, embedding_batch_size=1, lanes=1),
    )
    receipt = await ingestion.ingest([Sources.text("a", manual(0), media_type="text/markdown")])
    stamped = await scalar(
        store.reader,
        "MATCH (r:IngestionRun {id: $id}) RETURN duration.inSeconds(r.startedAt, r.progressAt).seconds AS s",
        {"id": receipt.run_id},
    )
    assert receipt.elapsed_seconds > 2 and stamped >= 1


async def test_cli_fail_stale_runs_names_the_runs_it_failed(store: Store, graph: None) -> None:
    await add_run(store, "run-dead")

    first = await cli("fail-stale-runs")
    again = await cli("fail-stale-runs")

    assert first[0] == 0 and "marked 1 stale run Failed" in first[1] and "run-dead" in first[1]
    assert again == (0, "no stale runs\n")
