"""Document leases: one run works on a document at a time.

A lease is taken by *inserting* a lease node; the uniqueness constraint on its key
refuses a second holder (``lease-held``). An expired lease is taken over by a
conditional update that must change exactly one row. Renewal (every third of the
duration while the document is worked on, and first inside the document's write
transaction) is a conditional update on key, run id and an unexpired time that must
change exactly one row, else the document fails with ``lease-lost``. Both updates
write the lease before reading it, so they hold its write lock: a takeover and the
document's commit can never both succeed. Leases are never upserted.

Taking, renewing, releasing and sweeping are statements of their own
(:meth:`Store.execute <graphrag_orm.store.Store.execute>`), never part of another
transaction; the renewal inside the document's write is the writer's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any, TypeVar

from neo4j.exceptions import ConstraintError, DriverError, Neo4jError

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import DocumentFailure
from graphrag_orm.ingestion.statements import LeaseStatements
from graphrag_orm.models import LexicalModel
from graphrag_orm.store import Store

__all__ = ["LeaseKeeper", "Leases"]

T = TypeVar("T")
_log = logging.getLogger(__name__)


class Leases:
    """Take, renew and release document leases of one model's lease class (the layout's label).

    ``then`` is a read that continues the acquiring statement once the lease is held
    (``$key`` is in scope), so what it reads was read under the lease, in the same
    round trip; its first row is what :meth:`acquire` returns.
    """

    def __init__(
        self, store: Store, model: LexicalModel, duration_seconds: float, *, then: str = "RETURN 1 AS held"
    ) -> None:
        self.store = store
        self.duration_seconds = duration_seconds
        self.statements = LeaseStatements.render(model.names, then)

    @property
    def _ms(self) -> int:
        return int(self.duration_seconds * 1000)

    async def acquire(self, key: str, run_id: str) -> dict[str, Any]:
        """Insert the lease, or take over an expired one; else ``DocumentFailure("lease-held")``.

        Returns the first row of the ``then`` read (by its aliases).
        """
        params = self.parameters(key, run_id)
        insert, takeover = self.statements.insert, self.statements.takeover
        try:
            return (await self.store.execute(insert.cypher, params, name=insert.name)).single() or {}
        except ConstraintError:
            pass
        row = (await self.store.execute(takeover.cypher, params, name=takeover.name)).single()
        if row is None:
            raise DocumentFailure(DocumentErrorCode.LEASE_HELD, "another run holds this document's lease")
        return row

    def parameters(self, key: str, run_id: str) -> Mapping[str, object]:
        """The parameters of taking or renewing ``key`` for ``run_id`` (also used inside the write)."""
        return {"key": key, "run": run_id, "ms": self._ms}

    async def renew(self, key: str, run_id: str) -> bool:
        """Extend the lease if this run still holds it unexpired; False when it is gone."""
        renew = self.statements.renew
        result = await self.store.execute(renew.cypher, self.parameters(key, run_id), name=renew.name)
        return bool(result.value("renewed", 0) == 1)

    async def release(self, key: str, run_id: str) -> None:
        """Delete the lease by key and run id (another run's lease is never touched)."""
        # Released after the document's commit, never inside it: deleting a lease node in
        # the write transaction deadlocked with other workers inserting leases (measured:
        # dozens of DeadlockDetected per 200 documents with two workers).
        release = self.statements.release
        await self.store.execute(release.cypher, {"key": key, "run": run_id}, name=release.name)

    async def sweep_expired(self, keys: list[str]) -> int:
        """Delete the expired leases of ``keys`` (left by a run that was killed); returns how many."""
        if not keys:
            return 0
        # Lock, then read: a lease taken over meanwhile is no longer expired and stays.
        sweep = self.statements.sweep
        return int((await self.store.execute(sweep.cypher, {"keys": keys}, name=sweep.name)).value("swept", 0))

    @contextlib.asynccontextmanager
    async def held(self, key: str, run_id: str) -> AsyncIterator[LeaseKeeper]:
        """Acquire (reading ``then`` under the lease), keep renewed every third of the duration,
        and release (also on failure). What ``then`` read is ``keeper.read``."""
        read = await self.acquire(key, run_id)
        keeper = LeaseKeeper(self, key, run_id)
        keeper.read = read
        keeper.start()
        try:
            yield keeper
        finally:
            await keeper.stop()
            with contextlib.suppress(Neo4jError, DriverError, OSError, asyncio.TimeoutError):
                # Shielded so a cancelled run still releases what it holds; a lease that
                # cannot be released expires and is taken over by the next run.
                await asyncio.shield(self.release(key, run_id))


class LeaseKeeper:
    """Renews one lease in the background; work run through :meth:`guard` stops when it is lost."""

    def __init__(self, leases: Leases, key: str, run_id: str) -> None:
        self._leases = leases
        self._key = key
        self._run_id = run_id
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: The first row of the read made under the lease when it was taken (by alias).
        self.read: dict[str, Any] = {}

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._beat(), name=f"lease-{self._key[:12]}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _beat(self) -> None:
        interval = self._leases.duration_seconds / 3
        while True:
            await asyncio.sleep(interval)
            try:
                if not await self._leases.renew(self._key, self._run_id):
                    self._lost.set()
                    return
            except (Neo4jError, DriverError, OSError) as error:
                # Tried again at the next beat; the write renews inside its transaction anyway.
                _log.info("lease renewal failed (%s); trying again at the next beat", type(error).__name__)

    async def guard(self, work: Awaitable[T]) -> T:
        """Await ``work``; if the lease is lost first, cancel it and fail with ``lease-lost``."""
        task = asyncio.ensure_future(work)
        waiter = asyncio.create_task(self._lost.wait())
        try:
            done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                return task.result()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise DocumentFailure(DocumentErrorCode.LEASE_LOST, "another run took this document's lease")
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
