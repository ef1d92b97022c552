"""Communities, their reports and global answers of a tenanted graph against the real Neo4j (docs/tenancy.md).

The corpus of ``test_tenancy_knowledge``: two tenants, ``acme`` and ``acme-eu`` (whose id holds
the first's word), ingest the same documents naming the same things, and a supplier each that
is the tenant's secret. Each tenant builds its communities (both at once), writes its reports
and asks its global questions: nothing read, written, listed, cited or counted is the other's,
even along a fact planted across tenants; each statement is checked alone with the other
tenant's ids; and a tenant's builds, refreshes, report runs, removals, reset and removal leave
the other tenant's graph byte-identical.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from graphrag_orm import GraphRag, HealthFinding
from graphrag_orm.chat import OpenAIChat
from graphrag_orm.codes import GlobalRefusal
from graphrag_orm.communities import CommunityService, GlobalAnswers, ReportService
from graphrag_orm.communities.report_statements import ReportStatements
from graphrag_orm.communities.staging import STAGED_LABEL, StagingStatements
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.maintenance.removal_statements import RetractionStatements, delete_communities
from graphrag_orm.store import Store, StoreTransaction
from tests.integration.knowledge_support import BIKES
from tests.integration.test_global_model import CHAT, Model, sent
from tests.integration.test_tenancy_knowledge import (  # noqa: F401 (tenants: the fixture)
    OTHER,
    QUESTION,
    SUPPLIERS,
    plant_crossing_edges,
    sources,
    tenants,
)
from tests.integration.test_tenancy_maintenance import everything_but
from tests.support.openai_server import OpenAIServer


def communities(rag: GraphRag) -> CommunityService:
    return CommunityService(rag.store, BIKES, model=rag.model)


def reports(rag: GraphRag) -> ReportService:
    return ReportService(rag.store, BIKES, model=rag.model)


async def column(store: Store, query: str, tenant: str, name: str = "id") -> set[str]:
    """``query``'s column ``name`` for ``$t`` = ``tenant`` (read through the untenanted store)."""
    return {str(value) for value in (await store.read(query, {"t": tenant})).column(name)}


async def owned(store: Store, tenant: str) -> dict[str, set[str]]:
    """The tenant's community, report, finding, chunk and document ids, as stored."""
    return {
        "communities": await column(store, "MATCH (c:Community {tenant: $t}) RETURN c.id AS id", tenant),
        "reports": await column(store, "MATCH (r:CommunityReport {tenant: $t}) RETURN r.id AS id", tenant),
        "findings": await column(store, "MATCH (f:ReportFinding {tenant: $t}) RETURN f.id AS id", tenant),
        "chunks": await column(store, "MATCH (c:Chunk {tenant: $t}) RETURN c.id AS id", tenant),
        "documents": await column(store, "MATCH (d:Document {tenant: $t}) RETURN d.id AS id", tenant),
        "things": await column(store, "MATCH (t:Bike|Part|Supplier {tenant: $t}) RETURN t.id AS id", tenant),
    }


async def build_and_report(graphs: dict[str, GraphRag], *names: str) -> None:
    for name in names:
        assert (await communities(graphs[name]).build()).communities > 0
        assert (await reports(graphs[name]).write()).reports > 0


def leaked(text: str, theirs: dict[str, set[str]], tenant: str) -> list[str]:
    """The other tenant's ids and its supplier found in ``text``."""
    markers = [SUPPLIERS[OTHER[tenant]], *(value for values in theirs.values() for value in values)]
    return [marker for marker in markers if marker in text]


@pytest.mark.parametrize("tenant", ["acme", "acme-eu"])
async def test_two_tenants_building_at_once_get_communities_of_their_own_things_only(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
    tenant: str,
) -> None:
    await plant_crossing_edges(store, tenant)  # a fact from the tenant's BC-310 to the other's supplier
    built = await asyncio.gather(*(communities(rag).build() for rag in tenants.values()))
    assert [b.things for b in built] == [4, 4] and [b.facts_read for b in built] == [3, 3]
    mine, theirs = await owned(store, tenant), await owned(store, OTHER[tenant])
    assert mine["communities"] and theirs["communities"] and not mine["communities"] & theirs["communities"]
    # Every membership joins a thing and a community of one tenant; nothing is staged or retired.
    crossing = await store.read(
        "MATCH (t)-[:IN_COMMUNITY]->(c) WHERE t.tenant <> c.tenant OR c.tenant IS NULL RETURN count(*) AS n"
    )
    assert crossing.value("n") == 0
    left = await store.read("MATCH (n:GraphRagStaged|GraphRagRetired) RETURN count(n) AS n")
    assert left.value("n") == 0
    service = communities(tenants[tenant])
    assert {c.id for c in (await service.list()).communities} == mine["communities"]
    for community in mine["communities"]:
        assert set(await service.members(community)) <= mine["things"]
    for community in theirs["communities"]:
        assert await service.members(community) == ()
    assert (await service.stale()).checked == len(mine["communities"])


