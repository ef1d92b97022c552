"""Maintenance, re-embedding and adoption of a tenanted graph, offline (issue 31, item 3; docs/tenancy.md):
every statement of a tenanted layout is the tenant's, an untenanted layout's never names one, and
what cannot be fenced is refused, with its code, before anything is sent."""

from __future__ import annotations

from dataclasses import fields

import pytest

from graphrag_orm.adoption import Adoption
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET, EmbeddingSet
from graphrag_orm.errors import ConfigurationError, TenantError
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance import MAX_TENANT_BATCH_DOCUMENTS, MaintenanceService
from graphrag_orm.maintenance.health_statements import HealthStatements
from graphrag_orm.maintenance.knowledge_graph import KnowledgeGraphMaintenance
from graphrag_orm.maintenance.ownership import Ownership
from graphrag_orm.maintenance.removal_statements import RemovalStatements
from graphrag_orm.maintenance.scope_statements import ScopeStatements
from graphrag_orm.maintenance.stale_runs import StaleRunStatements
from graphrag_orm.maintenance.tenant_statements import TenantStatements
from graphrag_orm.models import for_layout
from graphrag_orm.ontologies import generic
from graphrag_orm.reembedding import Reembedding
from graphrag_orm.reembedding.statements import ReembeddingStatements
from graphrag_orm.reembedding.tenants import MAX_LISTED_TENANTS, progress_by_tenant
from graphrag_orm.store import Store
from graphrag_orm.tenancy import Tenant

TENANTED = Layout.DEFAULT.replace(tenancy="required")


def statements(layout: Layout) -> dict[str, str]:
    """Every statement maintenance and re-embedding render for ``layout``, by name."""
    names = for_layout(layout).names
    groups: list[object] = [
        ScopeStatements.render(names, names.structural_types),
        RemovalStatements.render(names),
        HealthStatements.render(names),
        StaleRunStatements.render(names),
        ReembeddingStatements.render(names, "embedding", "embeddingNext"),
    ]
    if layout.tenanted:
        groups.append(TenantStatements.render(names))
    found: dict[str, str] = {"Ownership": Ownership(names)._query}
    for group in groups:
        for field in fields(group):  # type: ignore[arg-type]
            value = getattr(group, field.name)
            if isinstance(value, str):
                found[f"{type(group).__name__}.{field.name}"] = value
            elif isinstance(value, dict):
                for kind, (cypher, _) in value.items():
                    found[f"{type(group).__name__}.{field.name}.{kind}"] = cypher
    return found


@pytest.mark.parametrize("layout", [Layout.DEFAULT, Layout.NEO4J_GRAPHRAG], ids=["default", "neo4j-graphrag"])
def test_an_untenanted_layouts_maintenance_never_names_a_tenant(layout: Layout) -> None:
    rendered = statements(layout)
    assert len(rendered) > 40
    assert [name for name, cypher in rendered.items() if "tenant" in cypher.lower()] == []


def test_every_maintenance_statement_of_a_tenanted_layout_is_the_tenants() -> None:
    rendered = statements(TENANTED)
    # The community reports' health read too (tests/unit/test_tenancy_communities.py has the rest).
    assert [name for name, cypher in rendered.items() if "$tenant" not in cypher] == []
    # Each node a statement matches is the tenant's: a node pattern or a condition per variable.
    assert rendered["ScopeStatements.all_documents"].startswith(
        "MATCH (d:Document) WHERE d.id > $after AND d.tenant = $tenant"
    )
    assert "MATCH (:Document {id: c.documentId, tenant: $tenant})" in rendered["HealthStatements.orphans"]
    assert "c.documentId IS NOT NULL AND c.tenant = $tenant" in rendered["HealthStatements.orphans"]
    assert rendered["ScopeStatements.graph_stamps"].count("{tenant: $tenant}") == 6  # 3 kinds, 3 link sources
    assert "AND m.tenant = $tenant" in rendered["RemovalStatements.survey"]  # a link to another tenant crosses
    assert "(r:IngestionRun) WHERE r.id IN $runs AND r.tenant = $tenant" in rendered["Ownership"]
    assert "c.tenant = $tenant" in rendered["ReembeddingStatements.page"]


def test_a_tenanted_graph_counts_no_community_report_in_a_preview() -> None:
    rendered = statements(TENANTED)
    for name in ("preview_everything", "preview_scope"):
        assert "0 AS findingsRetracted, 0 AS findingsTrimmed, 0 AS reports" in rendered[f"ScopeStatements.{name}"]


BOUND = Store(tenanted=True, tenant=Tenant("acme"))
MODEL = for_layout(TENANTED)


def test_a_service_whose_layout_and_store_disagree_is_refused() -> None:
    with pytest.raises(TenantError) as refused:
        MaintenanceService(BOUND, for_layout(Layout.DEFAULT), OFFLINE_EMBEDDING_SET)
    assert refused.value.code == ErrorCode.TENANT_REFUSED  # it would filter by no tenant
    with pytest.raises(TenantError) as required:
        MaintenanceService(Store(), MODEL, OFFLINE_EMBEDDING_SET)
    assert required.value.code == ErrorCode.TENANT_REQUIRED
    MaintenanceService(BOUND, MODEL, OFFLINE_EMBEDDING_SET)  # agreeing: built


