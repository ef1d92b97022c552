"""Shared helpers of the maintenance tests, and the worker process the kill test starts.

Usage as a worker: ``python -m tests.integration.maintenance_support reset`` opens a
store with NEO4J_* from the environment and resets every document in batches of one
document (tiny pages, so each batch takes many statements), printing ``done`` at the
end; the test kills it with SIGKILL after the first batch commits.

The counting and snapshot helpers spell labels and property names literally on
purpose: they check the library's work independently of the names it derives. They
read through the suite's store (each read a transaction of its own).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from neo4j.exceptions import TransientError

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.codes import HealthFinding
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionReceipt, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance import (
    KnowledgeMaintenance,
    KnowledgeRemoval,
    MaintenanceOptions,
    MaintenanceService,
    ThingsRemoval,
)
from graphrag_orm.maintenance.reports import HealthFindingItem
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store import Queries, Store
from graphrag_orm.store.connection import open_store

MODEL = for_layout(Layout.DEFAULT)
CHUNKER = ChunkerOptions(max_utf8_bytes=128, overlap_paragraphs=0)
LEXICAL_TYPES = ("IN_DOCUMENT", "SECTION_OF", "IN_SECTION", "NEXT_CHUNK", "SUBSECTION_OF")
_SUITE_LABELS = ("GraphRagTestDatabase", "GraphRagMigration")


def manual(i: int) -> str:
    """A Markdown document with sections, a subsection and several chunks (one with non-ASCII text)."""
    return (
        f"# Manual {i}\n\nIntro paragraph {i} about bikes, wheels and the workshop.\n\n"
        f"## Part {i}.1\n\nThe chain of bike {i} needs oil every month, more in winter.\n\n"
        f"### Detail {i}.1.1\n\nSpokes: thirty-two, laced three-cross. Café crème at {i} o'clock.\n\n"
        f"## Part {i}.2\n\nBrakes squeal when wet; clean the rims of bike {i} with a dry cloth.\n"
    )


def ingestion_service(store: Store) -> IngestionService:
    return IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(CHUNKER),
    )


def maintenance(
    store: Store, *, options: MaintenanceOptions | None = None, knowledge: KnowledgeMaintenance | None = None
) -> MaintenanceService:
    return MaintenanceService(
        store, MODEL, OFFLINE_EMBEDDING_SET, options=options, ingestion=ingestion_service(store), knowledge=knowledge
    )


async def ingest(store: Store, names: Sequence[str], offset: int = 0) -> IngestionReceipt:
    """Ingest one manual per name (``text:<name>``); every document must be ingested."""
    sources = [Sources.text(name, manual(offset + i), media_type="text/markdown") for i, name in enumerate(names)]
    receipt = await ingestion_service(store).ingest(sources)
    assert receipt.ingested == len(names), receipt
    return receipt


def document_id(name: str) -> str:
    return Sources.text(name, "x").document_id


async def scalar(queries: Queries, query: str, parameters: Mapping[str, Any] | None = None) -> Any:
    """The one column of the first row (there must be one); ``queries`` is a store's reader or a transaction."""
    result = await queries.run(query, dict(parameters or {}))
    return result.records[0][result.keys[0]]


async def counts(store: Store) -> dict[str, int]:
    """Nodes per toolkit label and relationships per type, counted independently of the library."""
    found: dict[str, int] = {}
    for label in ("Document", "Section", "Chunk", "IngestionRun", "GraphRagLease"):
        found[label] = int(await scalar(store.reader, f"MATCH (n:{label}) RETURN count(n) AS n"))
    for kind in LEXICAL_TYPES:
        found[kind] = int(await scalar(store.reader, f"MATCH ()-[r:{kind}]->() RETURN count(r) AS n"))
    return found


async def document_shape(store: Store, doc_id: str) -> dict[str, int]:
    """One document's parts: its node, sections, chunks and each structural link type touching them."""
    read = store.reader
    shape = {
        "document": int(await scalar(read, "MATCH (d:Document {id: $id}) RETURN count(d) AS n", {"id": doc_id})),
        "sections": int(await scalar(read, "MATCH (s:Section {documentId: $id}) RETURN count(s) AS n", {"id": doc_id})),
        "chunks": int(await scalar(read, "MATCH (c:Chunk {documentId: $id}) RETURN count(c) AS n", {"id": doc_id})),
    }
    for kind in LEXICAL_TYPES:
        shape[kind] = int(
            await scalar(
                read,
                f"MATCH (a)-[r:{kind}]->(b) WHERE a.documentId = $id OR b.documentId = $id OR b.id = $id "
                "RETURN count(DISTINCT r) AS n",
                {"id": doc_id},
            )
        )
    return shape


Snapshot = tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]]


