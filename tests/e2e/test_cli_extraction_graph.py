"""The CLI maintains a graph that extraction wrote, like any other, when told its ontology.

The graph is written in Python (scripted extraction with the shipped ``generic``
ontology: things, facts and ``MENTIONED_IN`` links), then maintained by the real CLI in
a subprocess. Without ``--ontology`` the links are not the toolkit's and removal is
refused (``foreign-graph``), with a message that names the option.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.facade import GraphRag
from graphrag_orm.ontologies import generic
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from tests.e2e.test_cli import cli
from tests.integration.knowledge_support import entity, fact, ontology_schema, scripted

PAGES = {
    "ines": "Ines Duarte works for Harbor Library in Porto.",
    "edda": "Edda Lind works for Harbor Library as its archivist.",
}


def _reply(passage: str) -> dict[str, Any]:
    person = "Ines Duarte" if "Ines" in passage else "Edda Lind"
    return {
        "entities": [entity("Person", person), entity("Organization", "Harbor Library")],
        "relationships": [fact(person, "WORKS_FOR", "Harbor Library")],
    }


@pytest.fixture
async def extracted(store: Store, graph: None) -> AsyncIterator[dict[str, str]]:
    """Two documents with extraction; their ids by page name."""
    async with ontology_schema(store, generic.ONTOLOGY):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=scripted(_reply),
            ontology=generic.ONTOLOGY,
        )
        rag.store.bind(store.driver, store.database)
        sources = [Sources.text(name, text) for name, text in PAGES.items()]
        receipt = await rag.ingestion.ingest(sources)
        assert receipt.failed == 0
        mentions = await store.read("MATCH ()-[m:MENTIONED_IN]->() RETURN count(m) AS n")
        assert mentions.value("n") > 0
        yield {name: source.document_id for name, source in zip(PAGES, sources, strict=True)}


async def _count(store: Store, query: str) -> int:
    return int((await store.read(query)).value(default=0))


async def test_without_an_ontology_removal_is_refused_and_says_to_pass_one(extracted: dict[str, str]) -> None:
    for args in (["reset", "--yes"], ["remove", extracted["ines"][:12]]):
        result = cli(*args)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "(foreign-graph)" in result.stderr and "--ontology" in result.stderr
        assert "Traceback" not in result.stderr + result.stdout


async def test_remove_check_and_reset_with_the_ontology_take_the_knowledge_along(
    extracted: dict[str, str], store: Store
) -> None:
    removed = cli("remove", "text:ines", "--ontology", "generic", check=True)
    assert "removed 1 document" in removed.stdout
    assert await _count(store, "MATCH (d:Document) RETURN count(d)") == 1
    works_for = "MATCH (:Person)-[f:WORKS_FOR]->() RETURN count(f)"
    assert await _count(store, works_for) == 1, "the fact only Ines's page stated is gone"

    assert cli("check", "--ontology", "generic").returncode in (0, 1)
    cleaned = cli("orphans", "--ontology", "generic", check=True)
    assert "thing" in cleaned.stdout, "Ines Duarte, mentioned nowhere now, is an orphan thing"
    assert cli("check", "--ontology", "generic", check=True).stdout.strip() == "healthy: no findings"

    reset = cli("reset", "--yes", "--ontology", "generic", check=True)
    assert "removed 1 document" in reset.stdout
    assert await _count(store, "MATCH (d:Document) RETURN count(d)") == 0
    assert await _count(store, "MATCH (e) WHERE e:Person OR e:Organization RETURN count(e)") == 0
