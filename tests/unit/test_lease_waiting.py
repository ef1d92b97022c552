"""Waiting for held leases without a database: the pass's rotation and the retry loop's bounds."""

from __future__ import annotations

import asyncio

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.ingestion.receipts import DocumentOutcome, DocumentStatus
from graphrag_orm.ingestion.waiting import FreshStates, rotation, wait_for_held


def _outcome(document_id: str, held: bool) -> DocumentOutcome:
    if held:
        return DocumentOutcome(
            document_id=document_id,
            source_uri=f"text:{document_id}",
            status=DocumentStatus.FAILED,
            error_code=DocumentErrorCode.LEASE_HELD,
        )
    return DocumentOutcome(document_id=document_id, source_uri=f"text:{document_id}", status=DocumentStatus.INGESTED)


def test_each_run_begins_at_its_own_point_and_always_within_the_sources() -> None:
    starts = {rotation(f"run-{n}", 1000) for n in range(64)}
    assert all(0 <= start < 1000 for start in starts)
    assert len(starts) > 50  # spread out, not one shared start
    assert rotation("run-a", 1000) == rotation("run-a", 1000)  # the same run, the same point
    assert rotation("run-a", 1) == rotation("run-a", 0) == 0


def test_held_documents_are_tried_again_until_released_and_only_they() -> None:
    tries: list[list[int]] = []

    async def retry(positions: list[int]) -> list[DocumentOutcome]:
        tries.append(positions)
        return [_outcome(str(i), held=len(tries) < 3) for i in positions]

    first = [_outcome("0", False), _outcome("1", True), _outcome("2", True)]
    outcomes, limit = asyncio.run(wait_for_held(first, retry, 30.0))
    assert tries == [[1, 2], [1, 2], [1, 2]]
    assert [o.status for o in outcomes] == [DocumentStatus.INGESTED] * 3 and limit is None


def test_the_wait_ends_with_the_limit_when_its_time_is_spent() -> None:
    async def retry(positions: list[int]) -> list[DocumentOutcome]:
        return [_outcome(str(i), held=True) for i in positions]

    outcomes, limit = asyncio.run(wait_for_held([_outcome("0", True)], retry, 0.6))
    assert outcomes[0].error_code == DocumentErrorCode.LEASE_HELD
    assert limit is not None and (limit.name, limit.value) == ("LeaseWait", 1)


def test_stored_states_are_read_window_by_window_as_the_pass_reaches_them() -> None:
    from graphrag_orm.sources import Sources

    sources = [Sources.text(f"d{i}", "x") for i in range(10)]
    reads: list[list[str]] = []

    async def read(chosen: object) -> dict[str, dict[str, object]]:
        assert isinstance(chosen, list)
        reads.append([s.document_id for s in chosen])
        return {s.document_id: {"document": s.document_id} for s in chosen[:1]}

    async def leased(keys: list[str]) -> set[str]:
        return {key for key in keys if key == sources[4].document_id}  # a dead worker's lease on d4

    async def walk() -> list[object]:
        fresh = FreshStates(read, leased, sources, window=4)
        return [await fresh.get(p) for p in range(10)]

    states = asyncio.run(walk())
    assert [len(r) for r in reads] == [4, 4, 2]  # one read per window, when the pass reaches it
    # d0 and d8 are stored; d4 is stored too, but leased: it must go through the lease.
    assert [s is not None for s in states] == [True] + [False] * 7 + [True, False]
