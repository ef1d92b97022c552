"""The samples on the suite's Neo4j: the novel chapter grounded and evaluated, the articles' ontology exercised whole.

Both run offline with their replies written by hand (examples/novel/alice.py,
examples/articles/press.py), the HashingEmbedder stand-in and, for answers, the
ExtractiveChat stand-in. Nothing is downloaded (the novel's ``--fetch`` is never run here,
only its refusal when the site cannot be reached).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from examples import hand_written
from examples.articles import press
from examples.articles.run import read_graph
from examples.articles.run import sources as article_sources
from examples.novel import alice
from examples.novel.run import CASES, CHAPTER_URI, chapter_source, fetch_book, ingest
from graphrag_orm.chat import ChatClient, ExtractiveChat, ScriptedChat
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import FetchFailed, GraphRagError
from graphrag_orm.evaluation import CaseOutcome, Evaluator, load_cases
from graphrag_orm.facade import GraphRag
from graphrag_orm.ontology import Ontology, fact_model, quote_model
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from tests.integration.knowledge_support import ontology_schema


async def connected(settings: ConnectionSettings, ontology: Ontology, extraction: ChatClient) -> GraphRag:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
        extraction_chat=extraction,
        ontology=ontology,
    )
    await rag.connect(settings, neomodel=False)  # the suite's store fixture holds neomodel
    return rag


@pytest_asyncio.fixture
async def novel(graph: None, store: Store, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    async with ontology_schema(store, alice.ONTOLOGY):
        rag = await connected(neo4j_settings, alice.ONTOLOGY, ScriptedChat(alice.extraction_reply))
        try:
            yield rag
        finally:
            await rag.close()


@pytest_asyncio.fixture
async def articles(graph: None, store: Store, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    async with ontology_schema(store, press.ONTOLOGY):
        rag = await connected(neo4j_settings, press.ONTOLOGY, ScriptedChat(press.extraction_reply))
        try:
            yield rag
        finally:
            await rag.close()


async def spans_hold_the_stored_bytes(store: Store, relationship_types: str) -> int:
    """Every mention or quote of these types equals its chunk's bytes at its span; how many there are."""
    found = await store.read(
        f"MATCH ()-[r:{relationship_types}]->(c:Chunk) "
        "RETURN r.quote AS quote, r.startByte AS start, r.endByte AS end, c.text AS text, c.startByte AS chunkStart",
        name="test.samples.spans",
    )
    for row in found:
        stored = row["text"].encode("utf-8")[row["start"] - row["chunkStart"] : row["end"] - row["chunkStart"]]
        assert stored.decode("utf-8") == row["quote"], row
    return len(found)


async def test_the_novel_chapter_ingests_with_every_hand_written_mention_and_quote_grounded(
    novel: GraphRag, store: Store
) -> None:
    receipt = await ingest(novel, chapter_source())
    assert receipt.ingested == 1 and receipt.failed == 0
    extraction = receipt.extraction
    assert extraction is not None and extraction.pruned == () and extraction.quarantined == ()
    assert await spans_hold_the_stored_bytes(store, "MENTIONED_IN") >= len(alice.THINGS)

    chunks = [row["text"] for row in await store.read("MATCH (c:Chunk) RETURN c.text AS text", name="test.chunks")]
    replies = [hand_written.reply_for(text, alice.THINGS, alice.FACTS, alice.QUOTES, "SAYS") for text in chunks]
    expected_quotes = {(q["speaker"], " ".join(q["quote"].split())) for reply in replies for q in reply["quotes"]}
    stored = await store.read(
        "MATCH (s:Character)-[q:SAYS]->(:Chunk) RETURN s.name AS speaker, q.quote AS quote", name="test.quotes"
    )
    assert {(row["speaker"], " ".join(row["quote"].split())) for row in stored} == expected_quotes
    assert len(expected_quotes) >= len(alice.QUOTES) - 3  # at most a few cut by a chunk boundary
    assert await spans_hold_the_stored_bytes(store, "SAYS") == len(stored)
    names = {row["name"] for row in await store.read("MATCH (t:Character|Place|Group|Event) RETURN t.name AS name")}
    assert names == {thing.name for thing in alice.THINGS}
    assert extraction.facts >= len(alice.FACTS) - 2


