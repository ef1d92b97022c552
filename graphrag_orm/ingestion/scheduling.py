"""The order documents of one call are worked in, how many at once, and the wait for held leases.

Documents are worked on concurrently (``documents_in_flight``). Without a wait for
leases, the stored states of the whole call are read up front and every outcome is final.
With one (``wait_for_leases_seconds``), many workers given one manifest each visit it in
an order of their own (:func:`pass_order`), so they rarely reach for the same document at
once (outcomes stay in source order), and read stored states and leases window by window
as they go, so what another wrote is Unchanged at once and what another holds waits
without being loaded; the held ones are tried again until the wait runs out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphrag_orm.ingestion.receipts import DocumentOutcome
from graphrag_orm.ingestion.states import DocumentStates
from graphrag_orm.ingestion.waiting import FreshStates, is_held, pass_order, wait_for_held
from graphrag_orm.placement import ChunkText
from graphrag_orm.sources import Source
from graphrag_orm.values import Limit

__all__ = ["DocumentJob", "DocumentWork", "Progress", "schedule"]

Progress = Callable[[DocumentOutcome], None]


@dataclass(frozen=True)
class DocumentJob:
    """One document of a call: its source and, for ``ingest_chunked``, the caller's chunks."""

    source: Source
    chunks: tuple[ChunkText, ...] | None = None


DocumentWork = Callable[[DocumentJob, Mapping[str, Any] | None, bool], Awaitable[DocumentOutcome]]
"""Works one document, given what is stored of it and whether another run held its lease."""


async def schedule(
    jobs: Sequence[DocumentJob],
    work: DocumentWork,
    states: DocumentStates,
    *,
    run_id: str,
    in_flight: int,
    wait_seconds: float,
    progress: Progress | None,
) -> tuple[list[DocumentOutcome], Limit | None]:
    """Every job's outcome, in the jobs' order, and the lease wait's limit when it ran out."""
    documents = asyncio.Semaphore(in_flight)
    prefetched: dict[str, dict[str, Any]] = {}

    # ``final``: every outcome is reported; else a lease-held one waits for its last try.
    async def one(job: DocumentJob, final: bool, fresh: FreshStates | None, position: int) -> DocumentOutcome:
        async with documents:
            held = False
            if fresh is None:
                stored: Mapping[str, Any] | None = prefetched.get(job.source.document_id)
            else:
                found = await fresh.get(position)
                stored, held = found.state, found.held
            outcome = await work(job, stored, held)
        if progress is not None and (final or not is_held(outcome)):
            progress(outcome)
        return outcome

    async def all_of(chosen: Sequence[DocumentJob], final: bool, fresh: FreshStates | None) -> list[DocumentOutcome]:
        tasks = [asyncio.create_task(one(job, final, fresh, i)) for i, job in enumerate(chosen)]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    def fresh(chosen: Sequence[DocumentJob]) -> FreshStates:
        """States and leases of ``chosen``'s documents, read window by window as a pass reaches them."""
        return FreshStates(states.window, [job.source for job in chosen])

    async def again(positions: list[int]) -> list[DocumentOutcome]:
        # Read afresh, then through the lease, never around it: a document another run
        # finished and released is Unchanged, one still held (unexpired) waits for the
        # next try, and a dead holder's expired lease is taken over and released.
        chosen = [jobs[i] for i in positions]
        return await all_of(chosen, False, fresh(chosen))

    if wait_seconds <= 0:
        prefetched.update(await states.prefetch([job.source for job in jobs]))
        return await all_of(jobs, True, None), None
    order = pass_order(run_id, len(jobs))
    visiting = [jobs[i] for i in order]
    visited = await all_of(visiting, False, fresh(visiting))
    outcomes = list(visited)
    for outcome, position in zip(visited, order, strict=True):
        outcomes[position] = outcome
    outcomes, limit = await wait_for_held(outcomes, again, wait_seconds)
    if limit is not None and progress is not None:
        for outcome in outcomes:
            if is_held(outcome):
                progress(outcome)
    return outcomes, limit
