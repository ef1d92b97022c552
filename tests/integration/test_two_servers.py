"""Two ``GraphRag`` objects on two servers in one process, each seeing only its own graph.

The second server is a local one of its own (port ``GRAPHRAG_SECOND_NEO4J_PORT``, 7689 by
default, home ``home-test-second``), started for this module and stopped after it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat
from graphrag_orm.chat.extractive import NO_MODEL_NOTE
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.store import StatementEvent
from graphrag_orm.store.connection import ConnectionSettings, open_store
from tests.database import claim_database, wipe_data

pytestmark = pytest.mark.slow

SECOND_PORT = int(os.environ.get("GRAPHRAG_SECOND_NEO4J_PORT", "7689"))


@pytest_asyncio.fixture(scope="module")
async def second_server() -> AsyncIterator[ConnectionSettings]:
    """A second, empty local server with the toolkit's schema."""
    if os.environ.get("GRAPHRAG_SECOND_NEO4J_URI"):
        settings = ConnectionSettings(
            uri=os.environ["GRAPHRAG_SECOND_NEO4J_URI"],
            password=os.environ.get("GRAPHRAG_SECOND_NEO4J_PASSWORD", ConnectionSettings().password),
        )
        local = None
    else:
        local = LocalDbSettings.from_env(home_name="home-test-second", port=SECOND_PORT)
        start(local)
        settings = ConnectionSettings(uri=local.uri, password=local.password)
    store = await open_store(settings)
    try:
        await claim_database(store)
        await wipe_data(store)
        await Migrator(store, Chain.load()).apply()
    finally:
        await store.driver.close()
    yield settings
    if local is not None:
        stop(local)


def offline_rag() -> GraphRag:
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
    )


async def test_two_facades_on_two_servers_ingest_and_answer_side_by_side(
    graph: None, neo4j_settings: ConnectionSettings, second_server: ConnectionSettings
) -> None:
    first, second = offline_rag(), offline_rag()
    first_statements: list[StatementEvent] = []
    second_statements: list[StatementEvent] = []
    await first.connect(neo4j_settings, neomodel=False)
    await second.connect(second_server, neomodel=False)
    first.store.add_hook(first_statements.append)
    second.store.add_hook(second_statements.append)
    try:
        assert first.store.driver is not second.store.driver
        one = await first.ingestion.ingest([Sources.text("branch", "The north branch opens at nine on Saturdays.")])
        two = await second.ingestion.ingest([Sources.text("museum", "The museum closes at five on Mondays.")])
        assert one.ingested == 1 and two.ingested == 1

        assert first.answers is not None and second.answers is not None
        north = await first.answers.answer("When does the north branch open?")
        museum = await second.answers.answer("When does the museum close?")
        assert north.text == f"The north branch opens at nine on Saturdays.\n\n{NO_MODEL_NOTE}"
        assert museum.text == f"The museum closes at five on Mondays.\n\n{NO_MODEL_NOTE}"
        assert [c.quote for c in north.citations] == ["The north branch opens at nine on Saturdays."]

        # Each sees only its own graph.
        crossed = await first.answers.answer("When does the museum close?")
        assert "museum" not in (crossed.text or "") and all("museum" not in i.text for i in crossed.evidence.items)
        crossed = await second.answers.answer("When does the north branch open?")
        assert "north" not in (crossed.text or "") and all("north" not in i.text for i in crossed.evidence.items)
        first_docs = await first.store.read("MATCH (d:Document) RETURN collect(d.sourceUri) AS uris")
        second_docs = await second.store.read("MATCH (d:Document) RETURN collect(d.sourceUri) AS uris")
        assert len(first_docs.value("uris")) == 1 and len(second_docs.value("uris")) == 1
        assert first_docs.value("uris") != second_docs.value("uris")

        # Each object's statements went through its own store.
        assert first_statements and second_statements
        assert not set(map(id, first_statements)) & set(map(id, second_statements))
    finally:
        await first.close()
        await second.close()
    # The second server is left empty for the next run.
    cleanup = await open_store(second_server)
    try:
        await wipe_data(cleanup)
    finally:
        await cleanup.driver.close()
