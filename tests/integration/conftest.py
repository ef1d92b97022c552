"""Fixtures of the adapter tests (test_adapters_langchain.py, test_adapters_llamaindex.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.sources import Source
from graphrag_orm.store.connection import ConnectionSettings
from tests.integration.adapters_support import facade, markdown_sources


@pytest.fixture
async def connected(graph: None, neo4j_settings: ConnectionSettings) -> AsyncIterator[GraphRag]:
    """A facade on the suite's database (neomodel stays on the suite's driver: the adapters use only services)."""
    rag = facade()
    await rag.connect(neo4j_settings, neomodel=False)
    yield rag
    await rag.close()


@pytest.fixture
async def corpus(connected: GraphRag) -> list[Source]:
    """The Markdown sources, ingested with the toolkit's own chunker."""
    sources = markdown_sources()
    receipt = await connected.ingestion.ingest(sources)
    assert receipt.ingested == len(sources)
    return sources
