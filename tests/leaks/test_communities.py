"""Communities, their reports and global answers bound to one tenant: the Python services, the agent
tool ``answer_about_corpus``, ``graphrag-orm communities`` and ``ask --global``, and HTTP ``/ask``
in global mode return nothing of the other tenant, and a build of one leaves the other's
communities and reports byte-identical.

On the knowledge graph of ``test_graph`` (its fixture: both tenants' parts list, a supplier
each), both tenants build their communities and write their reports; they are deleted
afterwards, before that fixture removes the documents and things.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest_asyncio
from fastapi import Request

from graphrag_orm.communities import CommunityService, ReportService
from graphrag_orm.server import ServerOptions
from graphrag_orm.store import Store
from graphrag_orm.store.neomodel import attach_neomodel
from graphrag_orm.tools import GraphRagTools
from tests.e2e.test_server_http import PREFIX
from tests.integration.knowledge_support import BIKES
from tests.leaks.corpus import OTHER, OWN, TENANTS, CarryingChat, serialised
from tests.leaks.test_cli import cli
from tests.leaks.test_graph import QUESTION, SUPPLIERS, Knowledge, knowledge  # noqa: F401 (the fixture)
from tests.leaks.test_http import events, server
from tests.support.tenancy import tenanted_rag

ONTOLOGY = ("--ontology", "examples.recall.bikes:BIKES")
#: Asked about the other tenant's supplier alone (the asking tenant's reports hold nothing of it).
THEIRS = f"Which lock does {SUPPLIERS[OTHER]} supply?"


async def their_nodes(store: Store) -> list[str]:
    """The other tenant's communities, reports and findings with every property, in one order."""
    rows = await store.read(
        "MATCH (n:Community|CommunityReport|ReportFinding {tenant: $other}) "
        "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props",
        {"other": OTHER},
    )
    return sorted(json.dumps(dict(row), sort_keys=True, default=str) for row in rows)


@pytest_asyncio.fixture(scope="module")
async def built(knowledge: Knowledge, store: Store) -> AsyncIterator[Knowledge]:  # noqa: F811
    """Both tenants' communities and reports; the other's ids are marked as leaks too."""
    for rag in (knowledge.own, knowledge.other):
        assert (await CommunityService(rag.store, BIKES, model=rag.model).build()).communities > 0
        assert (await ReportService(rag.store, BIKES, model=rag.model).write()).reports > 0
    ids = await store.read(
        "MATCH (n:Community|CommunityReport|ReportFinding {tenant: $other}) RETURN collect(n.id) AS ids",
        {"other": OTHER},
    )
    leaks = replace(knowledge.leaks, values=(*knowledge.leaks.values, *ids.value("ids")))
    try:
        yield Knowledge(knowledge.own, knowledge.other, leaks)
    finally:
        await store.execute(
            "MATCH (n:Community|CommunityReport|ReportFinding) WHERE n.tenant IN $t DETACH DELETE n",
            {"t": list(TENANTS)},
        )


async def test_communities_reports_and_global_answers_return_nothing_of_the_other_tenant(built: Knowledge) -> None:
    # A view of the other tenant's facade bound to OWN: services that ignored it would serve OTHER's.
    view = built.other.for_tenant(OWN)
    service = CommunityService(view.store, BIKES, model=view.model)
    listing = await service.list()
    built.leaks.assert_none(listing)
    for community in listing.communities:
        built.leaks.assert_none(await service.members(community.id))
    built.leaks.assert_none(await service.stale())
    reports = await ReportService(view.store, BIKES, model=view.model).list()
    built.leaks.assert_none(reports)
    assert SUPPLIERS[OWN] in serialised(reports)  # it found its own
    assert view.global_answers is not None
    for question in (QUESTION, THEIRS):
        answer = await view.global_answers.answer(question)
        built.leaks.assert_none(answer, asked=[question])
    answer = await view.global_answers.answer(QUESTION)
    assert answer.refused is None and SUPPLIERS[OWN] in (answer.answer or "")


async def test_the_corpus_tool_returns_nothing_of_the_other_tenant(built: Knowledge) -> None:
    tools = GraphRagTools(built.other, tenant=OWN)
    assert "answer_about_corpus" in tools.names
    for question in (QUESTION, THEIRS):
        found = await tools.call("answer_about_corpus", {"question": question})
        assert not found.is_error, found
        built.leaks.assert_none(found.to_payload(), asked=[question])
    mine = await tools.call("answer_about_corpus", {"question": QUESTION})
    assert SUPPLIERS[OWN] in serialised(mine.to_payload()).replace(QUESTION, "")


async def test_the_cli_prints_nothing_of_the_other_tenant_and_builds_its_own(built: Knowledge, store: Store) -> None:
    for shown in ([], ["--json"]):
        listed = await cli("communities", "list", *ONTOLOGY, "--findings", *shown)
        assert listed.exit_code == 0, listed.output
        built.leaks.assert_none(listed.output)
        assert SUPPLIERS[OWN] in listed.output
        for question in (QUESTION, THEIRS):
            asked = await cli("ask", "--global", *ONTOLOGY, *shown, question)
            assert asked.exit_code in (0, 2), asked.output
            built.leaks.assert_none(asked.output, asked=[question])
    before = await their_nodes(store)
    rebuilt = await cli("communities", "build", *ONTOLOGY, "--json")
    assert rebuilt.exit_code == 0, rebuilt.output
    built.leaks.assert_none(rebuilt.output)
    assert json.loads(rebuilt.output)["communities"] > 0
    assert await their_nodes(store) == before
    # Without a tenant, a tenanted graph refuses the commands before anything is sent.
    refused = await cli("communities", "list", *ONTOLOGY, tenant=None)
    assert refused.exit_code == 1 and "(tenant-required)" in refused.output


async def test_global_questions_over_http_stream_nothing_of_the_other_tenant(built: Knowledge, store: Store) -> None:
    def tenant_for(request: Request) -> str:
        return OWN

    served = tenanted_rag(tenant=OTHER, chat=CarryingChat(), ontology=BIKES)  # a server of the other tenant
    try:
        with server(served, ServerOptions(tenant_for=tenant_for)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30, trust_env=False) as http:
                for question in (QUESTION, THEIRS):
                    response = await http.post(
                        f"{PREFIX}/ask",
                        json={"question": question, "mode": "global"},
                        headers={"Accept": "text/event-stream"},
                    )
                    assert response.status_code == 200, response.text
                    built.leaks.assert_none(response.text, asked=[question])
                    if question == QUESTION:
                        name, data = events(response.text)[-1]
                        assert name == "verified" and SUPPLIERS[OWN] in data["answer"], (name, data)
    finally:
        await attach_neomodel(store.driver, store.database)  # the lifespan pointed neomodel at its own driver