async def test_each_community_and_report_statement_reads_the_tenants_nodes_only(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
) -> None:
    """Each read alone, given the other tenant's ids: nothing of the other tenant comes back."""
    await build_and_report(tenants, "acme", "acme-eu")
    acme = tenants["acme"]
    mine, theirs = await owned(store, "acme"), await owned(store, "acme-eu")
    st, rs = communities(acme).statements, ReportStatements.of(BIKES, acme.model)
    assert {str(r["id"]) for r in await acme.store.read(st.stored)} == mine["communities"]
    page = await acme.store.read(st.stored_page, {"after": "", "page": 100})
    assert set(page.column("id")) == mine["communities"]
    other = sorted(theirs["communities"])
    assert len(await acme.store.read(st.now, {"ids": other, "labels": list(BIKES.labels)})) == 0
    # A fact from the tenant's thing to another tenant's thing placed in no community: not "unplaced".
    await store.execute(
        "MATCH (a:Part {name: 'BC-310', tenant: 'acme'}) CREATE (a)-[:SUPPLIED_BY {documentIds: [], runId: 'planted'}]->"
        "(:Supplier {id: 'unplaced', name: 'Unplaced', tenant: 'acme-eu'})"
    )
    now = await acme.store.read(st.now, {"ids": sorted(mine["communities"]), "labels": list(BIKES.labels)})
    assert len(now) == len(mine["communities"]) and {row["unplaced"] for row in now} == {0}
    assert (await communities(acme).stale()).stale == 0
    # A community of the other's without a report is not the tenant's to report on.
    await store.execute("CREATE (:Community {id: 'lonely', level: 0, fingerprint: 'x', tenant: 'acme-eu'})")
    assert set((await acme.store.read(rs.missing, {"limit": 100})).column("id")) == set()
    # Reports a refresh would write again: the tenant's only (the other's keys are not among the tenant's).
    assert set((await acme.store.read(st.outdated_reports, {"keys": []})).column("id")) == mine["reports"]
    assert (await acme.store.read(st.reports_of, {"ids": other})).value("reports") == 0
    assert len(await acme.store.read(st.membership, {"id": other[0], "limit": 50})) == 0
    assert len(await acme.store.read(rs.facts or "", {"ids": other, "limit": 50})) == 0
    assert len(await acme.store.read(rs.chunks, {"ids": sorted(theirs["chunks"])})) == 0
    assert len(await acme.store.read(rs.findings_of, {"ids": sorted(theirs["reports"])})) == 0
    assert {str(r["id"]) for r in await acme.store.read(rs.listing, {"limit": 100})} == mine["reports"]
    assert {str(r["id"]) for r in await acme.store.read(rs.communities, {"limit": 100})} == mine["communities"]
    # The passages of the other tenant's fact (its things, its chunks) are not the tenant's.
    pair = await store.read(
        "MATCH (a:Part {name: 'BC-310', tenant: $t})-[f:SUPPLIED_BY]->(b) "
        "RETURN elementId(a) AS a, elementId(b) AS b, f.documentIds AS documents",
        {"t": "acme-eu"},
    )
    row = dict(pair.records[0])
    pairs = [{"key": "k", "a": row["a"], "b": row["b"], "documents": row["documents"]}]
    assert len(await store.read(rs.evidence, {"pairs": pairs, "perFact": 5, "tenant": "acme-eu"})) > 0  # its own
    assert len(await acme.store.read(rs.evidence, {"pairs": pairs, "perFact": 5})) == 0


