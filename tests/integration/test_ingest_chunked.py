"""Chunked ingestion against the real Neo4j: another library's chunks, placed in the stored bytes."""

from __future__ import annotations

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.extraction import Extractor, KnowledgeWriter
from graphrag_orm.ingestion import (
    ChunkedDocument,
    ChunkText,
    DocumentStatus,
    IngestionOptions,
    IngestionService,
    PlacementCounts,
    RunStatus,
)
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retry import RetryOptions, RetryPolicy
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from tests.integration.knowledge_support import BIKES, entity, fact, ontology_schema, scripted

MODEL = for_layout(Layout.DEFAULT)
DIMS = OFFLINE_EMBEDDING_SET.dimensions

GUIDE = """# Brake recall

The BC-310 brake caliper is recalled because its piston can seize.

It was supplied by Acme Components.

## Affected bikes

The City 3 and the Trail 5 use the BC-310.<3 spaces>
Émile's shop in Zürich has parts 🚲.

## What to do

Stop riding and book a free replacement.
""".replace("<3 spaces>", "   ")

# What a header splitter and a recursive splitter hand back for GUIDE: a heading path
# prepended (chunk 1), trailing spaces stripped and the blank line closed up (chunks 2
# and 3), an overlap (chunk 3 repeats the end of chunk 2), multi-byte characters.
CHUNKS = [
    "# Brake recall\n\nThe BC-310 brake caliper is recalled because its piston can seize.",
    ChunkText(
        "# Brake recall\nIt was supplied by Acme Components.",
        context="# Brake recall",
    ),
    "## Affected bikes\nThe City 3 and the Trail 5 use the BC-310.\nÉmile's shop",
    "Émile's shop in Zürich has parts 🚲.",
    "## What to do\n\nStop riding and book a free replacement.",
]


def service(store: Store, **options: object) -> IngestionService:
    return IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(DIMS),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=128)),
        options=IngestionOptions(**options),  # type: ignore[arg-type]
    )


def guide(name: str = "guide", text: str = GUIDE) -> Source:
    return Sources.text(name, text, media_type="text/markdown")


async def scalar(store: Store, query: str, **params: object) -> object:
    return (await store.read(query, params)).value()


async def chunk_rows(store: Store, document_id: str) -> list[dict[str, object]]:
    result = await store.read(
        "MATCH (c:Chunk {documentId: $doc}) OPTIONAL MATCH (c)-[:IN_SECTION]->(s:Section) "
        "RETURN c.id AS id, c.text AS text, c.startByte AS start, c.endByte AS end, c.order AS order, "
        "size(c.embedding) AS dims, s.title AS section ORDER BY c.order",
        {"doc": document_id},
    )
    return [dict(row) for row in result.records]


async def test_chunks_from_another_splitter_are_stored_as_the_bytes_of_their_placed_spans(
    graph: None, store: Store
) -> None:
    source = guide()
    receipt = await service(store).ingest_chunked([ChunkedDocument.create(source, CHUNKS)], "splitter-a")

    assert receipt.status == RunStatus.COMPLETED
    (outcome,) = receipt.documents
    assert outcome.status == DocumentStatus.INGESTED and outcome.chunks == len(CHUNKS)
    assert outcome.placement == PlacementCounts(exact=3, prefix_removed=1, normalised=1)
    assert receipt.placement == outcome.placement
    utf8 = GUIDE.encode()
    rows = await chunk_rows(store, source.document_id)
    assert [row["order"] for row in rows] == list(range(len(CHUNKS)))
    for row in rows:
        assert isinstance(row["text"], str) and isinstance(row["start"], int) and isinstance(row["end"], int)
        assert row["text"].encode() == utf8[row["start"] : row["end"]]
        assert row["dims"] == DIMS
    starts = [row["start"] for row in rows]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # The heading path is not stored: the chunk is the document's own bytes.
    assert rows[1]["text"] == "It was supplied by Acme Components."
    # The document's whitespace, not the splitter's.
    assert rows[2]["text"] == "## Affected bikes\n\nThe City 3 and the Trail 5 use the BC-310.   \nÉmile's shop"
    assert rows[3]["start"] < rows[2]["end"], "overlapping chunks keep their overlap"
    assert [row["section"] for row in rows] == [
        "Brake recall",
        "Brake recall",
        "Affected bikes",
        "Affected bikes",
        "What to do",
    ]
    assert (
        await scalar(
            store, "MATCH (:Chunk {documentId: $doc})-[r:NEXT_CHUNK]->() RETURN count(r)", doc=source.document_id
        )
        == 4
    )
    assert await scalar(store, "MATCH (s:Section {documentId: $doc}) RETURN count(s)", doc=source.document_id) == 3
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0
    run = await scalar(store, "MATCH (r:IngestionRun {id: $run}) RETURN r.status", run=receipt.run_id)
    assert run == "Completed"


