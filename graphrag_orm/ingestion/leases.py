"""Document leases: one run works on a document at a time.

A lease is taken by *inserting* a lease node; the uniqueness constraint on its key
refuses a second holder (``lease-held``). An expired lease is taken over by a
conditional update that must change exactly one row. Renewal (every third of the
duration while the document is worked on, and first inside the document's write
transaction) is a conditional update on key, run id and an unexpired time that must
change exactly one row, else the document fails with ``lease-lost``. Both updates
write the lease before reading it, so they hold its write lock: a takeover and the
document's commit can never both succeed. Leases are never upserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

from neo4j.exceptions import DriverError, Neo4jError
from neomodel import adb
from neomodel.exceptions import ConstraintValidationFailed, UniqueProperty

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import DocumentFailure
from graphrag_orm.models import LeaseNode
from graphrag_orm.store.batches import NodeWrites

T = TypeVar("T")
_log = logging.getLogger(__name__)


class Leases:
    """Take, renew and release document leases of one lease class (the layout's label)."""

    def __init__(self, lease_class: type[LeaseNode], duration_seconds: float) -> None:
        writes = NodeWrites(lease_class)
        label, key = writes.label, writes.key
        run, expires, claims = writes.stored("run_id"), writes.stored("expires_at"), writes.stored("claims")
        self.duration_seconds = duration_seconds
        self._insert = (
            f"CREATE (l:{label}) SET l.{key} = $key, l.{run} = $run, l.{claims} = 0, "
            f"l.{expires} = datetime() + duration({{milliseconds: $ms}})"
        )
        self._takeover = (
            f"MATCH (l:{label} {{{key}: $key}}) SET l.{claims} = coalesce(l.{claims}, 0) + 1 "
            f"WITH l WHERE l.{expires} <= datetime() "
            f"SET l.{run} = $run, l.{expires} = datetime() + duration({{milliseconds: $ms}})"
        )
        #: Also run first inside each document's write transaction.
        self.renew_statement = (
            f"MATCH (l:{label} {{{key}: $key}}) SET l.{claims} = coalesce(l.{claims}, 0) + 1 "
            f"WITH l WHERE l.{run} = $run AND l.{expires} > datetime() "
            f"SET l.{expires} = datetime() + duration({{milliseconds: $ms}}) RETURN count(l)"
        )
        # Released after the document's commit, never inside it: deleting a lease node in
        # the write transaction deadlocked with other workers inserting leases (measured:
        # dozens of DeadlockDetected per 200 documents with two workers).
        self.release_statement = f"MATCH (l:{label} {{{key}: $key, {run}: $run}}) DELETE l"
        # Lock, then read: a lease taken over meanwhile is no longer expired and stays.
        self._sweep = (
            f"UNWIND $keys AS key MATCH (l:{label} {{{key}: key}}) SET l.{claims} = coalesce(l.{claims}, 0) + 1 "
            f"WITH l WHERE l.{expires} <= datetime() DELETE l RETURN count(l)"
        )

    @property
    def _ms(self) -> int:
        return int(self.duration_seconds * 1000)

    async def acquire(self, key: str, run_id: str, *, then: str = "RETURN 1") -> list[Any]:
        """Insert the lease, or take over an expired one; else ``DocumentFailure("lease-held")``.

        ``then`` is a read that continues the same statement once the lease is held
        (``$key`` is in scope), so what it reads was read under the lease, in the same
        round trip; its first row is returned.
        """
        params = {"key": key, "run": run_id, "ms": self._ms}
        try:
            rows, _ = await adb.cypher_query(f"{self._insert} WITH l {then}", params)
            return list(rows[0]) if rows else []
        except (UniqueProperty, ConstraintValidationFailed):
            pass
        rows, _ = await adb.cypher_query(f"{self._takeover} WITH l {then}", params)
        if not rows:
            raise DocumentFailure(DocumentErrorCode.LEASE_HELD, "another run holds this document's lease")
        return list(rows[0])

    def renew_parameters(self, key: str, run_id: str) -> dict[str, object]:
        return {"key": key, "run": run_id, "ms": self._ms}

    async def renew(self, key: str, run_id: str) -> bool:
        """Extend the lease if this run still holds it unexpired; False when it is gone."""
        rows, _ = await adb.cypher_query(self.renew_statement, self.renew_parameters(key, run_id))
        return bool(rows[0][0] == 1)

    async def release(self, key: str, run_id: str) -> None:
        """Delete the lease by key and run id (another run's lease is never touched)."""
        await adb.cypher_query(self.release_statement, {"key": key, "run": run_id})

    async def sweep_expired(self, keys: list[str]) -> int:
        """Delete the expired leases of ``keys`` (left by a run that was killed); returns how many."""
        if not keys:
            return 0
        rows, _ = await adb.cypher_query(self._sweep, {"keys": keys})
        return int(rows[0][0]) if rows else 0

    @contextlib.asynccontextmanager
    async def held(self, key: str, run_id: str, *, then: str = "RETURN 1") -> AsyncIterator[LeaseKeeper]:
        """Acquire (reading ``then`` under the lease), keep renewed every third of the duration,
        and release (also on failure). What ``then`` read is ``keeper.read``."""
        read = await self.acquire(key, run_id, then=then)
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
        #: The first row of the read made under the lease when it was taken.
        self.read: list[Any] = []

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
