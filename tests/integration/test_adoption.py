"""Adopt mode against the real Neo4j, on a graph of neo4j-graphrag's shape built with Cypher.

The graph is what neo4j-graphrag 1.22.0 writes: ``Document:__KGBuilder__ {path, createdAt, ...}``
and ``Chunk:__KGBuilder__ {text, index, embedding}`` with ``FROM_DOCUMENT`` and ``NEXT_CHUNK``, no
ids, and its own vector index. Embeddings come from the hashing stand-in at the graph's dimensions,
answers from ``ExtractiveChat``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from graphrag_orm import GraphRag, Sources
from graphrag_orm.adoption import Adoption, AdoptionOptions, AdoptionPlan, adopted_chunk_id, adopted_uri
from graphrag_orm.answers.values import Completed, Retrieved
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import AdoptionError
from graphrag_orm.evidence import Grounding
from graphrag_orm.layout import Layout
from graphrag_orm.migrate import Chain, Migrator, Revision, write_revision
from graphrag_orm.server import graphrag_router
from graphrag_orm.server.events import event_of
from graphrag_orm.sources import document_id
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.store.introspection import read_live_schema
from graphrag_orm.tools import GraphRagTools
from tests.support.tracing import captured_spans

DIMENSIONS = 64
EMBEDDING_SET = EmbeddingSet(model="graphrag-orm/hashing-v1", dimensions=DIMENSIONS)
VECTOR_INDEX = "chunk_vectors"  # the name a neo4j-graphrag user gave their index
LAYOUT = Layout.NEO4J_GRAPHRAG.replace(vector_index=VECTOR_INDEX)

LIGHTHOUSE = (
    "The lighthouse keeper lights the lantern at dusk. Émile climbs 112 steps ☕ every evening.\n"
    "Ships pass the Skerry rocks at night; the beam turns twice a minute.\n"
    "In winter the keeper trims the wick at noon and again at midnight.\n"
)
ORCHARD = (
    "The orchard has forty apple trees and six pear trees.\n"
    "Pickers start in September and finish before the first frost.\n"
    "Cider is pressed in the old barn, 東京 style, with a wooden press.\n"
)
PATHS = {"/data/lighthouse.txt": LIGHTHOUSE, "/data/orchard.txt": ORCHARD}
QUESTION = "When does the lighthouse keeper light the lantern?"


def split(text: str, size: int = 60, overlap: int = 10) -> list[str]:
    """Fixed-size chunks with overlap, by characters, as neo4j-graphrag's FixedSizeSplitter makes them."""
    return [text[start : start + size] for start in range(0, len(text), size - overlap)]


async def build_graph(store: Store, paths: dict[str, str] = PATHS) -> None:
    embedder = HashingEmbedder(DIMENSIONS)
    documents = []
    for path, text in paths.items():
        chunks = split(text)
        vectors = await embedder.embed(chunks)
        documents.append(
            {
                "path": path,
                "chunks": [
                    {"text": t, "index": i, "embedding": list(v)}
                    for i, (t, v) in enumerate(zip(chunks, vectors, strict=True))
                ],
            }
        )

    async def work(tx: Any) -> None:
        await tx.run(
            "UNWIND $documents AS doc "
            "CREATE (d:Document:__KGBuilder__ {path: doc.path, createdAt: datetime(), author: 'keeper'}) "
            "WITH d, doc UNWIND doc.chunks AS chunk "
            "CREATE (c:Chunk:__KGBuilder__ {text: chunk.text, index: chunk.index, embedding: chunk.embedding}) "
            "CREATE (c)-[:FROM_DOCUMENT]->(d)",
            {"documents": documents},
            name="test.adoption.graph",
        )
        await tx.run(
            "MATCH (a:Chunk)-[:FROM_DOCUMENT]->(d:Document)<-[:FROM_DOCUMENT]-(b:Chunk) "
            "WHERE b.index = a.index + 1 CREATE (a)-[:NEXT_CHUNK]->(b)",
            name="test.adoption.next",
        )

    await store.write(work)


