"""A refresh is local: only the top-level subtrees a change touched are detected and reported again.

Against the real Neo4j, over the harbour sample: every community and report outside the
change stays byte-identical (ids, fingerprints, report text), the touched ones are replaced.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from benchmarks.communities.refresh import BENCH, text_of
from benchmarks.communities.refresh import extraction_reply as bench_reply
from examples.harbour.fleet import FACTS, FLEET, extraction_reply, pages
from graphrag_orm import GraphRag, Sources
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.communities import (
    CommunityFound,
    CommunityService,
    ReportOptions,
    ReportService,
)
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Store
from tests.integration.knowledge_support import ontology_schema
from tests.integration.test_community_reports import _Counting


@pytest.fixture
async def fleet(store: Store, graph: None) -> AsyncIterator[GraphRag]:
    async with ontology_schema(store, FLEET):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(extraction_reply),
            ontology=FLEET,
        )
        rag.store.bind(store.driver, store.database)
        receipt = await rag.ingestion.ingest(
            [Sources.file(p, uri=f"https://example.org/fleet/{p.stem}") for p in pages()]
        )
        assert receipt.failed == 0
        yield rag


def _roots(found: tuple[CommunityFound, ...]) -> dict[str, str]:
    """Each community's top-level ancestor."""
    by_id = {c.id: c for c in found}
    roots: dict[str, str] = {}
    for c in found:
        top = c
        while top.parent_id is not None:
            top = by_id[top.parent_id]
        roots[c.id] = top.id
    return roots


async def _refresh_is_local(rag: GraphRag, ontology: Ontology, change: Callable[[], Awaitable[None]]) -> None:
    """Build, report, ``change``, refresh: outside the stale top-level subtrees, nothing moves."""
    communities = CommunityService(rag.store, ontology)
    await communities.build()
    writer = _Counting()
    reports = ReportService(rag.store, ontology, ReportOptions(max_findings=20, max_reports=10_000), writer=writer)
    await reports.write()
    before = (await communities.list(limit=10_000)).communities
    roots = _roots(before)
    assert len(set(roots.values())) >= 3, "the graph has several top-level communities"
    before_reports = {r.community_id: r for r in (await reports.list(limit=10_000)).reports}
    await change()
    stale = (await communities.stale(limit=10_000)).communities
    touched = {roots[c.id] for c in stale}
    assert touched and len(touched) < len(set(roots.values()))
    outside = [c for c in before if roots[c.id] not in touched]

    refreshed = await communities.refresh()

    after = (await communities.list(limit=10_000)).communities
    after_ids = {c.id: c for c in after}
    # Outside the change: the same communities, byte for byte, and the same reports.
    moved = [c.id for c in outside if after_ids.get(c.id) != c]
    assert moved == [], f"{len(moved)} of {len(outside)} untouched communities moved"
    after_reports = {r.community_id: r for r in (await reports.list(limit=10_000)).reports}
    kept_reports = [before_reports[c.id] for c in outside if c.id in before_reports]
    assert kept_reports and all(after_reports.get(r.community_id) == r for r in kept_reports)
    assert refreshed.communities_kept == len(outside)
    assert refreshed.communities_replaced == refreshed.removed == len(before) - len(outside)
    assert refreshed.communities_added == len(after) - len(outside) == refreshed.communities - len(outside)
    assert refreshed.reports_kept == len(after_reports)
    # Nothing is stale after it; only the replaced communities are written again.
    assert (await communities.stale()).stale == 0
    writer.called.clear()
    again = await reports.write(only_missing=True)
    assert again.reports >= 1 and set(writer.called) <= set(after_ids) - {c.id for c in outside}
    # A second refresh with nothing changed keeps everything.
    same = await communities.refresh()
    assert (same.communities_kept, same.communities_replaced, same.communities_added) == (len(after), 0, 0)
    assert (await communities.list(limit=10_000)).communities == after


async def test_a_refresh_replaces_only_the_subtrees_a_change_touched(
    fleet: GraphRag, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def change() -> None:
        # Confined to two of the three parts: the Skua's log removed, a new vessel calling at Saltmere.
        (skua,) = (
            await fleet.store.read("MATCH (d:Document) WHERE d.sourceUri ENDS WITH '/skua-log' RETURN d.id AS id")
        ).column("id")
        await fleet.maintenance.remove_source(skua)
        monkeypatch.setitem(FACTS, "# Log of the Tern", (("Tern", "CALLS_AT", "Saltmere"),))
        tern = Sources.text("tern", "# Log of the Tern\n\nThe Tern called at Saltmere.\n", "text/markdown")
        assert (await fleet.ingestion.ingest([tern])).failed == 0

    await _refresh_is_local(fleet, FLEET, change)


async def test_a_removal_in_a_connected_graph_leaves_the_other_communities_as_they_were(
    store: Store, graph: None
) -> None:
    """One connected graph of 24 groups (the benchmark's): a whole-graph detection after a change in
    one group places untouched things differently; the local refresh does not."""
    async with ontology_schema(store, BENCH):
        rag = GraphRag(
            embedding_set=OFFLINE_EMBEDDING_SET,
            embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
            chat=ScriptedChat(bench_reply),
            ontology=BENCH,
        )
        rag.store.bind(store.driver, store.database)
        sources = [Sources.text(f"doc-{g}", text_of(g), media_type="text/markdown") for g in range(24)]
        assert (await rag.ingestion.ingest(sources)).failed == 0

        async def change() -> None:
            # A second document restating five of group 11's facts: their weights change, nothing else.
            restated = ".\n".join(text_of(11).split(". ")[:5]) + ".\n"
            assert (await rag.ingestion.ingest([Sources.text("doc-11b", restated, "text/markdown")])).failed == 0

        await _refresh_is_local(rag, BENCH, change)