@pytest.mark.parametrize("tenant", ["acme", "acme-eu"])
async def test_reports_and_global_answers_cite_the_tenants_chunks_only(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
    tenant: str,
) -> None:
    await plant_crossing_edges(store, tenant)
    await build_and_report(tenants, *tenants)
    rag, other = tenants[tenant], OTHER[tenant]
    mine, theirs = await owned(store, tenant), await owned(store, other)
    listing = await reports(rag).list()
    assert {r.id for r in listing.reports} == mine["reports"]
    cited = {c.chunk_id for r in listing.reports for f in r.findings for c in f.citations}
    assert cited and cited <= mine["chunks"]
    assert leaked(listing.model_dump_json(), theirs, tenant) == []
    assert SUPPLIERS[tenant] in listing.model_dump_json()
    corpus = rag.global_answers
    assert corpus is not None
    answer = await corpus.answer(QUESTION)
    assert answer.refused is None and answer.citations
    assert {c.chunk_id for c in answer.citations} <= mine["chunks"] and set(answer.reports) <= mine["reports"]
    assert SUPPLIERS[tenant] in (answer.answer or "")
    assert leaked(answer.model_dump_json().replace(QUESTION, ""), theirs, tenant) == []
    # Asked only about the other's supplier: nothing of the tenant's is relevant, and nothing else is read.
    only_theirs = await corpus.answer(f"Which parts does {SUPPLIERS[other]} supply?")
    assert only_theirs.refused == GlobalRefusal.NO_RELEVANT_FINDING and only_theirs.reports == ()


async def test_a_finding_citing_another_tenants_chunk_is_never_located_there(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
) -> None:
    """The citation check runs against the tenant's own stored text: a finding of acme's pointed at
    acme-eu's chunk (the same quote is there) is dropped, never cited from the other's chunk."""
    await build_and_report(tenants, *tenants)
    theirs = await owned(store, "acme-eu")
    await store.execute(
        "MATCH (f:ReportFinding {tenant: 'acme'}) WHERE any(q IN f.quotes WHERE q CONTAINS 'BK-7') "
        "MATCH (c:Chunk {tenant: 'acme-eu'}) WHERE c.text CONTAINS f.quotes[0] "
        "WITH f, c ORDER BY c.id LIMIT 1 SET f.chunkIds = [c.id], f.documentIds = [c.documentId], "
        "f.quotes = [f.quotes[0]], f.startBytes = [f.startBytes[0]], f.endBytes = [f.endBytes[0]]"
    )
    corpus = tenants["acme"].global_answers
    assert corpus is not None
    answer = await corpus.answer("Which brake kit holds the BC-310 caliper of the Trail 5 bike?")
    assert answer.findings_dropped >= 1
    assert not {c.chunk_id for c in answer.citations} & theirs["chunks"]
    assert leaked(answer.model_dump_json(), theirs, "acme") == []


async def test_a_models_global_answer_is_shown_the_tenants_findings_only(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
    openai_server: OpenAIServer,
) -> None:
    await build_and_report(tenants, *tenants)
    acme = tenants["acme"]
    theirs = await owned(store, "acme-eu")
    openai_server.chat_responder = Model(wanted="BC-310").reply
    async with OpenAIChat("test-model", base_url=openai_server.url, api_key="test-key") as chat:
        answer = await GlobalAnswers(acme.store, BIKES, chat=chat, model=acme.model).answer(QUESTION)
    assert answer.refused is None and answer.calls == len(openai_server.requests_to(CHAT))
    shown = json.dumps([request.body for request in openai_server.requests_to(CHAT)])
    assert leaked(shown.replace(QUESTION, ""), theirs, "acme") == [] and SUPPLIERS["acme"] in shown
    assert sent(openai_server, "reports") and answer.citations
    assert leaked(answer.model_dump_json().replace(QUESTION, ""), theirs, "acme") == []