async def shape(store: Store) -> list[tuple[Any, ...]]:
    """Every node's labels and property keys, and every relationship's type and keys, by element id."""
    nodes = await store.read(
        "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, keys(n) AS keys", name="test.shape.nodes"
    )
    links = await store.read(
        "MATCH ()-[r]->() RETURN elementId(r) AS id, type(r) AS type, keys(r) AS keys", name="test.shape.links"
    )
    found = [("node", r["id"], tuple(sorted(r["labels"])), tuple(sorted(r["keys"]))) for r in nodes]
    found += [("link", r["id"], r["type"], tuple(sorted(r["keys"]))) for r in links]
    return sorted(found)


async def prepare(store: Store, plan: AdoptionPlan, folder: Path) -> None:
    """The application's own chain: the adoption's steps as its first revision, applied."""
    write_revision(folder, Revision.new("0001_adopt", None, "adopt neo4j-graphrag's graph", plan.prepare_steps()))
    await Migrator(store, Chain.load(folder)).apply()


@pytest.fixture
async def foreign(bare_database: None, store: Store) -> AsyncIterator[Store]:
    """An empty database holding neo4j-graphrag's graph and its vector index."""
    await store.execute(
        f"CREATE VECTOR INDEX {VECTOR_INDEX} FOR (c:Chunk) ON (c.embedding) OPTIONS {{indexConfig: "
        f"{{`vector.dimensions`: {DIMENSIONS}, `vector.similarity_function`: 'cosine'}}}}"
    )
    await build_graph(store)
    await store.execute("CALL db.awaitIndexes(120)")
    yield store


@pytest.fixture
async def prepared(foreign: Store, tmp_path: Path) -> Store:
    await prepare(foreign, Adoption(foreign).plan(LAYOUT, EMBEDDING_SET), tmp_path / "chain")
    return foreign


async def facade(settings: ConnectionSettings) -> GraphRag:
    rag = GraphRag(
        embedding_set=EMBEDDING_SET, embedder=HashingEmbedder(DIMENSIONS), chat=ExtractiveChat(), layout=LAYOUT
    )
    return await rag.connect(settings, neomodel=False)


async def document_view(rag: GraphRag, document: str) -> dict[str, Any]:
    """``GET /graphrag/documents/{id}``, the explorer's document view, served in process."""
    app = FastAPI()
    app.include_router(graphrag_router(rag))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        response = await http.get(f"/graphrag/documents/{document}")
    assert response.status_code == 200
    view: dict[str, Any] = response.json()
    return view


async def stored_chunk(store: Store, chunk_id: str) -> dict[str, Any]:
    row = (
        await store.read(
            "MATCH (c:Chunk {id: $id}) RETURN c.text AS text, c.documentId AS document, c.grounding AS grounding",
            {"id": chunk_id},
        )
    ).single()
    assert row is not None
    return row


# --- prepare and preview ------------------------------------------------------------------------


async def test_prepare_steps_leave_out_the_index_the_layout_names_and_apply_through_the_migration_engine(
    foreign: Store, tmp_path: Path
) -> None:
    plan = Adoption(foreign).plan(LAYOUT, EMBEDDING_SET)
    names = {step.definition.name for step in plan.prepare_steps()}
    assert VECTOR_INDEX not in names
    assert {"graphrag_document_id_unique", "graphrag_chunk_id_unique", "graphrag_chunk_text"} <= names
    before = (await plan.preview()).blockers
    assert [b.code for b in before] == [ErrorCode.SCHEMA_MISSING] and before[0].count == len(names)

    await prepare(foreign, plan, tmp_path / "chain")

    live = await read_live_schema(foreign)
    assert names <= set(live) and all(live[name].state == "ONLINE" for name in names)
    assert live[VECTOR_INDEX].detail["dimensions"] == DIMENSIONS  # the other tool's, as it was
    preview = await plan.preview()
    assert preview.steps_pending == () and preview.indexes_adopted == (VECTOR_INDEX,) and not preview.blocked


