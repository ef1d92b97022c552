"""Entity resolution of a tenanted graph against the real Neo4j (docs/tenancy.md).

Two tenants, ``acme`` and ``acme-eu`` (whose id holds the first's word), ingest the same
documents (the same source URIs) with the scripted extractor of the resolution tests, so each
holds its own "Caterpillar" and "the Caterpillar", and a ledger each naming the tenant's own
secret twice ("Plumwood Forge" and "the Plumwood Forge"). Each tenant's suggestions hold its
own things only; its merges and undos move its own mentions, quotes and facts and leave the
other tenant's nodes and relationships byte-identical; a plan or a statement naming the other
tenant's things, relationships or runs finds nothing and writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from neo4j.exceptions import Neo4jError

from graphrag_orm import ConnectionSettings, GraphRag, Sources
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import MergeError, UndoRefused
from graphrag_orm.ontologies import novel
from graphrag_orm.resolution import Resolution, Suggestion
from graphrag_orm.store import Store, StoreTransaction
from tests.integration.knowledge_support import entity, ontology_schema, scripted
from tests.integration.test_resolution_graph import TEXTS
from tests.integration.test_resolution_graph import reply as story
from tests.integration.test_tenancy_maintenance import everything_but
from tests.support.tenancy import TENANTED, tenanted_rag

SECRETS = {"acme": "Plumwood Forge", "acme-eu": "Quartzline Works"}
OTHER = {"acme": "acme-eu", "acme-eu": "acme"}
#: The suggestions of the resolution tests' graph (untenanted), then the tenant's secret pair.
STORY = [
    ("Character", "Caterpillar", "the Caterpillar"),
    ("Character", "Cheshire Cat", "the cat"),
    ("Group", "Wood Folk", "the Wood Folk"),
]


def ledger(tenant: str) -> str:
    return f"The ledger names {SECRETS[tenant]} twice: the {SECRETS[tenant]} keeps the Wood Folk's accounts."


def reply(passage: str) -> dict[str, Any]:
    """The resolution tests' replies, and each tenant's ledger naming its secret twice."""
    for secret in SECRETS.values():
        if passage.startswith(f"The ledger names {secret}"):
            return {
                "entities": [
                    entity("Group", secret, mentions=[secret]),
                    entity("Group", f"the {secret}", mentions=[f"the {secret}"]),
                ],
                "relationships": [],
            }
    return story(passage)


def expected(tenant: str) -> list[tuple[str, ...]]:
    """The pairs (kind, then both names) of ``tenant``'s suggestions: which of a tie is kept
    depends on the ids, which the tenant qualifies."""
    return sorted(
        (kind, *sorted(names)) for kind, *names in [*STORY, ("Group", SECRETS[tenant], f"the {SECRETS[tenant]}")]
    )


def pairs(suggestions: tuple[Suggestion, ...]) -> list[tuple[str, ...]]:
    return sorted((s.kind, *sorted((s.kept.name, s.merged.name))) for s in suggestions)


@pytest_asyncio.fixture
async def tenants(
    tenanted_graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> AsyncIterator[dict[str, GraphRag]]:
    async with ontology_schema(store, novel.ONTOLOGY, TENANTED):
        opened: dict[str, GraphRag] = {}
        for name in SECRETS:
            facade = tenanted_rag(name, extraction_chat=scripted(reply), ontology=novel.ONTOLOGY)
            opened[name] = await facade.connect(neo4j_settings, neomodel=False)
        for name, facade in opened.items():
            texts = [Sources.text(uri, text) for uri, text in (*TEXTS.items(), ("ledger", ledger(name)))]
            receipt = await facade.ingestion.ingest(texts)
            assert receipt.failed == 0 and receipt.ingested == len(TEXTS) + 1, receipt
        yield opened
        for facade in opened.values():
            await facade.close()


async def things_of(store: Store, tenant: str) -> set[str]:
    found = await store.read("MATCH (t:Character|Place|Group {tenant: $t}) RETURN collect(t.id) AS ids", {"t": tenant})
    return set(found.value("ids"))


async def own_graph(store: Store, tenant: str) -> str:
    """Every node and relationship of ``tenant`` but its merge runs (labels, types, ends' ids, properties)."""
    nodes = await store.read(
        "MATCH (n {tenant: $t}) WHERE NOT coalesce(n.settingsFingerprint, '') STARTS WITH 'merge:' "
        "RETURN labels(n) AS labels, properties(n) AS props",
        {"t": tenant},
    )
    links = await store.read(
        "MATCH (a {tenant: $t})-[r]->(b) RETURN type(r) AS type, a.id AS a, b.id AS b, properties(r) AS props",
        {"t": tenant},
    )
    return json.dumps(
        [sorted(json.dumps(dict(row), sort_keys=True, default=str) for row in rows) for rows in (nodes, links)]
    )


async def suggestions_of(rag: GraphRag) -> tuple[Suggestion, ...]:
    return (await Resolution(rag).suggest()).suggestions


async def plant_crossing_edges(store: Store, tenant: str) -> None:
    """Edges no fenced writer makes, which ``tenant``'s resolution must never read, count or move:
    from each of its Caterpillars a mention and a quote in the other tenant's chunk and a fact to
    the other's Wood, and a fact from the other's Alice to it."""
    await store.execute(
        "MATCH (t:Character {tenant: $tenant}) WHERE t.name IN ['Caterpillar', 'the Caterpillar'] "
        "MATCH (c:Chunk {tenant: $other}) WHERE c.text STARTS WITH 'The Cheshire Cat' "
        "MATCH (w:Place {name: 'Wood', tenant: $other}) MATCH (a:Character {name: 'Alice', tenant: $other}) "
        "CREATE (t)-[:MENTIONED_IN {key: 'planted-m-' + t.id, startByte: 0, endByte: 1, quote: 'x', "
        "runId: 'planted', extractorVersion: 'planted'}]->(c) "
        "CREATE (t)-[:SAYS {key: 'planted-q-' + t.id, quote: 'x', runId: 'planted'}]->(c) "
        "CREATE (t)-[:LOCATED_IN {documentIds: [], runId: 'planted', extractorVersion: 'planted'}]->(w) "
        "CREATE (a)-[:KIN_OF {documentIds: [], runId: 'planted', extractorVersion: 'planted'}]->(t)",
        {"tenant": tenant, "other": OTHER[tenant]},
    )


async def test_each_tenants_suggestions_and_preview_are_its_own(tenants: dict[str, GraphRag], store: Store) -> None:
    for tenant in SECRETS:
        await plant_crossing_edges(store, tenant)
    for tenant, rag in tenants.items():
        suggestions = await suggestions_of(rag)
        assert pairs(suggestions) == expected(tenant)
        mine = await things_of(store, tenant)
        assert {ref.id for s in suggestions for ref in (s.kept, s.merged)} <= mine
        assert SECRETS[OTHER[tenant]] not in json.dumps([s.model_dump(mode="json") for s in suggestions])
        caterpillar = next(s for s in suggestions if s.kept.name == "Caterpillar")
        assert (caterpillar.kept.mentions, caterpillar.merged.mentions) == (4, 3)  # the planted mentions not counted
        before = await everything_but(store, tenant)
        preview = await Resolution(rag).plan([caterpillar]).preview()
        assert preview.blockers == ()
        (counts,) = preview.merges
        # As the untenanted graph's: the planted mention, quote and fact are neither counted nor moved.
        assert (counts.mentions, counts.quotes) == (3, 1)
        assert (counts.facts_unioned, counts.facts_repointed, counts.self_facts_dropped) == (1, 3, 1)
        assert await everything_but(store, tenant) == before
        # The merged thing keeps the planted edges, so the database refuses its deletion: the merge
        # fails whole, nothing of it written.
        graph = await own_graph(store, tenant)
        with pytest.raises(MergeError) as failed:
            await Resolution(rag).plan([caterpillar]).apply()
        assert failed.value.code == ErrorCode.MERGE_FAILED and failed.value.applied_run_ids == ()
        assert await own_graph(store, tenant) == graph and await everything_but(store, tenant) == before


async def test_a_merge_and_its_undo_leave_the_other_tenant_byte_identical(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme, eu = tenants["acme"], tenants["acme-eu"]
    others_before, own_before = await everything_but(store, "acme"), await own_graph(store, "acme")
    suggestions = await suggestions_of(acme)
    runs = await Resolution(acme).plan(suggestions).apply()
    assert len(runs) == len(expected("acme"))
    assert await everything_but(store, "acme") == others_before
    merged = {s.merged.id for s in suggestions}
    assert not merged & await things_of(store, "acme")  # gone from acme
    stamped = await store.read(
        "MATCH (r:IngestionRun) WHERE r.id IN $runs RETURN collect(r.tenant) AS t", {"runs": runs}
    )
    assert stamped.value("t") == ["acme"] * len(runs)
    # acme-eu's things and suggestions are untouched; it cannot undo acme's runs.
    assert pairs(await suggestions_of(eu)) == expected("acme-eu")
    for run_id in runs:
        with pytest.raises(UndoRefused) as refused:
            await Resolution(eu).undo(run_id)
        assert refused.value.code == ErrorCode.RUN_NOT_FOUND
    assert await everything_but(store, "acme") == others_before
    after_merge = await own_graph(store, "acme")
    for run_id in reversed(runs):
        report = await Resolution(acme).undo(run_id)
        assert report.run_id == run_id
    assert await everything_but(store, "acme") == others_before
    assert await own_graph(store, "acme") == own_before != after_merge
    # acme-eu merges and undoes its own, leaving acme's graph as it is.
    acme_graph, acme_own = await everything_but(store, "acme-eu"), await own_graph(store, "acme")
    eu_runs = await Resolution(eu).plan(await suggestions_of(eu)).apply()
    for run_id in reversed(eu_runs):
        await Resolution(eu).undo(run_id)
    assert await everything_but(store, "acme-eu") == acme_graph and await own_graph(store, "acme") == acme_own


async def test_a_plan_naming_the_other_tenants_things_is_refused_and_writes_nothing(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme, eu = tenants["acme"], tenants["acme-eu"]
    mine = next(s for s in await suggestions_of(acme) if s.kept.name == "Caterpillar")
    theirs = next(s for s in await suggestions_of(eu) if s.kept.name == "Caterpillar")
    everything = (await everything_but(store, "acme"), await own_graph(store, "acme"))
    for plan in ([theirs], [mine.model_copy(update={"merged": theirs.merged})]):
        preview = await Resolution(acme).plan(plan).preview()
        gone = {b.thing_id for b in preview.blockers if b.code == ErrorCode.THING_GONE}
        assert gone == {ref.id for ref in (plan[0].kept, plan[0].merged) if ref.id not in {mine.kept.id}}
        assert preview.merges[0].mentions == 0 and preview.merges[0].quotes == 0
        with pytest.raises(MergeError) as blocked:
            await Resolution(acme).plan(plan).apply()
        assert blocked.value.code == ErrorCode.MERGE_BLOCKED
    # The merge itself (past the preview) finds the other tenant's thing gone.
    resolution = Resolution(acme)

    async def merge(tx: StoreTransaction) -> object:
        return await resolution._merger.merge(tx, theirs, 0, "merge-planted")

    with pytest.raises(MergeError) as gone_error:
        await acme.store.write(merge)
    assert gone_error.value.code == ErrorCode.THING_GONE
    assert (await everything_but(store, "acme"), await own_graph(store, "acme")) == everything


async def element(store: Store, pattern: str, tenant: str) -> str:
    """The element id of the one ``n`` of ``pattern`` that is ``tenant``'s."""
    return str(
        (await store.read(f"MATCH {pattern} WHERE n.tenant = $t RETURN elementId(n) AS id", {"t": tenant})).value("id")
    )


async def write(rag: GraphRag, cypher: str, parameters: dict[str, Any]) -> list[dict[str, Any]]:
    async def work(tx: StoreTransaction) -> list[dict[str, Any]]:
        return [dict(row) for row in await tx.run(cypher, parameters)]

    return await rag.store.write(work, attempts=1)


async def test_each_statement_alone_reads_and_writes_the_tenants_nodes_only(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    """Each statement alone through acme's store, given acme-eu's element ids, thing ids and run
    id, or acme's own things with edges planted across tenants both ways: nothing it returns,
    counts or writes is acme-eu's."""
    acme, eu = tenants["acme"], tenants["acme-eu"]
    eu_runs = await Resolution(eu).plan([s for s in await suggestions_of(eu) if s.kind == "Group"][:1]).apply()
    for tenant in SECRETS:
        await plant_crossing_edges(store, tenant)
    st, mine = Resolution(acme).statements, await things_of(store, "acme")
    chunks = set((await store.read("MATCH (c:Chunk {tenant: 'acme'}) RETURN collect(elementId(c)) AS c")).value("c"))
    own = {name: await element(store, f"(n:Character {{name: '{name}'}})", "acme") for name in ("Caterpillar", "Alice")}
    own["Wood"] = await element(store, "(n:Place {name: 'Wood'})", "acme")
    theirs = {
        name: await element(store, f"(n:Character {{name: '{name}'}})", "acme-eu") for name in ("Caterpillar", "Alice")
    }
    theirs["Wood"] = await element(store, "(n:Place {name: 'Wood'})", "acme-eu")
    their_id = str(
        (await store.read("MATCH (t) WHERE elementId(t) = $e RETURN t.id AS id", {"e": theirs["Caterpillar"]})).value(
            "id"
        )
    )
    crossing = await store.read(
        "MATCH (a)-[r]->(b) WHERE a.tenant <> b.tenant RETURN a.tenant AS a, type(r) AS type, elementId(r) AS id, r.key AS key"
    )
    planted = {(row["a"], row["type"]): [] for row in crossing}
    for row in crossing:
        planted[(row["a"], row["type"])].append(row)
    before = (await everything_but(store, "acme"), await own_graph(store, "acme"))
    facts, links = list(novel.ONTOLOGY.fact_types), [novel.ONTOLOGY.mention_type, *novel.ONTOLOGY.quote_types]

    # Reads (each locks what it reads): the other's thing by id or element id finds nothing ...
    assert await write(acme, st.lock_things["Character"], {"ids": [their_id]}) == []
    assert await write(acme, st.fact_ends["Character"], {"id": their_id, "facts": facts}) == []
    for cypher in (st.links_of, st.facts_of):
        assert await write(acme, cypher, {"thing": theirs["Caterpillar"], "links": links, "facts": facts}) == []
    keys = [row["key"] for row in planted[("acme", "MENTIONED_IN")]]
    their_keys = (
        await store.read(
            "MATCH (t)-[m:MENTIONED_IN]->() WHERE elementId(t) = $e RETURN collect(m.key) AS k",
            {"e": theirs["Caterpillar"]},
        )
    ).value("k")
    assert their_keys
    assert (
        await write(acme, st.links_by_key, {"thing": theirs["Caterpillar"], "links": links, "keys": their_keys}) == []
    )
    assert (
        await write(acme, st.facts_with, {"thing": theirs["Caterpillar"], "facts": facts, "others": [theirs["Wood"]]})
        == []
    )
    # acme's Alice holds a planted fact to acme-eu's Caterpillar: the thing itself is checked.
    kin = {"thing": theirs["Caterpillar"], "facts": facts, "others": [own["Alice"]]}
    assert await write(acme, st.facts_with, kin) == []
    assert await write(acme, st.lock_run, {"id": eu_runs[0]}) == []
    assert (await acme.store.read(st.run_exists, {"id": eu_runs[0]})).value("found") is False
    # ... and acme's own things never reach across the planted edges.
    candidates = await write(acme, st.candidates["Character"], {"limit": 1000})
    assert {row["id"] for row in candidates} <= mine
    assert next(row["mentions"] for row in candidates if row["name"] == "Caterpillar") == 4
    ends = await write(
        acme,
        st.fact_ends["Character"],
        {"id": next(r["id"] for r in candidates if r["name"] == "Caterpillar"), "facts": facts},
    )
    assert ends and {row["id"] for row in ends} <= mine
    found = await write(acme, st.links_of, {"thing": own["Caterpillar"], "links": links})
    assert found and {row["end"] for row in found} <= chunks
    assert await write(acme, st.links_by_key, {"thing": own["Caterpillar"], "links": links, "keys": keys}) == []
    for thing in (own["Caterpillar"], own["Wood"]):  # outgoing to, and incoming from, the other's things
        found = await write(acme, st.facts_of, {"thing": thing, "facts": facts})
        assert found and {row["otherId"] for row in found} <= mine
    assert (
        await write(acme, st.facts_with, {"thing": own["Caterpillar"], "facts": facts, "others": [theirs["Wood"]]})
        == []
    )
    assert (
        await write(acme, st.facts_with, {"thing": own["Wood"], "facts": facts, "others": [theirs["Caterpillar"]]})
        == []
    )

    # Writes: nothing of the other tenant's is changed, created or deleted, from either end.
    assert await write(acme, st.set_thing, {"thing": theirs["Caterpillar"], "props": {"name": "x"}}) == []
    assert await write(acme, st.set_run_status, {"id": eu_runs[0], "status": "Undone"}) == []
    deleted = await write(acme, st.delete_thing, {"thing": theirs["Caterpillar"]})
    assert deleted == [{"deleted": 0}]
    for row in (*planted[("acme", "MENTIONED_IN")], *planted[("acme-eu", "MENTIONED_IN")]):
        assert await write(acme, st.delete_relationships, {"ids": [row["id"]]}) == [{"deleted": 0}]
    for row in (*planted[("acme", "LOCATED_IN")], *planted[("acme-eu", "KIN_OF")]):
        updated = await write(acme, st.set_relationships, {"rows": [{"id": row["id"], "props": {}}]})
        assert updated == [{"updated": 0}]
    for start, end in ((own["Alice"], theirs["Wood"]), (theirs["Alice"], own["Wood"])):
        rows = [{"start": start, "end": end, "props": {}}]
        assert await write(acme, st.create_relationships["LOCATED_IN"], {"rows": rows}) == [{"created": 0}]
    assert (await everything_but(store, "acme"), await own_graph(store, "acme")) == before

    # What acme writes is its own: a thing created or rewritten without a tenant in its properties,
    # and a place in the other tenant's community that a deletion does not remove.
    created = await write(
        acme, st.create_thing, {"labels": ["Character"], "props": {"id": "planted-thing", "name": "P"}}
    )
    await write(acme, st.set_thing, {"thing": created[0]["element"], "props": {"id": "planted-thing", "name": "Q"}})
    stamped = await store.read("MATCH (t {id: 'planted-thing'}) RETURN t.tenant AS t, t.name AS name")
    assert (stamped.value("t"), stamped.value("name")) == ("acme", "Q")
    await store.execute(
        "MATCH (t {id: 'planted-thing'}) CREATE (t)-[:IN_COMMUNITY]->(:Community {id: 'planted-community', tenant: 'acme-eu'})"
    )
    others = await everything_but(store, "acme")
    with pytest.raises(Neo4jError):
        await write(acme, st.delete_thing, {"thing": created[0]["element"]})
    assert await everything_but(store, "acme") == others
