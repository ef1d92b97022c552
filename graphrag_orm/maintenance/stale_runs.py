"""Stale runs: ``Running`` in the graph, but nobody is working on them any more.

A run is stale when its node says ``Running``, no unexpired lease carries its run
id, and it has shown no progress for longer than ``seconds`` (the lease duration):
neither its heartbeat (``progressAt``, stamped every third of the lease duration,
at most every minute, while the run works; ``startedAt`` before the first stamp)
nor a document it wrote (``ingestedAt``) is that recent. A run killed with SIGKILL,
or whose final write was lost with the database, stops both, so it turns stale
one lease duration later; a live run never does, because it stamps far more often.

Failing a stale run sets ``status`` Failed, ``failureReason`` and ``completedAt``.
Its nodes are locked before the condition is read again (a heartbeat that commits
meanwhile keeps its run Running), at most ``page`` runs per call, in one write
transaction. A run marked Failed that was in fact only paused writes its own final
status when it ends. Once Failed, ``reset()`` removes the run node like any
finished run's, when nothing names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_orm.ingestion.receipts import RunStatus
from graphrag_orm.store import Store, StoredNames, StoreTransaction

__all__ = ["StaleRunStatements", "StaleRuns", "stale_condition"]


def stale_condition(names: StoredNames, run: str = "r") -> str:
    """The stale test on ``run`` (``$ms``: the stale time in milliseconds); status is checked apart."""
    node, lease, document, t = names.run, names.lease, names.document, names.tenant_and
    since = "datetime() - duration({milliseconds: $ms})"
    return (
        f"coalesce({run}.{node.stored('progress_at')}, {run}.{node.stored('started_at')}) <= {since} "
        f"AND NOT EXISTS {{ MATCH (l:{lease.label}) WHERE l.{lease.stored('run_id')} = {run}.{node.key}{t('l')} "
        f"AND l.{lease.stored('expires_at')} > datetime() }} "
        f"AND NOT EXISTS {{ MATCH (d:{document.label}) WHERE d.{document.stored('run_id')} = {run}.{node.key}{t('d')} "
        f"AND d.{document.stored('ingested_at')} > {since} }}"
    )


@dataclass(frozen=True)
class StaleRunStatements:
    """Named columns only; ``$running`` is the Running status, ``$ms`` the stale time."""

    #: ``$sample``: ``runs`` that are stale and a ``sample`` of their ids, by id.
    count: str
    #: ``$page``: ``run`` ids of at most ``$page`` stale runs, by id (no lock).
    candidates: str
    #: ``$ids``, ``$failed``, ``$reason``: locks each run, checks it again, fails it; ``run`` per run failed.
    fail: str

    @classmethod
    def render(cls, names: StoredNames) -> StaleRunStatements:
        node = names.run
        status, completed = node.stored("status"), node.stored("completed_at")
        # Tenanted (docs/tenancy.md): the tenant's runs, leases and documents only.
        running = (
            f"MATCH (r:{node.label}) WHERE r.{status} = $running{names.tenant_and('r')} AND {stale_condition(names)}"
        )
        return cls(
            count=f"{running} WITH r ORDER BY r.{node.key} RETURN count(r) AS runs, collect(r.{node.key})[0..$sample] AS sample",
            candidates=f"{running} RETURN r.{node.key} AS run ORDER BY run LIMIT $page",
            # Write first (the lock), then read: what a heartbeat or a finish committed meanwhile is seen.
            fail=(
                f"UNWIND $ids AS id MATCH (r:{node.label} {{{node.key}: id{names.owned}}}) SET r.{status} = r.{status} "
                f"WITH r WHERE r.{completed} IS NULL AND {stale_condition(names)} "
                f"SET r.{status} = $failed, r.{node.stored('failure_reason')} = $reason, r.{completed} = datetime() "
                f"RETURN r.{node.key} AS run ORDER BY run"
            ),
        )


class StaleRuns:
    """Finds and fails the stale runs of one layout, with one stale time."""

    def __init__(self, store: Store, names: StoredNames, seconds: float) -> None:
        self.store = store
        self.seconds = seconds
        self.statements = StaleRunStatements.render(names)

    @property
    def _parameters(self) -> dict[str, object]:
        return {"running": RunStatus.RUNNING.value, "ms": int(self.seconds * 1000)}

    @property
    def reason(self) -> str:
        return f"stale: Running with no live lease and no progress for over {self.seconds:g} s"

    async def count(self, sample: int) -> tuple[int, list[str]]:
        """How many runs are stale, and the first ``sample`` of their ids (a read)."""
        found = await self.store.read(
            self.statements.count, {**self._parameters, "sample": sample}, name="maintenance.health.stale_runs"
        )
        row = found.single() or {}
        return int(row.get("runs") or 0), [str(run) for run in row.get("sample") or []]

    async def fail(self, page: int) -> tuple[list[str], bool]:
        """Fail at most ``page`` stale runs in one write transaction; (their ids, whether more may remain)."""
        statements, parameters = self.statements, self._parameters

        async def work(tx: StoreTransaction) -> tuple[list[str], bool]:
            found = await tx.run(
                statements.candidates, {**parameters, "page": page}, name="maintenance.runs.stale_candidates"
            )
            ids = [str(run) for run in found.column("run")]
            if not ids:
                return [], False
            failed = await tx.run(
                statements.fail,
                {**parameters, "ids": ids, "failed": RunStatus.FAILED.value, "reason": self.reason},
                name="maintenance.runs.fail_stale",
            )
            return [str(run) for run in failed.column("run")], len(ids) == page

        return await self.store.write(work)
