"""The knowledge graph of a tenanted graph against the real Neo4j (docs/tenancy.md).

Two tenants ingest the same documents (the same source URIs and titles) with a scripted
extractor that names the same things (the Trail 5 bike, brake kit BK-7, caliper BC-310)
and a supplier each that is the tenant's secret. Each tenant gets its own things (two
nodes for one name, each with its tenant); its graph route, answers, knowledge reads and
knowledge maintenance never read, return, count or touch the other's things, facts or
chunks, even along an edge planted across tenants; and a removal of one tenant's document,
orphans or whole tenant leaves the other's graph byte-identical.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from graphrag_orm import ConnectionSettings, GraphRag, HealthFinding, Sources
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import SchemaMismatch
from graphrag_orm.evidence import Route
from graphrag_orm.extraction.statements import retract_statements
from graphrag_orm.knowledge import KnowledgeReads
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.maintenance.knowledge_graph import KnowledgeGraphMaintenance
from graphrag_orm.ontology import entity_id, tenant_thing_id
from graphrag_orm.ontology.facts import fact_statements
from graphrag_orm.retrieval import Retrievers
from graphrag_orm.retrieval.graph import GraphRoute
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.options import GraphOptions
from graphrag_orm.sources import Source
from graphrag_orm.store import Store, StoreTransaction
from tests.integration.knowledge_support import BIKES, entity, fact, scripted
from tests.integration.knowledge_support import ontology_schema as knowledge_schema
from tests.integration.test_tenancy_maintenance import everything_but
from tests.support.tenancy import TENANTED, tenanted_rag

#: Each tenant's supplier of BC-310: a thing only that tenant names, and its secret. The second
#: tenant's id holds the first's word (``acme``), so the names index's tenant clause (a phrase of
#: the analysed id) lets its things through for ``acme``, and only the exact check drops them.
SUPPLIERS = {"acme": "Plumwood Forge", "acme-eu": "Quartzline Works"}
OTHER = {"acme": "acme-eu", "acme-eu": "acme"}
SHARED = (("Bike", "Trail 5"), ("Part", "BK-7"), ("Part", "BC-310"))
FACTS = (("Trail 5", "HAS_PART", "BK-7"), ("BK-7", "HAS_PART", "BC-310"))
QUESTION = "Who supplies the BC-310 caliper: Plumwood Forge or Quartzline Works?"


def sources(tenant: str) -> list[Source]:
    """The same URIs and titles for both tenants; the supplier is the tenant's own."""
    catalog = (
        "# Kestrel catalog\n\nThe Trail 5 bike uses brake kit BK-7. "
        "Brake kit BK-7 holds the BC-310 caliper.\n\n"
        f"## Supply\n\nThe BC-310 caliper comes from {SUPPLIERS[tenant]}, under contract.\n"
    )
    notes = "# Workshop notes\n\nCheck the BC-310 caliper of every Trail 5 each spring.\n"
    return [
        Sources.text("catalog", catalog, media_type="text/markdown").with_metadata(title="Kestrel catalog"),
        Sources.text("notes", notes, media_type="text/markdown").with_metadata(title="Workshop notes"),
    ]


def reply(passage: str) -> dict[str, Any]:
    """The things the passage names (of every tenant's list: the extractor is shared), and their facts."""
    named = [
        (kind, name) for kind, name in (*SHARED, *(("Supplier", s) for s in SUPPLIERS.values())) if name in passage
    ]
    names = {name for _, name in named}
    facts = [fact(a, t, b) for a, t, b in FACTS if {a, b} <= names]
    facts += [fact("BC-310", "SUPPLIED_BY", s) for s in SUPPLIERS.values() if {"BC-310", s} <= names]
    return {"entities": [entity(kind, name) for kind, name in named], "relationships": facts}


def extractor() -> ScriptedChat:
    return scripted(reply)


