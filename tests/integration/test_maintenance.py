"""Maintenance against the real server: removal, reset, orphans, refusals, batches, a killed removal.

Counts are checked before and after with independent queries (labels and names
spelled out here), and what a removal must not touch is compared byte for byte:
every property of every other node and relationship.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import neo4j
import pytest

from graphrag_orm.codes import HealthFinding
from graphrag_orm.errors import GraphRefused
from graphrag_orm.ingestion.leases import Leases
from graphrag_orm.maintenance import MaintenanceOptions, RemovalProgress, RemovalReport, ResetScope
from graphrag_orm.maintenance.reports import MAX_FACT_UPDATES
from graphrag_orm.sources import Sources
from graphrag_orm.store import AccessMode, StatementEvent, Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.integration.maintenance_support import (
    MODEL,
    GraphKnowledge,
    add_fact,
    counts,
    document_id,
    document_shape,
    ingest,
    ingestion_service,
    maintenance,
    manual,
    scalar,
    seed_knowledge,
    snapshot,
    without_documents,
)

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- removal and reset


async def test_remove_source_removes_one_document_whole_and_leaves_the_rest_as_it_was(
    store: Store, graph: None
) -> None:
    receipt = await ingest(store, ["a", "b", "c"])
    target = document_id("b")
    shape = await document_shape(store, target)
    assert shape["sections"] >= 3 and shape["chunks"] >= 3 and shape["SUBSECTION_OF"] >= 1
    before_counts, before = await counts(store), await snapshot(store)

    report = await maintenance(store).remove_source(target)

    after_counts = await counts(store)
    assert report.documents == 1 and report.batches == 1
    assert report.sections == shape["sections"] and report.chunks == shape["chunks"]
    assert report.links == sum(
        shape[kind] for kind in ("IN_DOCUMENT", "SECTION_OF", "IN_SECTION", "NEXT_CHUNK", "SUBSECTION_OF")
    )
    assert after_counts["Document"] == before_counts["Document"] - 1
    assert after_counts["Chunk"] == before_counts["Chunk"] - shape["chunks"]
    assert after_counts["Section"] == before_counts["Section"] - shape["sections"]
    assert after_counts["IngestionRun"] == 1 and report.runs == 0  # remove_source keeps the run
    assert await document_shape(store, target) == dict.fromkeys(shape, 0)
    assert await snapshot(store) == without_documents(before, {target})
    assert receipt.run_id


async def test_reset_by_run_removes_that_runs_documents_and_run_and_nothing_else(store: Store, graph: None) -> None:
    first = await ingest(store, ["a", "b"])
    second = await ingest(store, ["c", "d", "e"], offset=2)
    before = await snapshot(store)

    report = await maintenance(store).reset(ResetScope(run_ids=(first.run_id,)))

    assert report.documents == 2 and report.runs == 1
    assert await snapshot(store) == without_documents(before, {document_id("a"), document_id("b")}, {first.run_id})
    assert await scalar(store.reader, "MATCH (r:IngestionRun {id: $id}) RETURN count(r)", {"id": second.run_id}) == 1


async def test_reset_by_document_ids_leaves_the_rest_byte_for_byte(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b", "c", "d"])
    chosen = {document_id("a"), document_id("d")}
    before = await snapshot(store)

    report = await maintenance(store).reset(ResetScope(document_ids=(*sorted(chosen), "not-stored")))

    assert report.documents == 2 and report.not_found == ("not-stored",) and report.runs == 0
    assert await snapshot(store) == without_documents(before, chosen)


async def test_reset_by_run_and_id_removes_either(store: Store, graph: None) -> None:
    first = await ingest(store, ["a"])
    await ingest(store, ["b", "c"], offset=1)
    before = await snapshot(store)

    report = await maintenance(store).reset(ResetScope(run_ids=(first.run_id,), document_ids=(document_id("c"),)))

    assert report.documents == 2
    assert await snapshot(store) == without_documents(before, {document_id("a"), document_id("c")}, {first.run_id})


async def test_reset_of_everything_removes_every_document_and_finished_run_and_keeps_the_schema(
    store: Store, graph: None
) -> None:
    await ingest(store, ["a", "b", "c"])
    await ingest(store, ["d", "e"], offset=3)
    before = await counts(store)
    schema_before = await scalar(store.reader, "SHOW INDEXES YIELD name RETURN count(name)")

    report = await maintenance(store, options=MaintenanceOptions(batch_documents=2)).reset()

    after = await counts(store)
    assert report.documents == 5 and report.batches == 3 and report.runs == 2
    assert report.chunks == before["Chunk"] and report.sections == before["Section"]
    assert report.links == sum(
        before[kind] for kind in ("IN_DOCUMENT", "SECTION_OF", "IN_SECTION", "NEXT_CHUNK", "SUBSECTION_OF")
    )
    assert all(value == 0 for value in after.values()), after
    assert await scalar(store.reader, "SHOW INDEXES YIELD name RETURN count(name)") == schema_before


async def test_reset_reports_its_progress_after_every_committed_batch(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b", "c", "d", "e"])
    service = maintenance(store, options=MaintenanceOptions(batch_documents=2))
    planned = await service.preview()
    seen: list[tuple[int, int, int]] = []

    def progress(done: RemovalProgress) -> None:
        seen.append((done.documents, done.chunks, done.batches))

    report = await service.reset(progress=progress)
    assert [batches for _, _, batches in seen] == [1, 2, 3]
    assert [documents for documents, _, _ in seen] == [2, 4, 5]
    assert seen[-1][1] == report.chunks == planned.chunks
    assert await scalar(store.reader, "MATCH (d:Document) RETURN count(d)") == 0


async def test_reset_keeps_a_running_run_and_unexpired_leases(store: Store, graph: None) -> None:
    await ingest(store, ["a"])
    await store.execute(
        "CREATE (:IngestionRun {id: 'run-live', status: 'Running', startedAt: datetime(), settingsFingerprint: 'x'})"
    )
    await Leases(store, MODEL, 600).acquire(document_id("a"), "run-live")

    report = await maintenance(store).reset()

    assert report.documents == 1 and report.leases == 0 and report.runs == 1
    assert (await counts(store))["IngestionRun"] == 1
    assert await scalar(store.reader, "MATCH (l:GraphRagLease) RETURN l.runId") == "run-live"


async def test_batches_hold_at_most_the_document_and_byte_bounds(store: Store, graph: None) -> None:
    await ingest(store, [f"doc-{i}" for i in range(3)])
    padding = "\n\nMore notes on servicing the hubs and bearings, season by season." * 6
    large = [Sources.text(f"large-{i}", manual(10 + i) + padding, media_type="text/markdown") for i in range(2)]
    assert (await ingestion_service(store).ingest(large)).ingested == 2
    sizes = await scalar(
        store.reader,
        "MATCH (d:Document) WHERE d.id IN $ids RETURN collect(d.lengthBytes)",
        {"ids": [s.document_id for s in large]},
    )
    assert all(512 < size < 1024 for size in sizes)  # so the two exceed one KiB together

    by_count = await maintenance(store, options=MaintenanceOptions(batch_documents=2)).reset(
        ResetScope(document_ids=tuple(document_id(f"doc-{i}") for i in range(3)))
    )
    by_bytes = await maintenance(store, options=MaintenanceOptions(batch_bytes=1024)).reset()

    assert (by_count.documents, by_count.batches) == (3, 2)
    assert (by_bytes.documents, by_bytes.batches) == (2, 2)


async def test_preview_counts_what_a_reset_would_remove_and_writes_nothing(store: Store, graph: None) -> None:
    first = await ingest(store, ["a", "b"])
    await ingest(store, ["c"], offset=2)
    before = await snapshot(store)
    service = maintenance(store)

    everything = await service.preview()
    by_run = await service.preview(ResetScope(run_ids=(first.run_id,)))

    totals = await counts(store)
    assert (everything.documents, everything.sections, everything.chunks) == (3, totals["Section"], totals["Chunk"])
    shapes = [await document_shape(store, document_id(n)) for n in ("a", "b")]
    assert by_run.documents == 2 and by_run.chunks == sum(s["chunks"] for s in shapes)
    assert await snapshot(store) == before


async def test_reingest_changed_skips_unchanged_documents_and_replaces_changed_ones(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b"])
    service = maintenance(store)
    changed = Sources.text("b", manual(1) + "\nA new closing line about tyres.\n", media_type="text/markdown")

    receipt = await service.reingest_changed([Sources.text("a", manual(0), media_type="text/markdown"), changed])

    assert (receipt.unchanged, receipt.ingested) == (1, 1)
    assert (await counts(store))["Document"] == 2


# --------------------------------------------------------------------------- orphans


async def test_remove_orphans_removes_orphan_groups_and_expired_leases_only(store: Store, graph: None) -> None:
    receipt = await ingest(store, ["a", "b"])
    gone = document_id("a")
    shape = await document_shape(store, gone)
    # The document node goes by hand (with its incoming links), leaving its sections and chunks.
    await store.execute("MATCH (d:Document {id: $id})<-[r]-() DELETE r", {"id": gone})
    await store.execute("MATCH (d:Document {id: $id}) DELETE d", {"id": gone})
    leases = Leases(store, MODEL, 600)
    await leases.acquire("expired-key", receipt.run_id)
    await leases.acquire("live-key", receipt.run_id)
    await store.execute("MATCH (l:GraphRagLease {key: 'expired-key'}) SET l.expiresAt = datetime() - duration('PT1M')")
    before = await snapshot(store)

    report = await maintenance(store).remove_orphans()

    assert (report.chunks, report.sections, report.leases) == (shape["chunks"], shape["sections"], 1)
    assert report.documents == 0
    assert await document_shape(store, gone) == dict.fromkeys(shape, 0)
    assert await scalar(store.reader, "MATCH (l:GraphRagLease) RETURN collect(l.key)") == ["live-key"]
    nodes, links = without_documents(before, {gone})
    nodes = {eid: value for eid, value in nodes.items() if value[1].get("key") != "expired-key"}
    assert await snapshot(store) == (nodes, links)


# --------------------------------------------------------------------------- refusals


async def build_neo4j_graphrag_graph(store: Store) -> None:
    """Nodes under the toolkit's labels as neo4j-graphrag writes them: no run id anywhere."""
    await store.execute(
        "UNWIND range(0, 2) AS i "
        "CREATE (d:Document {id: 'ext-' + i, path: 'doc' + i}) "
        "CREATE (c1:Chunk {id: 'ext-' + i + '-0', text: 'alpha', index: 0}) "
        "CREATE (c2:Chunk {id: 'ext-' + i + '-1', text: 'beta', index: 1}) "
        "CREATE (c1)-[:FROM_DOCUMENT]->(d), (c2)-[:FROM_DOCUMENT]->(d), (c1)-[:NEXT_CHUNK]->(c2) "
        "CREATE (:__Entity__:Person {name: 'P' + i})-[:FROM_CHUNK]->(c1)"
    )


