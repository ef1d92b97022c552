"""Communities over the knowledge graph: read the facts, detect, write the result behind one switch.

A build detects over the whole graph; a refresh only where the graph changed
(:mod:`graphrag_orm.communities.local`). In a tenanted graph (docs/tenancy.md) the whole graph
is the bound tenant's: its things and facts are read, its communities written (each carrying
the tenant, its id hashed with it) and replaced; another tenant's are never read or touched.

Detection runs in Python (:mod:`graphrag_orm.communities.detection`); the store reads the
facts (one statement, at most ``max_facts``). A whole build stages every community, its
members and its parents in transactions of at most ``transaction_rows`` rows, then switches
the stored communities for them in one small transaction and deletes the old ones in pages
(:mod:`graphrag_orm.communities.staging`), so a reader sees the old communities or the new,
never half, and no transaction grows with the graph. A local refresh, bounded by what
changed, writes in one transaction.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import TypeVar

from graphrag_orm.codes import LimitName
from graphrag_orm.communities.detection import DetectedCommunity, GraphFact, detect, fingerprint
from graphrag_orm.communities.local import StoredCommunity, local_options, plan_refresh
from graphrag_orm.communities.options import CommunityOptions
from graphrag_orm.communities.staging import MAX_COMMUNITY_WRITE_ROWS, StagedBuild
from graphrag_orm.communities.statements import CommunityStatements
from graphrag_orm.communities.values import (
    CommunitiesBuilt,
    CommunityFound,
    CommunityListing,
    CommunityStaleness,
    StaleCommunity,
)
from graphrag_orm.layout import Layout
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.store import Queries, Store, StoreTransaction
from graphrag_orm.tenancy import check_fenced
from graphrag_orm.values import Limit

__all__ = [
    "DEFAULT_LISTED_COMMUNITIES",
    "MAX_LISTED_COMMUNITIES",
    "MAX_STALE_PAGE",
    "MAX_STALE_SAMPLE",
    "CommunityService",
    "stale_communities",
]

DEFAULT_LISTED_COMMUNITIES = 100
MAX_LISTED_COMMUNITIES = 10_000
#: Communities compared with the graph per read by the staleness check.
MAX_STALE_PAGE = 500
#: Stale community ids the health report names.
MAX_STALE_SAMPLE = 5


T = TypeVar("T")


def _batches(rows: list[T]) -> list[list[T]]:
    return [rows[i : i + MAX_COMMUNITY_WRITE_ROWS] for i in range(0, len(rows), MAX_COMMUNITY_WRITE_ROWS)]


class CommunityService:
    """Builds and lists the communities of one ontology's knowledge graph, through ``store``.

    ``model`` is the layout's lexical model (its community label); the default layout's
    when not given. A tenanted store needs its tenanted layout's model (else ``tenant-refused``)
    and the reverse (``tenant-required``): every call is then the store's tenant's.
    """

    def __init__(
        self,
        store: Store,
        ontology: Ontology,
        options: CommunityOptions | None = None,
        *,
        model: LexicalModel | None = None,
    ) -> None:
        model = model or for_layout(Layout.DEFAULT)
        # A tenanted graph's communities are the tenant's, filtered in each statement (docs/tenancy.md).
        check_fenced(model.layout.tenanted, store.tenanted, "communities")
        self.store = store
        self.ontology = ontology
        self.options = options or CommunityOptions()
        names = model.names
        self.statements = CommunityStatements.of(
            ontology,
            names.community.label,
            (names.finding.label, names.report.label),
            (names.chunk.label, names.chunk.key),
            tenanted=names.tenanted,
        )

    async def build(self, options: CommunityOptions | None = None) -> CommunitiesBuilt:
        """Detect the communities of the facts stored now and replace the stored ones with them.

        The stored reports (:class:`~graphrag_orm.communities.ReportService`) go in the same
        transaction: they describe the communities replaced. Write them again after a build.
        """
        return await self._build(options or self.options, keep_reports=False)

    async def refresh(self, options: CommunityOptions | None = None) -> CommunitiesBuilt:
        """Detect again only where the graph changed, keeping each report whose inputs did not change.

        Local: a top-level community whose subtree has no stale community (by
        :func:`stale_communities`' rules) is kept whole, its ids, fingerprints and reports
        untouched; the members of the other subtrees and the things placed in no community are
        detected again on the subgraph the facts among them induce (same options and seed), and
        only those subtrees are replaced, in one transaction (see
        :mod:`graphrag_orm.communities.local`). Without stored communities, or past
        ``max_facts``, the detection is over the whole graph, as a build's.

        A report is kept, linked to its community again, when its community is stored with the
        fingerprint it was written from, no removal has taken findings from it, and every chunk
        it cites is stored; the others go in the same transaction.
        ``ReportService.write(only_missing=True)`` then writes only the reports missing, one
        writer call each. A refresh with nothing changed keeps every community and report.
        """
        options = options or self.options
        began = time.perf_counter()
        facts, label_of, limits = await self._read(options)
        result = await self.store.read(self.statements.stored, name="communities.refresh.stored")
        stored = [
            StoredCommunity(
                id=row["id"],
                level=int(row["level"]),
                fingerprint=str(row["fingerprint"]),
                parent_id=row["parent"],
                members=tuple(row["members"]),
            )
            for row in result
        ]
        if not stored or limits:
            return await self._build(options, keep_reports=True, began=began, read=(facts, label_of, limits))
        plan = plan_refresh(stored, facts, set(label_of))
        detection = detect(plan.facts, local_options(options, plan.share), tenant=self._tenant)
        limits.extend(detection.limits_reached)
        kept = [c for c in stored if c.id in plan.kept]
        return await self._write(
            detection.communities,
            label_of,
            facts_read=len(facts),
            limits=limits,
            began=began,
            keep_reports=True,
            kept=kept,
            replaced=sorted(plan.replaced),
            transaction_rows=options.transaction_rows,
        )

    async def _build(
        self,
        options: CommunityOptions,
        *,
        keep_reports: bool,
        began: float | None = None,
        read: tuple[list[GraphFact], dict[str, str], list[Limit]] | None = None,
    ) -> CommunitiesBuilt:
        began = time.perf_counter() if began is None else began
        facts, label_of, limits = read or await self._read(options)
        detection = detect(facts, options, tenant=self._tenant)
        limits.extend(detection.limits_reached)
        return await self._write(
            detection.communities,
            label_of,
            facts_read=len(facts),
            limits=limits,
            began=began,
            keep_reports=keep_reports,
            kept=[],
            replaced=None,
            transaction_rows=options.transaction_rows,
        )

    @property
    def _tenant(self) -> str | None:
        """The tenant a tenanted graph's community ids are hashed with; None untenanted."""
        tenant = self.store.tenant
        return tenant.value if self.statements.tenanted and tenant is not None else None

    async def _write(
        self,
        communities: Sequence[DetectedCommunity],
        label_of: dict[str, str],
        *,
        facts_read: int,
        limits: list[Limit],
        began: float,
        keep_reports: bool,
        kept: Sequence[StoredCommunity],
        replaced: Sequence[str] | None,
        transaction_rows: int,
    ) -> CommunitiesBuilt:
        """Write ``communities`` in place of every stored one (``replaced`` None: staged, switched, retired)
        or in place of those (one transaction)."""
        build_id = f"communities-{uuid.uuid4().hex[:16]}"
        rows = [
            {"id": c.id, "level": c.level, "size": len(c.members), "facts": c.facts, "fingerprint": c.fingerprint}
            for c in communities
        ]
        parents = [{"id": c.id, "parent": c.parent_id} for c in communities if c.parent_id is not None]
        members: dict[str, list[dict[str, str]]] = defaultdict(list)
        for c in communities:
            for thing in c.members:
                members[label_of[thing]].append({"thing": thing, "community": c.id})
        st = self.statements

        keys = sorted([f"{c.id}|{c.fingerprint}" for c in communities] + [f"{c.id}|{c.fingerprint}" for c in kept])
        if replaced is None:
            staged = StagedBuild(self.store, st, build_id, transaction_rows)
            await staged.stage(rows, parents, members)
            removed, relinked, dropped = await staged.switch(len(rows), keys if keep_reports else None)
            await staged.retire()
            transactions = staged.transactions
        else:

            async def local(tx: StoreTransaction) -> tuple[int, int, int]:
                # Only the reports whose inputs changed go; the others are linked again below.
                found = await tx.run(st.outdated_reports, {"keys": keys}, name="communities.refresh.outdated")
                outdated = [str(report) for report in found.column("id")]
                findings, reports = st.drop_reports
                dropped = removed = 0
                for ids in _batches(outdated):
                    await tx.run(findings, {"ids": ids}, name="communities.refresh.drop")
                    found = await tx.run(reports, {"ids": ids}, name="communities.refresh.drop")
                    dropped += int(found.value("removed", 0))
                for ids in _batches(list(replaced)):
                    found = await tx.run(st.remove, {"ids": ids}, name="communities.refresh.remove")
                    removed += int(found.value("removed", 0))
                for created in _batches(rows):
                    await tx.run(st.create, {"rows": created, "build": build_id}, name="communities.create")
                for linked in _batches(parents):
                    await tx.run(st.parents, {"rows": linked}, name="communities.parents")
                for label in sorted(members):
                    for placed in _batches(members[label]):
                        await tx.run(st.members(label), {"rows": placed, "build": build_id}, name="communities.members")
                relinked = int((await tx.run(st.relink_reports, name="communities.refresh.relink")).value("kept", 0))
                for ids in _batches([c.id for c in kept]):
                    # A kept community's report never left it; those relinked are the re-detected ones'.
                    found = await tx.run(st.reports_of, {"ids": ids}, name="communities.refresh.kept")
                    relinked += int(found.value("reports", 0))
                return removed, relinked, dropped

            removed, relinked, dropped = await self.store.write(local)
            transactions = 1
        levels_of = [c.level for c in communities] + [c.level for c in kept]
        levels = max(levels_of, default=-1) + 1
        return CommunitiesBuilt(
            build_id=build_id,
            communities=len(levels_of),
            per_level=tuple(sum(1 for level in levels_of if level == at) for at in range(levels)),
            things=len(label_of),
            facts_read=facts_read,
            removed=removed,
            communities_kept=len(kept),
            communities_replaced=removed,
            communities_added=len(communities),
            reports_kept=relinked,
            reports_removed=dropped,
            transactions=transactions,
            seconds=round(time.perf_counter() - began, 3),
            limits_reached=tuple(limits),
        )

    async def _read(self, options: CommunityOptions) -> tuple[list[GraphFact], dict[str, str], list[Limit]]:
        st = self.statements
        if st.facts is None:
            return [], {}, []
        result = await self.store.read(
            st.facts, {"labels": list(st.labels), "limit": options.max_facts + 1}, name="communities.facts"
        )
        rows = list(result)
        limits: list[Limit] = []
        if len(rows) > options.max_facts:
            rows = rows[: options.max_facts]
            limits.append(Limit(name=LimitName.COMMUNITY_FACTS, value=options.max_facts))
        facts: list[GraphFact] = []
        label_of: dict[str, str] = {}
        for row in rows:
            if row["sourceLabel"] is None or row["targetLabel"] is None:
                continue
            label_of[row["source"]] = row["sourceLabel"]
            label_of[row["target"]] = row["targetLabel"]
            facts.append(GraphFact(row["source"], row["type"], row["target"], tuple(sorted(row["documentIds"]))))
        return facts, label_of, limits

    async def list(self, *, limit: int = DEFAULT_LISTED_COMMUNITIES) -> CommunityListing:
        """The stored communities, coarsest level first, at most ``limit`` (``MaxListed`` past it)."""
        limit = max(1, min(limit, MAX_LISTED_COMMUNITIES))
        result = await self.store.read(self.statements.listing, {"limit": limit + 1}, name="communities.list")
        found = [
            CommunityFound(
                id=row["id"],
                level=row["level"],
                size=row["size"],
                facts=row["facts"],
                fingerprint=row["fingerprint"],
                parent_id=row["parent"],
            )
            for row in result
        ]
        limits: tuple[Limit, ...] = ()
        if len(found) > limit:
            found, limits = found[:limit], (Limit(name=LimitName.MAX_LISTED, value=limit),)
        return CommunityListing(communities=tuple(found), limits_reached=limits)

    async def stale(self, *, limit: int = DEFAULT_LISTED_COMMUNITIES) -> CommunityStaleness:
        """The stored communities the graph has changed under since their build (reads only);
        see :func:`stale_communities`."""
        return await stale_communities(self.store.reader, self.statements, limit=limit)

    async def members(self, community_id: str, *, limit: int = DEFAULT_LISTED_COMMUNITIES) -> tuple[str, ...]:
        """The ids of a community's things (at most ``limit``)."""
        limit = max(1, min(limit, MAX_LISTED_COMMUNITIES))
        result = await self.store.read(
            self.statements.membership, {"id": community_id, "limit": limit}, name="communities.members"
        )
        return tuple(result.column("thing"))


async def stale_communities(
    reader: Queries, statements: CommunityStatements, *, limit: int = DEFAULT_LISTED_COMMUNITIES
) -> CommunityStaleness:
    """Compare every stored community with the graph now, :data:`MAX_STALE_PAGE` per read; reads only.

    Recomputed on read, not marked by each writer: a community's stored fingerprint (its
    members and the facts among them, with their documents) is computed again from its
    ``IN_COMMUNITY`` members and the facts among them as stored now, so whatever changed the
    graph (an ingest, a re-ingest, a removal, a merge or its undo) shows, and only in the
    communities it touched. A community is also stale when a member is joined by a fact to a
    thing placed in no community (written since the build). ``limit`` bounds the ids listed
    (``MaxListed``), not the check.
    """
    limit = max(1, min(limit, MAX_LISTED_COMMUNITIES))
    now = statements.now
    checked = 0
    found: list[StaleCommunity] = []
    if now is None:
        return CommunityStaleness()
    after = ""
    while True:
        page = list(
            await reader.run(
                statements.stored_page, {"after": after, "page": MAX_STALE_PAGE}, name="communities.stale.stored"
            )
        )
        if not page:
            break
        checked += len(page)
        stored = {row["id"]: row for row in page}
        rows = await reader.run(
            now, {"ids": list(stored), "labels": list(statements.labels)}, name="communities.stale.now"
        )
        for row in rows:
            facts = [GraphFact(a, kind, b, tuple(sorted(documents))) for a, kind, b, documents in row["facts"]]
            changed = fingerprint(row["members"], facts) != stored[row["id"]]["fingerprint"]
            unplaced = int(row["unplaced"])
            if changed or unplaced:
                level = int(stored[row["id"]]["level"])
                found.append(StaleCommunity(id=row["id"], level=level, fingerprint_changed=changed, unplaced=unplaced))
        if len(page) < MAX_STALE_PAGE:
            break
        after = str(page[-1]["id"])
    found.sort(key=lambda community: (community.level, community.id))
    limits: tuple[Limit, ...] = ()
    if len(found) > limit:
        limits = (Limit(name=LimitName.MAX_LISTED, value=limit),)
    return CommunityStaleness(
        checked=checked, stale=len(found), communities=tuple(found[:limit]), limits_reached=limits
    )