async def test_a_chunk_that_cannot_be_placed_fails_its_document_and_nothing_of_it_is_written(
    graph: None, store: Store
) -> None:
    bad, good = guide("bad"), guide("good")
    chunks = [CHUNKS[0], "This sentence is not in the guide.", *CHUNKS[2:]]
    receipt = await service(store).ingest_chunked(
        [ChunkedDocument.create(bad, chunks), ChunkedDocument.create(good, CHUNKS)], "splitter-a"
    )

    failed, ingested = receipt.documents
    assert failed.status == DocumentStatus.FAILED and failed.error_code == "position-not-recovered"
    assert failed.chunks == 0 and failed.placement is None and failed.embedding_calls == 0
    assert ingested.status == DocumentStatus.INGESTED
    assert receipt.chunks_written == ingested.chunks == len(CHUNKS)
    for label in ("Document", "Chunk", "Section"):
        query = f"MATCH (n:{label}) WHERE n.id = $doc OR n.documentId = $doc RETURN count(n)"
        assert await scalar(store, query, doc=bad.document_id) == 0
    assert await scalar(store, "MATCH (l:GraphRagLease) RETURN count(l)") == 0


async def test_the_same_splitter_leaves_a_document_unchanged_and_another_rewrites_it(graph: None, store: Store) -> None:
    source = guide()
    documents = [ChunkedDocument.create(source, CHUNKS)]
    first = await service(store).ingest_chunked(documents, "splitter-a")
    ids_a = [row["id"] for row in await chunk_rows(store, source.document_id)]

    again = await service(store).ingest_chunked(documents, "splitter-a")
    assert again.documents[0].status == DocumentStatus.UNCHANGED and again.embedding_calls == 0
    assert again.documents[0].placement is None and again.placement == PlacementCounts()

    other = await service(store).ingest_chunked(documents, "splitter-b")
    assert other.documents[0].status == DocumentStatus.INGESTED
    rows = await chunk_rows(store, source.document_id)
    assert len(rows) == len(CHUNKS)
    assert not {row["id"] for row in rows} & set(ids_a), "another splitter gives other chunk ids"
    assert first.documents[0].status == DocumentStatus.INGESTED


async def test_the_settings_fingerprint_names_the_splitter_and_differs_from_the_toolkits_chunker(
    graph: None, store: Store
) -> None:
    source = guide()
    stored = "MATCH (d:Document {id: $doc}) RETURN d.settingsFingerprint"
    ingestion = service(store)

    own = await ingestion.ingest([source])
    by_own = await scalar(store, stored, doc=source.document_id)
    first = await ingestion.ingest_chunked([ChunkedDocument.create(source, CHUNKS)], "splitter-a")
    by_a = await scalar(store, stored, doc=source.document_id)
    await ingestion.ingest_chunked([ChunkedDocument.create(source, CHUNKS)], "splitter-b")
    by_b = await scalar(store, stored, doc=source.document_id)

    assert own.documents[0].status == first.documents[0].status == DocumentStatus.INGESTED
    assert by_own == ingestion.fingerprint
    assert len({by_own, by_a, by_b}) == 3
    run = await scalar(store, "MATCH (r:IngestionRun {id: $run}) RETURN r.settingsFingerprint", run=first.run_id)
    assert run not in (by_own, by_a), "a chunked document's fingerprint also covers its chunks"
    # The toolkit's own ingest sees a document another splitter chunked as changed.
    back = await ingestion.ingest([source])
    assert back.documents[0].status == DocumentStatus.INGESTED


async def test_other_chunks_under_the_same_fingerprint_rewrite_the_document(graph: None, store: Store) -> None:
    source = guide()
    ingestion = service(store)
    await ingestion.ingest_chunked([ChunkedDocument.create(source, CHUNKS)], "splitter-a")
    fewer = await ingestion.ingest_chunked([ChunkedDocument.create(source, CHUNKS[:2])], "splitter-a")
    assert fewer.documents[0].status == DocumentStatus.INGESTED and fewer.documents[0].chunks == 2
    assert len(await chunk_rows(store, source.document_id)) == 2
    refused = await ingestion.ingest_chunked([ChunkedDocument.create(source, ["Not in it."])], "splitter-a")
    assert refused.documents[0].error_code == "position-not-recovered"
    assert len(await chunk_rows(store, source.document_id)) == 2, "a failed document keeps what was stored"


