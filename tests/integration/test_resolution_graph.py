"""Entity resolution against the real Neo4j: a graph with duplicates, written by the real ingestion
with the novel ontology and scripted extraction (so mentions, quotes and facts are real),
suggested, previewed, merged and undone, compared by full dumps.

The dumps hold every node (labels and properties) and every relationship (type, the keys of
its ends, properties); element ids differ and are not compared. Merge runs (``IngestionRun``
nodes whose ``settingsFingerprint`` starts with ``merge:``) are left out: they are the
bookkeeping of the merge and its undo, kept (status ``Undone``) so a second undo is refused
as ``already-undone`` rather than ``run-not-found``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from graphrag_orm import GraphRag
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.communities import CommunityService
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, MergeError, UndoRefused
from graphrag_orm.ontologies import novel
from graphrag_orm.resolution import Resolution, Suggestion, SuggestionRule, SuggestOptions
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from tests.integration.knowledge_support import entity, fact, ontology_schema, scripted

# Fiction written for these tests.
TEXTS = {
    "wood-1": (
        "Alice met the Caterpillar in the Wood, near the Mushroom. The Caterpillar belonged to the Wood Folk. "
        "“Who are you?” said the Caterpillar. She stared."
    ),
    "wood-2": (
        "Caterpillar smoked in the Wood. Caterpillar was one of Wood Folk. Alice argued with Caterpillar. "
        "“Explain yourself!” said Caterpillar. She frowned."
    ),
    "wood-3": "The Caterpillar was Caterpillar's cousin, the Duchess said.",
    "cat-1": "The Cheshire Cat grinned at Alice. Later the cat vanished.",
}
CHANGED = "Alice met the Caterpillar again in the Wood. The Caterpillar said nothing."


def with_role(source: str, fact_type: str, target: str, role: str) -> dict[str, Any]:
    return {**fact(source, fact_type, target), "role": role}


def reply(passage: str) -> dict[str, Any]:
    """What a careful model would reply for each passage."""
    if passage.startswith("Alice met the Caterpillar in"):
        return {
            "entities": [
                entity("Character", "Alice"),
                entity("Character", "the Caterpillar", mentions=["the Caterpillar", "The Caterpillar"]),
                entity("Place", "Wood"),
                entity("Place", "Mushroom"),
                entity("Group", "the Wood Folk"),
                entity("Character", "she", mentions=["She"]),
            ],
            "relationships": [
                fact("the Caterpillar", "LOCATED_IN", "Wood"),
                fact("the Caterpillar", "LOCATED_IN", "Mushroom"),
                fact("the Caterpillar", "MEMBER_OF", "the Wood Folk"),
                with_role("Alice", "KIN_OF", "the Caterpillar", "cousin"),
                fact("Alice", "LOCATED_IN", "Wood"),
            ],
            "quotes": [{"type": "SAYS", "speaker": "the Caterpillar", "addressee": "Alice", "quote": "Who are you?"}],
        }
    if passage.startswith("Caterpillar smoked"):
        return {
            "entities": [
                entity("Character", "Caterpillar", mentions=["Caterpillar", "Caterpillar", "Caterpillar"]),
                entity("Character", "Alice"),
                entity("Place", "Wood"),
                entity("Group", "Wood Folk"),
                entity("Character", "she", mentions=["She"]),
            ],
            "relationships": [
                fact("Caterpillar", "LOCATED_IN", "Wood"),
                fact("Caterpillar", "MEMBER_OF", "Wood Folk"),
                fact("Alice", "LOCATED_IN", "Wood"),
            ],
            "quotes": [
                {"type": "SAYS", "speaker": "Caterpillar", "addressee": None, "quote": "Explain yourself!"},
            ],
        }
    if passage.startswith("The Caterpillar was"):
        return {
            "entities": [
                entity("Character", "the Caterpillar", mentions=["The Caterpillar"]),
                entity("Character", "Caterpillar", mentions=["Caterpillar's"]),
                entity("Character", "Duchess"),
            ],
            "relationships": [with_role("the Caterpillar", "KIN_OF", "Caterpillar", "cousin")],
        }
    if passage.startswith("The Cheshire Cat"):
        return {
            "entities": [
                entity("Character", "Cheshire Cat", mentions=["Cheshire Cat", "Cat"], aliases=["Cat"]),
                entity("Character", "the cat", mentions=["the cat"]),
                entity("Character", "Alice"),
            ],
            "relationships": [],
        }
    if passage.startswith("Alice met the Caterpillar again"):
        return {
            "entities": [
                entity("Character", "Alice"),
                entity("Character", "the Caterpillar", mentions=["the Caterpillar"]),
                entity("Place", "Wood"),
            ],
            "relationships": [fact("the Caterpillar", "LOCATED_IN", "Wood")],
        }
    return {"entities": [], "relationships": []}


def facade(store: Store) -> GraphRag:
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=scripted(reply),
        ontology=novel.ONTOLOGY,
    )
    rag.store.bind(store.driver, store.database)  # the suite's driver, as connect() would bind its own
    return rag


@pytest.fixture
async def rag(store: Store, graph: None) -> AsyncIterator[GraphRag]:
    async with ontology_schema(store, novel.ONTOLOGY):
        facade_ = facade(store)
        receipt = await facade_.ingestion.ingest([Sources.text(name, text) for name, text in TEXTS.items()])
        assert receipt.failed == 0, receipt.documents
        yield facade_


_NOT_MERGE_RUN = "NOT (n:IngestionRun AND n.settingsFingerprint STARTS WITH 'merge:')"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


async def dump(store: Store) -> Counter[str]:
    """Every node and relationship (merge runs left out, see the module's docstring), as a multiset."""
    nodes = await store.read(
        f"MATCH (n) WHERE {_NOT_MERGE_RUN} AND NOT n:GraphRagMigration AND NOT n:GraphRagTestDatabase "
        "RETURN labels(n) AS labels, properties(n) AS props"
    )
    links = await store.read(
        "MATCH (a)-[r]->(b) RETURN type(r) AS type, labels(a) AS fromLabels, coalesce(a.id, a.key) AS fromKey, "
        "labels(b) AS toLabels, coalesce(b.id, b.key) AS toKey, properties(r) AS props"
    )
    found: Counter[str] = Counter()
    for row in nodes:
        found[_canonical(["node", sorted(row["labels"]), row["props"]])] += 1
    for row in links:
        found[
            _canonical(["rel", row["type"], sorted(row["fromLabels"]), row["fromKey"], row["toKey"], row["props"]])
        ] += 1
    return found


async def one(store: Store, query: str, **params: Any) -> Any:
    result = await store.read(query, params)
    return result.records[0][result.keys[0]] if result.records else None


async def test_suggestions_pair_duplicates_by_name_and_alias_never_placeholders(rag: GraphRag) -> None:
    suggestions = (await Resolution(rag).suggest()).suggestions
    found = [(s.kind, s.kept.name, s.merged.name, s.rule) for s in suggestions]
    assert found == [
        ("Character", "Caterpillar", "the Caterpillar", SuggestionRule.SAME_NAME),
        ("Character", "Cheshire Cat", "the cat", SuggestionRule.ALIAS),
        ("Group", "Wood Folk", "the Wood Folk", SuggestionRule.SAME_NAME),
    ]
    caterpillar = suggestions[0]
    assert caterpillar.kept.mentions == 4 and caterpillar.merged.mentions == 3


async def test_a_graph_with_duplicates_is_previewed_merged_and_undone_exactly(rag: GraphRag, store: Store) -> None:
    resolution = Resolution(rag)
    suggestions = (await resolution.suggest()).suggestions
    before = await dump(store)
    plan = resolution.plan(suggestions)
    preview = await plan.preview()
    assert preview.blockers == ()
    caterpillar, cat, folk = preview.merges
    assert (caterpillar.mentions, caterpillar.quotes) == (3, 1)
    # Wood is unioned; Mushroom, the Wood Folk and Alice's KIN_OF are re-pointed; the cousin fact joins it to itself.
    assert (caterpillar.facts_unioned, caterpillar.facts_repointed, caterpillar.self_facts_dropped) == (1, 3, 1)
    assert caterpillar.aliases_added == 1
    assert (cat.mentions, cat.aliases_added) == (1, 1)  # the cat: one mention, one new alias
    assert (folk.mentions, folk.facts_repointed) == (1, 1)
    assert await dump(store) == before, "a preview writes nothing"

    runs = await plan.apply()
    assert len(runs) == 3
    merged = await dump(store)
    assert merged != before
    kept = suggestions[0].kept.id
    assert await one(store, "MATCH (c:Character {id: $id}) RETURN c.aliases", id=kept) == "the Caterpillar"
    assert await one(store, "MATCH (c:Character {id: $id}) RETURN count(c)", id=suggestions[0].merged.id) == 0
    wood = await one(
        store, "MATCH (:Character {id: $id})-[f:LOCATED_IN]->(:Place {name: 'Wood'}) RETURN f.documentIds", id=kept
    )
    documents = {name: Sources.text(name, text).document_id for name, text in TEXTS.items()}
    assert wood == sorted([documents["wood-1"], documents["wood-2"]])
    assert await one(store, "MATCH (c:Character {id: $id})-[f:KIN_OF]-(c) RETURN count(f)", id=kept) == 0
    # Mentions and quotes moved with their bytes: each still quotes its chunk exactly.
    spans = await store.read(
        "MATCH (:Character {id: $id})-[m]->(c:Chunk) RETURN m.startByte AS s, m.endByte AS e, m.quote AS q, c.text AS t, "
        "c.startByte AS cs",
        {"id": kept},
    )
    assert len(spans) == 4 + 3 + 2
    for row in spans:
        text = row["t"].encode()
        assert text[row["s"] - row["cs"] : row["e"] - row["cs"]].decode() == row["q"]

    for run in reversed(runs):
        report = await resolution.undo(run)
        assert report.run_id == run
    assert await dump(store) == before, "undone last first, the plan's runs restore the graph exactly"
    with pytest.raises(UndoRefused) as refused:
        await resolution.undo(runs[0])
    assert refused.value.code == ErrorCode.ALREADY_UNDONE


async def test_an_undo_is_refused_after_reingesting_a_changed_document(rag: GraphRag, store: Store) -> None:
    resolution = Resolution(rag)
    caterpillar = (await resolution.suggest()).suggestions[0]
    (run,) = await resolution.plan([caterpillar]).apply()
    receipt = await rag.ingestion.ingest([Sources.text("wood-1", CHANGED)])
    assert receipt.ingested == 1
    before = await dump(store)
    with pytest.raises(UndoRefused) as refused:
        await resolution.undo(run)
    assert refused.value.code == ErrorCode.WRITTEN_SINCE
    assert await dump(store) == before, "a refused undo changes nothing"
    # Extraction does not read aliases: the merged name came back as a thing of its own.
    again = (await resolution.suggest()).suggestions
    assert (again[0].kept.name, again[0].merged.name) == ("Caterpillar", "the Caterpillar")


async def test_a_later_merge_into_the_same_thing_refuses_the_earlier_undo_until_it_is_undone(
    rag: GraphRag, store: Store
) -> None:
    resolution = Resolution(rag)
    before = await dump(store)
    caterpillar = (await resolution.suggest()).suggestions[0]
    (first,) = await resolution.plan([caterpillar]).apply()
    # A hand-written suggestion: the Duchess into Caterpillar (a person's judgement, however odd).
    duchess = await store.read("MATCH (c:Character {name: 'Duchess'}) RETURN c.id AS id")
    kept = caterpillar.kept.model_copy(update={"aliases": ("the Caterpillar",)})
    later = Suggestion.model_validate(
        {
            "kind": "Character",
            "rule": "alias",
            "kept": kept.model_dump(),
            "merged": {"id": duchess.value("id"), "name": "Duchess", "aliases": [], "mentions": 1},
        }
    )
    (second,) = await resolution.plan([later]).apply()
    with pytest.raises(UndoRefused) as refused:
        await resolution.undo(first)
    assert refused.value.code == ErrorCode.WRITTEN_SINCE
    await resolution.undo(second)
    await resolution.undo(first)
    assert await dump(store) == before


async def test_blockers_refuse_the_plan_and_nothing_is_written(rag: GraphRag, store: Store) -> None:
    resolution = Resolution(rag)
    caterpillar, cat, folk = (await resolution.suggest()).suggestions
    twice = caterpillar.model_copy(update={"kept": cat.kept})
    chained = cat.model_copy(update={"kept": caterpillar.merged})
    preview = await resolution.plan([caterpillar, twice, chained]).preview()
    codes = {(b.merge, b.code) for b in preview.blockers}
    assert (0, ErrorCode.MERGED_TWICE) in codes and (1, ErrorCode.MERGED_TWICE) in codes
    assert (0, ErrorCode.KEPT_AND_MERGED) in codes
    await store.execute("MATCH (g:Group {id: $id}) SET g.aliases = 'Folk'", {"id": folk.merged.id})
    await store.execute("MATCH (c:Character {id: $id}) DETACH DELETE c", {"id": cat.merged.id})
    before = await dump(store)
    plan = resolution.plan([cat, folk])
    assert {(b.merge, b.code) for b in (await plan.preview()).blockers} == {
        (0, ErrorCode.THING_GONE),
        (1, ErrorCode.THING_CHANGED),
    }
    with pytest.raises(MergeError) as blocked:
        await plan.apply()
    assert blocked.value.code == ErrorCode.MERGE_BLOCKED and blocked.value.applied_run_ids == ()
    assert await dump(store) == before


async def test_a_plan_whose_third_merge_fails_reports_the_first_two_runs(rag: GraphRag, store: Store) -> None:
    resolution = Resolution(rag)
    suggestions = (await resolution.suggest()).suggestions
    folk = suggestions[2]
    # A relationship the ontology does not name: the database refuses to delete the merged group.
    await store.execute(
        "MATCH (g:Group {id: $id}) CREATE (g)-[:NOTED_IN]->(:Note {id: 'note-1'})", {"id": folk.merged.id}
    )
    before = await dump(store)
    with pytest.raises(MergeError) as failed:
        await resolution.plan(suggestions).apply()
    error = failed.value
    assert error.code == ErrorCode.MERGE_FAILED and error.failed == folk
    assert len(error.applied_run_ids) == 2
    assert "merge 3 of 3" in error.message and error.__cause__ is not None
    assert await one(store, "MATCH (g:Group {id: $id}) RETURN count(g)", id=folk.merged.id) == 1
    for run in reversed(error.applied_run_ids):
        await resolution.undo(run)
    assert await dump(store) == before
    await store.execute("MATCH (n:Note) DETACH DELETE n")


async def test_undo_refuses_an_unknown_run_and_another_ontology(rag: GraphRag, store: Store) -> None:
    resolution = Resolution(rag)
    with pytest.raises(UndoRefused) as unknown:
        await resolution.undo("merge-nothing")
    assert unknown.value.code == ErrorCode.RUN_NOT_FOUND
    ingestion_run = await one(store, "MATCH (r:IngestionRun) RETURN r.id LIMIT 1")
    with pytest.raises(UndoRefused) as not_merge:
        await resolution.undo(ingestion_run)
    assert not_merge.value.code == ErrorCode.RUN_NOT_FOUND
    (run,) = await resolution.plan([(await resolution.suggest()).suggestions[0]]).apply()
    other = Resolution.from_parts(store, rag.model, novel.ONTOLOGY.with_label_prefix("Rag"))
    before = await dump(store)
    with pytest.raises(UndoRefused) as changed:
        await other.undo(run)
    assert changed.value.code == ErrorCode.ONTOLOGY_CHANGED
    assert await dump(store) == before
    await resolution.undo(run)


async def test_resolution_needs_an_ontology(store: Store) -> None:
    rag = GraphRag(embedding_set=OFFLINE_EMBEDDING_SET, embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    with pytest.raises(ConfigurationError):
        Resolution(rag)


async def test_a_reached_bound_is_reported_never_silent(rag: GraphRag) -> None:
    resolution = Resolution(rag)
    few = await resolution.suggest(SuggestOptions(max_suggestions=1))
    assert len(few.suggestions) == 1
    assert [(limit.name, limit.value) for limit in few.limits_reached] == [(LimitName.MAX_SUGGESTIONS, 1)]
    cut = await resolution.suggest(SuggestOptions(max_things=2))
    assert (LimitName.MAX_THINGS, 2) in [(limit.name, limit.value) for limit in cut.limits_reached]
    assert (await resolution.suggest()).limits_reached == ()


async def test_a_merge_after_a_community_build_takes_the_merged_things_places_with_it(
    rag: GraphRag, store: Store
) -> None:
    service = CommunityService(store, novel.ONTOLOGY)
    assert (await service.build()).communities > 0
    suggestions = (await Resolution(rag).suggest()).suggestions
    merged = suggestions[0].merged.id
    assert await one(store, "MATCH (:Character {id: $id})-[p:IN_COMMUNITY]->() RETURN count(p)", id=merged) > 0
    runs = await Resolution(rag).plan(suggestions[:1]).apply()
    assert len(runs) == 1
    assert await one(store, "MATCH (c:Character {id: $id}) RETURN count(c)", id=merged) == 0
    assert (await service.build()).communities > 0, "the next build places the kept thing"
