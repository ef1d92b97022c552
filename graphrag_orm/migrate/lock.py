"""The migration lock: a lease on the journal, so one process applies at a time.

The lease is one ``(:GraphRagMigrationLock {id: 'lock'})`` node under a uniqueness
constraint, holding its owner (a random token), a holder description (host and PID,
for the refusal message) and an expiry. :func:`migration_lock` takes it, renews it in
the background every third of its duration while the caller works, and deletes it on
the way out (shielded, so a cancelled apply releases it too). A second ``apply`` waits
for it, polling, at most ``wait_seconds``, then is refused with
``migration-in-progress``; a lease whose holder died (SIGKILL, a lost connection) is
taken over once it has expired, never before.

Why a lease and not only the journal's constraint: two applies at once both read an
empty journal, both ran the steps and the loser failed on the journal's uniqueness
(``ConstraintValidationFailed``), on a deadlock between two schema commands, or with a
false ``schema-conflict`` when it read the other's half-made schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import MigrationError
from graphrag_orm.migrate.journal import ensure_schema
from graphrag_orm.store import Store, StoreTransaction

__all__ = [
    "DEFAULT_LOCK_WAIT_SECONDS",
    "LOCK_CONSTRAINT",
    "LOCK_LABEL",
    "LOCK_LEASE_SECONDS",
    "MAX_LOCK_WAIT_SECONDS",
    "MigrationLease",
    "ensure_lock_constraint",
    "migration_lock",
]

LOCK_LABEL = "GraphRagMigrationLock"
LOCK_CONSTRAINT = "graphrag_migration_lock_unique"
#: How long a lease lasts without renewal; renewed every third of it while held.
LOCK_LEASE_SECONDS = 60.0
#: How long a second apply waits for the lock by default, and at most.
DEFAULT_LOCK_WAIT_SECONDS = 120.0
MAX_LOCK_WAIT_SECONDS = 3600.0
_POLL_SECONDS = 0.5
_LOCK_ID = "lock"

_log = logging.getLogger("graphrag_orm.migrate")

_ENSURE = f"CREATE CONSTRAINT {LOCK_CONSTRAINT} IF NOT EXISTS FOR (l:{LOCK_LABEL}) REQUIRE l.id IS UNIQUE"
# Setting ``lockedAt`` first takes the node's write lock, so the owner and expiry read
# next are the committed ones: two takers of an expired lease cannot both win.
_ACQUIRE = (
    f"MERGE (l:{LOCK_LABEL} {{id: $id}}) "
    "ON CREATE SET l.owner = $owner, l.expiresAt = datetime() + duration({seconds: $seconds}) "
    "SET l.lockedAt = datetime() "
    "WITH l, coalesce(l.owner = $owner OR l.expiresAt < datetime(), true) AS free "
    "SET l.owner = CASE WHEN free THEN $owner ELSE l.owner END, "
    "l.holder = CASE WHEN free THEN $holder ELSE l.holder END, "
    "l.since = CASE WHEN free THEN datetime() ELSE l.since END, "
    "l.expiresAt = CASE WHEN free THEN datetime() + duration({seconds: $seconds}) ELSE l.expiresAt END "
    "RETURN free AS held, l.holder AS holder, toString(l.since) AS since, toString(l.expiresAt) AS expiresAt"
)
_RENEW = (
    f"MATCH (l:{LOCK_LABEL} {{id: $id}}) WHERE l.owner = $owner "
    "SET l.expiresAt = datetime() + duration({seconds: $seconds}) RETURN count(l) AS held"
)
_RELEASE = f"MATCH (l:{LOCK_LABEL} {{id: $id}}) WHERE l.owner = $owner DELETE l"


@dataclass
class MigrationLease:
    """The held lock. ``lost`` turns true when a renewal found another owner (the lease had expired)."""

    owner: str
    holder: str
    lost: bool = field(default=False)

    def confirm(self) -> None:
        """Raise ``migration-in-progress`` when the lease was lost, before anything is recorded."""
        if self.lost:
            raise MigrationError(
                ErrorCode.MIGRATION_IN_PROGRESS,
                f"the migration lock held by {self.holder} expired and another process took it; "
                "nothing more was recorded: run apply again once it ends",
            )


async def ensure_lock_constraint(store: Store) -> None:
    """Create the lock's uniqueness constraint unless it exists (schema DDL, auto-commit)."""
    await ensure_schema(store, _ENSURE, name="migrate.lock.ensure")


async def _try_acquire(store: Store, lease: MigrationLease) -> dict[str, object]:
    async def work(tx: StoreTransaction) -> dict[str, object]:
        result = await tx.run(
            _ACQUIRE,
            {"id": _LOCK_ID, "owner": lease.owner, "holder": lease.holder, "seconds": LOCK_LEASE_SECONDS},
            name="migrate.lock.acquire",
        )
        row = result.single()
        return dict(row) if row is not None else {"held": False}

    return await store.write(work, attempts=5)


async def _renew(store: Store, lease: MigrationLease) -> bool:
    async def work(tx: StoreTransaction) -> bool:
        result = await tx.run(
            _RENEW, {"id": _LOCK_ID, "owner": lease.owner, "seconds": LOCK_LEASE_SECONDS}, name="migrate.lock.renew"
        )
        return bool(result.value("held", 0))

    return await store.write(work)


async def _release(store: Store, lease: MigrationLease) -> None:
    async def work(tx: StoreTransaction) -> None:
        await tx.run(_RELEASE, {"id": _LOCK_ID, "owner": lease.owner}, name="migrate.lock.release")

    await store.write(work)


async def _keep_renewed(store: Store, lease: MigrationLease) -> None:
    while True:
        await asyncio.sleep(LOCK_LEASE_SECONDS / 3)
        try:
            if not await _renew(store, lease):
                lease.lost = True
                return
        except Exception:  # a passing fault: the next renewal, well within the lease, tries again
            _log.warning("could not renew the migration lock", exc_info=True)


@contextlib.asynccontextmanager
async def migration_lock(
    store: Store, *, wait_seconds: float = DEFAULT_LOCK_WAIT_SECONDS
) -> AsyncIterator[MigrationLease]:
    """Hold the migration lock for the ``async with`` body; ``migration-in-progress`` after ``wait_seconds``."""
    if not 0.0 <= wait_seconds <= MAX_LOCK_WAIT_SECONDS:
        raise MigrationError(ErrorCode.INVALID_OPTION, f"lock wait must be 0..{MAX_LOCK_WAIT_SECONDS:.0f} seconds")
    await ensure_lock_constraint(store)
    lease = MigrationLease(owner=uuid.uuid4().hex, holder=f"{socket.gethostname()} pid {os.getpid()}")
    deadline = time.monotonic() + wait_seconds
    while True:
        row = await _try_acquire(store, lease)
        if row.get("held"):
            break
        if time.monotonic() >= deadline:
            raise MigrationError(
                ErrorCode.MIGRATION_IN_PROGRESS,
                f"another migration holds the lock ({row.get('holder')}, since {row.get('since')}, lease until "
                f"{row.get('expiresAt')}); waited {wait_seconds:.0f} s: run it again when that one ends",
            )
        await asyncio.sleep(min(_POLL_SECONDS, max(0.0, deadline - time.monotonic())))
    renewer = asyncio.create_task(_keep_renewed(store, lease))
    try:
        yield lease
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer
        # Released even when the body was cancelled; a release that fails leaves a lease that expires.
        try:
            await asyncio.shield(_release(store, lease))
        except Exception:
            _log.warning(
                "could not release the migration lock; it expires in %.0f s", LOCK_LEASE_SECONDS, exc_info=True
            )