async def test_a_foreign_graph_is_refused_untouched(store: Store, graph: None) -> None:
    await build_neo4j_graphrag_graph(store)
    before = await snapshot(store)
    service = maintenance(store)

    with pytest.raises(GraphRefused) as everything:
        await service.reset()
    with pytest.raises(GraphRefused) as one:
        await service.remove_source("ext-1")
    assert everything.value.code == "foreign-graph" and "3 documents" in everything.value.message
    assert one.value.code == "foreign-graph"
    assert await snapshot(store) == before


async def test_a_mixed_graph_is_refused_untouched_by_a_reset_of_everything(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b"])
    await store.execute("CREATE (:Chunk {id: 'stranger', documentId: 'elsewhere', text: 'x'})")
    before = await snapshot(store)

    with pytest.raises(GraphRefused) as refused:
        await maintenance(store).reset()

    assert "1 chunk carries no run id" in refused.value.message
    assert await snapshot(store) == before


async def test_a_run_id_that_names_no_run_is_refused(store: Store, graph: None) -> None:
    await ingest(store, ["a"])
    await store.execute("MATCH (d:Document {id: $id}) SET d.runId = 'run-of-another-tool'", {"id": document_id("a")})
    before = await snapshot(store)

    with pytest.raises(GraphRefused) as by_id:
        await maintenance(store).remove_source(document_id("a"))
    with pytest.raises(GraphRefused) as by_run:
        await maintenance(store).reset(ResetScope(run_ids=("run-of-another-tool",)))

    assert "name no ingestion run" in by_id.value.message and "run-of-another-tool" in by_run.value.message
    assert await snapshot(store) == before


async def test_a_relationship_the_toolkit_does_not_own_refuses_the_batch_instead_of_detaching(
    store: Store, graph: None
) -> None:
    receipt = await ingest(store, ["a", "b"])
    await seed_knowledge(store, receipt.run_id, {"thing-x": "a"})
    before = await snapshot(store)
    service = maintenance(store)

    with pytest.raises(GraphRefused) as one:
        await service.remove_source(document_id("a"))
    with pytest.raises(GraphRefused) as everything:
        await service.reset()

    assert "TEST_MENTION: 1" in one.value.message and "TEST_MENTION: 1" in everything.value.message
    assert await snapshot(store) == before


async def test_with_the_extension_a_type_nobody_owns_still_refuses_and_a_link_without_run_id_too(
    store: Store,
    graph: None,
) -> None:
    receipt = await ingest(store, ["a", "b"])
    await seed_knowledge(store, receipt.run_id, {"thing-x": "a"})
    await store.execute(
        "MATCH (c:Chunk {documentId: $id, order: 1}) CREATE (:__Entity__ {name: 'P'})-[:FROM_CHUNK]->(c)",
        {"id": document_id("a")},
    )
    await store.execute(
        "MATCH (:Chunk {documentId: $id, order: 0})-[r:NEXT_CHUNK]->() REMOVE r.runId", {"id": document_id("b")}
    )
    before = await snapshot(store)
    service = maintenance(store, knowledge=GraphKnowledge())

    with pytest.raises(GraphRefused) as typed:
        await service.remove_source(document_id("a"))
    with pytest.raises(GraphRefused) as unstamped:
        await service.remove_source(document_id("b"))

    assert "FROM_CHUNK: 1" in typed.value.message and "TEST_MENTION" not in typed.value.message
    assert "1 link carries no run id" in unstamped.value.message
    assert await snapshot(store) == before


async def test_a_structural_link_to_another_document_refuses_the_batch(store: Store, graph: None) -> None:
    receipt = await ingest(store, ["a", "b"])
    await store.execute(
        "MATCH (c:Chunk {documentId: $a, order: 0}), (d:Document {id: $b}) CREATE (c)-[:IN_DOCUMENT {runId: $run}]->(d)",
        {"a": document_id("a"), "b": document_id("b"), "run": receipt.run_id},
    )
    before = await snapshot(store)
    surveys: list[str] = []
    remove_hook = store.add_hook(lambda event: surveys.append(event.name) if event.name.endswith(".survey") else None)

    try:
        with pytest.raises(GraphRefused) as refused:
            await maintenance(store).remove_source(document_id("b"))
    finally:
        remove_hook()

    assert "1 structural links join it to nodes of other documents" in refused.value.message
    # Seen twice in a row (a commit landing mid-survey is seen once): refused, nothing changed.
    assert surveys == ["maintenance.remove.survey"] * 2
    assert await snapshot(store) == before


async def test_a_link_from_another_document_gone_by_the_second_survey_is_not_refused(
    store: Store, graph: None, neo4j_settings: ConnectionSettings
) -> None:
    # A survey reads committed data as it goes: an ingest committing mid-survey can show it
    # links it cannot place, once. Here the first survey sees a real link from another
    # document, which another writer deletes before the removal surveys again.
    receipt = await ingest(store, ["a", "b"])
    a, b = document_id("a"), document_id("b")
    kept = await document_shape(store, a)
    await store.execute(
        "MATCH (c:Chunk {documentId: $a, order: 0}), (d:Document {id: $b}) CREATE (c)-[:IN_DOCUMENT {runId: $run}]->(d)",
        {"a": a, "b": b, "run": receipt.run_id},
    )
    late = neo4j.GraphDatabase.driver(neo4j_settings.uri, auth=(neo4j_settings.user, neo4j_settings.password))
    surveys: list[str] = []

    def unlink_after_the_first_survey(event: StatementEvent) -> None:
        if event.name == "maintenance.remove.survey":
            surveys.append(event.name)
            if len(surveys) == 1:
                late.execute_query(
                    "MATCH (:Chunk {documentId: $a})-[r:IN_DOCUMENT]->(:Document {id: $b}) DELETE r",
                    {"a": a, "b": b},
                    database_=neo4j_settings.database,
                )

    report = await remove_source_while(store, b, unlink_after_the_first_survey, late)

    assert len(surveys) == 2 and report.documents == 1
    assert await document_shape(store, a) == kept
    assert (await document_shape(store, b))["document"] == 0


# --------------------------------------------------------------------------- knowledge, batches and failures


async def test_knowledge_is_removed_before_chunks_and_facts_lose_only_the_removed_documents(
    store: Store, graph: None
) -> None:
    receipt = await ingest(store, ["a", "b", "c"])
    run = receipt.run_id
    await seed_knowledge(store, run, {"x": "a", "y": "b", "z": "c"})
    await seed_knowledge(store, run, {"x": "c"})
    await add_fact(store, run, "x", "y", ["a", "b"])  # only the removed documents state it
    await add_fact(store, run, "y", "z", ["b", "c"])  # a third document states it too
    knowledge = GraphKnowledge()
    service = maintenance(store, knowledge=knowledge)

    report = await service.reset(ResetScope(document_ids=(document_id("a"), document_id("b"))))

    assert report.batches == 1 and (report.facts, report.facts_updated) == (1, 1)
    assert await scalar(store.reader, "MATCH ()-[f:TEST_FACT]->() RETURN collect(f.documentIds)") == [
        [document_id("c")]
    ]
    assert await scalar(store.reader, "MATCH ()-[m:TEST_MENTION]->() RETURN count(m)") == 2  # x and z, in c
    assert (await service.check()).codes == (HealthFinding.ORPHAN_ENTITIES,)

    orphans = await service.remove_orphans()

    assert (orphans.things, orphans.facts) == (1, 1)  # y, with the fact y -> z
    assert await scalar(store.reader, "MATCH (t:TestThing) RETURN collect(t.id) ") in (["x", "z"], ["z", "x"])
    assert (await service.check()).healthy


async def test_remove_source_takes_a_gone_document_off_the_facts_that_still_list_it(store: Store, graph: None) -> None:
    receipt = await ingest(store, ["a", "b"])
    await seed_knowledge(store, receipt.run_id, {"x": "b", "y": "b"})
    await add_fact(store, receipt.run_id, "x", "y", ["a", "b"])
    await maintenance(store).remove_source(document_id("a"))  # without the extension: facts untouched
    service = maintenance(store, knowledge=GraphKnowledge())
    assert (await service.check()).codes == (HealthFinding.STALE_FACTS,)

    report = await service.remove_source(document_id("a"))

    assert (report.documents, report.facts_updated, report.not_found) == (0, 1, (document_id("a"),))
    assert (await service.check()).healthy


async def test_a_batch_over_the_fact_bound_is_halved_and_only_a_single_large_document_is_refused(
    store: Store,
    graph: None,
) -> None:
    names = [f"doc-{i}" for i in range(6)]
    await ingest(store, names)
    ordered = sorted(document_id(n) for n in names)
    heavy = ordered[2]
    knowledge = GraphKnowledge(extra_updates={d: (11 if d == heavy else 3) for d in ordered})
    service = maintenance(store, knowledge=knowledge, options=MaintenanceOptions(max_fact_updates=10))
    heavy_shape = await document_shape(store, heavy)

    report = await service.reset()

    assert [len(batch) for batch in knowledge.counted] == [6, 3, 2, 1, 3]
    assert (report.documents, report.batches, report.refused) == (5, 2, (heavy,))
    assert [(limit.name, limit.value) for limit in report.limits_reached] == [(MAX_FACT_UPDATES, 10)]
    assert await document_shape(store, heavy) == heavy_shape
    assert (await counts(store))["Document"] == 1


async def test_a_failure_undoes_its_own_batch_and_not_earlier_ones(store: Store, graph: None) -> None:
    names = [f"doc-{i}" for i in range(6)]
    receipt = await ingest(store, names)
    ordered = sorted(document_id(n) for n in names)
    for name in names:
        await seed_knowledge(store, receipt.run_id, {f"thing-{name}": name})
    before = await snapshot(store)
    service = maintenance(
        store, knowledge=GraphKnowledge(fail_on=ordered[2]), options=MaintenanceOptions(batch_documents=2)
    )

    with pytest.raises(RuntimeError, match="failed mid-batch"):
        await service.reset()

    # The first batch is gone, the second (which failed after deleting its mentions) and
    # the third are exactly as they were, mentions included.
    nodes, links = without_documents(before, set(ordered[:2]))
    links = {eid: value for eid, value in links.items() if not (value[0] == "TEST_MENTION" and value[2] not in nodes)}
    assert await snapshot(store) == (nodes, links)


async def test_a_batch_that_reaches_a_foreign_document_stops_there_after_earlier_batches(
    store: Store, graph: None
) -> None:
    names = [f"doc-{i}" for i in range(4)]
    await ingest(store, names)
    ordered = sorted(document_id(n) for n in names)
    await store.execute("MATCH (c:Chunk {documentId: $id, order: 1}) REMOVE c.runId", {"id": ordered[2]})
    before = await snapshot(store)

    with pytest.raises(GraphRefused) as refused:
        await maintenance(store, options=MaintenanceOptions(batch_documents=2)).reset(
            ResetScope(document_ids=tuple(ordered))
        )

    assert (
        "1 chunk carries no run id" in refused.value.message
        and "2 documents in 1 earlier batch were removed" in refused.value.message
    )
    assert await snapshot(store) == without_documents(before, set(ordered[:2]))


async def test_a_transient_error_retries_the_batch_whole_with_the_extensions_work(store: Store, graph: None) -> None:
    receipt = await ingest(store, ["a", "b"])
    await seed_knowledge(store, receipt.run_id, {"x": "a", "y": "b"})
    before = await snapshot(store)
    knowledge = GraphKnowledge(deadlocks=2)

    report = await maintenance(store, knowledge=knowledge).remove_source(document_id("a"))

    # Three attempts, each deleting the mention again: the first two were rolled back whole.
    assert knowledge.removed_mentions == [1, 1, 1] and knowledge.deadlocks == 0
    assert (report.documents, report.batches) == (1, 1)
    # The mention of x in a went with a's chunk; the thing x itself stays (an orphan now).
    assert await snapshot(store) == without_documents(before, {document_id("a")})


async def test_every_statement_of_a_removal_is_named_and_a_batch_writes_in_one_write_transaction(
    store: Store, graph: None
) -> None:
    await ingest(store, ["a", "b"])
    events: list[StatementEvent] = []
    remove_hook = store.add_hook(events.append)
    try:
        report = await maintenance(store).remove_source(document_id("a"))
    finally:
        remove_hook()

    assert events and all(event.name.startswith("maintenance.") for event in events), [e.name for e in events]
    writes = {event.name for event in events if event.mode is AccessMode.WRITE}
    # The retraction of community report findings runs in the batch's transaction too (none here to settle).
    assert writes == {
        "maintenance.remove.survey",
        "maintenance.remove.findings_retracted",
        "maintenance.remove.findings_trimmed",
        "maintenance.remove.round",
    }
    assert {event.name for event in events if event.mode is AccessMode.READ} == {"maintenance.scope.named"}
    # The hook sees what each statement changed: exactly what the report counts.
    assert sum(event.counters.get("nodes_deleted", 0) for event in events) == 1 + report.sections + report.chunks
    assert sum(event.counters.get("relationships_deleted", 0) for event in events) == report.links


# --------------------------------------------------------------------------- racing an ingest
async def remove_source_while(
    store: Store, doc: str, hook: Callable[[StatementEvent], None], late: neo4j.Driver
) -> RemovalReport:
    """``remove_source(doc)`` with ``hook`` seeing its statements; closes ``late`` (the hook's driver) after."""
    remove_hook = store.add_hook(hook)
    try:
        return await maintenance(store).remove_source(doc)
    finally:
        remove_hook()
        late.close()


async def test_a_removal_meeting_nodes_linked_after_it_deleted_the_links_is_retried_and_removes_them_whole(
    store: Store, graph: None, neo4j_settings: ConnectionSettings
) -> None:
    receipt = await ingest(store, ["a", "b"])
    doc = document_id("a")
    other = await document_shape(store, document_id("b"))
    late = neo4j.GraphDatabase.driver(neo4j_settings.uri, auth=(neo4j_settings.user, neo4j_settings.password))
    fired: list[str] = []

    def write_new_version_parts(event: StatementEvent) -> None:
        # After the batch deleted the links it surveyed, another writer commits a section and
        # a chunk of the document, linked to each other (new nodes: no lock is waited for).
        if event.name == "maintenance.remove.round" and not fired:
            fired.append(event.name)
            late.execute_query(
                "CREATE (c:Chunk {id: 'late-chunk', documentId: $doc, runId: $run, order: 99, text: 'x', "
                "startByte: 0, endByte: 1}) "
                "CREATE (s:Section {id: 'late-section', documentId: $doc, runId: $run, title: 't', level: 1, "
                "order: 99, startByte: 0, endByte: 1}) "
                "CREATE (c)-[:IN_SECTION {runId: $run}]->(s)",
                {"doc": doc, "run": receipt.run_id},
                database_=neo4j_settings.database,
            )

    report = await remove_source_while(store, doc, write_new_version_parts, late)

    assert fired and report.documents == 1
    assert await document_shape(store, doc) == dict.fromkeys(other, 0)
    assert await document_shape(store, document_id("b")) == other


async def test_removals_racing_ingests_of_new_versions_never_raise_and_leave_each_document_whole_or_absent(
    store: Store, graph: None
) -> None:
    ingestion, service = ingestion_service(store), maintenance(store)
    doc = document_id("raced")
    outcomes: list[str] = []
    for i in range(90):
        version = Sources.text("raced", manual(i) + f"\n\nRevision {i}.\n", media_type="text/markdown")
        receipt, report = await asyncio.gather(ingestion.ingest([version]), service.remove_source(doc))
        outcomes.append(receipt.documents[0].error_code or receipt.documents[0].status.value)
        shape = await document_shape(store, doc)
        if shape["document"]:
            assert shape["chunks"] > 0 and shape["IN_DOCUMENT"] == shape["chunks"], (i, shape)
        else:
            assert shape == dict.fromkeys(shape, 0), (i, shape)
        assert report.documents <= 1
    assert set(outcomes) <= {"Ingested", "lease-held", "write-failed"}, outcomes
    assert (await service.check()).healthy


# --------------------------------------------------------------------------- a removal killed mid-way


async def test_a_removal_killed_mid_way_leaves_only_whole_documents(store: Store, graph: None) -> None:
    names = [f"doc-{i}" for i in range(60)]
    await ingest(store, names)
    shapes = {document_id(n): await document_shape(store, document_id(n)) for n in names}
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.integration.maintenance_support",
        "reset",
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while await scalar(store.reader, "MATCH (d:Document) RETURN count(d)") == len(names):
            assert worker.returncode is None, await worker.communicate()
            assert time.monotonic() < deadline, "the worker committed no batch within 60 s"
            await asyncio.sleep(0.005)
        worker.send_signal(signal.SIGKILL)
    finally:
        await asyncio.wait_for(worker.wait(), timeout=30)
    assert worker.returncode == -signal.SIGKILL

    remaining = set(await scalar(store.reader, "MATCH (d:Document) RETURN collect(d.id)"))
    assert 0 < len(remaining) < len(names), "the kill came after the whole reset"
    for doc_id, shape in shapes.items():
        expected = shape if doc_id in remaining else dict.fromkeys(shape, 0)
        assert await document_shape(store, doc_id) == expected, doc_id
    assert (await maintenance(store).check()).count(HealthFinding.ORPHANS) == 0


# --------------------------------------------------------------------------- the command line


async def cli(*args: str, stdin: str = "") -> tuple[int, str, str]:
    """Run the command line in its own process (it connects and disconnects neomodel itself)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from graphrag_orm.cli import main; main()",
        *args,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_cli_reset_asks_first_and_removes_only_with_consent(store: Store, graph: None) -> None:
    first = await ingest(store, ["a", "b"])
    await ingest(store, ["c"], offset=2)

    code, out, _ = await cli("reset", "--run", first.run_id, stdin="n\n")
    assert code == 1 and "2 documents" in out
    assert (await counts(store))["Document"] == 3

    code, out, err = await cli("reset", "--run", first.run_id, "--yes")
    assert code == 0, err
    assert "removed 2 documents" in out and "1 run in 1 batch " in out
    assert (await counts(store))["Document"] == 1


async def test_cli_remove_and_orphans(store: Store, graph: None) -> None:
    await ingest(store, ["a", "b"])
    await store.execute("MATCH (d:Document {id: $id})<-[r]-() DELETE r", {"id": document_id("b")})
    await store.execute("MATCH (d:Document {id: $id}) DELETE d", {"id": document_id("b")})

    removed = await cli("remove", document_id("a"))
    missing = await cli("remove", "no-such-document")
    orphans = await cli("orphans")
    again = await cli("orphans")

    assert removed[0] == 0 and "removed 1 document," in removed[1]
    assert missing[0] == 1 and "(document-not-found)" in missing[2] and "Traceback" not in missing[2]
    assert orphans[0] == 0 and "chunks" in orphans[1]
    assert again[0] == 0 and "no orphans" in again[1]
    assert await counts(store) == dict.fromkeys(await counts(store), 0) | {"IngestionRun": 1}


async def test_cli_refuses_a_foreign_graph_with_its_code(store: Store, graph: None) -> None:
    await build_neo4j_graphrag_graph(store)
    code, _, err = await cli("reset", "--yes")
    assert code == 1 and "foreign-graph" in err
