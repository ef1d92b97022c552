"""A whole build written in several transactions behind one switch.

A build of the whole graph (``CommunityService.build``, and a refresh that detects everything
again) writes its communities in three steps, so that no transaction grows with the graph
(at 100,000 things a build in one transaction needed more than a server's default bound of
transaction memory) and a reader still sees the old communities or the new, never half:

1. **Stage**, in transactions of at most ``transaction_rows`` rows (communities, parent links
   and memberships): the new communities are written as ``GraphRagStaged`` nodes
   (``stagedFor`` = the layout's community label, ``buildId``) with their parent links and
   their members' ``IN_COMMUNITY``. No reader matches that label, so nothing of them is seen.
2. **Switch**, one transaction of label changes only: the stored reports' findings, the
   reports (a build's: all; a refresh's: those whose inputs changed) and the communities
   lose their labels and become ``GraphRagRetired`` (``retiredFrom`` = the label they had);
   the build's staged communities become the community label; a refresh links its kept
   reports to them again. It changes one record per community, report and finding, never
   the memberships, so it stays small; it checks that every staged community of the build
   is still there (a build started later removes an earlier one's: ``concurrent-write``,
   nothing switched).
3. **Retire**: the retired nodes are deleted, memberships first, ``transaction_rows`` per
   transaction.

A build killed in step 1 leaves staged nodes, one killed in step 3 retired ones; neither is
seen by a reader, and the next build of the same label (step 0 here), a reset, or
``Housekeeping.remove_communities`` deletes them, ``transaction_rows`` per transaction.
Labels are those of one layout: a second layout's staged and retired nodes are its own. In a
tenanted layout (docs/tenancy.md) every staged, retired, community, report and finding node
carries its tenant and every statement here finds the bound tenant's only (``$tenant``): two
tenants' builds stage, switch and retire side by side, and neither removes the other's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from graphrag_orm.codes import ErrorCode
from graphrag_orm.communities.statements import CommunityStatements
from graphrag_orm.errors import CommunityBuildSuperseded
from graphrag_orm.models import HAS_FINDING, IN_COMMUNITY, PARENT_COMMUNITY
from graphrag_orm.store import Store, StoreTransaction
from graphrag_orm.store.paging import write_pages

__all__ = [
    "MAX_COMMUNITY_WRITE_ROWS",
    "RETIRED_LABEL",
    "STAGED_LABEL",
    "StagedBuild",
    "StagingStatements",
    "remove_leftovers",
]

#: The label of a build's communities before its switch.
STAGED_LABEL: Final = "GraphRagStaged"
#: The label of communities, reports and findings a switch replaced, until they are deleted.
RETIRED_LABEL: Final = "GraphRagRetired"
#: Rows per UNWIND statement of a build's writes (staged or not), and of a refresh's report
#: removal; more go in further statements of the same transaction.
MAX_COMMUNITY_WRITE_ROWS: Final = 5_000

T = TypeVar("T")


@dataclass(frozen=True)
class StagingStatements:
    """The staging, switch and retiring statements of one layout's community, report and finding labels."""

    community: str
    report: str
    finding: str
    #: A tenanted layout: every node staged carries ``$tenant``, every node found is the tenant's.
    tenanted: bool = False

    @classmethod
    def of(cls, statements: CommunityStatements) -> StagingStatements:
        finding, report = statements.reports
        return cls(statements.community, report, finding, statements.tenanted)

    @property
    def _owned(self) -> str:
        return ", tenant: $tenant" if self.tenanted else ""

    @property
    def _own(self) -> str:
        return " {tenant: $tenant}" if self.tenanted else ""

    # -- 1. stage -------------------------------------------------------------------------

    @property
    def create(self) -> str:
        """``$rows``, ``$build``, ``$label``: the staged communities; each ``id`` with its ``element`` id."""
        return (
            f"UNWIND $rows AS row CREATE (c:{STAGED_LABEL}) SET c.stagedFor = $label, c.id = row.id, "
            "c.level = row.level, c.size = row.size, c.facts = row.facts, c.fingerprint = row.fingerprint, "
            f"c.buildId = $build, c.builtAt = datetime(){', c.tenant = $tenant' if self.tenanted else ''} "
            "RETURN row.id AS id, elementId(c) AS element"
        )

    @property
    def parents(self) -> str:
        """``$rows`` (``child``, ``parent``: element ids)."""
        mine = " AND c.tenant = $tenant AND p.tenant = $tenant" if self.tenanted else ""
        return (
            "UNWIND $rows AS row MATCH (c) WHERE elementId(c) = row.child "
            f"MATCH (p) WHERE elementId(p) = row.parent{mine} "
            f"CREATE (c)-[:{PARENT_COMMUNITY}]->(p)"
        )

    def members(self, label: str) -> str:
        """``$rows`` (``thing`` id, ``community`` element id), ``$build``: each thing of ``label`` to its community."""
        return (
            f"UNWIND $rows AS row MATCH (t:{label} {{id: row.thing{self._owned}}}) "
            "MATCH (c) WHERE elementId(c) = row.community "
            f"CREATE (t)-[:{IN_COMMUNITY} {{buildId: $build}}]->(c)"
        )

    # -- 2. switch ------------------------------------------------------------------------

    @property
    def retire_findings(self) -> str:
        """Every finding of a report becomes retired; ``retired``."""
        return (
            f"MATCH (f:{self.finding}{self._own}) REMOVE f:{self.finding} SET f:{RETIRED_LABEL}, f.retiredFrom = $finding "
            "RETURN count(*) AS retired"
        )

    @property
    def retire_reports(self) -> str:
        return (
            f"MATCH (r:{self.report}{self._own}) REMOVE r:{self.report} SET r:{RETIRED_LABEL}, r.retiredFrom = $report "
            "RETURN count(*) AS retired"
        )

    @property
    def retire_findings_of(self) -> str:
        """``$ids`` (report ids): those reports' findings become retired; ``retired``."""
        return (
            f"UNWIND $ids AS rid MATCH (:{self.report} {{id: rid{self._owned}}})-[:{HAS_FINDING}]->(f:{self.finding}) "
            f"REMOVE f:{self.finding} SET f:{RETIRED_LABEL}, f.retiredFrom = $finding RETURN count(*) AS retired"
        )

    @property
    def retire_reports_of(self) -> str:
        """``$ids``: those reports become retired; ``retired``."""
        return (
            f"UNWIND $ids AS rid MATCH (r:{self.report} {{id: rid{self._owned}}}) "
            f"REMOVE r:{self.report} SET r:{RETIRED_LABEL}, r.retiredFrom = $report RETURN count(*) AS retired"
        )

    @property
    def retire_communities(self) -> str:
        return (
            f"MATCH (c:{self.community}{self._own}) REMOVE c:{self.community} SET c:{RETIRED_LABEL}, c.retiredFrom = $label "
            "RETURN count(*) AS retired"
        )

    @property
    def promote(self) -> str:
        """``$label``, ``$build``: the build's staged communities take the community label; ``promoted``."""
        return (
            f"MATCH (c:{STAGED_LABEL} {{stagedFor: $label, buildId: $build{self._owned}}}) "
            f"REMOVE c:{STAGED_LABEL}, c.stagedFor SET c:{self.community} RETURN count(*) AS promoted"
        )

    # -- 3. retire, and what a killed build left ------------------------------------------

    def leftover_links(self, label: str, key: str) -> str:
        """``$value``, ``$page``: that many memberships of staged or retired communities; ``removed``."""
        return (
            f"MATCH (:{label} {{{key}: $value{self._owned}}})<-[p:{IN_COMMUNITY}]-() WITH p LIMIT $page "
            "DELETE p RETURN count(*) AS removed"
        )

    def leftover_nodes(self, label: str, key: str) -> str:
        """``$value``, ``$page``: that many staged or retired nodes, with their remaining links; ``removed``."""
        return (
            f"MATCH (n:{label} {{{key}: $value{self._owned}}}) WITH n LIMIT $page "
            "CALL (n) { DETACH DELETE n } RETURN count(*) AS removed"
        )

    @property
    def count_leftovers(self) -> str:
        """``$community``, ``$labels`` (finding, report, community): ``staged`` and ``retired`` nodes left."""
        tenant = " AND n.tenant = $tenant" if self.tenanted else ""
        return (
            f"RETURN COUNT {{ (n:{STAGED_LABEL}) WHERE n.stagedFor = $community{tenant} }} AS staged, "
            f"COUNT {{ (n:{RETIRED_LABEL}) WHERE n.retiredFrom IN $labels{tenant} }} AS retired"
        )

    @property
    def leftover_parameters(self) -> dict[str, Any]:
        return {"community": self.community, "labels": [self.finding, self.report, self.community]}

    def leftovers(self, *, staged: bool = True) -> tuple[tuple[str, str, str], ...]:
        """``(label, key, value)`` of every kind of node a build retires (and, with ``staged``, stages)."""
        retired = (
            (RETIRED_LABEL, "retiredFrom", self.finding),
            (RETIRED_LABEL, "retiredFrom", self.report),
            (RETIRED_LABEL, "retiredFrom", self.community),
        )
        return ((STAGED_LABEL, "stagedFor", self.community), *retired) if staged else retired