async def test_a_document_that_fails_to_ingest_is_printed_with_why_and_stops_the_sample(
    novel: GraphRag, capsys: pytest.CaptureFixture[str]
) -> None:
    source = chapter_source()
    await novel.ingestion.leases.acquire(source.document_id, "run-killed")  # as a killed run leaves it
    with pytest.raises(GraphRagError) as stopped:
        await ingest(novel, source)
    assert stopped.value.code == "lease-held" and "stopping rather than going on" in stopped.value.message
    printed = " ".join(capsys.readouterr().out.split())
    assert f"failed {CHAPTER_URI}: lease-held (another run holds its lease" in printed


async def test_the_novel_cases_load_and_run_through_the_harness(novel: GraphRag) -> None:
    await ingest(novel, chapter_source())
    cases = load_cases(CASES)
    assert len(cases) >= 20
    assert {case.answerable for case in cases} == {True, False}
    assert any("DRINK ME" in case.required_phrases for case in cases)
    report = await Evaluator(novel, k=10).run(cases)
    totals = report.totals
    assert totals.cases == len(cases) and totals.errors == 0
    assert [case.id for case in report.cases] == [case.id for case in cases]
    # The stand-in quotes evidence verbatim: every citation holds against the stored bytes.
    assert totals.citations > 0 and totals.citation_validity == 1.0
    assert totals.coverage is not None and totals.coverage > 0.5
    assert report.labels.chat is not None and report.labels.chat.stand_in
    unanswerable = [case for case in report.cases if not case.answerable]
    assert any(case.outcome == CaseOutcome.ABSTAINED for case in unanswerable)


async def test_the_articles_exercise_every_kind_fact_and_quote_type_of_the_article_ontology(
    articles: GraphRag, store: Store
) -> None:
    receipt = await articles.ingestion.ingest(article_sources())
    assert receipt.ingested == 2 and receipt.extraction is not None and receipt.extraction.pruned == ()

    for kind in press.ONTOLOGY.classes:  # the typed classes
        things = await kind.nodes.all()
        assert things, kind.__name__
        assert all(thing.uid and thing.run_id == receipt.run_id for thing in things)

    for allowed in press.ONTOLOGY.facts:
        found = await store.read(
            f"MATCH (:{allowed.source})-[f:{allowed.type}]->(:{allowed.target}) RETURN f",
            name="test.samples.facts",
        )
        assert found, f"{allowed.source} {allowed.type} {allowed.target}"
        fact = fact_model(allowed.type).inflate(found.records[0]["f"])
        assert fact.run_id == receipt.run_id and len(fact.document_ids) == 1
    brack = await press.ONTOLOGY.classes[0].nodes.get(name="Oona Brack")
    assert brack.aliases == "Brack"

    for quote_type in press.ONTOLOGY.quote_types:
        found = await store.read(f"MATCH (:Person)-[q:{quote_type}]->(:Chunk) RETURN q", name="test.samples.quotes")
        quotes = [quote_model(quote_type).inflate(row["q"]) for row in found]
        assert {quote.quote for quote in quotes} == {quote.words for quote in press.QUOTES}
    assert await spans_hold_the_stored_bytes(store, "QUOTED|MENTIONED_IN") > len(press.THINGS)

    view = await read_graph(store)
    assert len(view.facts) == len(press.FACTS) and len(view.quotes) == len(press.QUOTES)
    published = await store.read("MATCH (d:Document) RETURN d.published AS published ORDER BY published")
    assert [row["published"] for row in published] == ["2026-11-16", "2026-11-21"]


def test_fetching_the_book_without_a_reachable_site_is_a_coded_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    with pytest.raises(FetchFailed) as refused:
        fetch_book(tmp_path, url=f"http://127.0.0.1:{closed}/pg11.txt")
    assert refused.value.code == ErrorCode.FETCH_FAILED and "without --fetch" in refused.value.message
    assert list(tmp_path.iterdir()) == []
