"""Connecting: a clear message when Neo4j is not there or refuses the credentials."""

from __future__ import annotations

import socket

import pytest

from graphrag_orm.errors import DatabaseUnavailable
from graphrag_orm.store.connection import ConnectionSettings, open_store


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_neo4j_not_running_names_the_start_command_and_neo4j_uri() -> None:
    port = _closed_port()
    with pytest.raises(DatabaseUnavailable) as refused:
        await open_store(ConnectionSettings(uri=f"bolt://127.0.0.1:{port}"))
    assert refused.value.code == "database-unavailable"
    assert "graphrag-orm neo4j start" in refused.value.message
    assert "NEO4J_URI" in refused.value.message
    assert f"127.0.0.1:{port}" in refused.value.message


async def test_wrong_password_is_a_clear_refusal(neo4j_settings: ConnectionSettings) -> None:
    with pytest.raises(DatabaseUnavailable) as refused:
        await open_store(ConnectionSettings(uri=neo4j_settings.uri, password="not-the-password"))
    assert "credentials were refused" in refused.value.message
