"""Waiting for held leases without a database: each run's order, the windowed reads and the retry loop's bounds."""

from __future__ import annotations

import asyncio

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.ingestion.receipts import DocumentOutcome, DocumentStatus
from graphrag_orm.ingestion.waiting import Fresh, FreshStates, pass_order, wait_for_held


def _outcome(document_id: str, held: bool) -> DocumentOutcome:
    if held:
        return DocumentOutcome(
            document_id=document_id,
            source_uri=f"text:{document_id}",
            status=DocumentStatus.FAILED,
            error_code=DocumentErrorCode.LEASE_HELD,
        )
    return DocumentOutcome(document_id=document_id, source_uri=f"text:{document_id}", status=DocumentStatus.INGESTED)


def test_each_run_visits_every_source_once_in_an_order_of_its_own() -> None:
    orders = [pass_order(f"run-{n}", 400) for n in range(8)]
    assert all(sorted(order) == list(range(400)) for order in orders)  # each source once
    assert pass_order("run-a", 400) == pass_order("run-a", 400)  # the same run, the same order
    # Eight runs' first 50 documents overlap little: they do not all begin with the same ones.
    firsts = [set(order[:50]) for order in orders]
    assert max(len(a & b) for i, a in enumerate(firsts) for b in firsts[i + 1 :]) < 25
    assert pass_order("run-a", 1) == [0] and pass_order("run-a", 0) == []


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


def test_stored_states_and_leases_are_read_window_by_window_as_the_pass_reaches_them() -> None:
    from graphrag_orm.sources import Sources

    sources = [Sources.text(f"d{i}", "x") for i in range(10)]
    reads: list[list[str]] = []
    stored = {sources[0].document_id: {"content_hash": "h0"}, sources[8].document_id: {"content_hash": "h8"}}

    async def read(chosen: object) -> dict[str, Fresh]:
        assert isinstance(chosen, list)
        reads.append([s.document_id for s in chosen])
        found = {s.document_id: Fresh(state=stored[s.document_id]) for s in chosen if s.document_id in stored}
        if sources[4] in chosen:  # stored, but a dead worker's expired lease is on it
            found[sources[4].document_id] = Fresh(state=None, held=False)
        if sources[6] in chosen:  # another worker holds it now
            found[sources[6].document_id] = Fresh(state=None, held=True)
        return found

    async def walk() -> list[Fresh]:
        fresh = FreshStates(read, sources, window=4)
        return [await fresh.get(p) for p in range(10)]

    found = asyncio.run(walk())
    assert [len(r) for r in reads] == [4, 4, 2]  # one read per window, when the pass reaches it
    assert [f.state is not None for f in found] == [True] + [False] * 7 + [True, False]
    assert [f.held for f in found] == [False] * 6 + [True] + [False] * 3
    assert found[1] == Fresh()  # nothing stored, no lease: the lease path