async def snapshot(store: Store) -> Snapshot:
    """Every node (labels, all properties) and relationship (type, ends, all properties) by element id."""
    found = await store.read(
        "MATCH (n) WHERE none(l IN labels(n) WHERE l IN $suite) "
        "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props",
        {"suite": list(_SUITE_LABELS)},
    )
    nodes = {row["id"]: (tuple(sorted(row["labels"])), row["props"]) for row in found}
    found = await store.read(
        "MATCH (a)-[r]->(b) RETURN elementId(r) AS id, type(r) AS type, elementId(a) AS source, "
        "elementId(b) AS target, properties(r) AS props"
    )
    links = {row["id"]: (row["type"], row["source"], row["target"], row["props"]) for row in found}
    return nodes, links


def without_documents(before: Snapshot, doc_ids: set[str], runs: set[str] | None = None) -> Snapshot:
    """``before`` minus the given documents (node, sections, chunks, links touching them) and run nodes."""
    nodes, links = before
    gone = set()
    for eid, (labels, props) in nodes.items():
        if ("Document" in labels and props.get("id") in doc_ids) or (
            ("Section" in labels or "Chunk" in labels) and props.get("documentId") in doc_ids
        ):
            gone.add(eid)
        if "IngestionRun" in labels and props.get("id") in (runs or set()):
            gone.add(eid)
    kept_nodes = {eid: value for eid, value in nodes.items() if eid not in gone}
    kept_links = {eid: value for eid, value in links.items() if value[1] not in gone and value[2] not in gone}
    return kept_nodes, kept_links