async def test_a_tenants_builds_reports_removal_reset_and_removal_leave_the_other_byte_identical(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
) -> None:
    acme, other = tenants["acme"], tenants["acme-eu"]
    await build_and_report(tenants, "acme-eu")
    before = await everything_but(store, "acme")
    await build_and_report(tenants, "acme", "acme")  # a build replaces the tenant's own
    refreshed = await communities(acme).refresh()
    assert refreshed.communities_kept == refreshed.communities and refreshed.reports_kept > 0
    assert (await reports(acme).write(only_missing=True)).reports == 0
    assert await everything_but(store, "acme") == before
    # A fact of the tenant's stated by one document more: a local refresh writes its community again.
    await store.execute(
        "MATCH (:Part {tenant: 'acme'})-[f:SUPPLIED_BY]->() MATCH (d:Document {tenant: 'acme'}) "
        "WITH f, coll.sort(collect(d.id)) AS documents SET f.documentIds = documents"
    )
    assert (await communities(acme).refresh()).communities_added > 0
    assert (await reports(acme).write(only_missing=True)).reports > 0
    assert await everything_but(store, "acme") == before
    # A reset of everything removes the tenant's communities and reports, and nothing else.
    reset = await acme.maintenance.reset(ResetScope())
    assert reset.communities > 0 and reset.reports > 0
    assert (await owned(store, "acme"))["communities"] == set()
    assert await everything_but(store, "acme") == before
    await acme.ingestion.ingest(sources("acme"))
    await build_and_report(tenants, "acme")
    # A removal retracts the tenant's findings its document supported; health reads the tenant's.
    catalog = sources("acme")[0].in_tenant("acme").document_id
    removed = await acme.maintenance.remove_source(catalog)
    assert removed.findings_retracted > 0
    assert await everything_but(store, "acme") == before
    assert HealthFinding.STALE_COMMUNITIES in {f.code for f in (await acme.maintenance.check()).findings}
    assert (await other.maintenance.check()).healthy
    assert (await communities(acme).refresh()).communities_replaced > 0
    assert await everything_but(store, "acme") == before
    await acme.ingestion.ingest(sources("acme"))
    await build_and_report(tenants, "acme")
    gone = await acme.maintenance.remove_tenant()
    assert gone.complete and gone.communities > 0 and gone.reports > 0
    assert (await store.read("MATCH (n {tenant: 'acme'}) RETURN count(n) AS n")).value("n") == 0
    assert await everything_but(store, "acme") == before
    assert (await other.maintenance.check()).healthy


async def test_a_killed_build_of_one_tenant_is_neither_seen_nor_removed_by_the_other(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
) -> None:
    acme, other = tenants["acme"], tenants["acme-eu"]
    await store.execute(
        "CREATE (:GraphRagStaged {stagedFor: 'Community', id: 'killed', buildId: 'killed', tenant: 'acme-eu'}) "
        "CREATE (:GraphRagRetired {retiredFrom: 'CommunityReport', id: 'retired', tenant: 'acme-eu'}) "
        "CREATE (:CommunityReport {id: 'planted-report', communityId: 'x', fingerprint: 'x', tenant: 'acme-eu', "
        "retracted: 1, trimmed: 0})"
    )
    mine = {f.code for f in (await acme.maintenance.check()).findings}
    assert not {HealthFinding.COMMUNITY_BUILD_LEFTOVERS, HealthFinding.RETRACTED_FINDINGS} & mine
    found = {f.code: f.count for f in (await other.maintenance.check()).findings}
    assert found[HealthFinding.COMMUNITY_BUILD_LEFTOVERS] == 2 and found[HealthFinding.RETRACTED_FINDINGS] == 1
    before = await everything_but(store, "acme")
    await build_and_report(tenants, "acme")
    await acme.maintenance.reset(ResetScope())
    assert await everything_but(store, "acme") == before
    await communities(other).build()  # the other tenant's next build removes its own leftovers
    left = await store.read(
        "MATCH (n:GraphRagStaged|GraphRagRetired) RETURN count(n) + COUNT { (:CommunityReport) } AS n"
    )
    assert left.value("n") == 0