def test_maintenance_of_the_knowledge_graph_needs_the_extension_rendered_for_the_tenanted_layout() -> None:
    # The toolkit's extension rendered for the tenanted layout filters by the tenant: built.
    MaintenanceService(
        BOUND, MODEL, OFFLINE_EMBEDDING_SET, knowledge=KnowledgeGraphMaintenance(MODEL, generic.ONTOLOGY)
    )
    # Rendered for an untenanted layout (its statements filter by no tenant): refused.
    untenanted = KnowledgeGraphMaintenance(for_layout(Layout.DEFAULT), generic.ONTOLOGY)
    with pytest.raises(TenantError) as refused:
        MaintenanceService(BOUND, MODEL, OFFLINE_EMBEDDING_SET, knowledge=untenanted)
    assert refused.value.code == ErrorCode.TENANT_REFUSED


@pytest.mark.parametrize("size", [0, -1, MAX_TENANT_BATCH_DOCUMENTS + 1, True, 2.5])
async def test_a_tenants_batch_outside_its_bounds_is_invalid(size: object) -> None:
    service = MaintenanceService(BOUND, MODEL, OFFLINE_EMBEDDING_SET)  # no driver: refused before a statement
    with pytest.raises(ConfigurationError) as refused:
        await service.remove_tenant(batch_documents=size)  # type: ignore[arg-type]
    assert refused.value.code == ErrorCode.INVALID_OPTION


async def test_a_tenant_is_removed_only_from_a_tenanted_graph_and_by_its_tenant() -> None:
    untenanted = MaintenanceService(Store(), for_layout(Layout.DEFAULT), OFFLINE_EMBEDDING_SET)
    for call in (untenanted.remove_tenant, untenanted.preview_tenant):
        with pytest.raises(ConfigurationError) as refused:
            await call()
        assert refused.value.code == ErrorCode.INVALID_OPTION
    unbound = MaintenanceService(Store(tenanted=True), MODEL, OFFLINE_EMBEDDING_SET)
    for call in (unbound.remove_tenant, unbound.preview_tenant):
        with pytest.raises(TenantError) as required:
            await call()
        assert required.value.code == ErrorCode.TENANT_REQUIRED


def test_a_reembedding_plan_whose_layout_and_store_disagree_is_refused() -> None:
    to_set = EmbeddingSet(model="other", dimensions=8)
    with pytest.raises(TenantError) as refused:
        Reembedding(BOUND).plan(Layout.DEFAULT, OFFLINE_EMBEDDING_SET, to_set)
    assert refused.value.code == ErrorCode.TENANT_REFUSED
    with pytest.raises(TenantError) as required:
        Reembedding(Store()).plan(TENANTED, OFFLINE_EMBEDDING_SET, to_set)
    assert required.value.code == ErrorCode.TENANT_REQUIRED
    plan = Reembedding(BOUND).plan(TENANTED, OFFLINE_EMBEDDING_SET, to_set)
    assert "WITH [n.tenant]" in plan.new_index.create_cypher()  # the new index filters by tenant too


async def test_progress_across_tenants_is_refused_on_a_tenants_store_and_outside_its_bounds() -> None:
    to_set = EmbeddingSet(model="other", dimensions=8)
    # Each is refused before a statement goes out: none of these stores has a driver.
    for store in (BOUND, Store(tenanted=True)):
        with pytest.raises(TenantError) as refused:
            await progress_by_tenant(store, TENANTED, to_set)
        assert refused.value.code == ErrorCode.TENANT_REFUSED
    with pytest.raises(ConfigurationError) as untenanted:
        await progress_by_tenant(Store(), Layout.DEFAULT, to_set)
    assert untenanted.value.code == ErrorCode.INVALID_OPTION
    for limit in (0, MAX_LISTED_TENANTS + 1):
        with pytest.raises(ConfigurationError) as bounded:
            await progress_by_tenant(Store(), TENANTED, to_set, limit=limit)
        assert bounded.value.code == ErrorCode.INVALID_OPTION
    with pytest.raises(ConfigurationError) as named:
        await progress_by_tenant(Store(), TENANTED, to_set, "embedding Next")
    assert named.value.code == ErrorCode.INVALID_LAYOUT


@pytest.mark.parametrize(
    ("store", "code"),
    [(BOUND, ErrorCode.TENANT_REFUSED), (Store(), ErrorCode.TENANT_REQUIRED)],
    ids=["tenanted store, untenanted layout", "tenanted layout, untenanted store"],
)
def test_adoption_whose_layout_and_store_disagree_is_refused(store: Store, code: ErrorCode) -> None:
    layout = Layout.NEO4J_GRAPHRAG.replace(tenancy="required") if store is not BOUND else Layout.NEO4J_GRAPHRAG
    with pytest.raises(TenantError) as refused:
        Adoption(store).plan(layout, OFFLINE_EMBEDDING_SET)
    assert refused.value.code == code
    # Both tenanted and bound to a tenant: the tenant's adoption (docs/tenancy.md#adoption-per-tenant).
    assert Adoption(BOUND).plan(Layout.NEO4J_GRAPHRAG.replace(tenancy="required"), OFFLINE_EMBEDDING_SET)
