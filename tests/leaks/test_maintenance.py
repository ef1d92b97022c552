"""Maintenance bound to one tenant: the previews of a reset and of the tenant's removal, the health
report and orphan removal show and touch nothing of the other tenant (Python and CLI).

The other tenant is given a health finding of its own for this module (an orphan chunk: its
document is not stored), removed afterwards; the tenant's own report must stay healthy and its
orphan removal must leave that chunk, while the other tenant's own report finds it (so the
finding is real, and a report that counted every tenant would show it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from graphrag_orm import GraphRag
from graphrag_orm.codes import HealthFinding
from graphrag_orm.maintenance import ResetScope
from graphrag_orm.sources import document_id
from graphrag_orm.store import Store
from tests.leaks.corpus import DOCUMENTS, OTHER, OWN, Leaks, handbook_id, serialised
from tests.leaks.test_cli import cli, neomodel_restored  # noqa: F401 (the CLI's neomodel is restored after this module)

#: The other tenant's orphan chunk: its document was never stored.
GONE = document_id("text:gone", OTHER)
ORPHAN = "leak-suite-orphan-chunk"


@pytest_asyncio.fixture(scope="module")
async def orphaned(leaks: Leaks, store: Store) -> AsyncIterator[Leaks]:
    """The corpus, with an orphan chunk of the other tenant for this module only."""
    await store.execute(
        "CREATE (:Chunk {id: $id, tenant: $other, documentId: $gone, runId: 'leak-suite', order: 0, "
        "text: 'an orphan of the other tenant', startByte: 0, endByte: 29})",
        {"id": ORPHAN, "other": OTHER, "gone": GONE},
    )
    try:
        yield Leaks(
            words=leaks.words,
            values=(*leaks.values, GONE, GONE[:12], ORPHAN),
            own_ids=leaks.own_ids,
            other_ids=leaks.other_ids | {ORPHAN},
            other_documents=(*leaks.other_documents, GONE),
            other_texts=leaks.other_texts,
        )
    finally:
        await store.execute("MATCH (c:Chunk {id: $id}) DETACH DELETE c", {"id": ORPHAN})


async def orphan_kept(store: Store) -> bool:
    row = (await store.read("MATCH (c:Chunk {id: $id}) RETURN count(c) AS n", {"id": ORPHAN})).single()
    return row is not None and row["n"] == 1


async def other_run(store: Store) -> str:
    row = (await store.read("MATCH (r:IngestionRun {tenant: $other}) RETURN r.id AS id", {"other": OTHER})).single()
    assert row is not None
    return str(row["id"])


async def test_the_previews_count_only_its_own(orphaned: Leaks, at_hand: GraphRag, store: Store) -> None:
    own = at_hand.for_tenant(OWN).maintenance
    everything = await own.preview()
    assert everything.documents == DOCUMENTS[OWN] and everything.chunks > 0
    theirs = await own.preview(ResetScope(document_ids=(handbook_id(OTHER),)))
    assert (theirs.documents, theirs.sections, theirs.chunks) == (0, 0, 0)
    counts = await own.preview_tenant()
    assert counts.documents == DOCUMENTS[OWN] and counts.runs == 1
    for shown in (everything, theirs, counts):
        orphaned.assert_none(serialised(shown))
    # The other tenant's run holds nothing of this tenant's: nothing to remove, nothing of it shown.
    run = await other_run(store)
    by_run = await own.preview(ResetScope(run_ids=(run,)))
    assert (by_run.documents, by_run.sections, by_run.chunks) == (0, 0, 0)
    orphaned.assert_none(serialised(by_run))


async def test_health_and_orphans_see_only_its_own(orphaned: Leaks, at_hand: GraphRag, store: Store) -> None:
    # The other tenant's own report finds its orphan: the finding is real.
    assert (await at_hand.maintenance.check()).count(HealthFinding.ORPHANS) == 1
    own = at_hand.for_tenant(OWN).maintenance
    report = await own.check()
    assert report.healthy, report
    orphaned.assert_none(serialised(report))
    removed = await own.remove_orphans()
    assert (removed.chunks, removed.sections) == (0, 0)
    orphaned.assert_none(serialised(removed))
    assert await orphan_kept(store)


async def test_the_maintenance_commands_show_and_touch_only_its_own(orphaned: Leaks, store: Store) -> None:
    declined = await cli("reset", answers="n\n")
    assert declined.exit_code == 1, declined.output
    assert f"every document of tenant {OWN}: {DOCUMENTS[OWN]} documents" in declined.output, declined.output
    # The other tenant's document, named by its id: nothing of it is removed (checked below).
    theirs = await cli("reset", "--document", handbook_id(OTHER), "--yes")
    assert theirs.exit_code == 0 and "removed 0 documents, 0 sections, 0 chunks" in theirs.output, theirs.output
    dry = await cli("remove-tenant", "--dry-run")
    assert dry.exit_code == 0 and f"{DOCUMENTS[OWN]} documents" in dry.output, dry.output
    check = await cli("check")
    assert check.exit_code == 0 and "healthy" in check.output, check.output
    orphans = await cli("orphans")
    assert orphans.exit_code == 0 and "no orphans" in orphans.output, orphans.output
    assert await orphan_kept(store)
    for result in (declined, dry, check, orphans):
        orphaned.assert_none(result.output)
    orphaned.assert_none(theirs.output, asked=[handbook_id(OTHER)])
    # Nothing of the corpus went: both tenants still hold every document.
    for tenant in (OWN, OTHER):
        row = (await store.read("MATCH (d:Document {tenant: $t}) RETURN count(d) AS n", {"t": tenant})).single()
        assert row is not None and row["n"] == DOCUMENTS[tenant]
