"""Connecting: a coded, one-line refusal for every bad setting, never the password."""

from __future__ import annotations

import socket

import pytest

from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import DatabaseUnavailable
from graphrag_orm.facade import GraphRag
from graphrag_orm.store.connection import ConnectionSettings, open_store

SECRET = "a-password-no-message-may-show"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _rag() -> GraphRag:
    return GraphRag(embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))


async def test_neo4j_not_running_names_the_start_command_and_neo4j_uri() -> None:
    port = _closed_port()
    with pytest.raises(DatabaseUnavailable) as refused:
        await open_store(ConnectionSettings(uri=f"bolt://127.0.0.1:{port}"))
    assert refused.value.code == "database-unavailable"
    assert "graphrag-orm neo4j start" in refused.value.message
    assert "NEO4J_URI" in refused.value.message
    assert f"127.0.0.1:{port}" in refused.value.message


async def test_wrong_password_is_auth_failed_apart_from_an_unreachable_server(
    neo4j_settings: ConnectionSettings,
) -> None:
    with pytest.raises(DatabaseUnavailable) as refused:
        await _rag().connect(ConnectionSettings(uri=neo4j_settings.uri, password=SECRET))
    assert refused.value.code == "auth-failed"
    assert "NEO4J_PASSWORD" in refused.value.message and SECRET not in str(refused.value)


@pytest.mark.parametrize(
    "uri", ["http://localhost:7474", f"http://neo4j:{SECRET}@localhost:7474/db", "bolt://", "bolt://host:port", "x"]
)
async def test_a_uri_that_is_not_a_bolt_uri_is_invalid_uri_before_any_connection(uri: str) -> None:
    with pytest.raises(DatabaseUnavailable) as refused:
        await _rag().connect(url=uri)
    assert refused.value.code == "invalid-uri"
    assert SECRET not in str(refused.value) and "NEO4J_URI" in refused.value.message


async def test_a_database_the_server_does_not_have_is_database_not_found(neo4j_settings: ConnectionSettings) -> None:
    rag = _rag()
    with pytest.raises(DatabaseUnavailable) as refused:
        await rag.connect(ConnectionSettings(uri=neo4j_settings.uri, password=neo4j_settings.password, database="nope"))
    assert refused.value.code == "database-not-found"
    assert "'nope'" in refused.value.message and neo4j_settings.password not in str(refused.value)
    assert not rag.store.connected, "nothing is left bound to a refused connection"


async def test_the_named_database_is_checked_and_used_when_it_exists(neo4j_settings: ConnectionSettings) -> None:
    store = await open_store(
        ConnectionSettings(uri=neo4j_settings.uri, password=neo4j_settings.password, database="neo4j")
    )
    try:
        assert (await store.read("RETURN 1 AS one")).value("one") == 1
    finally:
        await store.driver.close()
