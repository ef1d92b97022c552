"""200 merge/undo cycles on a generated graph while another task re-ingests unrelated documents.

Every pair's things and the unrelated documents' things share one place (``Wonderland``),
so merges re-point facts onto a node that concurrent re-ingestion locks and writes facts to
all the time. Each cycle merges one pair and undoes it; the undo must restore the dump of
the merged things' neighbourhood (both things, every relationship of either, each other
end's labels and properties without the chunk embedding). Failures are collected, not
stopped at, so the message says how many cycles failed and how.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ontologies import novel
from graphrag_orm.resolution import Resolution
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from tests.integration.knowledge_support import entity, fact, ontology_schema, scripted

PAIRS = 10
CYCLES = 200
UNRELATED = 2


def pair_texts(i: int) -> dict[str, str]:
    return {
        f"dup-{i}-a": f"The Knight{i} rode to Wonderland with Page{i}. “Halt{i}!” said the Knight{i}.",
        f"dup-{i}-b": f"Knight{i} rested in Wonderland. Knight{i} and Page{i} sang.",
    }


def unrelated(j: int, version: int) -> Source:
    return Sources.text(f"other-{j}", f"Rabbit{j} hurried through Wonderland, late {version} times.")


def reply(passage: str) -> dict[str, Any]:
    words = passage.split()
    if passage.startswith("The Knight"):
        i = words[1].removeprefix("Knight")
        return {
            "entities": [
                entity("Character", f"the Knight{i}", mentions=[f"The Knight{i}", f"the Knight{i}"]),
                entity("Character", f"Page{i}"),
                entity("Place", "Wonderland"),
            ],
            "relationships": [
                fact(f"the Knight{i}", "LOCATED_IN", "Wonderland"),
                {**fact(f"Page{i}", "KIN_OF", f"the Knight{i}"), "role": "page"},
            ],
            "quotes": [{"type": "SAYS", "speaker": f"the Knight{i}", "addressee": None, "quote": f"Halt{i}!"}],
        }
    if passage.startswith("Knight"):
        i = words[0].removeprefix("Knight")
        return {
            "entities": [
                entity("Character", f"Knight{i}", mentions=[f"Knight{i}", f"Knight{i}"]),
                entity("Character", f"Page{i}"),
                entity("Place", "Wonderland"),
            ],
            "relationships": [fact(f"Knight{i}", "LOCATED_IN", "Wonderland"), fact(f"Knight{i}", "KIN_OF", f"Page{i}")],
        }
    if passage.startswith("Rabbit"):
        name = words[0]
        return {
            "entities": [entity("Character", name), entity("Place", "Wonderland")],
            "relationships": [fact(name, "LOCATED_IN", "Wonderland")],
        }
    return {"entities": [], "relationships": []}


@pytest.fixture
async def rag(store: Store, graph: None) -> AsyncIterator[GraphRag]:
    async with ontology_schema(store, novel.ONTOLOGY):
        facade = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=scripted(reply),
            ontology=novel.ONTOLOGY,
        )
        facade.store.bind(store.driver, store.database)
        sources = [Sources.text(name, text) for i in range(PAIRS) for name, text in pair_texts(i).items()]
        sources += [unrelated(j, 0) for j in range(UNRELATED)]
        receipt = await facade.ingestion.ingest(sources)
        assert receipt.failed == 0, receipt.documents
        yield facade


async def neighbourhood(store: Store, ids: list[str]) -> Counter[str]:
    rows = await store.read(
        "MATCH (t:Character) WHERE t.id IN $ids "
        "RETURN 'node' AS what, labels(t) AS labels, properties(t) AS props, null AS other "
        "UNION ALL MATCH (t:Character)-[r]-(o) WHERE t.id IN $ids "
        "RETURN DISTINCT [type(r), startNode(r).id, endNode(r).id] AS what, labels(o) AS labels, "
        "properties(r) AS props, [k IN keys(o) WHERE k <> 'embedding' | [k, o[k]]] AS other",
        {"ids": ids},
    )
    return Counter(json.dumps(row, sort_keys=True, default=str) for row in rows)


async def reingest_until(rag: GraphRag, stop: asyncio.Event, tally: Counter[str]) -> None:
    version = 0
    while not stop.is_set():
        version += 1
        receipt = await rag.ingestion.ingest([unrelated(j, version) for j in range(UNRELATED)])
        tally["ingested"] += receipt.ingested
        tally["failed"] += receipt.failed


async def test_two_hundred_merge_undo_cycles_beside_concurrent_reingestion(rag: GraphRag, store: Store) -> None:
    resolution = Resolution(rag)
    suggestions = (await resolution.suggest()).suggestions
    assert len(suggestions) == PAIRS
    stop, tally = asyncio.Event(), Counter[str]()
    failures: list[str] = []
    began = time.perf_counter()
    writer = asyncio.create_task(reingest_until(rag, stop, tally))
    try:
        for cycle in range(CYCLES):
            suggestion = suggestions[cycle % PAIRS]
            ids = [suggestion.kept.id, suggestion.merged.id]
            before = await neighbourhood(store, ids)
            try:
                (run,) = await resolution.plan([suggestion]).apply()
                await resolution.undo(run)
            except Exception as error:  # collected: the report says which cycles failed and why
                failures.append(f"cycle {cycle}: {type(error).__name__}: {error}")
                continue
            if await neighbourhood(store, ids) != before:
                failures.append(f"cycle {cycle}: the neighbourhood differs after undo")
    finally:
        stop.set()
        await writer
    seconds = time.perf_counter() - began
    print(f"\n{CYCLES} cycles in {seconds:.1f} s beside {tally['ingested']} re-ingested documents")
    assert not failures, f"{len(failures)} of {CYCLES} cycles failed: {failures[:5]}"
    assert tally["failed"] == 0, "re-ingestion of unrelated documents never fails beside merges"
    assert tally["ingested"] > 0, "the re-ingestion really ran during the cycles"
