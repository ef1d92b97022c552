"""Shared fixtures: the real Neo4j (integration, e2e) and the loopback model server."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from graphrag_orm.migrate import Chain, Migrator
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_driver
from graphrag_orm.store.neomodel import attach_neomodel, detach_neomodel
from tests.database import claim_database, drop_all_schema, suite_connection_settings, wipe_data
from tests.support.fixtures import openai_server  # noqa: F401  (the loopback model server)

MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"

# The suite never reaches a provider: offline mode and no key, for this process and every
# subprocess it starts, unless a test sets its own (monkeypatch, or a subprocess's env).
# The hashing stand-in embeds, named: the dev venv has the local extra, which would be the
# default; the tests of that default set their own environment.
os.environ["GRAPHRAG_MODEL_MODE"] = "offline"
os.environ["GRAPHRAG_EMBEDDING_MODEL"] = "hashing"
os.environ.pop("GRAPHRAG_EMBEDDING_DIMENSIONS", None)
for _variable in ("OPENAI_API_KEY", "GRAPHRAG_PROVIDER", "GRAPHRAG_RECORDINGS", "GRAPHRAG_MAX_CALLS"):
    os.environ.pop(_variable, None)


@pytest.fixture(scope="session")
def neo4j_settings() -> ConnectionSettings:
    return suite_connection_settings()


@pytest_asyncio.fixture(scope="session")
async def store(neo4j_settings: ConnectionSettings) -> AsyncIterator[Store]:
    """The suite's store on the test database; neomodel's typed classes use the same driver."""
    driver = await open_driver(neo4j_settings)
    store = Store(driver, database=neo4j_settings.database)
    await attach_neomodel(driver, neo4j_settings.database)
    await claim_database(store)
    yield store
    detach_neomodel(driver)
    await driver.close()


@pytest_asyncio.fixture(scope="session")
async def neo4j_driver(store: Store) -> object:
    return store.driver


async def install_toolkit_schema(store: Store) -> None:
    """Bring the database to the toolkit's own chain head; rebuild it if it drifted."""
    migrator = Migrator(store, Chain.load())
    status = await migrator.status()
    check = await migrator.check()
    if not status.up_to_date or not check.ok:
        await drop_all_schema(store)
        await migrator.apply()


@pytest_asyncio.fixture
async def graph(store: Store) -> AsyncIterator[None]:
    """An empty graph with the toolkit's schema installed (each test starts clean)."""
    await install_toolkit_schema(store)
    await wipe_data(store)
    yield


@contextlib.asynccontextmanager
async def tenanted_chain(store: Store) -> AsyncIterator[None]:
    """An empty graph with the tenanted chain applied (the tenancy revision); the toolkit's
    own chain is restored afterwards."""
    await wipe_data(store)
    await drop_all_schema(store)
    await Migrator(store, Chain.load(MIGRATIONS, tenanted=True)).apply()
    try:
        yield
    finally:
        await wipe_data(store)
        await drop_all_schema(store)
        await Migrator(store, Chain.load()).apply()


@pytest_asyncio.fixture
async def tenanted_graph(store: Store) -> AsyncIterator[None]:
    """An empty graph with the tenanted chain applied; the toolkit's own chain is restored afterwards."""
    async with tenanted_chain(store):
        yield


@pytest_asyncio.fixture
async def bare_database(store: Store) -> AsyncIterator[None]:
    """An empty database without schema or journal; the toolkit's schema is restored afterwards."""
    await wipe_data(store)
    await drop_all_schema(store)
    yield
    await wipe_data(store)
    await drop_all_schema(store)
    await Migrator(store, Chain.load()).apply()
