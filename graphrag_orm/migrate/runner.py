"""The runner: a chain against one database, through its store.

:class:`Migrator` reads the journal, compares it with the chain, and runs revisions.
``status``, ``plan``, ``downgrade_plan`` and ``check`` only read. ``apply`` runs each
pending revision's steps (schema DDL, one auto-commit statement each), waits until
every index it created is ONLINE, then records the revision; a revision whose steps
fail or whose indexes do not come ONLINE in time is not recorded. ``downgrade`` runs
the inverse steps, last first, and removes the journal entry. ``apply`` and
``downgrade`` hold the migration lock (:mod:`~graphrag_orm.migrate.lock`) throughout and
read the journal only once they hold it, so a second process waits, then finds the
database up to date, or is refused with ``migration-in-progress`` after
``lock_wait_seconds``.

Refusals (``MigrationError.code``): ``checksum-mismatch`` (an applied revision whose
file changed), ``predecessor-not-head`` and ``unknown-revision`` (the journal and the
chain disagree), ``schema-conflict`` and ``equivalent-schema`` (see
:func:`~graphrag_orm.migrate.compare.refuse_conflicts`), ``index-not-online``,
``migration-in-progress`` (another process held the lock for longer than the wait).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import MigrationError
from graphrag_orm.migrate.chain import Chain
from graphrag_orm.migrate.compare import SchemaCheck, check_schema, refuse_conflicts
from graphrag_orm.migrate.journal import (
    AppliedRevision,
    ensure_journal,
    forget_revision,
    read_journal,
    record_revision,
)
from graphrag_orm.migrate.lock import DEFAULT_LOCK_WAIT_SECONDS, MAX_LOCK_WAIT_SECONDS, migration_lock
from graphrag_orm.migrate.reports import (
    ApplyReport,
    MigrationPlan,
    MigrationStatus,
    PlannedRevision,
    RevisionState,
    RevisionStatus,
)
from graphrag_orm.migrate.revisions import Revision
from graphrag_orm.schema import CreateStep, MigrationStep
from graphrag_orm.store import Store
from graphrag_orm.store.introspection import read_index_states, read_live_schema

__all__ = ["DEFAULT_INDEX_TIMEOUT_SECONDS", "MAX_INDEX_TIMEOUT_SECONDS", "Migrator"]

DEFAULT_INDEX_TIMEOUT_SECONDS = 300.0
MAX_INDEX_TIMEOUT_SECONDS = 3600.0
_POLL_SECONDS = 0.2


def _planned(revision: Revision, steps: Sequence[MigrationStep]) -> PlannedRevision:
    return PlannedRevision(
        revision=revision.revision, message=revision.message, cypher=tuple(step.cypher() for step in steps)
    )


class Migrator:
    """Applies ``chain`` to the database behind ``store``.

    ``index_timeout_seconds`` bounds the wait for ONLINE indexes (1..3600, default 300);
    ``lock_wait_seconds`` bounds the wait for another process's migration lock (0..3600,
    default 120; 0 refuses at once).
    """

    def __init__(
        self,
        store: Store,
        chain: Chain,
        *,
        index_timeout_seconds: float = DEFAULT_INDEX_TIMEOUT_SECONDS,
        lock_wait_seconds: float = DEFAULT_LOCK_WAIT_SECONDS,
    ) -> None:
        if not 1.0 <= index_timeout_seconds <= MAX_INDEX_TIMEOUT_SECONDS:
            raise MigrationError(
                ErrorCode.INVALID_OPTION, f"index_timeout_seconds must be 1..{MAX_INDEX_TIMEOUT_SECONDS:.0f}"
            )
        if not 0.0 <= lock_wait_seconds <= MAX_LOCK_WAIT_SECONDS:
            raise MigrationError(ErrorCode.INVALID_OPTION, f"lock_wait_seconds must be 0..{MAX_LOCK_WAIT_SECONDS:.0f}")
        self.store = store
        self.chain = chain
        self.index_timeout_seconds = index_timeout_seconds
        self.lock_wait_seconds = lock_wait_seconds

    async def journal(self) -> list[AppliedRevision]:
        """Applied revisions, root first, following each one's predecessor."""
        return await read_journal(self.store)

    async def status(self) -> MigrationStatus:
        """Each revision of the chain (and any the journal has beyond it) with its state; reads only."""
        journal = await self.journal()
        applied = {entry.revision: entry for entry in journal}
        states: list[RevisionStatus] = []
        for item in self.chain.revisions:
            entry = applied.pop(item.revision, None)
            if entry is None:
                state = RevisionState.PENDING
            elif entry.checksum != item.checksum:
                state = RevisionState.CHECKSUM_MISMATCH
            else:
                state = RevisionState.APPLIED
            states.append(
                RevisionStatus(
                    revision=item.revision,
                    message=item.message,
                    state=state,
                    applied_at=entry.applied_at if entry else None,
                )
            )
        states.extend(
            RevisionStatus(
                revision=entry.revision,
                message="(not in this chain)",
                state=RevisionState.UNKNOWN,
                applied_at=entry.applied_at,
            )
            for entry in applied.values()
        )
        return MigrationStatus(
            database_head=journal[-1].revision if journal else None,
            chain_head=self.chain.head,
            revisions=tuple(states),
        )

    async def plan(self, target: str | None = None) -> MigrationPlan:
        """Pending revisions up to ``target`` (default: the head) with their exact Cypher; reads only."""
        pending = self.chain.upgrade_path(await self._verified_position(), target)
        return MigrationPlan(direction="upgrade", revisions=tuple(_planned(r, r.steps) for r in pending))

    async def downgrade_plan(self, target: str) -> MigrationPlan:
        """What ``downgrade(target)`` would run (``target`` ``"base"`` removes everything); reads only."""
        undone = self.chain.downgrade_path(await self._verified_position(), target)
        return MigrationPlan(direction="downgrade", revisions=tuple(_planned(r, r.inverse_steps()) for r in undone))

    async def apply(self, target: str | None = None) -> ApplyReport:
        """Apply pending revisions in order, waiting until every index is ONLINE; record each.

        Holds the migration lock throughout; ``migration-in-progress`` when another
        process holds it for longer than ``lock_wait_seconds``.
        """
        applied: list[str] = []
        statements = 0
        waited = 0.0
        async with migration_lock(self.store, wait_seconds=self.lock_wait_seconds) as lease:
            await ensure_journal(self.store)
            for item in self.chain.upgrade_path(await self._verified_position(), target):
                # Read the head again before each revision: a process that held the lock before may have moved it.
                journal = await self.journal()
                head = journal[-1].revision if journal else None
                if item.down_revision != head:
                    raise MigrationError(
                        ErrorCode.PREDECESSOR_NOT_HEAD,
                        f"revision {item.revision!r} follows {item.down_revision!r}, but the database head is {head!r}",
                    )
                refuse_conflicts(item.steps, await read_live_schema(self.store))
                statements += len(item.steps)
                waited += await self._run(item.steps)
                lease.confirm()
                await record_revision(self.store, item)
                applied.append(item.revision)
        return ApplyReport(applied=tuple(applied), statements=statements, waited_seconds=round(waited, 3))

    async def downgrade(self, target: str) -> ApplyReport:
        """Undo revisions after ``target`` (``"base"``: all), last first, with their inverse steps (under the lock)."""
        undone: list[str] = []
        statements = 0
        waited = 0.0
        async with migration_lock(self.store, wait_seconds=self.lock_wait_seconds) as lease:
            for item in self.chain.downgrade_path(await self._verified_position(), target):
                steps = item.inverse_steps()
                statements += len(steps)
                waited += await self._run(steps)
                lease.confirm()
                await forget_revision(self.store, item.revision)
                undone.append(item.revision)
        return ApplyReport(
            applied=tuple(undone), statements=statements, waited_seconds=round(waited, 3), direction="downgrade"
        )

    async def check(self, *, prefix: str | None = "graphrag") -> SchemaCheck:
        """The chain head's declared schema against the live database; changes nothing."""
        return await check_schema(self.store, list(self.chain.definitions_at().values()), prefix=prefix)

    async def _verified_position(self) -> int:
        """Index of the database head in the chain, after checking every applied checksum."""
        journal = await self.journal()
        revisions = self.chain.revisions
        for position, entry in enumerate(journal):
            if position >= len(revisions) or revisions[position].revision != entry.revision:
                in_chain = revisions[position].revision if position < len(revisions) else "nothing"
                raise MigrationError(
                    ErrorCode.UNKNOWN_REVISION
                    if self.chain.get(entry.revision) is None
                    else ErrorCode.PREDECESSOR_NOT_HEAD,
                    f"the database's journal has {entry.revision!r} where the chain {self.chain.source} has "
                    f"{in_chain!r}",
                )
            if entry.checksum != revisions[position].checksum:
                raise MigrationError(
                    ErrorCode.CHECKSUM_MISMATCH,
                    f"revision {entry.revision!r} was applied with checksum {entry.checksum} but its file now has "
                    f"{revisions[position].checksum}; an applied revision must not change: restore it and add a "
                    "new revision",
                )
        return len(journal) - 1

    async def _run(self, steps: Sequence[MigrationStep]) -> float:
        """Run ``steps`` in order (one auto-commit DDL statement each); seconds waited for ONLINE."""
        created: list[str] = []
        for step in steps:
            await self.store.execute(step.cypher(), name=f"migrate.step.{step.action}")
            if isinstance(step, CreateStep) and not step.definition.is_constraint:
                created.append(step.definition.name)
        return await self._await_online(created)

    async def _await_online(self, names: Sequence[str]) -> float:
        """Wait until every index in ``names`` is ONLINE; ``index-not-online`` when one fails or time runs out."""
        if not names:
            return 0.0
        began = time.monotonic()
        deadline = began + self.index_timeout_seconds
        while True:
            states = await read_index_states(self.store, names)
            failed = sorted(name for name, index in states.items() if index.state == "FAILED")
            if failed:
                raise MigrationError(ErrorCode.INDEX_NOT_ONLINE, f"indexes failed to populate: {failed}")
            if len(states) == len(names) and all(index.state == "ONLINE" for index in states.values()):
                return time.monotonic() - began
            if time.monotonic() > deadline:
                detail = ", ".join(f"{n}: {s.state} {s.percent:.0f}%" for n, s in sorted(states.items()))
                raise MigrationError(
                    ErrorCode.INDEX_NOT_ONLINE,
                    f"indexes were not ONLINE within {self.index_timeout_seconds:.0f} s ({detail}); "
                    "the revision was not recorded; run apply again to keep waiting",
                )
            await asyncio.sleep(_POLL_SECONDS)