def _pieces(rows: Sequence[Mapping[str, Any]], size: int) -> Iterator[list[Mapping[str, Any]]]:
    for start in range(0, len(rows), size):
        yield list(rows[start : start + size])


async def remove_leftovers(
    store: Store, staging: StagingStatements, page: int, *, staged: bool = True, name: str = "communities.leftovers"
) -> tuple[int, int]:
    """Delete every retired node of these labels and, with ``staged``, every staged one (a build
    running now loses its staged communities: its switch then fails), ``page`` per transaction;
    returns (nodes, transactions)."""
    nodes = transactions = 0
    for label, key, value in staging.leftovers(staged=staged):
        if value == staging.community:
            _, used = await write_pages(
                store, staging.leftover_links(label, key), {"value": value}, page=page, name=name
            )
            transactions += used
        removed, used = await write_pages(
            store, staging.leftover_nodes(label, key), {"value": value}, page=page, name=name
        )
        nodes, transactions = nodes + removed, transactions + used
    return nodes, transactions


@dataclass
class StagedBuild:
    """One whole build's writes in several transactions (the module docstring's three steps).

    ``rows`` are the communities (``id``, ``level``, ``size``, ``facts``, ``fingerprint``),
    ``parents`` (``id``, ``parent``) and ``members`` per thing label (``thing``, ``community``:
    ids). ``transaction_rows`` bounds the rows of one staging transaction and the nodes or
    links of one deleting transaction.
    """

    store: Store
    statements: CommunityStatements
    build_id: str
    transaction_rows: int
    transactions: int = 0

    @property
    def staging(self) -> StagingStatements:
        return StagingStatements.of(self.statements)

    async def stage(
        self,
        rows: Sequence[Mapping[str, Any]],
        parents: Sequence[Mapping[str, Any]],
        members: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> None:
        """Step 0, what killed builds left, then step 1."""
        _, used = await remove_leftovers(self.store, self.staging, self.transaction_rows)
        self.transactions += used
        st, label = self.staging, self.statements.community
        elements: dict[str, str] = {}
        for piece in _pieces(rows, self.transaction_rows):

            async def create(tx: StoreTransaction, piece: list[Mapping[str, Any]] = piece) -> dict[str, str]:
                made: dict[str, str] = {}
                for part in _pieces(piece, MAX_COMMUNITY_WRITE_ROWS):
                    found = await tx.run(
                        st.create, {"rows": part, "build": self.build_id, "label": label}, name="communities.stage"
                    )
                    made.update({str(row["id"]): str(row["element"]) for row in found})
                return made

            elements.update(await self._write(create))
        links = [{"child": elements[row["id"]], "parent": elements[row["parent"]]} for row in parents]
        await self._write_rows(st.parents, links)
        for thing_label in sorted(members):
            placed = [{"thing": m["thing"], "community": elements[m["community"]]} for m in members[thing_label]]
            await self._write_rows(st.members(thing_label), placed)

    async def switch(self, communities: int, report_keys: Sequence[str] | None) -> tuple[int, int, int]:
        """Step 2. ``report_keys`` None retires every report (a build); else (a refresh) only the
        reports :attr:`CommunityStatements.outdated_reports` finds for those keys, read in the same
        transaction, and the kept ones are linked again. Returns (communities retired, reports kept,
        reports retired)."""
        st = self.staging
        names = {"label": st.community, "report": st.report, "finding": st.finding}

        async def work(tx: StoreTransaction) -> tuple[int, int, int]:
            if report_keys is None:
                await tx.run(st.retire_findings, names, name="communities.switch")
                dropped = int((await tx.run(st.retire_reports, names, name="communities.switch")).value("retired", 0))
            else:
                found = await tx.run(
                    self.statements.outdated_reports, {"keys": list(report_keys)}, name="communities.refresh.outdated"
                )
                outdated = [str(report) for report in found.column("id")]
                dropped = 0
                for start in range(0, len(outdated), MAX_COMMUNITY_WRITE_ROWS):
                    ids = outdated[start : start + MAX_COMMUNITY_WRITE_ROWS]
                    await tx.run(st.retire_findings_of, {**names, "ids": ids}, name="communities.switch")
                    found = await tx.run(st.retire_reports_of, {**names, "ids": ids}, name="communities.switch")
                    dropped += int(found.value("retired", 0))
            retired = int((await tx.run(st.retire_communities, names, name="communities.switch")).value("retired", 0))
            found = await tx.run(st.promote, {**names, "build": self.build_id}, name="communities.switch")
            promoted = int(found.value("promoted", 0))
            if promoted != communities:
                raise CommunityBuildSuperseded(
                    ErrorCode.CONCURRENT_WRITE,
                    f"{communities - promoted:,} of this build's {communities:,} staged communities were removed by "
                    "a build started after it; nothing of this build was kept (the later build's is); build again "
                    "if needed",
                )
            kept = 0
            if report_keys is not None:
                kept = int((await tx.run(self.statements.relink_reports, name="communities.switch")).value("kept", 0))
            return retired, kept, dropped

        return await self._write(work)

    async def retire(self) -> None:
        """Step 3: the retired nodes, memberships first (never a staged one: a later build's)."""
        _, used = await remove_leftovers(
            self.store, self.staging, self.transaction_rows, staged=False, name="communities.retire"
        )
        self.transactions += used

    async def _write_rows(self, statement: str, rows: Sequence[Mapping[str, Any]]) -> None:
        for piece in _pieces(rows, self.transaction_rows):

            async def work(tx: StoreTransaction, piece: list[Mapping[str, Any]] = piece) -> None:
                for part in _pieces(piece, MAX_COMMUNITY_WRITE_ROWS):
                    await tx.run(statement, {"rows": part, "build": self.build_id}, name="communities.stage")

            await self._write(work)

    async def _write(self, work: Callable[[StoreTransaction], Awaitable[T]]) -> T:
        self.transactions += 1
        return await self.store.write(work)
