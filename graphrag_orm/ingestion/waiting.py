"""Waiting for documents another writer holds, so that many workers can share one manifest.

Workers given the same sources coordinate only through leases: a document whose lease
another run holds fails ``lease-held`` in this run's pass. With
``IngestionOptions.wait_for_leases_seconds`` above zero, the service tries those
documents again after the pass, until each has another outcome or the time is spent:
each try reads the documents' states and leases afresh, then goes through the lease,
never around it: a document the other run finished and released is ``Unchanged``, one
still under an unexpired lease waits for the next try, and one whose holder died is
taken over once its lease expires (then ingested here, or found ``Unchanged`` under
the lease when the holder died after its commit) and its lease released: a killed
worker leaves no lease behind. What is still held when the time is spent stays
``lease-held`` and the receipt names ``LeaseWait``.

A waiting run also begins its pass at a point of the sources its run id gives
(:func:`rotation`), so workers sharing a manifest start apart instead of reaching
for the same documents together, and reads the stored states and leases of its
sources as its pass reaches them (:class:`FreshStates`), so what another worker wrote
meanwhile is ``Unchanged`` without a lease, and what another holds is ``lease-held``
without being loaded, chunked or refused an insert. The tries back off from
:data:`FIRST_PAUSE_SECONDS`, doubling, to at most :data:`LONGEST_PAUSE_SECONDS` (and
never past the deadline).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.codes import DocumentErrorCode, LimitName
from graphrag_orm.ingestion.receipts import DocumentOutcome
from graphrag_orm.sources import Source
from graphrag_orm.values import Limit

__all__ = [
    "FIRST_PAUSE_SECONDS",
    "LONGEST_PAUSE_SECONDS",
    "STATE_WINDOW",
    "Fresh",
    "FreshStates",
    "is_held",
    "pass_order",
    "wait_for_held",
]

#: The pause before the first try again; a live holder usually commits within it.
FIRST_PAUSE_SECONDS = 0.25
#: The longest pause between tries.
LONGEST_PAUSE_SECONDS = 5.0
#: Documents whose stored states and leases a waiting run reads in one statement, as its
#: pass reaches them: twice ``documents_in_flight``'s default, so what it read is still
#: fresh when it gets to the window's last document (a state read long before another
#: worker's write sends a document through the lease only to find it written).
STATE_WINDOW = 8


def pass_order(run_id: str, count: int) -> list[int]:
    """The order in which a waiting run visits ``count`` sources: a permutation of its own, from its id.

    Workers given the same sources in the same order otherwise all reach for the same
    few documents at once and spend their pass on refused leases. Each beginning at a
    point of its own is not enough: a worker that reaches another's starting point finds
    its written documents ``Unchanged``, catches up with it, and the two then work one
    front, taking turns at the same documents (``benchmarks/scale/contention.py``, eight
    runs on 400 documents: 835 lease inserts refused or finding the document already
    written; in orders of their own, 48).
    """
    order = list(range(count))
    random.Random(hashlib.sha256(run_id.encode("utf-8")).digest()).shuffle(order)
    return order


@dataclass(frozen=True)
class Fresh:
    """What a waiting run read about one document as its pass reached it."""

    #: The stored state (:data:`~graphrag_orm.ingestion.statements.STATE_FIELDS`), or None:
    #: nothing stored, or a lease is on it, so it must go through the lease.
    state: dict[str, Any] | None = None
    #: Another run (or this one, for a source given twice) holds an unexpired lease on it.
    held: bool = False


class FreshStates:
    """Stored states and leases read window by window as a shared pass reaches them, not once at its start.

    A run's start-of-pass read goes stale when other workers share its sources: by the
    time it reaches a document, another may have written it, and the stale state sends
    it through the lease only to find it ``Unchanged`` there (two round trips and a load
    under a lease, per document another worker wrote). Read as the pass reaches each
    window of :data:`STATE_WINDOW` documents, such a document is ``Unchanged`` at once,
    and one another worker holds an unexpired lease on is ``lease-held`` at once, without
    being loaded or chunked and without a refused insert (it is tried again after the pass).
    """

    def __init__(
        self,
        read: Callable[[Sequence[Source]], Awaitable[dict[str, Fresh]]],
        order: Sequence[Source],
        window: int = STATE_WINDOW,
    ) -> None:
        self._read = read
        self._order = order
        self._window = window
        self._reads: dict[int, asyncio.Future[dict[str, Fresh]]] = {}

    async def get(self, position: int) -> Fresh:
        """What is known of the document at ``position`` of the pass (``Fresh()``: nothing stored, no lease).

        A document with an expired lease on it has no state: a worker killed after its
        commit left that lease, and only the lease path takes it over and releases it.
        """
        window = position // self._window
        if window not in self._reads:
            chosen = self._order[window * self._window : (window + 1) * self._window]
            self._reads[window] = asyncio.ensure_future(self._read(chosen))
            self._reads.pop(window - 2, None)  # windows behind the pass are not asked again
        found = await self._reads[window]
        return found.get(self._order[position].document_id, _NOTHING)


_NOTHING = Fresh()


def is_held(outcome: DocumentOutcome) -> bool:
    """True when the document failed only because another run holds its lease."""
    return outcome.error_code == DocumentErrorCode.LEASE_HELD


async def wait_for_held(
    outcomes: Sequence[DocumentOutcome],
    retry: Callable[[list[int]], Awaitable[list[DocumentOutcome]]],
    seconds: float,
) -> tuple[list[DocumentOutcome], Limit | None]:
    """Try the held documents of ``outcomes`` again with ``retry`` (given their positions) for at most ``seconds``.

    Returns the outcomes with the held ones replaced by their latest try, and a
    ``LeaseWait`` limit when some are still held at the end.
    """
    result = list(outcomes)
    waiting = [i for i, outcome in enumerate(result) if is_held(outcome)]
    deadline = time.monotonic() + seconds
    pause = FIRST_PAUSE_SECONDS
    while waiting:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return result, Limit(name=LimitName.LEASE_WAIT, value=round(seconds))
        await asyncio.sleep(min(pause, remaining))
        pause = min(pause * 2, LONGEST_PAUSE_SECONDS)
        for position, outcome in zip(waiting, await retry(waiting), strict=True):
            result[position] = outcome
        waiting = [i for i in waiting if is_held(result[i])]
    return result, None
