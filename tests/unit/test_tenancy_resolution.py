"""Entity resolution's statements in a tenanted layout (docs/tenancy.md): every statement of
suggestions, a plan's preview, a merge, its record and its undo uses ``$tenant``, every node
it matches or writes is checked, and an untenanted layout's statements render byte for byte as
before tenancy reached entity resolution."""

from __future__ import annotations

import hashlib
import json

import pytest

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import TenantError
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.ontologies import generic, novel
from graphrag_orm.ontology import Ontology
from graphrag_orm.resolution import Resolution
from graphrag_orm.resolution.statements import ResolutionStatements
from graphrag_orm.store import Store
from graphrag_orm.tenancy import Tenant
from tests.support.tenancy import TENANTED_ONTOLOGIES

TENANTED = Layout.DEFAULT.replace(tenancy="required")
#: The SHA-256 of every resolution statement an untenanted layout renders (the default and
#: neo4j-graphrag layouts, the generic and novel ontologies), recorded from the code before
#: tenancy reached entity resolution: an untenanted graph sends the same text.
UNTENANTED_DIGEST = "a2d833db765a270b08f65de19151a6b7022b875ff1078a3251c9e791ac9a9597"
_PER_KIND = ("candidates", "preview", "lock_things", "fact_ends", "create_relationships")
_SINGLE = (
    "links_of",
    "links_by_key",
    "facts_of",
    "facts_with",
    "delete_relationships",
    "set_relationships",
    "set_thing",
    "delete_thing",
    "create_thing",
    "create_run",
    "lock_run",
    "set_run_status",
    "run_exists",
)


def resolution_statements(layout: Layout, ontology: Ontology) -> dict[str, str]:
    """Every statement of entity resolution rendered for ``layout``, by name."""
    statements = ResolutionStatements.render(for_layout(layout).names, ontology)
    out: dict[str, str] = {}
    for name in _PER_KIND:
        for key, cypher in getattr(statements, name).items():
            out[f"{name}.{key}"] = cypher
    for name in _SINGLE:
        out[name] = getattr(statements, name)
    return out


def untenanted() -> dict[str, dict[str, str]]:
    return {
        f"{layout_name}/{ontology_name}": resolution_statements(layout, ontology)
        for layout_name, layout in (("default", Layout.DEFAULT), ("neo4j-graphrag", Layout.NEO4J_GRAPHRAG))
        for ontology_name, ontology in (("generic", generic.ONTOLOGY), ("novel", novel.ONTOLOGY))
    }


def test_an_untenanted_layouts_resolution_statements_render_exactly_as_before() -> None:
    rendered = untenanted()
    assert sum(len(group) for group in rendered.values()) > 100
    for group in rendered.values():
        assert [name for name, cypher in group.items() if "tenant" in cypher.lower()] == []
    digest = hashlib.sha256(json.dumps(rendered, indent=1, sort_keys=True).encode()).hexdigest()
    assert digest == UNTENANTED_DIGEST


@TENANTED_ONTOLOGIES
def test_every_resolution_statement_of_a_tenanted_layout_is_the_tenants(layout: Layout, ontology: Ontology) -> None:
    rendered = resolution_statements(layout, ontology)
    assert [name for name, cypher in rendered.items() if "$tenant" not in cypher] == []
    for name, cypher in rendered.items():
        if name.startswith("candidates."):
            # The tenant's things, their mentions counted in the tenant's chunks.
            assert "WHERE t.tenant = $tenant WITH t" in cypher and "(c) WHERE c.tenant = $tenant }" in cypher
        elif name.startswith("preview."):
            # Both things are the tenant's; each fact's other end, mention and quote too.
            assert cypher.count("tenant: $tenant}") == 2 and cypher.count("x.tenant = $tenant") == 4
            assert cypher.count("c.tenant = $tenant") == 2
        elif name.startswith("lock_things."):
            assert cypher.count("tenant: $tenant}") == 1
        elif name.startswith("fact_ends."):
            assert "tenant: $tenant}" in cypher and "x.tenant = $tenant" in cypher
        elif name.startswith("create_relationships."):
            assert "a.tenant = $tenant" in cypher and "b.tenant = $tenant" in cypher
    # A thing met by element id inside a merge or an undo is checked to be the tenant's.
    for name in ("links_of", "links_by_key", "facts_of", "facts_with", "set_thing", "delete_thing"):
        assert "elementId(t) = $thing AND t.tenant = $tenant " in rendered[name]
    for name in ("links_of", "links_by_key"):
        assert "t.tenant = $tenant" in rendered[name] and "c.tenant = $tenant" in rendered[name]
    for name in ("facts_of", "facts_with"):
        assert "t.tenant = $tenant" in rendered[name] and rendered[name].count("x.tenant = $tenant") == 2
    for name in ("delete_relationships", "set_relationships"):
        assert "a.tenant = $tenant AND b.tenant = $tenant" in rendered[name]
    # What is written is stamped with the tenant: a thing put back, a merge's run.
    for name in ("set_thing", "create_thing"):
        assert "t.tenant = $tenant RETURN" in rendered[name]
    assert rendered["create_run"].endswith("r.tenant = $tenant")
    assert "c.tenant = $tenant" in rendered["delete_thing"] and "t.tenant = $tenant" in rendered["delete_thing"]
    for name in ("lock_run", "set_run_status", "run_exists"):
        assert "tenant: $tenant}" in rendered[name]


BOUND = Store(tenanted=True, tenant=Tenant("acme"))


def test_resolution_is_fenced_in_a_tenanted_graph() -> None:
    model = for_layout(TENANTED)
    assert Resolution.from_parts(BOUND, model, generic.ONTOLOGY).statements.names.tenanted
    # A tenanted store with an untenanted model: its statements would filter by no tenant.
    with pytest.raises(TenantError) as refused:
        Resolution.from_parts(BOUND, for_layout(Layout.DEFAULT), generic.ONTOLOGY)
    assert refused.value.code == ErrorCode.TENANT_REFUSED
    # The tenanted model through an untenanted store: sent without $tenant.
    with pytest.raises(TenantError) as refused:
        Resolution.from_parts(Store(), model, generic.ONTOLOGY)
    assert refused.value.code == ErrorCode.TENANT_REQUIRED
    assert not Resolution.from_parts(Store(), for_layout(Layout.DEFAULT), generic.ONTOLOGY).statements.names.tenanted


def test_a_tenanted_facade_with_an_ontology_resolves_its_own_things() -> None:
    from tests.support.tenancy import tenanted_rag

    resolution = Resolution(tenanted_rag("acme", ontology=generic.ONTOLOGY))
    assert resolution.store.tenant == Tenant("acme") and resolution.statements.names.tenanted
