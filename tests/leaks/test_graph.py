"""The knowledge graph bound to one tenant: the graph route, answers with it, the agent tools'
knowledge reads (``find_things``, ``related_facts``) and knowledge maintenance return, count and
touch nothing of the other tenant.

For this module only, both tenants ingest one more document through an extractor (the same URI
and title): the same part (``BC-310``) and a supplier each whose name holds the tenant's own
distinctive term (the other's, ``tamarind``, is a marker of the suite). It is removed afterwards,
with the things it made, and the ontology's schema dropped, so the package's corpus is as it was.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest_asyncio

from graphrag_orm import GraphRag, HealthFinding, Sources
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.retrieval import Retrievers
from graphrag_orm.schema import CreateStep
from graphrag_orm.sources import Source, document_id
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.tools import GraphRagTools
from tests.integration.knowledge_support import BIKES, entity, fact, scripted
from tests.leaks.corpus import OTHER, OWN, TENANTS, TERMS, CarryingChat, Leaks, serialised
from tests.support.tenancy import TENANTED, tenanted_rag

SUPPLIERS = {tenant: f"{TERMS[tenant].capitalize()} Locks" for tenant in TENANTS}
QUESTION = f"Who supplies the BC-310 lock: {SUPPLIERS[OWN]} or {SUPPLIERS[OTHER]}?"


def parts(tenant: str) -> Source:
    text = f"# Parts list\n\nThe vault door uses the BC-310 lock. The BC-310 lock comes from {SUPPLIERS[tenant]}.\n"
    return Sources.text("parts", text, media_type="text/markdown").with_metadata(title="Parts list")


def reply(passage: str) -> dict[str, Any]:
    named = [("Part", "BC-310")] + [("Supplier", s) for s in SUPPLIERS.values() if s in passage]
    facts = [fact("BC-310", "SUPPLIED_BY", s) for kind, s in named if kind == "Supplier"]
    return {"entities": [entity(kind, name) for kind, name in named if name in passage], "relationships": facts}


@dataclass(frozen=True)
class Knowledge:
    own: GraphRag
    other: GraphRag
    leaks: Leaks


@pytest_asyncio.fixture(scope="module")
async def knowledge(leaks: Leaks, store: Store, neo4j_settings: ConnectionSettings) -> AsyncIterator[Knowledge]:
    steps = [CreateStep(definition=d) for d in BIKES.schema_definitions(TENANTED)]
    for step in steps:
        await store.execute(step.cypher())
    await store.execute("CALL db.awaitIndexes(60)")
    opened = {
        tenant: await tenanted_rag(
            tenant, chat=CarryingChat(), extraction_chat=scripted(reply), ontology=BIKES
        ).connect(neo4j_settings, neomodel=False)
        for tenant in TENANTS
    }
    runs: dict[str, str] = {}
    try:
        for tenant, rag in opened.items():
            receipt = await rag.ingestion.ingest([parts(tenant)])
            assert receipt.ingested == 1
            runs[tenant] = receipt.run_id
        other_things = await store.read(
            "MATCH (t:Part|Supplier {tenant: $other}) RETURN collect(t.id) AS ids", {"other": OTHER}
        )
        ids = tuple(other_things.value("ids"))
        theirs = document_id("text:parts", OTHER)
        marked = Leaks(
            words=leaks.words,
            values=(*leaks.values, *ids, *(i[:12] for i in ids), theirs, theirs[:12]),
            own_ids=leaks.own_ids,
            other_ids=leaks.other_ids,
            other_documents=(*leaks.other_documents, theirs),
            other_texts=leaks.other_texts,
        )
        yield Knowledge(opened[OWN], opened[OTHER], marked)
    finally:
        for tenant, rag in opened.items():
            await rag.maintenance.remove_source(document_id("text:parts", tenant))
            await rag.maintenance.remove_orphans()
            if tenant in runs:  # its run record, named by nothing now, goes too
                await rag.maintenance.reset(ResetScope(run_ids=(runs[tenant],)))
            await rag.close()
        left = await store.read(
            "OPTIONAL MATCH (t:Part|Supplier) WITH count(t) AS things "
            "OPTIONAL MATCH (r:IngestionRun) WHERE r.id IN $runs WITH things, count(r) AS runs RETURN things + runs AS n",
            {"runs": list(runs.values())},
        )
        for step in steps:
            await store.execute(step.inverse().cypher())
        assert left.value("n") == 0


async def test_the_graph_route_and_answers_return_nothing_of_the_other_tenant(knowledge: Knowledge) -> None:
    evidence = await knowledge.own.retriever.retrieve(QUESTION, Retrievers.hybrid_graph())
    knowledge.leaks.assert_none(evidence, asked=[QUESTION])
    facts = [item.text for item in evidence.context if item.reason.startswith("graph-fact")]
    assert f"(BC-310) -[SUPPLIED_BY]-> ({SUPPLIERS[OWN]})" in facts  # it found its own
    assert knowledge.own.answers is not None
    answer = await knowledge.own.answers.answer(QUESTION, retrieval=Retrievers.hybrid_graph())
    knowledge.leaks.assert_none(answer, asked=[QUESTION])
    assert SUPPLIERS[OWN] in serialised(answer).replace(QUESTION, "")


async def test_the_knowledge_tools_return_nothing_of_the_other_tenant(knowledge: Knowledge) -> None:
    # Built from the other tenant's facade, bound to OWN: tools that ignored the tenant would serve OTHER's.
    tools = GraphRagTools(knowledge.other, tenant=OWN)
    for name in (SUPPLIERS[OTHER], "BC-310", f"{TERMS[OTHER]} locks"):
        found = await tools.call("find_things", {"name": name})
        assert not found.is_error, found
        knowledge.leaks.assert_none(found.to_payload(), asked=[name])
    mine = await tools.call("find_things", {"name": "BC-310"})
    assert mine.value is not None and len(mine.value.things) == 1  # type: ignore[union-attr]
    thing = mine.value.things[0].thing_id  # type: ignore[union-attr]
    facts = await tools.call("related_facts", {"thing_id": thing})
    knowledge.leaks.assert_none(facts.to_payload())
    assert SUPPLIERS[OWN] in serialised(facts.to_payload())
    # The other tenant's thing, named by its id: not found.
    theirs = (await tools.rag.store.read("RETURN $tenant AS t")).value("t")
    assert theirs == OWN
    for other_id in [v for v in knowledge.leaks.values if len(v) == 64][:3]:
        refused = await tools.call("related_facts", {"thing_id": other_id})
        knowledge.leaks.assert_none(refused.to_payload(), asked=[other_id])


async def test_knowledge_maintenance_counts_and_touches_nothing_of_the_other_tenant(
    knowledge: Knowledge, store: Store
) -> None:
    # An orphan thing of the other tenant's, for this test: the own tenant must not see or remove it.
    await store.execute(
        "MATCH (t:Supplier {tenant: $other}) CREATE (:Supplier {id: 'leak-suite-orphan-thing', name: 'Orphan', "
        "tenant: $other, runId: t.runId, extractorVersion: t.extractorVersion})",
        {"other": OTHER},
    )
    try:
        report = await knowledge.own.maintenance.check()
        knowledge.leaks.assert_none(report)
        assert HealthFinding.ORPHAN_ENTITIES not in {f.code for f in report.findings}
        theirs = {f.code: f.count for f in (await knowledge.other.maintenance.check()).findings}
        assert theirs.get(HealthFinding.ORPHAN_ENTITIES) == 1  # the finding is real
        removed = await knowledge.own.maintenance.remove_orphans()
        knowledge.leaks.assert_none(removed)
        assert removed.things == 0
        kept = await store.read("MATCH (t {id: 'leak-suite-orphan-thing'}) RETURN count(t) AS n")
        assert kept.value("n") == 1
    finally:
        await store.execute("MATCH (t {id: 'leak-suite-orphan-thing'}) DELETE t")
