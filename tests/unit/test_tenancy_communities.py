"""Communities, their reports and global answers in a tenanted layout (docs/tenancy.md): every
statement of a build, its staging, the reports, global answers and the community side of
maintenance uses ``$tenant``; an untenanted layout's render byte for byte as before tenancy
reached the communities; and two tenants' communities of the same things never share an id."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from graphrag_orm.communities.detection import GraphFact, detect
from graphrag_orm.communities.options import CommunityOptions
from graphrag_orm.communities.report_statements import ReportStatements
from graphrag_orm.communities.staging import StagingStatements
from graphrag_orm.communities.statements import CommunityStatements
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance.health_statements import HealthStatements
from graphrag_orm.maintenance.removal_statements import RetractionStatements, delete_communities, delete_reports
from graphrag_orm.models import for_layout
from graphrag_orm.ontologies import generic, novel
from graphrag_orm.ontology import Ontology

TENANTED = Layout.DEFAULT.replace(tenancy="required")
#: The SHA-256 of every community, staging, report, retraction and community-maintenance
#: statement an untenanted layout renders (the default and neo4j-graphrag layouts, the generic
#: and novel ontologies), recorded from the code before tenancy reached the communities.
UNTENANTED_DIGEST = "a348347bca5ce024264d5100723fa3d61bcd1463c50413244dee7e991ca6fef1"
_COMMUNITY = (
    "facts",
    "outdated_reports",
    "relink_reports",
    "reports_of",
    "remove",
    "stored",
    "create",
    "parents",
    "listing",
    "stored_page",
    "now",
    "membership",
)
_STAGING = (
    "create",
    "parents",
    "retire_findings",
    "retire_reports",
    "retire_findings_of",
    "retire_reports_of",
    "retire_communities",
    "promote",
    "count_leftovers",
)


def community_statements(layout: Layout, ontology: Ontology) -> dict[str, object]:
    """Every statement of the communities and their reports rendered for ``layout``, by name."""
    model = for_layout(layout)
    names = model.names
    st = CommunityStatements.of(
        ontology,
        names.community.label,
        (names.finding.label, names.report.label),
        (names.chunk.label, names.chunk.key),
        tenanted=names.tenanted,
    )
    out: dict[str, object] = {f"communities.{name}": getattr(st, name) for name in _COMMUNITY}
    out["communities.drop_reports"] = list(st.drop_reports)
    staging = StagingStatements.of(st)
    out.update({f"staging.{name}": getattr(staging, name) for name in _STAGING})
    for label in ontology.labels:
        out[f"communities.members.{label}"] = st.members(label)
        out[f"staging.members.{label}"] = staging.members(label)
    for label, key, value in staging.leftovers():
        out[f"staging.leftover_links.{label}.{value}"] = staging.leftover_links(label, key)
        out[f"staging.leftover_nodes.{label}.{value}"] = staging.leftover_nodes(label, key)
    reports = ReportStatements.of(ontology, model)
    out.update({f"reports.{field.name}": getattr(reports, field.name) for field in dataclasses.fields(reports)})
    retraction = RetractionStatements.render(names)
    out.update(
        {f"retraction.{field.name}": getattr(retraction, field.name) for field in dataclasses.fields(retraction)}
    )
    out["maintenance.delete_communities"] = delete_communities(names.community.label, names.tenanted)
    out["maintenance.delete_reports"] = list(delete_reports(names.finding.label, names.report.label, names.tenanted))
    out["health.retracted_reports"] = HealthStatements.render(names).retracted_reports
    return out


def flat(rendered: dict[str, object]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, cypher in rendered.items():
        if cypher is None:
            continue
        for index, text in enumerate(cypher if isinstance(cypher, list) else [cypher]):
            found[f"{name}.{index}"] = str(text)
    return found


def test_an_untenanted_layouts_community_statements_render_exactly_as_before() -> None:
    rendered: dict[str, object] = {}
    for layout_name, layout in (("default", Layout.DEFAULT), ("neo4j-graphrag", Layout.NEO4J_GRAPHRAG)):
        for ontology_name, ontology in (("generic", generic.ONTOLOGY), ("novel", novel.ONTOLOGY)):
            rendered[f"{layout_name}/{ontology_name}"] = community_statements(layout, ontology)
    assert sum(len(group) for group in rendered.values()) > 200  # type: ignore[arg-type]
    for group in rendered.values():
        assert isinstance(group, dict)
        assert [name for name, cypher in flat(group).items() if "tenant" in cypher.lower()] == []
    digest = hashlib.sha256(json.dumps(rendered, indent=1, sort_keys=True).encode()).hexdigest()
    assert digest == UNTENANTED_DIGEST


@pytest.mark.parametrize("ontology", [generic.ONTOLOGY, novel.ONTOLOGY], ids=["generic", "novel"])
def test_every_community_statement_of_a_tenanted_layout_is_the_tenants(ontology: Ontology) -> None:
    rendered = flat(community_statements(TENANTED, ontology))
    assert [name for name, cypher in rendered.items() if "$tenant" not in cypher] == []
    # What a build, a report run and a retirement write carries the tenant.
    for name in ("communities.create.0", "staging.create.0"):
        assert rendered[name].endswith("c.tenant = $tenant") or "c.tenant = $tenant RETURN" in rendered[name]
    assert "r.tenant = $tenant" in rendered["reports.create_reports.0"]
    assert "f.tenant = $tenant" in rendered["reports.create_findings.0"]
    # The facts read are between two of the tenant's things; a fact's passages are the tenant's chunks.
    assert "a.tenant = $tenant AND b.tenant = $tenant" in rendered["communities.facts.0"]
    assert "{tenant: $tenant})<-[n:" in rendered["reports.evidence.0"]
    chunks = rendered["reports.chunks.0"]
    assert chunks.count("tenant: $tenant}") == 2  # the chunk cited and its document


def test_two_tenants_communities_of_the_same_things_never_share_an_id() -> None:
    facts = [GraphFact("a", "KNOWS", "b"), GraphFact("b", "KNOWS", "c"), GraphFact("c", "KNOWS", "a")]
    untenanted = detect(facts, CommunityOptions()).communities
    acme = detect(facts, CommunityOptions(), tenant="acme").communities
    acme_eu = detect(facts, CommunityOptions(), tenant="acme-eu").communities
    assert untenanted and len(untenanted) == len(acme) == len(acme_eu)
    ids = [{c.id for c in found} for found in (untenanted, acme, acme_eu)]
    assert not ids[0] & ids[1] and not ids[1] & ids[2] and not ids[0] & ids[2]
    # The same detection otherwise: members, levels and fingerprints.
    assert [(c.level, c.members, c.fingerprint) for c in acme] == [
        (c.level, c.members, c.fingerprint) for c in untenanted
    ]
    assert detect(facts, CommunityOptions(), tenant="acme").communities == acme  # the same tenant, the same ids
