"""The knowledge graph's statements in a tenanted layout (docs/tenancy.md): every statement of
extraction's writes and retraction, the graph route, the knowledge reads and knowledge
maintenance uses ``$tenant``, every node it matches is checked, and an untenanted layout's
statements render byte for byte as before tenancy reached the knowledge graph."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from graphrag_orm.codes import ErrorCode
from graphrag_orm.communities import CommunityService, GlobalAnswers, ReportService
from graphrag_orm.errors import TenantError
from graphrag_orm.extraction.grounding import DocumentKnowledge, FactDraft, QuoteDraft, Span, ThingDraft
from graphrag_orm.extraction.statements import KnowledgeWriteStatements, retract_statements
from graphrag_orm.extraction.writer import in_tenant
from graphrag_orm.knowledge.statements import KnowledgeReadStatements
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance.knowledge_statements import KnowledgeMaintenanceStatements
from graphrag_orm.models import for_layout
from graphrag_orm.ontologies import generic, novel
from graphrag_orm.ontology import Ontology, entity_id, tenant_thing_id
from graphrag_orm.ontology.facts import fact_statements
from graphrag_orm.resolution import Resolution
from graphrag_orm.retrieval.statements import GraphStatements
from graphrag_orm.schema import FullTextIndex, RangeIndex
from graphrag_orm.store import Store
from graphrag_orm.tenancy import Tenant
from tests.support.tenancy import TENANTED_ONTOLOGIES

TENANTED = Layout.DEFAULT.replace(tenancy="required")
#: The SHA-256 of every knowledge statement and ontology schema an untenanted layout renders
#: (the default and neo4j-graphrag layouts, the generic and novel ontologies), recorded from
#: the code before tenancy reached the knowledge graph: an untenanted graph sends the same text.
UNTENANTED_DIGEST = "4905bb8088fac641f26b6d34cf1f220baddb970d4d64511b0adfb6fa416e7581"


def knowledge_statements(layout: Layout, ontology: Ontology) -> dict[str, str]:
    """Every knowledge statement (and the ontology's schema) rendered for ``layout``, by name."""
    model = for_layout(layout)
    names = model.names
    out: dict[str, str] = {}
    writes = KnowledgeWriteStatements.render(names, ontology)
    for field in dataclasses.fields(writes):
        for key, cypher in getattr(writes, field.name).items():
            out[f"write.{field.name}.{key}"] = cypher
    retract = retract_statements(names.chunk.label, names.chunk.stored("document_id"), names.tenanted)
    out["retract.fact_ids"], out["retract.links"] = retract.fact_ids, retract.links
    graph = GraphStatements.of(model, ontology)
    for name in ("anchors_by_chunks", "anchors_by_names", "degree", "expand", "grounding", "grounding_scoped"):
        out[f"graph.{name}"] = getattr(graph, name)
    maintenance = KnowledgeMaintenanceStatements.render(names, ontology)
    for field in dataclasses.fields(maintenance):
        out[f"maint.{field.name}"] = getattr(maintenance, field.name)
    reads = KnowledgeReadStatements.of(model, ontology)
    for scoped in (False, True):
        out[f"reads.things.{scoped}"] = reads.things(scoped=scoped)
        out[f"reads.facts.{scoped}"] = reads.facts(scoped=scoped)
    for definition in ontology.schema_definitions(layout):
        out[f"schema.{definition.name}"] = definition.create_cypher()
    return out


def untenanted() -> dict[str, object]:
    found: dict[str, object] = {}
    for layout_name, layout in (("default", Layout.DEFAULT), ("neo4j-graphrag", Layout.NEO4J_GRAPHRAG)):
        for ontology_name, ontology in (("generic", generic.ONTOLOGY), ("novel", novel.ONTOLOGY)):
            found[f"{layout_name}/{ontology_name}"] = knowledge_statements(layout, ontology)
    lock, rewrite = fact_statements(False)
    found["facts"] = {"lock": lock, "rewrite": rewrite}
    return found


def test_an_untenanted_layouts_knowledge_statements_render_exactly_as_before() -> None:
    rendered = untenanted()
    assert sum(len(group) for group in rendered.values()) > 200
    for group in rendered.values():
        assert isinstance(group, dict)
        assert [name for name, cypher in group.items() if "tenant" in cypher.lower()] == []
    digest = hashlib.sha256(json.dumps(rendered, indent=1, sort_keys=True).encode()).hexdigest()
    assert digest == UNTENANTED_DIGEST


@TENANTED_ONTOLOGIES
def test_every_knowledge_statement_of_a_tenanted_layout_is_the_tenants(layout: Layout, ontology: Ontology) -> None:
    rendered = knowledge_statements(layout, ontology)
    statements = {name: cypher for name, cypher in rendered.items() if not name.startswith("schema.")}
    assert [name for name, cypher in statements.items() if "$tenant" not in cypher] == []
    assert all("$tenant" in cypher for cypher in fact_statements(True))
    # Each node written or matched by a write is the tenant's: things, their facts' ends, chunks.
    for name, cypher in statements.items():
        if name.startswith("write.things."):
            assert cypher.count("tenant: $tenant}") == 1 and "MERGE (e:" in cypher
        elif name.startswith("write.facts."):
            assert cypher.count("tenant: $tenant}") == 2  # both ends
        elif name.startswith(("write.mentions.", "write.quotes.")):
            assert cypher.count("tenant: $tenant}") == 2  # the thing and the chunk
    # The graph route: the names index asked for the tenant's phrase, then each hit checked.
    names = rendered["graph.anchors_by_names"]
    assert "AND tenant:\"' + $tenant + '\"^0'" in names and "node.tenant = $tenant" in names and "WHERE h.mine" in names
    assert "WHERE t.tenant = $tenant" in rendered["graph.anchors_by_chunks"]
    assert "AND t.tenant = $tenant" in rendered["graph.expand"] and "other.tenant = $tenant" in rendered["graph.expand"]
    assert rendered["graph.degree"].count("$tenant") == 2
    grounding = rendered["graph.grounding"]
    assert "a.tenant = $tenant AND b.tenant = $tenant" in grounding and "c.tenant = $tenant" in grounding
    # Maintenance: orphans, health and retraction are the tenant's.
    assert "WHERE t.tenant = $tenant AND NOT EXISTS" in rendered["maint.count_orphans"]
    assert "{id: d, tenant: $tenant}" in rendered["maint.count_stale_facts"]
    assert rendered["maint.fact_ids"].count("$tenant") >= 5


def test_a_tenanted_ontology_schema_indexes_and_searches_the_tenant() -> None:
    definitions = generic.ONTOLOGY.schema_definitions(TENANTED)
    names = next(d for d in definitions if isinstance(d, FullTextIndex))
    assert names.properties == ("name", "aliases", "tenant")
    tenant_indexes = sorted(d.label for d in definitions if isinstance(d, RangeIndex) and d.properties == ("tenant",))
    assert tenant_indexes == sorted(generic.ONTOLOGY.labels)
    untenanted_names = next(
        d for d in generic.ONTOLOGY.schema_definitions(Layout.DEFAULT) if isinstance(d, FullTextIndex)
    )
    assert untenanted_names.properties == ("name", "aliases")


def test_a_tenants_things_are_qualified_by_the_tenant() -> None:
    span = Span("chunk-1", 0, 5, "Alice")
    alice, bob = entity_id("Person", "Alice"), entity_id("Person", "Bob")
    knowledge = DocumentKnowledge(
        things={
            alice: ThingDraft(alice, "Person", "Alice", {"Al"}, None, False, [span]),
            bob: ThingDraft(bob, "Person", "Bob", set(), None, False, [span]),
        },
        facts={("KNOWS", alice, bob): FactDraft("KNOWS", alice, bob, "Person", "Person", {})},
        quotes=[QuoteDraft("SAYS", alice, "Person", None, span)],
    )
    acme, globex = in_tenant(knowledge, "acme"), in_tenant(knowledge, "globex")
    assert set(acme.things) == {tenant_thing_id(alice, "acme"), tenant_thing_id(bob, "acme")}
    assert not set(acme.things) & set(globex.things)
    (fact,) = acme.facts.values()
    assert (fact.source, fact.target) == (tenant_thing_id(alice, "acme"), tenant_thing_id(bob, "acme"))
    assert acme.quotes[0].speaker == tenant_thing_id(alice, "acme")
    assert set(knowledge.things) == {alice, bob}  # the extraction's own drafts are untouched


BOUND = Store(tenanted=True, tenant=Tenant("acme"))


def test_resolution_and_communities_are_fenced_in_a_tenanted_graph() -> None:
    model = for_layout(TENANTED)
    # Entity resolution is the tenant's (tests/unit/test_tenancy_resolution.py).
    assert Resolution.from_parts(BOUND, model, generic.ONTOLOGY).statements.names.tenanted
    # Communities, reports and global answers are the tenant's with the tenanted layout's model,
    # and refused through a tenanted store with an untenanted one (its statements filter by no tenant).
    assert CommunityService(BOUND, generic.ONTOLOGY, model=model).statements.tenanted
    for service in (CommunityService, ReportService, GlobalAnswers):
        service(BOUND, generic.ONTOLOGY, model=model)
        with pytest.raises(TenantError) as refused:
            service(BOUND, generic.ONTOLOGY)
        assert refused.value.code == ErrorCode.TENANT_REFUSED
        with pytest.raises(TenantError) as refused:
            service(Store(), generic.ONTOLOGY, model=model)
        assert refused.value.code == ErrorCode.TENANT_REQUIRED


def test_a_tenanted_facade_with_an_ontology_fences_its_knowledge_and_its_reports() -> None:
    from graphrag_orm.evaluation.global_cases import GlobalEvaluator
    from tests.support.tenancy import tenanted_rag

    rag = tenanted_rag("acme", ontology=generic.ONTOLOGY)
    assert rag.ingestion.writer.knowledge is not None  # extraction is no longer refused
    assert rag.global_answers is not None and rag.global_answers.store.tenant == Tenant("acme")
    assert GlobalEvaluator(rag).corpus is rag.global_answers