async def test_the_dry_run_writes_nothing_and_counts_what_it_finds(prepared: Store, tmp_path: Path) -> None:
    lighthouse = tmp_path / "lighthouse.txt"
    lighthouse.write_bytes(LIGHTHOUSE.encode())
    options = AdoptionOptions(source_files={"/data/lighthouse.txt": lighthouse, "/data/missing.txt": lighthouse})
    before = await shape(prepared)

    preview = await Adoption(prepared).plan(LAYOUT, EMBEDDING_SET, options).preview()

    assert await shape(prepared) == before
    chunks = len(split(LIGHTHOUSE)) + len(split(ORCHARD))
    assert (preview.documents, preview.chunks, preview.document_links) == (2, chunks, chunks)
    assert preview.next_links == chunks - 2
    assert (preview.documents_placed, preview.documents_not_placed, preview.sources_unmatched) == (1, 0, 1)
    assert preview.chunks_source_grounded == len(split(LIGHTHOUSE))
    assert preview.chunks_chunk_grounded == len(split(ORCHARD))
    assert preview.chunks_without_embedding == 0 and preview.blockers == () and preview.limits_reached == ()


# --- apply, answer, undo -----------------------------------------------------------------------


async def test_apply_then_answer_with_chunk_grounded_citations(
    prepared: Store, neo4j_settings: ConnectionSettings
) -> None:
    plan = Adoption(prepared).plan(LAYOUT, EMBEDDING_SET)
    before = await shape(prepared)
    with captured_spans() as spans:
        receipt = await plan.apply()
    chunks = len(split(LIGHTHOUSE)) + len(split(ORCHARD))
    assert (receipt.documents, receipt.chunks, receipt.links) == (2, chunks, 2 * chunks - 2)
    assert (receipt.documents_placed, receipt.chunks_chunk_grounded, receipt.batches) == (0, chunks, 1)
    adopt = [s for s in spans.get_finished_spans() if s.name == "GraphRag.Adopt"]
    assert len(adopt) == 1 and adopt[0].attributes["graphrag.run_id"] == receipt.run_id

    # Only keys were added: same labels, same elements, the other library's properties all kept.
    after = {item[1]: item for item in await shape(prepared)}
    added = {"id", "sourceUri", "mediaType", "contentHash", "lengthBytes", "runId"}
    chunk_added = {"id", "documentId", "startByte", "endByte", "grounding", "embeddingSetId", "runId"}
    for kind, element, labels, keys in before:
        now = after[element]
        assert now[2] == labels
        if kind == "link":
            assert set(now[3]) - set(keys) == {"runId"}
        elif "Document" in labels:
            assert set(now[3]) - set(keys) == added and set(keys) <= set(now[3])
        elif "Chunk" in labels:
            assert set(now[3]) - set(keys) == chunk_added and set(keys) <= set(now[3])
    lighthouse = document_id(adopted_uri("/data/lighthouse.txt"))
    first = await stored_chunk(prepared, adopted_chunk_id(lighthouse, 0))
    assert first == {"text": split(LIGHTHOUSE)[0], "document": lighthouse, "grounding": "Chunk"}

    rag = await facade(neo4j_settings)
    try:
        assert rag.answers is not None
        answer = await rag.answers.answer(QUESTION)
        assert answer.answered and answer.citations
        evidence = await rag.retriever.retrieve(QUESTION)
        assert evidence.items and {item.grounding for item in evidence.items} == {Grounding.CHUNK}
        for item in evidence.items:
            assert item.start_byte == 0 and item.end_byte == len(item.text.encode())
        for citation in answer.citations:
            assert citation.grounding is Grounding.CHUNK
            stored = (await stored_chunk(prepared, citation.chunk_id))["text"].encode()
            assert stored[citation.start_byte : citation.end_byte].decode() == citation.quote
            assert citation.model_dump(mode="json", by_alias=True)["grounding"] == "Chunk"

        tools = GraphRagTools(rag)
        answered = (await tools.call("answer_from_documents", {"question": QUESTION})).to_payload()
        assert answered["answered"] and {c["grounding"] for c in answered["citations"]} == {"Chunk"}
        passages = (await tools.call("search_documents", {"query": QUESTION})).to_payload()["passages"]
        assert passages and {p["grounding"] for p in passages} == {"Chunk"}

        events = [event_of(update) async for update in rag.answers.stream(QUESTION)]
        retrieved, verified = events[0].model_dump(mode="json", by_alias=True), events[-1]
        assert {item["grounding"] for item in retrieved["items"]} == {"Chunk"}
        verified_json = verified.model_dump(mode="json", by_alias=True)
        assert verified_json["citations"] and {c["grounding"] for c in verified_json["citations"]} == {"Chunk"}

        view = await document_view(rag, lighthouse)
        assert view["grounding"] == "Chunk" and view["sourceUri"] == "adopted:/data/lighthouse.txt"
        assert [(c["startByte"], c["endByte"]) for c in view["chunks"]] == [
            (0, len(chunk.encode())) for chunk in split(LIGHTHOUSE)
        ]
    finally:
        await rag.close()


