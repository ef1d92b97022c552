"""The shipped ontologies against the real Neo4j: what lands for each, with scripted replies.

Every passage here is fiction written for these tests; the replies are written by hand
in the extraction reply format (API.md section 7), as a careful model would answer,
with a few deliberate mistakes whose pruning the tests check.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from neo4j.time import DateTime
from neomodel import StringProperty

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.extraction import ExtractionOptions, Extractor, KnowledgeWriter, PruneReason
from graphrag_orm.ingestion import DocumentStatus, IngestionReceipt, IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.ontologies import article, generic, novel
from graphrag_orm.ontology import Ontology, entity_id
from graphrag_orm.retry import RetryOptions, RetryPolicy
from graphrag_orm.sources import Source, SourceMetadata, Sources
from graphrag_orm.store import Store
from tests.integration.knowledge_support import entity, fact, ontology_schema, scripted

# ----------------------------------------------------------------- passages (fiction, written for these tests)

GENERIC_TEXT = (
    "Ines Duarte is chief planner at Lumen Freight, a shipping firm based in Porto. "
    "Lumen Freight belongs to the Atlantic Carriers Group. "
    "In March, Ines Duarte spoke at the Harbour Summit in Porto, and Lumen Freight sent a delegation. "
    "The Ribeira district is part of Porto. "
    "Duarte is known for her work on cold-chain logistics; someone at the summit called it the future of the port."
)

NOVEL_TEXT = (
    "Chapter II\n\n"
    "On the third night the Lantern Guild held the Winter Moot at the Old Mill in Brackwater. "
    "Mara Vell had joined the guild in the spring, and her brother Tobin waited outside.\n\n"
    "“I can’t stay,” said Mara to Tobin, “the tide turns at dusk.” "
    "The old man at the door said nothing."
)

ARTICLE_TEXT = (
    "Harbour council backs tidal barrier\n\n"
    "The Portvale Harbour Council voted on Tuesday in Portvale Town Hall to build a tidal barrier. "
    "The vote followed the Venn Flood Study by Edda Lind, an engineer at the Coastal Works Agency, "
    "which warned of winter floods. "
    "“We cannot wait for the next storm,” said Lind, “not after last winter.” "
    "The agency is part of the Portvale Regional Authority, and Lind is a member of the Institute of Tidal Engineers."
)
ARTICLE_METADATA = SourceMetadata(
    title="Harbour council backs tidal barrier",
    published="2026-03-17",
    publisher="The Portvale Courier (fiction)",
    url="https://courier.example/2026/03/tidal-barrier",
)


def described(kind: str, name: str, description: str, mentions: list[str] | None = None) -> dict[str, Any]:
    return {**entity(kind, name, mentions=mentions), "description": description}


def with_payload(source: str, fact_type: str, target: str, **payload: str) -> dict[str, Any]:
    return {**fact(source, fact_type, target), **payload}


GENERIC_REPLY: dict[str, Any] = {
    "entities": [
        entity("Person", "Ines Duarte", aliases=["Duarte"]),
        described("Organization", "Lumen Freight", "A shipping firm based in Porto."),
        entity("Organization", "Atlantic Carriers Group"),
        entity("Place", "Porto"),
        entity("Place", "Ribeira", mentions=["Ribeira district"]),
        described("Event", "Harbour Summit", "A summit in Porto, in March."),
        entity("Concept", "cold-chain logistics"),
        entity("Person", "someone"),
    ],
    "relationships": [
        with_payload("Ines Duarte", "WORKS_FOR", "Lumen Freight", role="chief planner"),
        fact("Lumen Freight", "LOCATED_IN", "Porto"),
        fact("Lumen Freight", "PART_OF", "Atlantic Carriers Group"),
        with_payload("Ines Duarte", "PARTICIPATES_IN", "Harbour Summit", role="speaker"),
        fact("Lumen Freight", "PARTICIPATES_IN", "Harbour Summit"),
        fact("Harbour Summit", "LOCATED_IN", "Porto"),
        fact("Ribeira", "PART_OF", "Porto"),
        with_payload("Duarte", "RELATED_TO", "cold-chain logistics", description="known for her work on"),
        fact("Porto", "WORKS_FOR", "Lumen Freight"),  # a mistake: neither way round is allowed
    ],
}

NOVEL_REPLY: dict[str, Any] = {
    "entities": [
        entity("Character", "Mara Vell", mentions=["Mara Vell", "Mara"], aliases=["Mara"]),
        entity("Character", "Tobin"),
        entity("Group", "Lantern Guild"),
        entity("Place", "Old Mill"),
        entity("Place", "Brackwater"),
        described("Event", "Winter Moot", "Held on the third night, in Chapter II.", ["the Winter Moot"]),
        entity("Character", "the old man", mentions=["The old man"]),
    ],
    "relationships": [
        with_payload("Mara Vell", "KIN_OF", "Tobin", role="sister"),
        with_payload("Tobin", "KIN_OF", "Mara Vell", role="brother"),
        fact("Mara", "MEMBER_OF", "Lantern Guild"),
        fact("Lantern Guild", "PARTICIPATES_IN", "Winter Moot"),
        fact("Winter Moot", "TAKES_PLACE_IN", "Old Mill"),
        fact("Old Mill", "LOCATED_IN", "Brackwater"),
        fact("Winter Moot", "LOCATED_IN", "Old Mill"),  # an event's place is TAKES_PLACE_IN in this ontology
    ],
    "quotes": [
        # The model typed straight apostrophes; the text has typographic ones.
        {"type": "SAYS", "speaker": "Mara Vell", "addressee": "Tobin", "quote": "I can't stay,"},
        {"type": "SAYS", "speaker": "Mara", "addressee": "Tobin", "quote": "the tide turns at dusk."},
        # The two parts joined: not one stretch of the text, so pruned.
        {"type": "SAYS", "speaker": "Mara", "addressee": "Tobin", "quote": "I can’t stay, the tide turns at dusk."},
    ],
}

ARTICLE_REPLY: dict[str, Any] = {
    # Fields the schema does not have: a model that invents them changes nothing.
    "document": {"published": "1999-01-01", "publisher": "The Wrong Gazette", "url": "https://wrong.example/"},
    "published": "1999-01-01",
    "entities": [
        entity("Person", "Edda Lind", aliases=["Lind"]),
        entity("Organization", "Portvale Harbour Council"),
        entity("Organization", "Coastal Works Agency", mentions=["Coastal Works Agency", "The agency"]),
        entity("Organization", "Portvale Regional Authority"),
        entity("Organization", "Institute of Tidal Engineers"),
        entity("Place", "Portvale Town Hall"),
        described("Event", "tidal barrier vote", "The council voted on Tuesday.", ["voted on Tuesday"]),
        entity("Topic", "Venn Flood Study"),
        entity("Topic", "tidal barrier"),
        entity("Topic", "winter floods"),
        # A kind the ontology does not have, named like the article's metadata.
        {**entity("Document", "Harbour council backs tidal barrier"), "published": "1999-01-01"},
    ],
    "relationships": [
        with_payload("Edda Lind", "WORKS_FOR", "Coastal Works Agency", role="engineer"),
        fact("Lind", "MEMBER_OF", "Institute of Tidal Engineers"),
        fact("Coastal Works Agency", "PART_OF", "Portvale Regional Authority"),
        fact("Portvale Harbour Council", "PARTICIPATES_IN", "tidal barrier vote"),
        fact("tidal barrier vote", "LOCATED_IN", "Portvale Town Hall"),
        fact("tidal barrier vote", "ABOUT", "tidal barrier"),
        {**fact("Edda Lind", "AUTHORED", "Venn Flood Study"), "url": "https://wrong.example/"},
        fact("Venn Flood Study", "ABOUT", "winter floods"),
    ],
    "quotes": [
        {"type": "QUOTED", "speaker": "Lind", "addressee": None, "quote": "We cannot wait for the next storm,"},
        {"type": "QUOTED", "speaker": "Edda Lind", "addressee": None, "quote": "not after last winter."},
        {"type": "QUOTED", "speaker": "Coastal Works Agency", "addressee": None, "quote": "not after last winter."},
    ],
}


# ----------------------------------------------------------------- helpers


def ingestion(
    store: Store, ontology: Ontology, reply: dict[str, Any], layout: Layout = Layout.DEFAULT
) -> IngestionService:
    model = for_layout(layout)
    retry = RetryPolicy(RetryOptions(max_retries=1, initial_backoff_seconds=0.01))
    return IngestionService(
        store,
        model,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chunker=Chunker(ChunkerOptions()),
        retry=retry,
        extractor=Extractor(ontology, scripted(lambda _passage: reply), ExtractionOptions(), retry=retry),
        knowledge=KnowledgeWriter(model, ontology),
    )


async def rows(store: Store, query: str, **params: Any) -> list[list[Any]]:
    """The records of ``query``, each as its values in RETURN order."""
    return [list(record.values()) for record in await store.read(query, params)]


async def ingest_one(service: IngestionService, source: Source) -> IngestionReceipt:
    receipt = await service.ingest([source])
    assert [o.status for o in receipt.documents] == [DocumentStatus.INGESTED], receipt.documents
    assert receipt.extraction is not None and receipt.extraction.quarantined == ()
    return receipt


async def facts_of(store: Store, types: tuple[str, ...]) -> set[tuple[str, str, str]]:
    found = await rows(
        store, "MATCH (a)-[f]->(b) WHERE type(f) IN $types RETURN a.name, type(f), b.name", types=list(types)
    )
    return {(a, t, b) for a, t, b in found}


def byte_span(text: str, words: str) -> tuple[int, int]:
    data = text.encode("utf-8")
    start = data.index(words.encode("utf-8"))
    return start, start + len(words.encode("utf-8"))


async def assert_mentions_are_the_stored_bytes(store: Store, mention_type: str = "MENTIONED_IN") -> None:
    found = await rows(
        store, f"MATCH (t)-[m:{mention_type}]->(c:Chunk) RETURN m.quote, m.startByte, m.endByte, c.text, c.startByte"
    )
    assert found
    for quote, start, end, chunk_text, chunk_start in found:
        assert chunk_text.encode("utf-8")[start - chunk_start : end - chunk_start].decode("utf-8") == quote


# ----------------------------------------------------------------- generic


async def test_generic_writes_typed_facts_related_to_and_a_placeholder(graph: None, store: Store) -> None:
    async with ontology_schema(store, generic.ONTOLOGY):
        source = Sources.text("generic/lumen", GENERIC_TEXT)
        receipt = await ingest_one(ingestion(store, generic.ONTOLOGY, GENERIC_REPLY), source)

        things = {
            (labels[0], name): (aliases, placeholder)
            for labels, name, aliases, placeholder in await rows(
                store,
                "MATCH (e) WHERE e:Person OR e:Organization OR e:Place OR e:Event OR e:Concept "
                "RETURN labels(e), e.name, e.aliases, e.isPlaceholder",
            )
        }
        assert things == {
            ("Person", "Ines Duarte"): ("Duarte", False),
            ("Organization", "Lumen Freight"): (None, False),
            ("Organization", "Atlantic Carriers Group"): (None, False),
            ("Place", "Porto"): (None, False),
            ("Place", "Ribeira"): (None, False),
            ("Event", "Harbour Summit"): (None, False),
            ("Concept", "cold-chain logistics"): (None, False),
            ("Person", "someone"): (None, True),
        }
        assert await facts_of(store, generic.ONTOLOGY.fact_types) == {
            ("Ines Duarte", "WORKS_FOR", "Lumen Freight"),
            ("Lumen Freight", "LOCATED_IN", "Porto"),
            ("Lumen Freight", "PART_OF", "Atlantic Carriers Group"),
            ("Ines Duarte", "PARTICIPATES_IN", "Harbour Summit"),
            ("Lumen Freight", "PARTICIPATES_IN", "Harbour Summit"),
            ("Harbour Summit", "LOCATED_IN", "Porto"),
            ("Ribeira", "PART_OF", "Porto"),
            ("Ines Duarte", "RELATED_TO", "cold-chain logistics"),
        }
        payload = await rows(
            store,
            "MATCH (:Person {name: 'Ines Duarte'})-[f]->(b) WHERE type(f) IN $types "
            "RETURN type(f), f.role, f.description, f.documentIds",
            types=list(generic.ONTOLOGY.fact_types),
        )
        assert {(t, role, description) for t, role, description, _ in payload} == {
            ("WORKS_FOR", "chief planner", None),
            ("PARTICIPATES_IN", "speaker", None),
            ("RELATED_TO", None, "known for her work on"),
        }
        assert all(ids == [source.document_id] for *_, ids in payload)
        assert (await rows(store, "MATCH (e:Event) RETURN e.description")) == [["A summit in Porto, in March."]]
        assert receipt.extraction is not None
        assert [(p.item, p.reason) for p in receipt.extraction.pruned] == [
            ("Porto WORKS_FOR Lumen Freight", PruneReason.NOT_ALLOWED)
        ]
        assert (await rows(store, "MATCH (e:Person {name: 'someone'}) RETURN e.id"))[0][0] != entity_id(
            "Person", "someone"
        )
        # The things are neomodel nodes of the shipped classes.
        ines = await generic.Person.nodes.get(name="Ines Duarte")
        assert ines.uid == entity_id("Person", "Ines Duarte") and ines.aliases == "Duarte"
        assert ines.run_id == receipt.run_id and not ines.is_placeholder
        await assert_mentions_are_the_stored_bytes(store)


# ----------------------------------------------------------------- novel


async def test_novel_writes_kin_membership_places_and_events_as_the_text_gives_them(graph: None, store: Store) -> None:
    async with ontology_schema(store, novel.ONTOLOGY):
        receipt = await ingest_one(
            ingestion(store, novel.ONTOLOGY, NOVEL_REPLY), Sources.text("novel/moot", NOVEL_TEXT)
        )

        assert await facts_of(store, novel.ONTOLOGY.fact_types) == {
            ("Mara Vell", "KIN_OF", "Tobin"),
            ("Tobin", "KIN_OF", "Mara Vell"),
            ("Mara Vell", "MEMBER_OF", "Lantern Guild"),
            ("Lantern Guild", "PARTICIPATES_IN", "Winter Moot"),
            ("Winter Moot", "TAKES_PLACE_IN", "Old Mill"),
            ("Old Mill", "LOCATED_IN", "Brackwater"),
        }
        roles = await rows(store, "MATCH (a)-[f:KIN_OF]->(b) RETURN a.name, f.role ORDER BY a.name")
        assert roles == [["Mara Vell", "sister"], ["Tobin", "brother"]]
        assert await rows(store, "MATCH (e:Event) RETURN e.name, e.description") == [
            ["Winter Moot", "Held on the third night, in Chapter II."]
        ]
        assert await rows(store, "MATCH (c:Character {isPlaceholder: true}) RETURN c.name") == [["the old man"]]
        assert receipt.extraction is not None
        assert sorted((p.item, p.reason) for p in receipt.extraction.pruned) == [
            ("SAYS by Mara", PruneReason.QUOTE_NOT_FOUND),
            ("Winter Moot LOCATED_IN Old Mill", PruneReason.NOT_ALLOWED),
        ]
        await assert_mentions_are_the_stored_bytes(store)


async def test_speech_interrupted_by_narration_is_two_says_quotes_with_exact_bytes(graph: None, store: Store) -> None:
    async with ontology_schema(store, novel.ONTOLOGY):
        source = Sources.text("novel/moot", NOVEL_TEXT)
        receipt = await ingest_one(ingestion(store, novel.ONTOLOGY, NOVEL_REPLY), source)

        quotes = await rows(
            store,
            "MATCH (s:Character)-[q:SAYS]->(c:Chunk) "
            "RETURN s.name, q.quote, q.startByte, q.endByte, q.addressee, q.documentId, q.key ORDER BY q.startByte",
        )
        first, second = "I can’t stay,", "the tide turns at dusk."
        assert [row[:5] for row in quotes] == [
            ["Mara Vell", first, *byte_span(NOVEL_TEXT, first), "Tobin"],
            ["Mara Vell", second, *byte_span(NOVEL_TEXT, second), "Tobin"],
        ]
        data = NOVEL_TEXT.encode("utf-8")
        for _speaker, quote, start, end, *_ in quotes:
            assert data[start:end].decode("utf-8") == quote
        assert {row[5] for row in quotes} == {source.document_id}
        assert len({row[6] for row in quotes}) == 2
        assert receipt.extraction is not None and receipt.extraction.quotes == 2


# ----------------------------------------------------------------- article


async def test_article_writes_authorship_topics_and_quotes(graph: None, store: Store) -> None:
    async with ontology_schema(store, article.ONTOLOGY):
        receipt = await ingest_one(
            ingestion(store, article.ONTOLOGY, ARTICLE_REPLY),
            Sources.text("article/barrier", ARTICLE_TEXT, metadata=ARTICLE_METADATA),
        )

        assert await facts_of(store, article.ONTOLOGY.fact_types) == {
            ("Edda Lind", "WORKS_FOR", "Coastal Works Agency"),
            ("Edda Lind", "MEMBER_OF", "Institute of Tidal Engineers"),
            ("Coastal Works Agency", "PART_OF", "Portvale Regional Authority"),
            ("Portvale Harbour Council", "PARTICIPATES_IN", "tidal barrier vote"),
            ("tidal barrier vote", "LOCATED_IN", "Portvale Town Hall"),
            ("tidal barrier vote", "ABOUT", "tidal barrier"),
            ("Edda Lind", "AUTHORED", "Venn Flood Study"),
            ("Venn Flood Study", "ABOUT", "winter floods"),
        }
        quoted = await rows(store, "MATCH (p:Person)-[q:QUOTED]->(:Chunk) RETURN p.name, q.quote ORDER BY q.startByte")
        assert quoted == [["Edda Lind", "We cannot wait for the next storm,"], ["Edda Lind", "not after last winter."]]
        assert receipt.extraction is not None
        assert sorted((p.item, p.reason) for p in receipt.extraction.pruned) == [
            ("Document Harbour council backs tidal barrier", PruneReason.UNKNOWN_KIND),
            ("QUOTED by Coastal Works Agency", PruneReason.NOT_A_SPEAKER),
        ]
        await assert_mentions_are_the_stored_bytes(store)


async def test_article_metadata_comes_from_the_source_and_extraction_cannot_change_it(
    graph: None, store: Store
) -> None:
    async with ontology_schema(store, article.ONTOLOGY):
        source = Sources.text("article/barrier", ARTICLE_TEXT, metadata=ARTICLE_METADATA)
        await ingest_one(ingestion(store, article.ONTOLOGY, ARTICLE_REPLY), source)

        (document,) = await rows(store, "MATCH (d:Document) RETURN properties(d)")
        stored = document[0]
        assert {key: stored[key] for key in ("id", "title", "published", "publisher", "url")} == {
            "id": source.document_id,
            "title": "Harbour council backs tidal barrier",
            "published": "2026-03-17",
            "publisher": "The Portvale Courier (fiction)",
            "url": "https://courier.example/2026/03/tidal-barrier",
        }
        assert isinstance(stored["ingestedAt"], DateTime)
        # Nothing the reply said about the document reached any node or relationship.
        for value in ("1999-01-01", "The Wrong Gazette", "https://wrong.example/"):
            assert await rows(store, "MATCH (n) WHERE any(k IN keys(n) WHERE n[k] = $v) RETURN n", v=value) == []
            assert await rows(store, "MATCH ()-[r]->() WHERE any(k IN keys(r) WHERE r[k] = $v) RETURN r", v=value) == []
        assert await rows(store, "MATCH (n:Document) WHERE n.id <> $id RETURN n", id=source.document_id) == []

        # A new version of the text, with a reply that again names other metadata: the
        # document takes the source's metadata, and only the source's.
        changed = Sources.text(
            "article/barrier",
            ARTICLE_TEXT + " The barrier opens in 2028.",
            metadata=ARTICLE_METADATA.model_copy(update={"published": "2026-03-18"}),
        )
        await ingest_one(ingestion(store, article.ONTOLOGY, ARTICLE_REPLY), changed)
        assert await rows(store, "MATCH (d:Document) RETURN d.published, d.publisher, d.url") == [
            ["2026-03-18", "The Portvale Courier (fiction)", "https://courier.example/2026/03/tidal-barrier"]
        ]


# ----------------------------------------------------------------- neo4j-graphrag's shape and label prefixes


async def test_neo4j_graphrag_shape_stores_extra_labels_and_from_chunk_mentions(graph: None, store: Store) -> None:
    shaped = generic.ONTOLOGY.with_neo4j_graphrag_entities()
    layout = Layout.NEO4J_GRAPHRAG
    async with ontology_schema(store, shaped, layout):
        receipt = await ingest_one(
            ingestion(store, shaped, GENERIC_REPLY, layout), Sources.text("generic/lumen", GENERIC_TEXT)
        )

        labels = await rows(store, "MATCH (e:__Entity__) RETURN labels(e), e.name")
        assert len(labels) == 8
        for found, name in labels:
            assert set(found) - {"__Entity__", "__KGBuilder__"} <= set(generic.ONTOLOGY.kinds), name
            assert {"__Entity__", "__KGBuilder__"} <= set(found) and len(found) == 3
        assert await rows(store, "MATCH ()-[m:MENTIONED_IN]->() RETURN m") == []
        assert receipt.extraction is not None
        from_chunk = await rows(store, "MATCH (:__Entity__)-[m:FROM_CHUNK]->(:Chunk) RETURN count(m)")
        assert from_chunk == [[receipt.extraction.mentions]]
        await assert_mentions_are_the_stored_bytes(store, "FROM_CHUNK")
        # neo4j-graphrag's retrieval query shape: a chunk, its document, the things extracted from it.
        context = await rows(
            store,
            "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) "
            "OPTIONAL MATCH (c)<-[:FROM_CHUNK]-(e:__Entity__) "
            "RETURN d.id, count(DISTINCT e)",
        )
        assert context == [[Sources.text("generic/lumen", GENERIC_TEXT).document_id, 8]]
        assert ("Ines Duarte", "WORKS_FOR", "Lumen Freight") in await facts_of(store, shaped.fact_types)


async def test_a_label_prefix_stores_prefixed_labels_with_the_same_ids_and_types(graph: None, store: Store) -> None:
    prefixed = generic.ONTOLOGY.with_label_prefix("Rag")
    async with ontology_schema(store, prefixed):
        await ingest_one(ingestion(store, prefixed, GENERIC_REPLY), Sources.text("generic/lumen", GENERIC_TEXT))

        assert await rows(store, "MATCH (e) WHERE e:Person OR e:Organization OR e:Place RETURN e") == []
        people = await rows(store, "MATCH (p:RagPerson {isPlaceholder: false}) RETURN labels(p), p.id")
        assert people == [[["RagPerson"], entity_id("Person", "Ines Duarte")]]
        assert ("Ines Duarte", "WORKS_FOR", "Lumen Freight") in await facts_of(store, prefixed.fact_types)
        assert await rows(store, "MATCH (:RagPerson)-[m]->(:Chunk) RETURN DISTINCT type(m)") == [["MENTIONED_IN"]]


# ----------------------------------------------------------------- an application's own subclass


class Engineer(generic.Person):
    """A person who designs, builds or maintains machines, vessels, structures or systems.

    ``licence`` is the application's: extraction never writes it.
    """

    licence = StringProperty(db_property="licence")


PORTS = Ontology.custom(
    name="ports",
    entities=[Engineer, generic.Organization, generic.Place],
    facts=[(Engineer, "WORKS_FOR", generic.Organization), (generic.Organization, "LOCATED_IN", generic.Place)],
    placeholders=generic.PLACEHOLDERS,
    instructions="A harbour pilot, planner or surveyor is an Engineer.",
)


async def test_an_application_subclass_with_its_own_property_is_written_and_kept(graph: None, store: Store) -> None:
    first = {
        "entities": [entity("Engineer", "Ines Duarte"), entity("Organization", "Lumen Freight")],
        "relationships": [fact("Ines Duarte", "WORKS_FOR", "Lumen Freight")],
    }
    second = {"entities": [entity("Engineer", "Ines Duarte", aliases=["Duarte"])], "relationships": []}
    async with ontology_schema(store, PORTS):
        await ingest_one(ingestion(store, PORTS, first), Sources.text("ports/a", GENERIC_TEXT))
        (created,) = await rows(store, "MATCH (e:Engineer) RETURN e.id, e.licence, labels(e)")
        assert created[:2] == [entity_id("Engineer", "Ines Duarte"), None]
        assert sorted(created[2]) == ["Engineer", "Person"]  # its own label and its ancestor's
        # The application's own write (extraction writes a thing's properties only when it creates it).
        await store.execute("MATCH (e:Engineer {id: $id}) SET e.licence = 'PE-4471'", {"id": created[0]})

        await ingest_one(ingestion(store, PORTS, second), Sources.text("ports/b", "Ines Duarte (Duarte to her crew)."))
        assert await rows(store, "MATCH (e:Engineer) RETURN e.name, e.aliases, e.licence") == [
            ["Ines Duarte", "Duarte", "PE-4471"]
        ]
        assert await facts_of(store, ("WORKS_FOR",)) == {("Ines Duarte", "WORKS_FOR", "Lumen Freight")}


# ----------------------------------------------------------------- injection through a name


INJECTION = "X, e.pwned = true //"


async def test_an_injected_extra_label_is_refused_before_anything_is_written(graph: None, store: Store) -> None:
    """The issue's payload: once joined into ``SET e:{labels}``, it set pwned=true on every thing."""
    before = await rows(store, "MATCH (n) RETURN count(n)")
    attempts = [
        lambda: dataclasses.replace(generic.ONTOLOGY, extra_labels=(INJECTION,)),
        lambda: dataclasses.replace(
            generic.ONTOLOGY.with_neo4j_graphrag_entities(), extra_labels=("__Entity__", INJECTION)
        ),
        lambda: Ontology(name="x", classes=generic.ONTOLOGY.classes, facts=(), extra_labels=(INJECTION,)),
    ]
    for attempt in attempts:
        with pytest.raises(ConfigurationError) as refused:
            hostile = attempt()
            # Never reached: the ontology is refused where it is built, before any statement exists.
            await ingest_one(ingestion(store, hostile, GENERIC_REPLY), Sources.text("generic/lumen", GENERIC_TEXT))
        assert refused.value.code == "invalid-ontology" and INJECTION in refused.value.message
    with pytest.raises(ConfigurationError) as refused:
        layout = Layout.DEFAULT.replace(chunk_label=INJECTION)
        await ingest_one(ingestion(store, generic.ONTOLOGY, GENERIC_REPLY, layout), Sources.text("g/l", GENERIC_TEXT))
    assert refused.value.code == "invalid-layout"

    assert await rows(store, "MATCH (n) RETURN count(n)") == before
    assert await rows(store, "MATCH (n) WHERE n.pwned IS NOT NULL RETURN count(n)") == [[0]]
    assert await rows(store, "MATCH ()-[r]->() WHERE r.pwned IS NOT NULL RETURN count(r)") == [[0]]
