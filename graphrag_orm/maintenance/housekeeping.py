"""Housekeeping beside the document batches: expired leases, finished runs and communities.

Each is paged (``page_size`` per write transaction) and checked before it writes, with
the statements and the ownership check of the :class:`BatchRemover` it is built on:
an expired lease is deleted only when its run stamp is the toolkit's, a run only when
nothing names it any more, and communities with their reports only on a reset of
everything. A tenanted store fills ``$tenant`` in every statement, so each of these
reads and deletes its own tenant's nodes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_orm.ingestion.receipts import RunStatus
from graphrag_orm.maintenance.ownership import stamps_from_rows
from graphrag_orm.maintenance.removal import WRITE_ATTEMPTS, BatchRemover
from graphrag_orm.maintenance.removal_statements import delete_communities, delete_reports
from graphrag_orm.store import Queries, StoreTransaction
from graphrag_orm.store.paging import write_pages

__all__ = ["Housekeeping"]


class Housekeeping:
    """Paged removal of expired leases, unnamed runs and communities, on a remover's statements."""

    def __init__(self, remover: BatchRemover) -> None:
        self.remover = remover

    async def expired_lease_stamps(self) -> dict[str, dict[str | None, int]]:
        """Run stamps of every expired lease (a read)."""
        result = await self.remover.store.read(
            self.remover.statements.expired_stamps, name="maintenance.leases.expired_stamps"
        )
        return stamps_from_rows(result)

    async def remove_expired_leases(self) -> int:
        """Delete every expired lease, ``page_size`` per transaction, each page checked before it is written.

        A lease renewed or taken over while this runs is no longer expired and is
        kept; an unexpired lease is never touched.
        """
        removed = 0
        while True:
            page, found = await self.remover.store.write(self._remove_lease_page, attempts=WRITE_ATTEMPTS)
            removed += page
            if found < self.remover.page_size:
                return removed

    async def _remove_lease_page(self, tx: StoreTransaction) -> tuple[int, int]:
        """One page of expired leases, checked then deleted: (removed, found)."""
        rows = (
            await tx.run(
                self.remover.statements.expired_page,
                {"page": self.remover.page_size},
                name="maintenance.leases.expired",
            )
        ).records
        stamps: dict[str | None, int] = {}
        for row in rows:
            key = None if row["run"] is None else str(row["run"])
            stamps[key] = stamps.get(key, 0) + 1
        await self.remover.ownership.require_owned(tx, {"leases": stamps}, what="expired leases")
        if not rows:
            return 0, 0
        keys = [str(row["key"]) for row in rows]
        counts = await self.remover.delete_in_rounds(tx, ("leases",), {"leases": len(keys)}, keys)
        return counts["leases"], len(rows)

    async def finished_runs(self) -> list[str]:
        """Ids of every run that is not Running (a read)."""
        result = await self.remover.store.read(
            self.remover.statements.finished_runs,
            {"running": RunStatus.RUNNING.value},
            name="maintenance.runs.finished",
        )
        return [str(run) for run in result.column("run")]

    async def remove_communities(self) -> tuple[int, int]:
        """Delete every community report, then every community (graphrag_orm.communities), with their links,
        ``page_size`` per transaction; returns the communities and the reports removed.

        A reset of everything leaves no thing, so no community can stand; a build writes them again.
        What a killed build left (staged or retired nodes, graphrag_orm.communities.staging) goes too.
        """
        from graphrag_orm.communities.staging import StagingStatements, remove_leftovers

        tenanted = self.remover.tenanted  # the tenant's communities, reports and leftovers only
        findings, reports = delete_reports(*self.remover.report_labels, tenanted)
        store, page = self.remover.store, self.remover.page_size
        name = "maintenance.communities"
        await write_pages(store, findings, {}, page=page, name=name, attempts=WRITE_ATTEMPTS)
        removed_reports, _ = await write_pages(store, reports, {}, page=page, name=name, attempts=WRITE_ATTEMPTS)
        communities = delete_communities(self.remover.community_label, tenanted)
        removed, _ = await write_pages(store, communities, {}, page=page, name=name, attempts=WRITE_ATTEMPTS)
        finding, report = self.remover.report_labels
        staging = StagingStatements(self.remover.community_label, report, finding, tenanted)
        await remove_leftovers(self.remover.store, staging, self.remover.page_size)
        return removed, removed_reports

    async def remove_runs(self, run_ids: Sequence[str]) -> int:
        """Delete the ``IngestionRun`` nodes of ``run_ids`` that nothing names any more.

        Kept: a run still Running, a run that a document, section, chunk or lease
        still names (structural links are written with their nodes and carry the
        same run id), one the knowledge extension still uses, and a run node with
        relationships (the toolkit writes none). Deleting a named run would make what
        names it look foreign. One write transaction per ``page_size`` run ids.
        """
        wanted = sorted(set(run_ids))
        removed = 0
        for start in range(0, len(wanted), self.remover.page_size):
            part = wanted[start : start + self.remover.page_size]

            async def work(tx: StoreTransaction, part: list[str] = part) -> int:
                return await self._remove_free_runs(tx, part)

            removed += await self.remover.store.write(work, attempts=WRITE_ATTEMPTS)
        return removed

    async def _remove_free_runs(self, tx: Queries, part: list[str]) -> int:
        found = await tx.run(self.remover.statements.runs_in_use, {"runs": part}, name="maintenance.runs.in_use")
        in_use = {str(run) for run in found.column("run")}
        if self.remover.knowledge is not None:
            in_use |= set(await self.remover.knowledge.run_ids_in_use(tx, part))
        free = [run for run in part if run not in in_use]
        if not free:
            return 0
        parameters: dict[str, Any] = {"runs": free, "page": self.remover.page_size, "running": RunStatus.RUNNING.value}
        deleted = await tx.run(self.remover.statements.delete_runs, parameters, name="maintenance.runs.delete")
        return int(deleted.value("runs", 0))