async def test_each_community_and_report_write_touches_the_tenants_nodes_only(
    tenants: dict[str, GraphRag],  # noqa: F811
    store: Store,
) -> None:
    """Each write alone, through the tenant's store, given the other tenant's ids (or none): the
    other tenant's communities, reports, findings and memberships are never matched or changed."""
    await build_and_report(tenants, *tenants)
    acme = tenants["acme"]
    theirs = await owned(store, "acme-eu")
    # Findings of the other's citing the tenant's document too, and one of its reports unlinked: what the
    # tenant's retraction and relinking would reach without their filters.
    catalog = sources("acme")[0].in_tenant("acme").document_id
    await store.execute(
        "MATCH (f:ReportFinding {tenant: 'acme-eu'}) SET f.documentIds = f.documentIds + $d, "
        "f.chunkIds = f.chunkIds + 'x', f.startBytes = f.startBytes + 0, f.endBytes = f.endBytes + 1, "
        "f.quotes = f.quotes + 'x' WITH count(f) AS n "
        "MATCH (:Community {tenant: 'acme-eu'})-[h:HAS_REPORT]->() WITH h LIMIT 1 DELETE h "
        "CREATE (:GraphRagStaged {stagedFor: 'Community', id: 'staged', buildId: 'theirs', tenant: 'acme-eu'}) "
        "WITH 1 AS one MATCH (s:GraphRagStaged {id: 'staged'}), (t:Part {tenant: 'acme-eu'}) "
        "CREATE (t)-[:IN_COMMUNITY {buildId: 'theirs'}]->(s)",
        {"d": catalog},
    )
    before = await everything_but(store, "acme")
    st, rs = communities(acme).statements, ReportStatements.of(BIKES, acme.model)
    staging = StagingStatements.of(st)
    retraction = RetractionStatements.render(acme.model.names)
    community, report = sorted(theirs["communities"]), sorted(theirs["reports"])
    part = {
        t: min(await column(store, "MATCH (p:Part {name: 'BC-310', tenant: $t}) RETURN p.id AS id", t)) for t in tenants
    }
    mine = min(await column(store, "MATCH (c:Community {tenant: $t}) RETURN c.id AS id", "acme"))
    names = {"label": "Community", "report": "CommunityReport", "finding": "ReportFinding"}
    props = {"id": "probe", "reportId": "probe"}
    by_ids: list[tuple[str, dict[str, Any]]] = [
        (st.remove, {"ids": community}),
        (st.drop_reports[0], {"ids": report}),
        (st.drop_reports[1], {"ids": report}),
        # A row joining the tenant's node to the other's, either way: each end is checked alone.
        (st.parents, {"rows": [{"id": mine, "parent": community[0]}, {"id": community[0], "parent": mine}]}),
        (
            st.members("Part"),
            {
                "rows": [
                    {"thing": part["acme-eu"], "community": mine},
                    {"thing": part["acme"], "community": community[0]},
                ],
                "build": "probe",
            },
        ),
        (staging.retire_findings_of, {**names, "ids": report}),
        (staging.retire_reports_of, {**names, "ids": report}),
        (staging.promote, {**names, "build": "theirs"}),
        (rs.clear_findings_of, {"ids": community}),
        (rs.clear_reports_of, {"ids": community}),
        (rs.create_reports, {"rows": [{"community": community[0], "props": props}]}),
        (rs.create_findings, {"rows": [{"report": report[0], "props": props}]}),
        (retraction.settle, {"rows": [{"id": report[0], "retracted": 1, "trimmed": 0}]}),
    ]
    own: list[tuple[str, dict[str, Any]]] = [  # these change the tenant's own nodes only
        (st.relink_reports, {}),
        (retraction.retract, {"ids": [catalog]}),
        (retraction.trim, {"ids": [catalog]}),
        (staging.retire_findings, names),
        (staging.retire_reports, names),
        (staging.retire_communities, names),
        (rs.clear_findings, {}),
        (rs.clear_reports, {}),
        (delete_communities("Community", True), {"page": 100}),
        (staging.leftover_links(STAGED_LABEL, "stagedFor"), {"value": "Community", "page": 100}),
        (staging.leftover_nodes(STAGED_LABEL, "stagedFor"), {"value": "Community", "page": 100}),
    ]
    element = (await store.read("MATCH (c:Community {id: $id}) RETURN elementId(c) AS e", {"id": mine})).value("e")
    theirs_element = (
        await store.read("MATCH (c:Community {id: $id}) RETURN elementId(c) AS e", {"id": community[0]})
    ).value("e")
    by_ids.append((staging.parents, {"rows": [{"child": element, "parent": theirs_element}]}))
    by_ids.append((staging.members("Part"), {"rows": [{"thing": part["acme-eu"], "community": element}], "build": "p"}))
    for index, (statement, parameters) in enumerate(by_ids + own):

        async def work(tx: StoreTransaction, statement: str = statement, parameters: Any = parameters) -> int:
            return sum((await tx.run(statement, parameters)).counters.values())

        changed = await acme.store.write(work)
        assert index >= len(by_ids) or changed == 0, statement  # the other's ids matched nothing
        assert await everything_but(store, "acme") == before, statement