async def test_with_source_files_citations_are_source_grounded_and_equal_the_files_bytes(
    prepared: Store, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    lighthouse, orchard = tmp_path / "lighthouse.txt", tmp_path / "orchard.txt"
    lighthouse.write_bytes(LIGHTHOUSE.encode())
    orchard.write_bytes(ORCHARD.replace("\n", "\r\n").encode())  # not the chunks' bytes: never normalised
    uri = "https://example.org/keepers/lighthouse.txt"
    options = AdoptionOptions(
        source_files={"/data/lighthouse.txt": Sources.file(lighthouse, uri=uri), "/data/orchard.txt": orchard}
    )
    receipt = await Adoption(prepared).plan(LAYOUT, EMBEDDING_SET, options).apply()
    assert (receipt.documents_placed, receipt.chunks_source_grounded) == (1, len(split(LIGHTHOUSE)))
    assert receipt.chunks_chunk_grounded == len(split(ORCHARD))

    document = (
        await prepared.read(
            "MATCH (d:Document {path: '/data/lighthouse.txt'}) RETURN d.id AS id, d.sourceUri AS uri, "
            "d.contentHash AS hash, d.lengthBytes AS length, d.mediaType AS media"
        )
    ).single()
    assert document is not None
    assert (document["id"], document["uri"], document["length"]) == (document_id(uri), uri, len(LIGHTHOUSE.encode()))
    assert document["media"] == "text/plain"
    orchard_uri = Sources.file(orchard).source_uri
    grounding = await prepared.read(
        "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) RETURN d.sourceUri AS uri, collect(DISTINCT c.grounding) AS g"
    )
    assert {row["uri"]: row["g"] for row in grounding} == {uri: ["Source"], orchard_uri: ["Chunk"]}

    rag = await facade(neo4j_settings)
    try:
        assert rag.answers is not None
        answer = await rag.answers.answer(QUESTION)
        assert answer.answered and answer.citations
        for citation in answer.citations:
            assert citation.document_id == document_id(uri) and citation.grounding is Grounding.SOURCE
            assert lighthouse.read_bytes()[citation.start_byte : citation.end_byte].decode() == citation.quote
            assert "grounding" in citation.model_dump(mode="json", by_alias=True)
        passages = (await GraphRagTools(rag).call("search_documents", {"query": QUESTION})).to_payload()["passages"]
        source_passages = [p for p in passages if p["documentId"] == document_id(uri)]
        assert source_passages and all("grounding" not in p for p in source_passages)  # JSON as before
        placed, alone = await document_view(rag, document_id(uri)), await document_view(rag, document_id(orchard_uri))
        assert "grounding" not in placed and alone["grounding"] == "Chunk"
    finally:
        await rag.close()


async def test_undo_restores_every_property_key_exactly(prepared: Store) -> None:
    plan = Adoption(prepared).plan(LAYOUT, EMBEDDING_SET, AdoptionOptions(batch_size=2))
    before = await shape(prepared)
    receipt = await plan.apply()
    assert receipt.batches == 1 and await shape(prepared) != before

    undone = await plan.undo(receipt.run_id)

    assert await shape(prepared) == before
    chunks = len(split(LIGHTHOUSE)) + len(split(ORCHARD))
    assert (undone.documents, undone.chunks, undone.links) == (2, chunks, 2 * chunks - 2)
    assert undone.batches > 3  # two documents, then chunks and links two at a time
    with pytest.raises(AdoptionError) as refused:
        await plan.undo(receipt.run_id)
    assert refused.value.code == ErrorCode.RUN_NOT_FOUND
    assert await shape(prepared) == before


async def test_a_document_ingested_again_after_adoption_stays_on_undo(
    prepared: Store, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    lighthouse = tmp_path / "lighthouse.txt"
    lighthouse.write_bytes(LIGHTHOUSE.encode())
    source = Sources.file(lighthouse, uri="https://example.org/keepers/lighthouse.txt")
    plan = Adoption(prepared).plan(
        LAYOUT, EMBEDDING_SET, AdoptionOptions(source_files={"/data/lighthouse.txt": source})
    )
    before = {item[1]: item for item in await shape(prepared)}
    receipt = await plan.apply()
    rag = await facade(neo4j_settings)
    try:
        ingested = await rag.ingestion.ingest([source])
    finally:
        await rag.close()
    assert ingested.ingested == 1 and ingested.run_id != receipt.run_id

    await plan.undo(receipt.run_id)

    kept = (
        await prepared.read(
            "MATCH (d:Document {id: $id}) RETURN d.runId AS run, "
            "COUNT { MATCH (c:Chunk)-[l:FROM_DOCUMENT]->(d) WHERE c.runId = $run AND l.runId = $run } AS chunks",
            {"id": source.document_id, "run": ingested.run_id},
        )
    ).single()
    assert kept is not None and kept["run"] == ingested.run_id and kept["chunks"] >= 1
    orchard = [item for item in await shape(prepared) if item[1] in before and "Document" not in str(item[2])]
    assert all(item == before[item[1]] for item in orchard)  # the other document's chunks are restored
    runs = await prepared.read("MATCH (r:IngestionRun) RETURN r.id AS id")
    assert [row["id"] for row in runs] == [ingested.run_id]


# --- blockers --------------------------------------------------------------------------------------


async def test_each_blocker_is_reported_and_apply_writes_nothing(prepared: Store) -> None:
    async def damage(tx: Any) -> None:
        await tx.run("CREATE (:Chunk:__KGBuilder__ {text: 'loose', index: 0, embedding: [0.5, 0.5]})")
        await tx.run("CREATE (:Document:__KGBuilder__ {path: '/data/orchard.txt'})")
        await tx.run(
            "CREATE (:Document:__KGBuilder__ {createdAt: datetime()}), (:Document:__KGBuilder__ {path: ''}), (:Document:__KGBuilder__)"
        )
        await tx.run(
            "MATCH (c:Chunk {index: 1})-[:FROM_DOCUMENT]->(:Document {path: '/data/lighthouse.txt'}) "
            "SET c.index = 0, c.documentId = 'theirs'"
        )
        await tx.run(
            "CREATE (:IngestionRun {id: 'run-ours', status: 'Completed'}) "
            "CREATE (:Document {id: 'ours', path: '/data/ours.txt', runId: 'run-ours'})"
        )
        await tx.run(
            "MATCH (c:Chunk {index: 2})-[:FROM_DOCUMENT]->(:Document {path: '/data/orchard.txt'}) "
            "CREATE (c)-[:FROM_DOCUMENT]->(:Document:__KGBuilder__ {path: '/data/copy.txt'}) "
            "REMOVE c.text"
        )

    await prepared.write(damage)
    plan = Adoption(prepared).plan(LAYOUT, EMBEDDING_SET, AdoptionOptions(max_listed=1))
    before = await shape(prepared)

    preview = await plan.preview()

    codes = {blocker.code: blocker for blocker in preview.blockers}
    assert set(codes) == {
        ErrorCode.CHUNK_WITHOUT_DOCUMENT,
        ErrorCode.CHUNK_IN_SEVERAL_DOCUMENTS,
        ErrorCode.DOCUMENT_WITHOUT_PATH,
        ErrorCode.DUPLICATE_PATH,
        ErrorCode.CHUNK_WITHOUT_INDEX,
        ErrorCode.CHUNK_WITHOUT_TEXT,
        ErrorCode.EMBEDDING_DIMENSIONS,
        ErrorCode.OWNED_BY_RUN,
        ErrorCode.PROPERTY_TAKEN,
    }
    assert codes[ErrorCode.DUPLICATE_PATH].count == 2 and codes[ErrorCode.DUPLICATE_PATH].examples == (
        "/data/orchard.txt",
    )
    assert codes[ErrorCode.CHUNK_WITHOUT_INDEX].count == 2
    assert codes[ErrorCode.DOCUMENT_WITHOUT_PATH].count == 3  # and two paths missing are not one path shared
    assert codes[ErrorCode.CHUNK_WITHOUT_INDEX].examples == ("/data/lighthouse.txt #0",)
    assert codes[ErrorCode.PROPERTY_TAKEN].count == 1  # the chunk's documentId; the owned document is owned-by-run
    assert [(limit.name.value, limit.value) for limit in preview.limits_reached] == [("MaxListed", 1)]
    with pytest.raises(AdoptionError) as refused:
        await plan.apply()
    assert refused.value.code == ErrorCode.ADOPTION_BLOCKED and "duplicate-path" in refused.value.message
    assert await shape(prepared) == before


async def test_an_index_the_layout_names_is_checked_by_the_dry_run(prepared: Store) -> None:
    missing = Adoption(prepared).plan(LAYOUT.replace(fulltext_index="chunk_text_index"), EMBEDDING_SET)
    found = {(b.code, b.examples) for b in (await missing.preview()).blockers}
    assert (ErrorCode.SCHEMA_MISSING, ("chunk_text_index",)) in found
    other = EMBEDDING_SET.model_copy(update={"dimensions": 32})
    mismatched = {b.code for b in (await Adoption(prepared).plan(LAYOUT, other).preview()).blockers}
    assert {ErrorCode.SCHEMA_MISMATCH, ErrorCode.EMBEDDING_DIMENSIONS} <= mismatched
    unnamed = {b.code for b in (await Adoption(prepared).plan(Layout.NEO4J_GRAPHRAG, EMBEDDING_SET).preview()).blockers}
    assert ErrorCode.EQUIVALENT_SCHEMA in unnamed  # the graph's vector index, not named in the layout


async def test_events_carry_the_grounding_of_what_they_cite(
    prepared: Store, neo4j_settings: ConnectionSettings
) -> None:
    await Adoption(prepared).plan(LAYOUT, EMBEDDING_SET).apply()
    rag = await facade(neo4j_settings)
    try:
        assert rag.answers is not None
        updates = [update async for update in rag.answers.stream(QUESTION)]
    finally:
        await rag.close()
    assert isinstance(updates[0], Retrieved) and isinstance(updates[-1], Completed)
    completed = updates[-1].answer
    assert completed.answered and all(c.grounding is Grounding.CHUNK for c in completed.citations)
