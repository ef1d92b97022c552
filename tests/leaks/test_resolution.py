"""Entity resolution bound to one tenant: ``graphrag-orm resolve suggest``, ``apply`` and ``undo``
show and touch nothing of the other tenant.

On the knowledge graph of ``test_graph`` (its fixture: both tenants' parts list, the same part
``BC-310`` and a supplier each), each tenant gets one more supplier for this module, "the"
and its supplier's name (a duplicate only that tenant holds); they, and the merge runs, are
deleted afterwards. Resolution that read across tenants would pair the two tenants' ``BC-310``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_asyncio

from graphrag_orm.store import Store
from tests.integration.test_tenancy_adoption import held_by
from tests.leaks.corpus import OTHER, OWN, TENANTS
from tests.leaks.test_cli import cli
from tests.leaks.test_graph import SUPPLIERS, Knowledge, knowledge  # noqa: F401 (the fixture)

ONTOLOGY = ("--ontology", "examples.recall.bikes:BIKES")


def duplicate(tenant: str) -> str:
    return f"leak-suite-duplicate-{tenant}"


async def their_graph(store: Store) -> str:
    """The other tenant's nodes and every relationship touching one, with every property."""
    return await held_by(store, OTHER)


@pytest_asyncio.fixture(scope="module")
async def duplicates(knowledge: Knowledge, store: Store) -> AsyncIterator[Knowledge]:  # noqa: F811
    """Each tenant's duplicate supplier; the other's id is marked as a leak too."""
    for tenant in TENANTS:
        await store.execute(
            "MATCH (s:Supplier {name: $name, tenant: $tenant}) "
            "CREATE (:Supplier {id: $id, name: 'the ' + s.name, tenant: $tenant, runId: s.runId, "
            "extractorVersion: s.extractorVersion})",
            {"name": SUPPLIERS[tenant], "tenant": tenant, "id": duplicate(tenant)},
        )
    leaks = replace(knowledge.leaks, values=(*knowledge.leaks.values, duplicate(OTHER)))
    try:
        yield Knowledge(knowledge.own, knowledge.other, leaks)
    finally:
        await store.execute(
            "MATCH (r:IngestionRun) WHERE r.tenant IN $t AND r.settingsFingerprint STARTS WITH 'merge:' DELETE r "
            "WITH count(*) AS done MATCH (s:Supplier) WHERE s.id IN $ids DETACH DELETE s",
            {"t": list(TENANTS), "ids": [duplicate(t) for t in TENANTS]},
        )
        await store.execute(
            "MATCH (s:Supplier) WHERE s.tenant IN $t AND s.name IN $names SET s.aliases = null",
            {"t": list(TENANTS), "names": list(SUPPLIERS.values())},
        )


async def test_resolve_shows_and_merges_nothing_of_the_other_tenant(
    duplicates: Knowledge, store: Store, tmp_path: Path
) -> None:
    before = await their_graph(store)
    for shown in ([], ["--json"]):
        listed = await cli("resolve", "suggest", *ONTOLOGY, *shown)
        assert listed.exit_code == 0, listed.output
        duplicates.leaks.assert_none(listed.output)
        assert SUPPLIERS[OWN] in listed.output  # it found its own duplicate
    suggested = json.loads((await cli("resolve", "suggest", *ONTOLOGY, "--json")).stdout)["suggestions"]
    (only,) = suggested  # its own duplicate; never the two tenants' BC-310
    assert duplicate(OWN) in (only["kept"]["id"], only["merged"]["id"])
    # The tenant's merge and its undo, from the file the suggestions wrote.
    out = tmp_path / "accepted.json"
    written = await cli("resolve", "suggest", *ONTOLOGY, "--out", str(out))
    assert written.exit_code == 0, written.output
    duplicates.leaks.assert_none(written.output)
    applied = await cli("resolve", "apply", str(out), "--yes", *ONTOLOGY)
    assert applied.exit_code == 0, applied.output
    duplicates.leaks.assert_none(applied.output)
    runs = [line.strip() for line in applied.output.splitlines() if line.strip().startswith("merge-")]
    assert len(runs) == 1
    assert await their_graph(store) == before
    undone = await cli("resolve", "undo", runs[0], *ONTOLOGY)
    assert undone.exit_code == 0, undone.output
    duplicates.leaks.assert_none(undone.output)
    assert await their_graph(store) == before
    # Without a tenant, a tenanted graph refuses the command before anything is sent.
    refused = await cli("resolve", "suggest", *ONTOLOGY, tenant=None)
    assert refused.exit_code == 1 and "(tenant-required)" in refused.output