@pytest_asyncio.fixture
async def tenants(
    tenanted_graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> AsyncIterator[dict[str, GraphRag]]:
    async with knowledge_schema(store, BIKES, TENANTED):
        opened: dict[str, GraphRag] = {}
        for name in SUPPLIERS:
            facade = tenanted_rag(name, extraction_chat=extractor(), ontology=BIKES)
            opened[name] = await facade.connect(neo4j_settings, neomodel=False)
        for name, facade in opened.items():
            receipt = await facade.ingestion.ingest(sources(name))
            assert receipt.failed == 0 and receipt.ingested == 2, receipt
        yield opened
        for facade in opened.values():
            await facade.close()


async def rows(store: Store, query: str, **parameters: Any) -> list[dict[str, Any]]:
    return [dict(row) for row in await store.read(query, parameters)]


async def plant_crossing_edges(store: Store, tenant: str) -> None:
    """A fact from ``tenant``'s BC-310 to the other's supplier (listing every document of ``tenant``),
    and the other's supplier mentioned in ``tenant``'s chunks naming BC-310: edges no fenced writer
    makes, which ``tenant``'s reads must still never follow."""
    await store.execute(
        "MATCH (a:Part {name: 'BC-310', tenant: $tenant}), (s:Supplier {name: $supplier, tenant: $other}) "
        "MATCH (d:Document {tenant: $tenant}) WITH a, s, coll.sort(collect(d.id)) AS documents "
        "MERGE (a)-[f:SUPPLIED_BY]->(s) ON CREATE SET f.documentIds = documents, f.runId = 'planted', "
        "f.extractorVersion = 'planted' WITH s "
        "MATCH (c:Chunk {tenant: $tenant}) WHERE c.text CONTAINS 'BC-310' "
        "CREATE (s)-[:MENTIONED_IN {key: 'planted-' + c.id, documentId: c.documentId, startByte: 0, endByte: 1, "
        "quote: 'x', runId: 'planted', extractorVersion: 'planted'}]->(c)",
        {"tenant": tenant, "other": OTHER[tenant], "supplier": SUPPLIERS[OTHER[tenant]]},
    )


async def held(store: Store, tenant: str, query: str) -> set[str]:
    """The element ids of ``query``'s ``n`` (a node pattern) that are ``tenant``'s."""
    return set(
        (
            await store.read(f"MATCH {query} WHERE n.tenant = $owner RETURN elementId(n) AS id", {"owner": tenant})
        ).column("id")
    )


async def test_two_tenants_naming_one_thing_hold_two_things_each_the_tenants(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    found = await rows(
        store, "MATCH (t) WHERE t:Bike OR t:Part OR t:Supplier RETURN t.name AS name, t.tenant AS tenant, t.id AS id"
    )
    by_name: dict[str, dict[str, str]] = {}
    for row in found:
        by_name.setdefault(row["name"], {})[row["tenant"]] = row["id"]
    for kind, name in SHARED:
        assert set(by_name[name]) == {"acme", "acme-eu"}, name
        for tenant, thing in by_name[name].items():
            assert thing == tenant_thing_id(entity_id(kind, name), tenant)
    for tenant, supplier in SUPPLIERS.items():
        assert by_name[supplier].keys() == {tenant}
    # Facts and mentions join one tenant's things to that tenant's chunks only.
    crossing = await rows(
        store,
        "MATCH (a)-[r]->(b) WHERE a.tenant IS NOT NULL AND b.tenant IS NOT NULL AND a.tenant <> b.tenant "
        "RETURN type(r) AS type",
    )
    assert crossing == []
    mentions = await rows(store, "MATCH (t)-[m:MENTIONED_IN]->(c) RETURN t.tenant AS t, c.tenant AS c")
    assert mentions and all(row["t"] == row["c"] for row in mentions)
    facts = await rows(store, "MATCH (a)-[f:HAS_PART|SUPPLIED_BY]->(b) RETURN a.tenant AS tenant, f.documentIds AS d")
    assert sorted(row["tenant"] for row in facts) == ["acme"] * 3 + ["acme-eu"] * 3
    for row in facts:  # each fact lists only its tenant's documents
        owned = {s.in_tenant(row["tenant"]).document_id for s in sources(row["tenant"])}
        assert set(row["d"]) <= owned


@pytest.mark.parametrize("tenant", ["acme", "acme-eu"])
async def test_each_graph_route_statement_reads_the_tenants_things_and_facts_only(
    tenants: dict[str, GraphRag], store: Store, tenant: str
) -> None:
    """Each statement of the route alone, with edges planted across tenants: nothing it returns is
    the other tenant's (each filter is checked on its own, not only behind the next one)."""
    await plant_crossing_edges(store, tenant)
    rag, other = tenants[tenant], OTHER[tenant]
    assert rag.ontology is not None
    st = GraphRoute(rag.store, rag.model, rag.ontology).statements
    things = await held(store, tenant, "(n:Bike|Part|Supplier)")
    chunks = [
        str(c) for c in (await store.read("MATCH (c:Chunk {tenant: $t}) RETURN c.id AS id", {"t": tenant})).column("id")
    ]
    by_chunks = await rag.store.read(st.anchors_by_chunks, {"ids": chunks, "k": 50})
    assert by_chunks.column("thing") and set(by_chunks.column("thing")) <= things
    query = to_query(f"{SUPPLIERS[other]} {SUPPLIERS[tenant]} BC-310")
    by_names = await rag.store.read(st.anchors_by_names, {"index": st.names_index, "query": query, "k": 50})
    kept = [hit["thing"] for hit in by_names.value("kept")]
    assert kept and set(kept) <= things
    part = (
        await store.read("MATCH (p:Part {name: 'BC-310', tenant: $t}) RETURN elementId(p) AS id", {"t": tenant})
    ).value("id")
    assert (await rag.store.read(st.degree, {"ids": [part]})).value("degree") == 2  # the planted fact not counted
    expanded = await rag.store.read(st.expand, {"frontier": [part], "limit": 50})
    assert len(expanded) == 2 and set(expanded.column("other")) <= things
    # Another tenant's thing, named by element id, is neither counted nor walked from.
    theirs = (
        await store.read("MATCH (p:Part {name: 'BC-310', tenant: $t}) RETURN elementId(p) AS id", {"t": other})
    ).value("id")
    assert len(await rag.store.read(st.degree, {"ids": [theirs]})) == 0
    assert len(await rag.store.read(st.expand, {"frontier": [theirs], "limit": 50})) == 0
    planted = (
        await store.read(
            "MATCH (:Part {tenant: $t})-[f:SUPPLIED_BY {runId: 'planted'}]->() RETURN elementId(f) AS id", {"t": tenant}
        )
    ).value("id")
    assert len(await rag.store.read(st.grounding, {"ids": [planted], "perFact": 5})) == 0


@pytest.mark.parametrize("tenant", ["acme", "acme-eu"])
async def test_the_graph_route_and_answers_return_the_tenants_facts_and_chunks_only(
    tenants: dict[str, GraphRag], store: Store, tenant: str
) -> None:
    await plant_crossing_edges(store, tenant)
    rag, other = tenants[tenant], OTHER[tenant]
    assert rag.ontology is not None
    route = GraphRoute(rag.store, rag.model, rag.ontology)
    own = {
        str(c) for c in (await store.read("MATCH (c:Chunk {tenant: $t}) RETURN c.id AS id", {"t": tenant})).column("id")
    }
    theirs = [
        str(c) for c in (await store.read("MATCH (c:Chunk {tenant: $t}) RETURN c.id AS id", {"t": other})).column("id")
    ]
    # Anchors from the names index: both tenants' BC-310 and both suppliers match the words.
    result = await route.run(QUESTION, [], GraphOptions())
    facts = [item.text for item in result.context]
    assert f"(BC-310) -[SUPPLIED_BY]-> ({SUPPLIERS[tenant]})" in facts
    assert not any(SUPPLIERS[other] in text for text in facts), facts
    assert result.candidates and {c.chunk_id for c in result.candidates} <= own
    # Anchors from chunks: the other tenant's chunks name no thing of this tenant.
    assert (await route.run("nothing named here", theirs, GraphOptions())).context == []
    # Through the retriever and answers, every item and fact is the tenant's.
    evidence = await rag.retriever.retrieve(QUESTION, Retrievers.hybrid_graph())
    assert any(any(r.route == Route.GRAPH for r in item.routes) for item in evidence.items)
    assert {item.chunk_id for item in evidence.items} <= own
    # The question names both suppliers: what came back is the items and the facts.
    text = " ".join([i.model_dump_json() for i in evidence.items] + [c.text for c in evidence.context])
    assert SUPPLIERS[tenant] in text and SUPPLIERS[other] not in text
    assert not any(chunk in text for chunk in theirs)
    assert rag.answers is not None
    answer = await rag.answers.answer(QUESTION, retrieval=Retrievers.hybrid_graph())
    said = " ".join([answer.text or ""] + [i.model_dump_json() for i in answer.evidence.items])
    said += " ".join(c.text for c in answer.evidence.context)
    assert SUPPLIERS[tenant] in said and SUPPLIERS[other] not in said
    assert not any(chunk in said for chunk in theirs)


async def test_knowledge_reads_find_the_tenants_things_and_facts_only(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    await plant_crossing_edges(store, "acme")
    acme = tenants["acme"]
    reads = KnowledgeReads(acme.store, acme.model, BIKES)
    found = await reads.find_things("BC-310", candidates=10, max_things=10)
    assert [thing.thing_id for thing in found.things] == [tenant_thing_id(entity_id("Part", "BC-310"), "acme")]
    assert (await reads.find_things(SUPPLIERS["acme-eu"], candidates=10, max_things=10)).things == ()
    facts = await reads.related_facts(found.things[0].thing_id, limit=10)
    assert sorted(f.target_name for f in facts.facts) == sorted(["BC-310", SUPPLIERS["acme"]])
    other_part = tenant_thing_id(entity_id("Part", "BC-310"), "acme-eu")
    assert not (await reads.related_facts(other_part, limit=10)).found


async def plant_stale_knowledge(store: Store, tenant: str) -> None:
    """An orphan thing (of one of the tenant's runs) and a fact listing a document that is gone."""
    await store.execute(
        "MATCH (t:Supplier {tenant: $t}) CREATE (:Supplier {id: 'orphan-' + $t, name: 'Orphan Works', "
        "tenant: $t, runId: t.runId, extractorVersion: t.extractorVersion})",
        {"t": tenant},
    )
    await store.execute(
        "MATCH (:Bike {tenant: $t})-[f:HAS_PART]->() SET f.documentIds = f.documentIds + 'gone'", {"t": tenant}
    )


async def test_removing_a_tenants_document_retracts_its_knowledge_only(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme, other = tenants["acme"], tenants["acme-eu"]
    await plant_stale_knowledge(store, "acme-eu")  # findings only the other tenant has
    before = await everything_but(store, "acme")
    assert {f.code for f in (await acme.maintenance.check()).findings} == set()
    found = {f.code: f.count for f in (await other.maintenance.check()).findings}
    assert found == {HealthFinding.ORPHAN_ENTITIES: 1, HealthFinding.STALE_FACTS: 1}
    catalog = sources("acme")[0].in_tenant("acme").document_id
    report = await acme.maintenance.remove_source(catalog)
    assert report.documents == 1 and report.facts >= 1 and report.links >= 1
    assert await everything_but(store, "acme") == before
    left = await store.read("MATCH (s:Supplier {tenant: 'acme'})-[m:MENTIONED_IN]->() RETURN count(m) AS n")
    assert left.value("n") == 0
    # Health counts the tenant's orphan things only (the supplier and BK-7, named nowhere else).
    acme_health = {f.code: f.count for f in (await acme.maintenance.check()).findings}
    assert acme_health == {HealthFinding.ORPHAN_ENTITIES: 2}
    assert (await acme.maintenance.preview()).documents == 1
    orphans = await acme.maintenance.remove_orphans()
    assert orphans.things == 2
    assert await everything_but(store, "acme") == before
    assert (await acme.maintenance.check()).healthy
    # The other tenant's graph route still finds its own supplier.
    assert other.ontology is not None
    route = GraphRoute(other.store, other.model, other.ontology)
    facts = [item.text for item in (await route.run(QUESTION, [], GraphOptions())).context]
    assert f"(BC-310) -[SUPPLIED_BY]-> ({SUPPLIERS['acme-eu']})" in facts


async def test_a_reset_and_a_tenants_removal_leave_the_other_knowledge_graph_byte_identical(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme = tenants["acme"]
    await plant_stale_knowledge(store, "acme-eu")
    before = await everything_but(store, "acme")
    report = await acme.maintenance.reset(ResetScope())
    assert report.documents == 2 and report.things == 4
    assert await everything_but(store, "acme") == before
    await acme.ingestion.ingest(sources("acme"))
    removed = await acme.maintenance.remove_tenant()
    assert removed.complete and removed.things == 4
    assert await rows(store, "MATCH (n {tenant: 'acme'}) RETURN count(n) AS n") == [{"n": 0}]
    assert await everything_but(store, "acme") == before


@pytest.mark.parametrize("tenant", ["acme", "acme-eu"])
async def test_global_answers_and_the_corpus_tool_are_the_tenants_in_a_tenanted_graph(
    tenants: dict[str, GraphRag], tenant: str
) -> None:
    from graphrag_orm.tools import GraphRagTools
    from graphrag_orm.tools.values import ToolName

    rag = tenants[tenant]
    assert rag.global_answers is not None and rag.global_answers.store.tenant == rag.tenant
    offered = set(GraphRagTools(rag).names)
    assert {ToolName.FIND_THINGS.value, ToolName.RELATED_FACTS.value, ToolName.ANSWER_ABOUT_CORPUS.value} <= offered


async def test_re_ingesting_a_tenants_document_retracts_and_rewrites_its_knowledge_only(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    acme = tenants["acme"]
    await plant_stale_knowledge(store, "acme-eu")
    before = await everything_but(store, "acme")
    text = "# Kestrel catalog\n\nThe Trail 5 bike uses brake kit BK-7, which holds the BC-310 caliper.\n"
    changed = [Sources.text("catalog", text, media_type="text/markdown").with_metadata(title="Kestrel catalog")]
    receipt = await acme.ingestion.ingest(changed)
    assert receipt.ingested == 1
    assert await everything_but(store, "acme") == before
    supplied = await rows(store, "MATCH (:Part {tenant: 'acme'})-[f:SUPPLIED_BY]->() RETURN count(f) AS n")
    assert supplied == [{"n": 0}]  # only the old text stated it: retracted with its mentions
    assert await rows(store, "MATCH (s:Supplier {tenant: 'acme'})-[m:MENTIONED_IN]->() RETURN count(m) AS n") == [
        {"n": 0}
    ]
    kept = await rows(store, "MATCH (:Bike {tenant: 'acme'})-[f:HAS_PART]->() RETURN count(f) AS n")
    assert kept == [{"n": 1}]


async def test_a_names_index_that_does_not_cover_the_tenant_is_refused_when_connecting(
    tenanted_graph: None, store: Store, neo4j_settings: ConnectionSettings
) -> None:
    async with knowledge_schema(store, BIKES, Layout.DEFAULT):  # the untenanted names index
        with pytest.raises(SchemaMismatch) as refused:
            await tenanted_rag("acme", extraction_chat=extractor(), ontology=BIKES).connect(
                neo4j_settings, neomodel=False
            )
        assert refused.value.code == ErrorCode.SCHEMA_MISSING


async def test_each_knowledge_write_statement_matches_the_tenants_nodes_only(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    """The writes and the retraction alone, given the other tenant's ids or an edge planted across
    tenants: nothing of the other tenant is matched, linked, listed or rewritten."""
    await plant_crossing_edges(store, "acme")
    acme = tenants["acme"]
    writer = acme.ingestion.writer.knowledge
    assert writer is not None
    st = writer.statements

    async def ids(tenant: str, query: str) -> list[str]:
        found = await store.read(query, {"t": tenant})
        return [str(value) for value in found.column("id")]

    part = {t: (await ids(t, "MATCH (p:Part {name: 'BC-310', tenant: $t}) RETURN p.id AS id"))[0] for t in OTHER}
    supplier = {t: (await ids(t, "MATCH (s:Supplier {tenant: $t}) RETURN s.id AS id"))[0] for t in OTHER}
    chunk = {t: (await ids(t, "MATCH (c:Chunk {tenant: $t}) RETURN c.id AS id ORDER BY id"))[0] for t in OTHER}

    async def written(statement: str, parameters: dict[str, Any], column: str | None = None) -> int:
        async def work(tx: StoreTransaction) -> int:
            result = await tx.run(statement, parameters)
            if column is not None:
                return int(result.value(column, 0))
            return int(result.counters.get("relationships_created", 0) + result.counters.get("properties_set", 0))

        return await acme.store.write(work)

    props = {"key": "probe", "documentId": "probe", "startByte": 0, "endByte": 1, "quote": "x", "runId": "probe"}
    mention = st.mentions["Part"]
    assert await written(mention, {"rows": [{"thing": part["acme-eu"], "chunk": chunk["acme"], "props": props}]}) == 0
    assert await written(mention, {"rows": [{"thing": part["acme"], "chunk": chunk["acme-eu"], "props": props}]}) == 0
    fact_rows = [{"source": part["acme"], "target": supplier["acme-eu"], "props": {"documentIds": ["probe"]}}]
    facts = st.facts[("Part", "SUPPLIED_BY", "Supplier")]
    assert await written(facts, {"rows": fact_rows, "document": "probe"}) == 0
    aliases = st.aliases["Part"]
    assert await written(aliases, {"rows": [{"id": part["acme-eu"], "aliases": "probe"}]}) == 0
    # The same statements with the tenant's own ids do write (so the zeros above are the fence's).
    assert await written(mention, {"rows": [{"thing": part["acme"], "chunk": chunk["acme"], "props": props}]}) > 0
    own_fact = [{"source": part["acme"], "target": supplier["acme"], "props": {"documentIds": ["probe"]}}]
    assert await written(facts, {"rows": own_fact, "document": "probe"}) > 0
    assert await written(aliases, {"rows": [{"id": part["acme"], "aliases": "probe"}]}) > 0
    # The retraction of acme's catalog: the planted fact (acme's part to the other's supplier) is
    # neither found from acme's part nor from the other's supplier its planted mention names.
    catalog = sources("acme")[0].in_tenant("acme").document_id
    retract = retract_statements("Chunk", "documentId", True)
    found = await acme.store.read(retract.fact_ids, {"document": catalog})
    planted = await store.read("MATCH ()-[f:SUPPLIED_BY {runId: 'planted'}]->() RETURN elementId(f) AS id")
    assert set(found.column("fact")) and planted.value("id") not in set(found.column("fact"))
    _, rewrite = fact_statements(True)
    # Documents [] leaves a list as it is: a rewrite of the planted fact would still count it.
    assert await written(rewrite, {"ids": [planted.value("id")], "documents": []}, column="facts") == 0


async def test_each_knowledge_maintenance_statement_reads_the_tenants_facts_and_runs_only(
    tenants: dict[str, GraphRag], store: Store
) -> None:
    """Knowledge maintenance's reads alone, with an edge planted across tenants and a fact of the
    other tenant listing a document that is gone: none of them reaches the other tenant's."""
    await plant_crossing_edges(store, "acme")
    await plant_stale_knowledge(store, "acme-eu")
    acme = tenants["acme"]
    knowledge = acme.maintenance.knowledge
    assert isinstance(knowledge, KnowledgeGraphMaintenance)
    st = knowledge.statements
    catalog = sources("acme")[0].in_tenant("acme").document_id
    planted = (await store.read("MATCH ()-[f:SUPPLIED_BY {runId: 'planted'}]->() RETURN elementId(f) AS id")).value(
        "id"
    )
    found = set((await acme.store.read(st.fact_ids, {"documents": [catalog]})).column("fact"))
    assert found and planted not in found
    assert (await acme.store.read(st.count_facts, {"documents": [catalog]})).value("facts") == len(found)
    # A document with no chunk left (the other's facts list "gone"): found by the scan, the tenant's only.
    assert len(await acme.store.read(st.fact_ids, {"documents": ["gone"]})) == 0
    other_run = (await store.read("MATCH (t:Part {tenant: 'acme-eu'}) RETURN t.runId AS run LIMIT 1")).value("run")
    assert (await acme.store.read(st.runs_in_use, {"runs": [other_run]})).value("runs") == []
    assert len(await acme.store.read(st.orphan_stamps)) == 0  # the other tenant's orphan thing is not read


async def test_anchors_the_names_index_gave_another_tenant_are_reported_not_silent(
    tenants: dict[str, GraphRag],
) -> None:
    def route(tenant: str) -> GraphRoute:
        rag = tenants[tenant]
        assert rag.ontology is not None
        return GraphRoute(rag.store, rag.model, rag.ontology)

    one = GraphOptions(max_anchors=1)
    # "acme-eu" holds the word "acme": for acme, the index's one hit is acme-eu's supplier, which
    # the exact check drops, so acme gets no anchor from the names and is told so.
    cut = await route("acme").run(SUPPLIERS["acme-eu"], [], one)
    assert cut.context == [] and [lim.name for lim in cut.limits] == [LimitName.GRAPH_ANCHORS_TENANT_OVER_FETCH]
    # Its own supplier, or acme-eu asking acme's ("acme" does not hold the phrase "acme eu"): nothing cut.
    own = await route("acme").run(SUPPLIERS["acme"], [], one)
    assert LimitName.GRAPH_ANCHORS_TENANT_OVER_FETCH not in [lim.name for lim in own.limits]
    other = await route("acme-eu").run(SUPPLIERS["acme"], [], one)
    assert other.limits == [] and other.context == []
