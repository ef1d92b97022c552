"""Waiting for documents another writer holds, so that many workers can share one manifest.

Workers given the same sources coordinate only through leases: a document whose lease
another run holds fails ``lease-held`` in this run's pass. With
``IngestionOptions.wait_for_leases_seconds`` above zero, the service tries those
documents again after the pass, until each has another outcome or the time is spent:
each try goes through the lease again, so a document the other run finished is
found ``Unchanged`` under it, and one whose holder died is taken over once its lease
expires (then ingested here, or found ``Unchanged`` when the holder died after its
commit) and its lease released: a killed worker leaves no lease behind. What is still held when the
time is spent stays ``lease-held`` and the receipt names ``LeaseWait``.

A waiting run also begins its pass at a point of the sources its run id gives
(:func:`rotation`), so workers sharing a manifest start apart instead of reaching
for the same documents together, and reads the stored states of its sources as its
pass reaches them (:class:`FreshStates`), so what another worker wrote meanwhile is
``Unchanged`` without a lease. The tries back off from :data:`FIRST_PAUSE_SECONDS`, doubling, to at most
:data:`LONGEST_PAUSE_SECONDS` (and never past the deadline).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from graphrag_orm.codes import DocumentErrorCode, LimitName
from graphrag_orm.ingestion.receipts import DocumentOutcome
from graphrag_orm.sources import Source
from graphrag_orm.values import Limit

__all__ = [
    "FIRST_PAUSE_SECONDS",
    "LONGEST_PAUSE_SECONDS",
    "STATE_WINDOW",
    "FreshStates",
    "is_held",
    "rotation",
    "wait_for_held",
]

#: The pause before the first try again; a live holder usually commits within it.
FIRST_PAUSE_SECONDS = 0.25
#: The longest pause between tries.
LONGEST_PAUSE_SECONDS = 5.0
#: Documents whose stored states a waiting run reads in one statement, as its pass reaches them.
STATE_WINDOW = 32


def rotation(run_id: str, count: int) -> int:
    """Where a waiting run begins its pass over ``count`` sources: a point of its own, from its id.

    Workers given the same sources in the same order otherwise all reach for the same
    few documents at once and spend their pass on refused leases (measured: eight
    workers on one manifest ran at 0.30 of eight workers on disjoint shares).
    """
    if count <= 1:
        return 0
    return int.from_bytes(hashlib.sha256(run_id.encode("utf-8")).digest()[:8], "big") % count


class FreshStates:
    """Stored states read window by window as a shared pass reaches them, not once at its start.

    A run's start-of-pass read goes stale when other workers share its sources: by the
    time it reaches a document, another may have written it, and the stale state sends
    it through the lease only to find it ``Unchanged`` there (two round trips and a load
    under a lease, per document another worker wrote). Read as the pass reaches each
    window of :data:`STATE_WINDOW` documents, such a document is ``Unchanged`` at once.
    """

    def __init__(
        self,
        read: Callable[[Sequence[Source]], Awaitable[dict[str, dict[str, Any]]]],
        leased: Callable[[list[str]], Awaitable[set[str]]],
        order: Sequence[Source],
        window: int = STATE_WINDOW,
    ) -> None:
        self._read = read
        self._leased = leased
        self._order = order
        self._window = window
        self._reads: dict[int, asyncio.Future[dict[str, dict[str, Any]]]] = {}

    async def get(self, position: int) -> dict[str, Any] | None:
        """The stored state of the document at ``position`` of the pass (None: nothing stored).

        A document with a lease on it is given as None too, so it goes through the lease:
        a worker killed after its commit left that lease, and only the lease path takes
        it over and releases it once it expires.
        """
        window = position // self._window
        if window not in self._reads:
            chosen = self._order[window * self._window : (window + 1) * self._window]
            self._reads[window] = asyncio.ensure_future(self._window_states(chosen))
            self._reads.pop(window - 2, None)  # windows behind the pass are not asked again
        states = await self._reads[window]
        return states.get(self._order[position].document_id)

    async def _window_states(self, chosen: Sequence[Source]) -> dict[str, dict[str, Any]]:
        states = await self._read(chosen)
        for key in await self._leased(list(states)):
            del states[key]
        return states


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
