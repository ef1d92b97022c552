"""Two ``GraphRag`` objects on two servers in one process, each seeing only its own graph.

The second server is a local one of its own (port ``GRAPHRAG_SECOND_NEO4J_PORT``, 7689 by
default, home ``home-test-second``), started for this module and stopped after it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ExtractiveChat, ScriptedChat
from graphrag_orm.chat.extractive import NO_MODEL_NOTE
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, DatabaseUnavailable, QuestionRefused, TenantError
from graphrag_orm.layout import Layout
from graphrag_orm.localdb import LocalDbSettings, start, stop
from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.store import StatementEvent
from graphrag_orm.store.connection import ConnectionSettings, open_store
from graphrag_orm.text2cypher import Text2CypherOptions
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


def offline_rag(tenant: str | None = None) -> GraphRag:
    """An offline facade; with ``tenant``, of the tenanted layout, bound to it."""
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ExtractiveChat(),
        layout=Layout.DEFAULT.replace(tenancy="required" if tenant else "off"),
        tenant=tenant,
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


def text2cypher_rag(**extra: Any) -> GraphRag:
    """A tenanted graph's facade whose model always writes the same unfenced query."""
    query = "MATCH (c:Chunk) RETURN c.text AS text ORDER BY text"
    return GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=ScriptedChat(lambda request: json.dumps({"cypher": query, "insufficient": None})),
        layout=Layout.DEFAULT.replace(tenancy="required"),
        text2cypher=Text2CypherOptions(),
        **extra,
    )


async def test_a_tenants_graph_questions_run_on_its_own_database_never_the_shared_graph(
    tenanted_graph: None, neo4j_settings: ConnectionSettings, second_server: ConnectionSettings
) -> None:
    # The shared, tenanted graph: two tenants, a secret each.
    for tenant in ("acme", "globex"):
        writer = await offline_rag(tenant).connect(neo4j_settings, neomodel=False)
        try:
            await writer.ingestion.ingest([Sources.text("vault", f"The shared vault code is {tenant}-SHARED-7731.")])
        finally:
            await writer.close()
    # acme's own database: its documents and nothing of anyone else's.
    own = await offline_rag(None).connect(second_server, neomodel=False)
    try:
        await own.ingestion.ingest([Sources.text("vault", "acme keeps its own vault code ACME-OWN-5150.")])
    finally:
        await own.close()

    rag = await text2cypher_rag(graph_databases={"acme": second_server}).connect(neo4j_settings, check_schema=False)
    try:
        assert rag.graph is None  # no tenant bound: no graph questions
        assert rag.for_tenant("globex").graph is None  # no database of its own
        acme = rag.for_tenant("acme")
        assert acme.graph is not None
        answer = await acme.graph.ask("Which vault codes are stored?")
        assert answer.answered, answer.message
        assert [row["text"] for row in answer.rows] == ["acme keeps its own vault code ACME-OWN-5150."]
        shown = json.dumps(answer.model_dump(mode="json"))
        assert "SHARED" not in shown and "globex" not in shown
        with pytest.raises(QuestionRefused):
            await rag.for_tenant("acme").graph.ask("")  # type: ignore[union-attr]
        await acme.close()  # a view leaves the tenants' databases open
        again = await rag.for_tenant("acme").graph.ask("Which vault codes are stored?")  # type: ignore[union-attr]
        assert again.rows == answer.rows
        # The databases closed (as the facade's close does), the same service opens its tenant's again.
        databases = rag._graph_databases
        assert databases is not None
        await databases.close()
        assert (await acme.graph.ask("Which vault codes are stored?")).rows == answer.rows
    finally:
        await rag.close()
        cleanup = await open_store(second_server)
        try:
            await wipe_data(cleanup)
        finally:
            await cleanup.driver.close()


async def test_text2cypher_in_a_tenanted_graph_needs_each_tenants_database() -> None:
    with pytest.raises(TenantError) as shared:
        text2cypher_rag()
    assert shared.value.code == ErrorCode.TENANT_REFUSED
    with pytest.raises(ConfigurationError) as untenanted:
        GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ExtractiveChat(),
            graph_databases={"acme": ConnectionSettings()},
        )
    assert untenanted.value.code == ErrorCode.INVALID_OPTION
    with pytest.raises(TenantError) as invalid:
        text2cypher_rag(graph_databases={"acme' OR 1=1": ConnectionSettings()})
    assert invalid.value.code == ErrorCode.INVALID_TENANT
    unreachable = text2cypher_rag(graph_databases={"acme": ConnectionSettings(uri="bolt://127.0.0.1:9")})
    graph = unreachable.for_tenant("acme").graph
    assert graph is not None
    with pytest.raises(DatabaseUnavailable) as down:
        await graph.ask("Which vault codes are stored?")
    assert down.value.code == ErrorCode.DATABASE_UNAVAILABLE
    await unreachable.close()
