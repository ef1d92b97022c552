"""Grounded extraction against the real Neo4j: checks with reasons, located mentions, resolution, writes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from graphrag_orm.chat import ChatRequest, ScriptedChat
from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.extraction import ExtractionCandidate, ExtractionOptions, Extractor, KnowledgeWriter, PruneReason
from graphrag_orm.ingestion import DocumentStatus, IngestionOptions, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.ontology import entity_id
from graphrag_orm.retry import RetryOptions, RetryPolicy
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from tests.integration.knowledge_support import BIKES, entity, fact, ontology_schema, scripted

MODEL = for_layout(Layout.DEFAULT)

KIT = "Brake kit BK-7: two BC-310 calipers and two BL-20 levers."
BULLETIN = "Service bulletin SB-2026-07: Kestrel Components recalls brake caliper BC-310."
TRAIL = "Trail 5 spec sheet: full-suspension frame and brake kit BK-7."


def extraction_for(passage: str) -> dict[str, Any]:
    """What a careful model would reply for each wiki passage."""
    if passage.startswith("Brake kit"):
        return {
            "entities": [entity("Part", "BK-7"), entity("Part", "BC-310"), entity("Part", "BL-20")],
            "relationships": [fact("BK-7", "HAS_PART", "BC-310"), fact("BK-7", "HAS_PART", "BL-20")],
        }
    if passage.startswith("Service bulletin"):
        return {
            "entities": [
                entity("Bulletin", "SB-2026-07"),
                entity("Supplier", "Kestrel Components", aliases=["Kestrel"]),
                entity("Part", "BC-310", mentions=["BC-310", "brake caliper BC-310"]),
            ],
            "relationships": [fact("SB-2026-07", "COVERS", "BC-310"), fact("BC-310", "SUPPLIED_BY", "Kestrel")],
        }
    if passage.startswith("Trail 5"):
        return {
            "entities": [entity("Bike", "Trail 5"), entity("Part", "BK-7", mentions=["brake kit BK-7"])],
            "relationships": [fact("Trail 5", "HAS_PART", "BK-7")],
        }
    return {"entities": [], "relationships": []}


def ingestion(store: Store, chat: ScriptedChat, **options: Any) -> IngestionService:
    retry = RetryPolicy(RetryOptions(max_retries=1, initial_backoff_seconds=0.01))
    extractor = Extractor(
        BIKES,
        chat,
        ExtractionOptions(**options.pop("extraction", {})),
        verifier=options.pop("verifier", None),
        retry=retry,
    )
    return IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=options.pop("chunk_bytes", 2048))),
        options=IngestionOptions(**options),
        retry=retry,
        extractor=extractor,
        knowledge=KnowledgeWriter(MODEL, BIKES),
    )


def wiki() -> list[Source]:
    return [Sources.text("bk-7", KIT), Sources.text("sb-2026-07", BULLETIN), Sources.text("trail-5", TRAIL)]


@pytest.fixture
async def knowledge(graph: None, store: Store) -> Any:
    async with ontology_schema(store, BIKES):
        yield


async def rows(store: Store, query: str, **params: Any) -> list[list[Any]]:
    """The records of ``query``, each as its values in RETURN order."""
    return [list(record.values()) for record in await store.read(query, params)]


async def test_grounded_things_facts_and_mentions_are_written_with_located_spans(knowledge: None, store: Store) -> None:
    receipt = await ingestion(store, scripted(extraction_for)).ingest(wiki())
    assert receipt.failed == 0
    assert receipt.extraction is not None and receipt.extraction.calls == 3
    things = {
        row[0]: row[1:]
        for row in await rows(
            store,
            "MATCH (e) WHERE e:Part OR e:Bike OR e:Supplier OR e:Bulletin RETURN e.name, labels(e), e.id, e.aliases",
        )
    }
    assert set(things) == {"BK-7", "BC-310", "BL-20", "SB-2026-07", "Kestrel Components", "Trail 5"}
    assert things["BC-310"][1] == entity_id("Part", "bc-310")
    assert things["Kestrel Components"][2] == "Kestrel"
    facts = await rows(
        store, "MATCH (a)-[f:HAS_PART|COVERS|SUPPLIED_BY]->(b) RETURN a.name, type(f), b.name, f.documentIds, f.runId"
    )
    documents = {s.source_uri: s.document_id for s in wiki()}
    assert sorted((a, t, b) for a, t, b, _, _ in facts) == [
        ("BC-310", "SUPPLIED_BY", "Kestrel Components"),
        ("BK-7", "HAS_PART", "BC-310"),
        ("BK-7", "HAS_PART", "BL-20"),
        ("SB-2026-07", "COVERS", "BC-310"),
        ("Trail 5", "HAS_PART", "BK-7"),
    ]
    for a, fact_type, _b, document_ids, run_id in facts:
        assert run_id == receipt.run_id
        expected = {
            "BK-7": "text:bk-7",
            "SB-2026-07": "text:sb-2026-07",
            "BC-310": "text:sb-2026-07",
            "Trail 5": "text:trail-5",
        }[a]
        assert document_ids == [documents[expected]], (a, fact_type)
    mentions = await rows(
        store,
        "MATCH (t)-[m:MENTIONED_IN]->(c:Chunk) RETURN t.name, m.quote, m.startByte, m.endByte, c.text, c.startByte, m.key",
    )
    for _name, quote, start, end, chunk_text, chunk_start, _key in mentions:
        assert chunk_text.encode()[start - chunk_start : end - chunk_start].decode() == quote
    assert {(m[0], m[1]) for m in mentions} >= {("BC-310", "brake caliper BC-310"), ("BK-7", "brake kit BK-7")}
    assert len({m[6] for m in mentions}) == len(mentions)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ({"entities": [entity("Gadget", "BK-7")], "relationships": []}, PruneReason.UNKNOWN_KIND),
        (
            {"entities": [entity("Part", "BK-7")], "relationships": [fact("BK-7", "HAS_PART", "BK-7")]},
            PruneReason.SELF_LOOP,
        ),
        ({"entities": [entity("Part", "BC-999", mentions=["BC-999"])], "relationships": []}, PruneReason.NOT_GROUNDED),
        ({"entities": [entity("Part", "bk-7", mentions=["bk-7"])], "relationships": []}, PruneReason.NOT_GROUNDED),
        ({"entities": [entity("Part", "  ")], "relationships": []}, PruneReason.MISSING_NAME),
        (
            {
                "entities": [entity("Part", "BK-7"), entity("Part", "BC-310")],
                "relationships": [fact("BK-7", "SUPPLIED_BY", "BC-310")],
            },
            PruneReason.NOT_ALLOWED,
        ),
    ],
    ids=[
        "unknown-kind",
        "self-loop",
        "mention-not-in-chunk",
        "case-changed-mention",
        "missing-name",
        "outside-triples",
    ],
)
async def test_bad_candidates_are_pruned_with_their_reason_and_never_written(
    knowledge: None, store: Store, reply: dict[str, Any], reason: PruneReason
) -> None:
    receipt = await ingestion(store, scripted(lambda _p: reply)).ingest([Sources.text("bk-7", KIT)])
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    assert receipt.extraction is not None
    assert reason in {item.reason for item in receipt.extraction.pruned}
    if reason in (PruneReason.SELF_LOOP, PruneReason.NOT_ALLOWED):
        assert await rows(store, "MATCH ()-[f:HAS_PART|SUPPLIED_BY]->() RETURN f") == []
    else:
        assert await rows(store, "MATCH (e:Part) RETURN e") == []


async def test_a_fact_between_things_from_different_chunks_is_pruned(knowledge: None, store: Store) -> None:
    text = "Trail 5 spec sheet: full-suspension frame.\n\nThe brake kit BK-7 stops it."

    def reply(passage: str) -> dict[str, Any]:
        if passage.startswith("Trail 5"):  # names BK-7, which is only in the other chunk
            return {"entities": [entity("Bike", "Trail 5")], "relationships": [fact("Trail 5", "HAS_PART", "BK-7")]}
        return {"entities": [entity("Part", "BK-7")], "relationships": [fact("Trail 5", "HAS_PART", "BK-7")]}

    receipt = await ingestion(store, scripted(reply), chunk_bytes=64).ingest([Sources.text("trail", text)])
    assert receipt.extraction is not None and receipt.extraction.chunks == 2
    assert [p.reason for p in receipt.extraction.pruned].count(PruneReason.UNKNOWN_END) == 2
    assert await rows(store, "MATCH ()-[f:HAS_PART]->() RETURN f") == []
    assert len(await rows(store, "MATCH (e:Bike|Part) RETURN e")) == 2


async def test_a_relationship_whose_reverse_is_allowed_is_kept_flipped(knowledge: None, store: Store) -> None:
    reply = {
        "entities": [entity("Bike", "Trail 5"), entity("Part", "BK-7")],
        "relationships": [fact("BK-7", "HAS_PART", "Trail 5")],
    }
    receipt = await ingestion(store, scripted(lambda _p: reply)).ingest([Sources.text("trail-5", TRAIL)])
    assert receipt.extraction is not None and receipt.extraction.flipped == 1
    assert await rows(store, "MATCH (a)-[:HAS_PART]->(b) RETURN a.name, b.name") == [["Trail 5", "BK-7"]]


async def test_ten_thousand_entities_in_one_reply_are_bounded(knowledge: None, store: Store) -> None:
    many = {"entities": [entity("Part", "BK-7")] * 10_000, "relationships": []}
    receipt = await ingestion(store, scripted(lambda _p: many), extraction={"max_entities_per_chunk": 50}).ingest(
        [Sources.text("bk-7", KIT)]
    )
    assert receipt.extraction is not None
    assert sum(1 for p in receipt.extraction.pruned if p.reason == PruneReason.OVER_LIMIT) == 9_950
    assert len(await rows(store, "MATCH (e:Part) RETURN e")) == 1


async def test_a_name_with_cypher_syntax_is_data_never_query_text(knowledge: None, store: Store) -> None:
    text = "Part `X) DETACH DELETE (n` is a prank name, and so is }) RETURN 1 //."
    hostile = ["`X) DETACH DELETE (n`", "}) RETURN 1 //"]
    reply = {
        "entities": [entity("Part", name) for name in hostile],
        "relationships": [fact(hostile[0], "HAS_PART", hostile[1])],
    }
    receipt = await ingestion(store, scripted(lambda _p: reply)).ingest([Sources.text("prank", text)])
    assert receipt.failed == 0
    assert sorted(r[0] for r in await rows(store, "MATCH (e:Part) RETURN e.name")) == sorted(hostile)
    assert len(await rows(store, "MATCH (c:Chunk) RETURN c")) == 1


async def test_placeholders_never_merge(knowledge: None, store: Store) -> None:
    def per_document(passage: str) -> dict[str, Any]:
        phrase = "It broke" if "broke" in passage else "It was replaced"
        return {"entities": [entity("Part", "it", mentions=[phrase])], "relationships": []}

    receipt = await ingestion(store, scripted(per_document)).ingest(
        [Sources.text("a", "It broke on Monday."), Sources.text("b", "It was replaced on Friday.")]
    )
    assert receipt.failed == 0
    found = await rows(store, "MATCH (e:Part) RETURN e.id, e.isPlaceholder")
    assert len(found) == 2 and all(placeholder for _, placeholder in found)


async def test_an_unreadable_reply_is_asked_again_once_then_quarantined(knowledge: None, store: Store) -> None:
    answers = iter(["not json", json.dumps(extraction_for(KIT))])
    repaired = await ingestion(store, ScriptedChat(lambda _r: next(answers))).ingest([Sources.text("bk-7", KIT)])
    assert repaired.extraction is not None and repaired.extraction.repaired == 1
    assert len(await rows(store, "MATCH (e:Part) RETURN e")) == 3

    nested = "[" * 500 + "]" * 500
    chat = ScriptedChat(lambda _r: nested)
    quarantined = await ingestion(store, chat).ingest([Sources.text("sb", BULLETIN)])
    assert quarantined.documents[0].status == DocumentStatus.INGESTED
    assert quarantined.extraction is not None
    (entry,) = quarantined.extraction.quarantined
    assert entry.code == "unreadable" and "nested" in entry.problem
    assert len(chat.calls) == 2
    assert "could not be used" in chat.calls[1].messages[-1].content
    assert nested not in chat.calls[1].messages[-1].content


async def test_a_failed_extraction_fails_the_document_and_keeps_the_earlier_version(
    knowledge: None, store: Store
) -> None:
    await ingestion(store, scripted(extraction_for)).ingest([Sources.text("bk-7", KIT)])
    before = await rows(
        store,
        "MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:GraphRagTestDatabase AND NOT n:IngestionRun RETURN count(n)",
    )

    def broken(_request: ChatRequest) -> str:
        raise ConnectionError("the model endpoint dropped the connection")

    changed = Sources.text("bk-7", KIT + " Also two rotors.")
    receipt = await ingestion(store, ScriptedChat(broken)).ingest([changed])
    assert receipt.documents[0].error_code == "extraction-failed"
    after = await rows(
        store,
        "MATCH (n) WHERE NOT n:GraphRagMigration AND NOT n:GraphRagTestDatabase AND NOT n:IngestionRun RETURN count(n)",
    )
    assert after == before
    assert (await rows(store, "MATCH (c:Chunk) RETURN c.text"))[0][0] == KIT


async def test_rerunning_unchanged_input_writes_nothing_new(knowledge: None, store: Store) -> None:
    first = await ingestion(store, scripted(extraction_for)).ingest(wiki())
    snapshot = await rows(store, "MATCH (n)-[r]->(m) RETURN elementId(r), type(r), properties(r) ORDER BY elementId(r)")
    again = await ingestion(store, scripted(extraction_for)).ingest(wiki())
    assert [o.status for o in again.documents] == [DocumentStatus.UNCHANGED] * 3
    assert (
        await rows(store, "MATCH (n)-[r]->(m) RETURN elementId(r), type(r), properties(r) ORDER BY elementId(r)")
        == snapshot
    )
    assert first.run_id != again.run_id


async def test_reingesting_under_new_settings_rewrites_the_same_keys_without_duplicates(
    knowledge: None, store: Store
) -> None:
    await ingestion(store, scripted(extraction_for)).ingest(wiki())
    keys = sorted(r[0] for r in await rows(store, "MATCH ()-[m:MENTIONED_IN]->() RETURN m.key"))
    receipt = await ingestion(store, scripted(extraction_for), extraction={"max_entities_per_chunk": 40}).ingest(wiki())
    assert [o.status for o in receipt.documents] == [DocumentStatus.INGESTED] * 3
    assert sorted(r[0] for r in await rows(store, "MATCH ()-[m:MENTIONED_IN]->() RETURN m.key")) == keys
    assert len(await rows(store, "MATCH ()-[f:HAS_PART|COVERS|SUPPLIED_BY]->() RETURN f")) == 5


async def test_across_documents_a_stored_thing_keeps_its_name_and_description_and_unions_aliases(
    knowledge: None,
    store: Store,
) -> None:
    def first(_passage: str) -> dict[str, Any]:
        return {
            "entities": [
                {**entity("Supplier", "Kestrel Components", aliases=["KC"]), "description": "A supplier in Porto."}
            ],
            "relationships": [],
        }

    def second(_passage: str) -> dict[str, Any]:
        return {
            "entities": [
                {
                    **entity("Supplier", "kestrel  components", mentions=["Kestrel Components"], aliases=["Kestrel"]),
                    "description": "Another description.",
                }
            ],
            "relationships": [],
        }

    await ingestion(store, scripted(first)).ingest([Sources.text("a", "Kestrel Components (KC) supplies calipers.")])
    await ingestion(store, scripted(second)).ingest([Sources.text("b", "We buy from Kestrel Components.")])
    (row,) = await rows(store, "MATCH (s:Supplier) RETURN s.name, s.description, s.aliases")
    assert row == ["Kestrel Components", "A supplier in Porto.", "KC\nKestrel"]


async def test_concurrent_runs_adding_one_fact_from_different_documents_keep_both_ids(
    knowledge: None, store: Store
) -> None:
    texts = [f"Brake kit BK-7 note {i}: it holds the BC-310 caliper." for i in range(12)]

    class SlowChat(ScriptedChat):
        async def complete(self, request: ChatRequest) -> Any:  # type: ignore[override]
            await asyncio.sleep(0.02)
            return await super().complete(request)

    reply = {
        "entities": [entity("Part", "BK-7"), entity("Part", "BC-310")],
        "relationships": [fact("BK-7", "HAS_PART", "BC-310")],
    }
    chat = SlowChat(lambda _r: json.dumps(reply))
    sources = [Sources.text(f"note-{i}", text) for i, text in enumerate(texts)]
    runs = await asyncio.gather(
        ingestion(store, chat, documents_in_flight=6, lanes=6).ingest(sources[:6]),
        ingestion(store, chat, documents_in_flight=6, lanes=6).ingest(sources[6:]),
    )
    assert all(r.failed == 0 for r in runs)
    (row,) = await rows(
        store, "MATCH (:Part {name: 'BK-7'})-[f:HAS_PART]->(:Part {name: 'BC-310'}) RETURN f.documentIds"
    )
    assert row[0] == sorted(s.document_id for s in sources)


async def test_a_verifier_can_refuse_any_candidate(knowledge: None, store: Store) -> None:
    async def no_suppliers(candidate: ExtractionCandidate) -> str | None:
        return "suppliers are curated by hand" if candidate.kind in ("Supplier", "SUPPLIED_BY") else None

    receipt = await ingestion(store, scripted(extraction_for), verifier=no_suppliers).ingest(wiki())
    assert receipt.extraction is not None
    refused = [p for p in receipt.extraction.pruned if p.reason == PruneReason.REFUSED]
    assert refused and all(p.detail == "suppliers are curated by hand" for p in refused)
    assert await rows(store, "MATCH (s:Supplier) RETURN s") == []


async def test_preview_counts_one_extraction_call_per_chunk(knowledge: None, store: Store) -> None:
    preview = await ingestion(store, scripted(extraction_for)).preview(wiki())
    assert preview.extraction_calls == preview.chunks == 3


async def test_turning_extraction_off_or_changing_the_ontology_never_strands_a_document(
    knowledge: None, store: Store
) -> None:
    source = Sources.text("bk-7", KIT)
    await ingestion(store, scripted(extraction_for)).ingest([source])
    assert await rows(store, "MATCH ()-[m:MENTIONED_IN]->() RETURN count(m)") != [[0]]
    plain = IngestionService(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(ChunkerOptions(max_utf8_bytes=2048)),
    )
    receipt = await plain.ingest([Sources.text("bk-7", KIT + " Rotors too.")])
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    assert await rows(store, "MATCH ()-[m:MENTIONED_IN]->() RETURN count(m)") == [[0]]
    assert await rows(store, "MATCH ()-[f:HAS_PART]->() RETURN count(f)") == [[0]], "facts only it stated went with it"


async def test_fact_ends_resolve_by_name_before_alias(knowledge: None, store: Store) -> None:
    text = "Part Acme (also called Hub) and part Hub: Acme holds Hub."
    reply = {
        "entities": [entity("Part", "Acme", aliases=["Hub"]), entity("Part", "Hub", mentions=["part Hub"])],
        "relationships": [fact("Acme", "HAS_PART", "Hub")],
    }
    await ingestion(store, scripted(lambda _p: reply)).ingest([Sources.text("acme", text)])
    assert await rows(store, "MATCH (a)-[:HAS_PART]->(b) RETURN a.name, b.name") == [["Acme", "Hub"]]


async def test_mentions_match_whole_words_and_repeats_take_the_next_occurrence(knowledge: None, store: Store) -> None:
    text = "The kit BK-7 ships today; BK-7 is in stock. Mara Vell met Mara."
    reply = {
        "entities": [
            entity("Part", "BK-7", mentions=["BK-7", "BK-7"]),
            entity("Supplier", "Mara Vell", mentions=["Mara Vell", "Mara"]),
            entity("Part", "he", mentions=["he"]),
        ],
        "relationships": [],
    }
    receipt = await ingestion(store, scripted(lambda _p: reply)).ingest([Sources.text("words", text)])
    found = await rows(
        store, "MATCH (t)-[m:MENTIONED_IN]->(c) RETURN t.name, m.startByte, m.quote ORDER BY m.startByte"
    )
    assert [(name, quote) for name, _, quote in found] == [
        ("BK-7", "BK-7"),
        ("BK-7", "BK-7"),
        ("Mara Vell", "Mara Vell"),
        ("Mara Vell", "Mara"),
    ]
    assert found[3][1] == text.index("Mara.")  # the second "Mara", not the start of "Mara Vell"
    assert receipt.extraction is not None
    assert PruneReason.NOT_GROUNDED in {p.reason for p in receipt.extraction.pruned}  # "he" is not in "The"
    assert receipt.extraction.mentions == 4


async def test_an_alias_not_in_the_passage_is_pruned(knowledge: None, store: Store) -> None:
    reply = {"entities": [entity("Part", "BK-7", aliases=["Brake Kit Seven"])], "relationships": []}
    receipt = await ingestion(store, scripted(lambda _p: reply)).ingest([Sources.text("bk-7", KIT)])
    assert receipt.extraction is not None
    assert [p.reason for p in receipt.extraction.pruned] == [PruneReason.ALIAS_NOT_FOUND]
    assert await rows(store, "MATCH (p:Part) RETURN p.aliases") == [[None]]


async def test_a_metadata_change_alone_rewrites_the_document(knowledge: None, store: Store) -> None:
    from graphrag_orm.sources import SourceMetadata

    first = Sources.text("kit", KIT, metadata=SourceMetadata(published="2026-01-01"))
    await ingestion(store, scripted(extraction_for)).ingest([first])
    corrected = first.with_metadata(published="2026-02-01")
    receipt = await ingestion(store, scripted(extraction_for)).ingest([corrected])
    assert receipt.documents[0].status == DocumentStatus.INGESTED
    assert await rows(store, "MATCH (d:Document) RETURN d.published") == [["2026-02-01"]]


def test_the_service_uses_the_extractor_it_is_given_and_never_patches_it() -> None:
    own = RetryPolicy(RetryOptions(max_retries=2))
    extractor = Extractor(BIKES, ScriptedChat(lambda _r: "{}"), retry=own)
    service = IngestionService(
        Store(),
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        retry=RetryPolicy(RetryOptions(max_retries=0)),
        extractor=extractor,
    )
    assert service.extractor is extractor and extractor.retry is own and service.retry is not own


def test_a_kind_stored_under_a_layout_label_is_refused() -> None:
    from graphrag_orm.errors import ConfigurationError
    from graphrag_orm.ontology import Entity, Ontology

    class Memo(Entity):  # its label would be the layout's document label
        """A short note."""

    layout = Layout.DEFAULT.replace(document_label="Memo")
    with pytest.raises(ConfigurationError) as refused:
        Ontology.custom("memos", [Memo], []).check_layout(layout)
    assert refused.value.code == "layout-collision"
    assert "with_label_prefix" in refused.value.message
