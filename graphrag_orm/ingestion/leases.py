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

Cancellation never leaks a lease. The insert (or takeover) runs in a task of its
own that a cancel does not interrupt: when the cancel lands while it is in flight,
the statement is let finish and, if it took the lease, the lease is released by key
and run id before the cancellation goes on. Stopping the renewals and releasing run
the same way, to the end, however many cancels arrive meanwhile (bounded by
:data:`SETTLE_SECONDS`). Evidence: cancelling ``asyncio`` tasks mid-insert left the
insert committed and its release skipped (20 cancels of a 200-document run left 16
leases), and a run's cancel reaching a document twice (the gather, then the run's
own clean-up) cut its release short.
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

__all__ = ["SETTLE_SECONDS", "LeaseKeeper", "Leases", "settle"]

T = TypeVar("T")
_log = logging.getLogger(__name__)

#: How long clean-up (a lease insert in flight, a release) may hold back a cancellation.
SETTLE_SECONDS = 30.0


async def settle(work: Awaitable[T], *, seconds: float = SETTLE_SECONDS) -> tuple[T, bool]:
    """Await ``work`` to its end in a task a cancel does not interrupt; returns (result, cancelled).

    ``cancelled`` is True when one or more cancels arrived meanwhile: the caller must
    raise ``CancelledError`` once its clean-up is done (when ``work`` failed as well,
    ``CancelledError`` is raised here, from that failure). After ``seconds`` the work is
    cancelled and ``TimeoutError`` raised (a database that does not answer).
    """
    task = asyncio.ensure_future(work)
    cancelled = False
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait({task}, timeout=1.0)
            raise TimeoutError("clean-up did not finish in time")
        try:
            done, _ = await asyncio.wait({task}, timeout=remaining)
        except asyncio.CancelledError:
            cancelled = True
            continue
        if task in done:
            failure = None if task.cancelled() else task.exception()
            if cancelled and failure is not None:
                raise asyncio.CancelledError from failure
            return task.result(), cancelled


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

        Returns the first row of the ``then`` read (by its aliases). Cancellation-safe:
        a cancel that lands while the statement is in flight lets it finish, releases
        what it took (by key and run id), then raises ``CancelledError``.
        """
        try:
            row, cancelled = await settle(self._acquire(key, run_id))
        except DocumentFailure:
            raise
        except BaseException:
            # A failure (or the settle's time running out) may come after the server
            # committed the insert: release what may have been taken.
            await self._release_quietly(key, run_id)
            raise
        if cancelled:
            await self._release_quietly(key, run_id)
            raise asyncio.CancelledError
        return row

    async def _acquire(self, key: str, run_id: str) -> dict[str, Any]:
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

    async def _release_quietly(self, key: str, run_id: str) -> bool:
        """Release ``key`` for ``run_id``, to the end; True when a cancel arrived meanwhile.

        A lease that cannot be released (the database is gone) expires and is taken
        over by the next run.
        """
        try:
            _, cancelled = await settle(self.release(key, run_id))
        except (Neo4jError, DriverError, OSError, TimeoutError) as error:
            _log.info("lease release failed (%s); it expires instead", type(error).__name__)
            return False
        return cancelled

    async def _let_go(self, keeper: LeaseKeeper, key: str, run_id: str) -> bool:
        """Stop the renewals, then release, each to the end; True when a cancel arrived meanwhile."""
        cancelled = False
        with contextlib.suppress(TimeoutError):
            _, cancelled = await settle(keeper.stop())
        return await self._release_quietly(key, run_id) or cancelled

    @contextlib.asynccontextmanager
    async def held(self, key: str, run_id: str) -> AsyncIterator[LeaseKeeper]:
        """Acquire (reading ``then`` under the lease), keep renewed every third of the duration,
        and release: also on failure and on cancellation, to the end. What ``then`` read is
        ``keeper.read``."""
        read = await self.acquire(key, run_id)
        keeper = LeaseKeeper(self, key, run_id)
        keeper.read = read
        keeper.start()
        try:
            yield keeper
        except BaseException as error:
            if await self._let_go(keeper, key, run_id) and not isinstance(error, asyncio.CancelledError):
                raise asyncio.CancelledError from error
            raise
        if await self._let_go(keeper, key, run_id):
            # A cancel that arrived while a finished document released its lease is not lost.
            raise asyncio.CancelledError


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
