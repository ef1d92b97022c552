"""Shared fixtures: the real Neo4j (integration, e2e) and the loopback model server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from graphrag_orm.connection import ConnectionSettings, connect, disconnect
from graphrag_orm.migrate import Chain, Migrator
from tests.database import claim_database, drop_all_schema, suite_connection_settings, wipe_data
from tests.support.fixtures import openai_server  # noqa: F401  (the loopback model server)


@pytest.fixture(scope="session")
def neo4j_settings() -> ConnectionSettings:
    return suite_connection_settings()


@pytest_asyncio.fixture(scope="session")
async def neo4j_driver(neo4j_settings: ConnectionSettings) -> AsyncIterator[object]:
    driver = await connect(neo4j_settings)
    await claim_database()
    yield driver
    await disconnect(driver)


async def install_toolkit_schema() -> None:
    """Bring the database to the toolkit's own chain head; rebuild it if it drifted."""
    migrator = Migrator(Chain.load())
    status = await migrator.status()
    check = await migrator.check()
    if not status.up_to_date or not check.ok:
        await drop_all_schema()
        await migrator.apply()


@pytest_asyncio.fixture
async def graph(neo4j_driver: object) -> AsyncIterator[None]:
    """An empty graph with the toolkit's schema installed (each test starts clean)."""
    await install_toolkit_schema()
    await wipe_data()
    yield


@pytest_asyncio.fixture
async def bare_database(neo4j_driver: object) -> AsyncIterator[None]:
    """An empty database without schema or journal; the toolkit's schema is restored afterwards."""
    await wipe_data()
    await drop_all_schema()
    yield
    await wipe_data()
    await drop_all_schema()
    await Migrator(Chain.load()).apply()