async def test_a_chunk_crossing_a_heading_belongs_to_the_section_holding_both_sides(graph: None, store: Store) -> None:
    source = guide()
    crossing = "The City 3 and the Trail 5 use the BC-310.\nÉmile's shop in Zürich has parts 🚲.\n\n## What to do"
    chunks = [CHUNKS[0], crossing, "The BC-310 brake caliper"]
    receipt = await service(store).ingest_chunked([ChunkedDocument.create(source, chunks[:2])], "splitter-a")
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    rows = await chunk_rows(store, source.document_id)
    # "## What to do" is a sibling of "## Affected bikes": both sit in "# Brake recall".
    assert [row["section"] for row in rows] == ["Brake recall", "Brake recall"]

    late = await service(store).ingest_chunked([ChunkedDocument.create(source, chunks)], "splitter-c")
    assert late.documents[0].error_code == "position-not-recovered", "a chunk before the previous one is out of order"


async def test_more_chunks_than_the_bound_fail_the_document_and_the_limit_is_reported(
    graph: None, store: Store
) -> None:
    source = guide()
    receipt = await service(store, max_chunks_per_document=3).ingest_chunked(
        [ChunkedDocument.create(source, CHUNKS)], "splitter-a"
    )
    assert receipt.documents[0].error_code == "document-too-large"
    assert [(limit.name.value, limit.value) for limit in receipt.limits_reached] == [("MaxChunksPerDocument", 3)]
    assert await scalar(store, "MATCH (n) WHERE n:Document OR n:Chunk RETURN count(n)") == 0


async def test_empty_chunks_are_skipped_and_counted(graph: None, store: Store) -> None:
    source = guide()
    receipt = await service(store).ingest_chunked([ChunkedDocument.create(source, ["", *CHUNKS, " \n"])], "s")
    (outcome,) = receipt.documents
    assert outcome.chunks == len(CHUNKS)
    assert outcome.placement is not None and outcome.placement.skipped == 2
    assert '"placement":{"given":0' in receipt.to_json()


async def test_bad_input_is_refused_before_a_run_starts(graph: None, store: Store) -> None:
    ingestion = service(store)
    with pytest.raises(ConfigurationError) as blank:
        await ingestion.ingest_chunked([ChunkedDocument.create(guide(), CHUNKS)], " ")
    assert blank.value.code == "invalid-option"
    with pytest.raises(ConfigurationError) as wrong:
        await ingestion.ingest_chunked([guide()], "splitter-a")  # type: ignore[list-item]
    assert wrong.value.code == "invalid-source"
    assert await scalar(store, "MATCH (r:IngestionRun) RETURN count(r)") == 0


async def test_extraction_reads_the_stored_chunks_and_grounds_mentions_in_the_documents_bytes(
    graph: None, store: Store
) -> None:
    bulletin = "Service bulletin SB-2026-07: Kestrel Components recalls brake caliper BC-310."
    kit = "Brake kit BK-7: two BC-310 calipers\nand two BL-20 levers."
    text = f"{bulletin}\n\n{kit}\n"
    source = Sources.text("wiki", text)
    passages: list[str] = []

    def reply(passage: str) -> dict[str, object]:
        passages.append(passage)
        if passage.startswith("Service bulletin"):
            return {
                "entities": [entity("Bulletin", "SB-2026-07"), entity("Part", "BC-310", mentions=["caliper BC-310"])],
                "relationships": [fact("SB-2026-07", "COVERS", "BC-310")],
            }
        return {"entities": [entity("Part", "BK-7"), entity("Part", "BL-20")], "relationships": []}

    retry = RetryPolicy(RetryOptions(max_retries=1, initial_backoff_seconds=0.01))
    extracting = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(DIMS),
        retry=retry,
        extractor=Extractor(BIKES, scripted(reply), retry=retry),
        knowledge=KnowledgeWriter(MODEL, BIKES),
    )
    chunks = [ChunkText(f"# Wiki\n{bulletin}", context="# Wiki"), "Brake kit BK-7: two BC-310 calipers and two BL-20"]
    async with ontology_schema(store, BIKES):
        receipt = await extracting.ingest_chunked([ChunkedDocument.create(source, chunks)], "splitter-a")
        assert receipt.documents[0].status == DocumentStatus.INGESTED
        assert receipt.extraction is not None and receipt.extraction.calls == 2
        # The model reads the stored bytes: no heading path, the document's line break.
        assert sorted(passages) == sorted([bulletin, "Brake kit BK-7: two BC-310 calipers\nand two BL-20"])
        mentions = (
            await store.read(
                "MATCH (t)-[m:MENTIONED_IN]->(c:Chunk) RETURN t.name AS name, m.startByte AS start, m.endByte AS end"
            )
        ).records
        utf8 = text.encode()
        located = {(row["name"], utf8[row["start"] : row["end"]].decode()) for row in mentions}
        assert located >= {("BC-310", "caliper BC-310"), ("BK-7", "BK-7"), ("BL-20", "BL-20")}
