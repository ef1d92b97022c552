"""The store against the real Neo4j: access modes, hooks, bounded reads, write retries, read-your-writes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import neo4j
import pytest
from neo4j.exceptions import ClientError, TransientError

from graphrag_orm.errors import StoreNotConnected
from graphrag_orm.store import AccessMode, StatementEvent, Store, StoreTransaction


async def test_a_read_goes_out_in_read_mode_and_the_server_refuses_a_write_in_it(store: Store, graph: None) -> None:
    with pytest.raises(ClientError):
        await store.read("CREATE (:StoreProbe {id: 'x'})", name="probe.write-in-read")
    assert (await store.read("MATCH (n:StoreProbe) RETURN count(n) AS n")).value("n") == 0


async def test_the_hook_sees_each_statement_with_name_mode_rows_and_counters_but_no_text(
    store: Store, graph: None
) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:

        async def work(tx: StoreTransaction) -> None:
            await tx.run("UNWIND range(1, 3) AS i CREATE (:StoreProbe {id: toString(i)})", name="probe.create")

        await store.write(work)
        await store.read("MATCH (n:StoreProbe) RETURN n.id AS id ORDER BY id", name="probe.read")
    finally:
        remove()
    assert [(e.name, e.mode, e.rows, e.error) for e in events] == [
        ("probe.create", AccessMode.WRITE, 0, None),
        ("probe.read", AccessMode.READ, 3, None),
    ]
    assert events[0].counters["nodes_created"] == 3
    assert all(e.seconds >= 0 for e in events)
    assert not hasattr(events[0], "cypher") and not hasattr(events[0], "parameters")
    await store.read("RETURN 1 AS one", name="after-removal")
    assert len(events) == 2


async def test_a_failed_statement_reaches_the_hook_with_its_error_type(store: Store, graph: None) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        with pytest.raises(ClientError):
            await store.read("RETURN 1 +", name="probe.bad")
    finally:
        remove()
    assert events and events[-1].name == "probe.bad" and events[-1].error is not None


async def test_max_rows_bounds_a_read_and_says_more_was_there(store: Store, graph: None) -> None:
    bounded = await store.read("UNWIND range(1, 100) AS i RETURN i", max_rows=10)
    assert bounded.column("i") == list(range(1, 11)) and bounded.truncated
    whole = await store.read("UNWIND range(1, 10) AS i RETURN i", max_rows=10)
    assert len(whole) == 10 and not whole.truncated


async def test_rows_are_read_by_key(store: Store, graph: None) -> None:
    result = await store.read("RETURN 1 AS one, 'two' AS two")
    assert result.keys == ("one", "two")
    assert result.single() == {"one": 1, "two": "two"}
    assert result.value("two") == "two" and result.value() == 1


async def test_a_write_that_raises_leaves_nothing(store: Store, graph: None) -> None:
    async def work(tx: StoreTransaction) -> None:
        await tx.run("CREATE (:StoreProbe {id: 'half'})")
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError):
        await store.write(work)
    assert (await store.read("MATCH (n:StoreProbe) RETURN count(n) AS n")).value("n") == 0


async def test_a_deadlocked_write_is_retried_whole_and_both_writers_commit(store: Store, graph: None) -> None:
    await store.execute("CREATE (:StoreProbe {id: 'a', hits: 0}), (:StoreProbe {id: 'b', hits: 0})")
    first_locked, second_locked = asyncio.Event(), asyncio.Event()
    calls = {"ab": 0, "ba": 0}

    def writer(
        first: str, second: str, mine: asyncio.Event, theirs: asyncio.Event
    ) -> Callable[[StoreTransaction], Awaitable[None]]:
        async def work(tx: StoreTransaction) -> None:
            calls[first + second] += 1
            await tx.run("MATCH (n:StoreProbe {id: $id}) SET n.hits = n.hits + 1", {"id": first})
            if calls[first + second] == 1:
                mine.set()
                await asyncio.wait_for(theirs.wait(), 10)
            await tx.run("MATCH (n:StoreProbe {id: $id}) SET n.hits = n.hits + 1", {"id": second})

        return work

    await asyncio.gather(
        store.write(writer("a", "b", first_locked, second_locked), attempts=5),
        store.write(writer("b", "a", second_locked, first_locked), attempts=5),
    )
    # The server broke the deadlock by failing one transaction; the store ran that one again.
    assert calls["ab"] + calls["ba"] == 3
    hits = await store.read("MATCH (n:StoreProbe) RETURN n.id AS id, n.hits AS hits ORDER BY id")
    assert [(r["id"], r["hits"]) for r in hits] == [("a", 2), ("b", 2)]


async def test_a_transient_error_on_the_last_attempt_is_raised(store: Store, graph: None) -> None:
    attempts = 0

    async def work(tx: StoreTransaction) -> None:
        nonlocal attempts
        attempts += 1
        raise TransientError("Neo.TransientError.Transaction.DeadlockDetected")

    with pytest.raises(TransientError):
        await store.write(work, attempts=2, backoff_seconds=0.0)
    assert attempts == 2


async def test_a_read_after_a_write_through_the_same_store_sees_it(store: Store, graph: None) -> None:
    for i in range(20):

        async def work(tx: StoreTransaction, i: int = i) -> None:
            await tx.run("CREATE (:StoreProbe {id: $id})", {"id": str(i)})

        await store.write(work)
        seen = await store.read("MATCH (n:StoreProbe {id: $id}) RETURN count(n) AS n", {"id": str(i)})
        assert seen.value("n") == 1


async def test_a_store_without_a_driver_refuses_with_a_code() -> None:
    with pytest.raises(StoreNotConnected) as refused:
        await Store().read("RETURN 1")
    assert refused.value.code == "not-connected"


async def test_bookmarks_are_shared_on_a_routing_driver_and_left_out_on_one_server(store: Store, graph: None) -> None:
    # One server (bolt://) sees every committed write in later transactions without them;
    # a routing driver (neo4j://, a cluster) needs them for a read to see the store's writes.
    assert Store(store.driver).uses_bookmarks is False
    routing = neo4j.AsyncGraphDatabase.driver("neo4j://127.0.0.1:1", auth=("neo4j", "unused"))
    try:
        assert Store(routing).uses_bookmarks is True
        assert Store(routing, causal_consistency=False).uses_bookmarks is False
    finally:
        await routing.close()
    forced = Store(causal_consistency=True)
    forced.bind(store.driver, store.database)
    assert forced.uses_bookmarks is True
    await forced.write(lambda tx: tx.run("CREATE (:StoreProbe {id: 'forced'})"))
    seen = await forced.read("MATCH (n:StoreProbe {id: 'forced'}) RETURN count(n) AS n")
    assert seen.value("n") == 1