class GraphKnowledge:
    """A small KnowledgeMaintenance over real nodes: things mention chunks, facts list documents.

    ``(:TestThing {id, runId})-[:TEST_MENTION {runId}]->(:Chunk)`` and
    ``(:TestThing)-[:TEST_FACT {documentIds, runId}]->(:TestThing)``. ``extra_updates``
    adds a fake number of fact updates per document, so the halving rule can be
    exercised without writing 100,000 facts; ``fail_on`` raises after the mentions
    of a batch holding that document were deleted; ``deadlocks`` raises that many
    transient errors (as a deadlock would) at the same point, one per attempt.
    """

    relationship_types = frozenset({"TEST_MENTION"})

    def __init__(
        self, extra_updates: dict[str, int] | None = None, fail_on: str | None = None, deadlocks: int = 0
    ) -> None:
        self.extra_updates = extra_updates or {}
        self.fail_on = fail_on
        self.deadlocks = deadlocks
        self.counted: list[tuple[str, ...]] = []
        self.removed_mentions: list[int] = []

    async def run_stamps(
        self, tx: Queries, document_ids: Sequence[str], chunk_ids: Sequence[str]
    ) -> dict[str | None, int]:
        found = await tx.run(
            "CALL () { MATCH (:TestThing)-[m:TEST_MENTION]->(c:Chunk) WHERE c.id IN $chunks RETURN m.runId AS run "
            "UNION ALL MATCH ()-[f:TEST_FACT]->() WHERE any(d IN f.documentIds WHERE d IN $docs) "
            "RETURN f.runId AS run } RETURN run, count(*) AS n",
            {"chunks": list(chunk_ids), "docs": list(document_ids)},
        )
        return {row["run"]: int(row["n"]) for row in found}

    async def count_fact_updates(self, tx: Queries, document_ids: Sequence[str]) -> int:
        self.counted.append(tuple(document_ids))
        real = await scalar(
            tx,
            "MATCH ()-[f:TEST_FACT]->() WHERE any(d IN f.documentIds WHERE d IN $docs) RETURN count(f) AS n",
            {"docs": list(document_ids)},
        )
        return int(real) + sum(self.extra_updates.get(d, 0) for d in document_ids)

    async def remove_for_documents(
        self, tx: Queries, document_ids: Sequence[str], chunk_ids: Sequence[str], page_size: int
    ) -> KnowledgeRemoval:
        mentions = 0
        while True:
            removed = await scalar(
                tx,
                "MATCH (:TestThing)-[m:TEST_MENTION]->(c:Chunk) WHERE c.id IN $chunks "
                "WITH m LIMIT $page DELETE m RETURN count(m) AS n",
                {"chunks": list(chunk_ids), "page": page_size},
            )
            mentions += int(removed)
            if removed < page_size:
                break
        self.removed_mentions.append(mentions)
        if self.fail_on in document_ids:
            raise RuntimeError("the knowledge extension failed mid-batch")
        if self.deadlocks:
            self.deadlocks -= 1
            raise TransientError("a deadlock, as the server reports it (DeadlockDetected)")
        # Lock (write), then read: the list is rewritten from the value read under the lock.
        row = (
            await tx.run(
                "MATCH ()-[f:TEST_FACT]->() WHERE any(d IN f.documentIds WHERE d IN $docs) "
                "SET f.locked = true SET f.documentIds = [d IN f.documentIds WHERE NOT d IN $docs] REMOVE f.locked "
                "RETURN count(f) AS touched, sum(CASE WHEN size(f.documentIds) = 0 THEN 1 ELSE 0 END) AS emptied",
                {"docs": list(document_ids)},
            )
        ).records[0]
        touched, emptied = int(row["touched"]), int(row["emptied"] or 0)
        deleted = await scalar(
            tx, "MATCH ()-[f:TEST_FACT]->() WHERE size(f.documentIds) = 0 DELETE f RETURN count(f) AS n"
        )
        assert deleted == emptied
        return KnowledgeRemoval(mentions=mentions, facts_updated=touched - emptied, facts_deleted=emptied)

    async def orphan_run_stamps(self, tx: Queries) -> dict[str | None, int]:
        found = await tx.run(
            "MATCH (t:TestThing) WHERE NOT EXISTS { (t)-[:TEST_MENTION]->() } "
            "OPTIONAL MATCH (t)-[f:TEST_FACT]-() WITH collect(t.runId) + collect(f.runId) AS runs "
            "UNWIND runs AS run RETURN run, count(*) AS n"
        )
        return {row["run"]: int(row["n"]) for row in found}

    async def remove_orphan_things(self, tx: Queries, page_size: int) -> ThingsRemoval:
        found = await tx.run(
            "MATCH (t:TestThing) WHERE NOT EXISTS { (t)-[:TEST_MENTION]->() } RETURN t.id AS id LIMIT $page",
            {"page": page_size},
        )
        ids = found.column("id")
        facts = await scalar(
            tx,
            "MATCH (t:TestThing)-[f:TEST_FACT]-() WHERE t.id IN $ids WITH DISTINCT f DELETE f RETURN count(f) AS n",
            {"ids": ids},
        )
        things = await scalar(tx, "MATCH (t:TestThing) WHERE t.id IN $ids DELETE t RETURN count(t) AS n", {"ids": ids})
        return ThingsRemoval(things=int(things), facts=int(facts))

    async def run_ids_in_use(self, tx: Queries, run_ids: Sequence[str]) -> frozenset[str]:
        found = await tx.run(
            "MATCH (t:TestThing) WHERE t.runId IN $runs RETURN DISTINCT t.runId AS run", {"runs": list(run_ids)}
        )
        return frozenset(found.column("run"))

    async def health(self, tx: Queries) -> list[HealthFindingItem]:
        found: list[HealthFindingItem] = []
        orphans = await scalar(
            tx, "MATCH (t:TestThing) WHERE NOT EXISTS { (t)-[:TEST_MENTION]->() } RETURN count(t) AS n"
        )
        if orphans:
            found.append(HealthFindingItem(code=HealthFinding.ORPHAN_ENTITIES, count=orphans))
        stale = await scalar(
            tx,
            "MATCH ()-[f:TEST_FACT]->() WHERE any(d IN f.documentIds WHERE NOT EXISTS { (:Document {id: d}) }) "
            "RETURN count(f) AS n",
        )
        if stale:
            found.append(HealthFindingItem(code=HealthFinding.STALE_FACTS, count=stale))
        return found


async def seed_knowledge(store: Store, run_id: str, names: dict[str, str]) -> None:
    """Things mentioned in the first chunk of the named documents; ``names`` maps thing to document name."""
    for thing, doc_name in names.items():
        await store.execute(
            "MERGE (t:TestThing {id: $thing}) ON CREATE SET t.runId = $run "
            "WITH t MATCH (c:Chunk {documentId: $doc, order: 0}) CREATE (t)-[:TEST_MENTION {runId: $run}]->(c)",
            {"thing": thing, "run": run_id, "doc": document_id(doc_name)},
        )


async def add_fact(store: Store, run_id: str, source: str, target: str, doc_names: Sequence[str]) -> None:
    await store.execute(
        "MATCH (a:TestThing {id: $a}), (b:TestThing {id: $b}) "
        "CREATE (a)-[:TEST_FACT {documentIds: $docs, runId: $run}]->(b)",
        {"a": source, "b": target, "docs": sorted(document_id(n) for n in doc_names), "run": run_id},
    )


async def _worker(argv: list[str]) -> int:
    store = await open_store()
    try:
        options = MaintenanceOptions(batch_documents=1, page_size=1)
        service = MaintenanceService(store, MODEL, OFFLINE_EMBEDDING_SET, options=options)
        report = await service.reset()
        print(f"done {report.documents}", flush=True)
    finally:
        await store.driver.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(_worker(sys.argv[1:])))
