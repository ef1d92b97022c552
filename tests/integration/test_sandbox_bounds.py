"""The sandbox's bounds against the real Neo4j: every query returns or is stopped in time, and no vector leaves.

A query the gate lets through is stopped by the sandbox's own deadline (its timeout
plus a grace) when one expression runs past the server's timeout, with ``query-timeout``
and no retry; the driver's pool answers the next query at once. A deep query is refused
before anything is sent. Rows are read back only up to ``max_bytes``. A stored vector
(the layout's, a staged one known by its vector index) is unreadable through caller Cypher.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator

import pytest

from graphrag_orm.errors import QueryRefused
from graphrag_orm.store import StatementEvent, Store
from graphrag_orm.store.gate import MAX_RANGE_ITEMS, CypherGate
from graphrag_orm.store.sandbox import DEADLINE_GRACE_SECONDS, CypherSandbox, SandboxLimits, SandboxResult

ONE_SECOND = SandboxLimits(timeout_seconds=1)
#: The review's regex: 28 characters, 5 s of backtracking on the server.
REGEX = "RETURN 'aaaaaaaaaaaaaaaaaaaaaaaaaaa!' =~ '(.*a){20}' AS m"
COMPREHENSION = "RETURN size([x IN range(1, 100000000) WHERE x % 7 = 0]) AS n"
REDUCE = "RETURN size(reduce(s = '', i IN range(1, 100000) | s + 'xxxxxxxxxx')) AS n"
REGEX_ALLOWED = CypherSandbox(CypherGate(allow_regex=True))
RANGES_ALLOWED = CypherSandbox(CypherGate(max_range_items=MAX_RANGE_ITEMS))


async def outcome(
    sandbox: CypherSandbox, store: Store, cypher: str, limits: SandboxLimits = ONE_SECOND
) -> tuple[SandboxResult | QueryRefused, float]:
    began = time.monotonic()
    try:
        result: SandboxResult | QueryRefused = await sandbox.run(store, cypher, limits=limits)
    except QueryRefused as refused:
        assert "\n" not in refused.message
        result = refused
    return result, time.monotonic() - began


async def answers_at_once(store: Store) -> None:
    began = time.monotonic()
    assert (await CypherSandbox().run(store, "RETURN 1 AS one")).rows == ({"one": 1},)
    assert time.monotonic() - began < 1, "the pool recovered: the next query answers at once"


@pytest.mark.parametrize(
    ("sandbox", "cypher"),
    [(REGEX_ALLOWED, REGEX), (RANGES_ALLOWED, COMPREHENSION), (CypherSandbox(), REDUCE)],
    ids=["regex", "comprehension", "reduce"],
)
async def test_one_expression_past_the_timeout_is_stopped_by_the_deadline_without_a_retry(
    store: Store, graph: None, sandbox: CypherSandbox, cypher: str
) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        result, seconds = await outcome(sandbox, store, cypher)
    finally:
        remove()
    assert isinstance(result, QueryRefused) and result.code == "query-timeout", result
    assert seconds < ONE_SECOND.timeout_seconds + DEADLINE_GRACE_SECONDS + 0.5
    assert [event.name for event in events].count("sandbox") <= 1, "never sent twice"
    await answers_at_once(store)


@pytest.mark.parametrize(
    ("cypher", "code"),
    [
        ("RETURN " + "[" * 300 + "1" + "]" * 300 + " AS x", "too-deep"),
        ("RETURN " + "(" * 1000 + "1" + ")" * 1000 + " AS x", "too-deep"),
        (REGEX, "regex-not-allowed"),
        (COMPREHENSION, "range-too-large"),
        ("RETURN [x IN range(1, 3000000) | 'abcdefghijklmnopqrstuvwxyz'] AS xs", "range-too-large"),
    ],
    ids=["brackets", "parentheses", "regex", "comprehension", "strings"],
)
async def test_the_reviews_inputs_are_refused_before_anything_is_sent(
    store: Store, graph: None, cypher: str, code: str
) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        result, seconds = await outcome(CypherSandbox(), store, cypher)
    finally:
        remove()
    assert isinstance(result, QueryRefused) and result.code == code
    assert seconds < 1 and events == []


def _nested(rng: random.Random) -> str:
    depth = rng.choice([1, 8, 30, 60, 64, 65, 100, 200, 300])
    opening, closing = rng.choice([("[", "]"), ("(", ")"), ("[(", ")]"), ("{a: ", "}")])
    return f"RETURN {opening * depth}1{closing * depth} AS x"


def _chained(rng: random.Random) -> str:
    length = rng.choice([5, 40, 63, 64, 100, 250])
    term = rng.choice(["'a'", "1", "n"])
    return f"WITH 1 AS n RETURN {term}" + f" + {term}" * length + " AS x"


def _regex(rng: random.Random) -> str:
    text = "a" * rng.randint(5, 26) + "!"
    return f"RETURN '{text}' =~ '(.*a){{{rng.randint(2, 20)}}}' AS m"


def _comprehension(rng: random.Random) -> str:
    items = rng.choice([1_000, 100_000, 1_000_000, 100_000_000])
    body = rng.choice(["x % 7", "toString(x)", "[y IN range(1, 100) | y * x]", "'abcdefghij'"])
    return f"RETURN size([x IN range(1, {items}) | {body}]) AS n"


def _reduce(rng: random.Random) -> str:
    items = rng.choice([10, 1_000, 100_000])
    step = rng.choice(["s + 'xxxxxxxxxx'", "s + toString(i)", "s + s"])
    start = "'x'" if "s + s" in step else "''"
    items = min(items, 40) if "s + s" in step else items
    return f"RETURN size(reduce(s = {start}, i IN range(1, {items}) | {step})) AS n"


async def test_whatever_passes_returns_or_is_stopped_within_the_deadline(store: Store, graph: None) -> None:
    rng = random.Random(20261204)
    makers = [_nested, _chained, _regex, _comprehension, _reduce]
    sandboxes = [CypherSandbox(), REGEX_ALLOWED, RANGES_ALLOWED]
    seen: dict[str, int] = {}
    for _ in range(30):
        make = rng.choice(makers)
        cypher = make(rng)
        sandbox = REGEX_ALLOWED if make is _regex else rng.choice(sandboxes)
        result, seconds = await outcome(sandbox, store, cypher)
        code = result.code if isinstance(result, QueryRefused) else "answered"
        seen[code] = seen.get(code, 0) + 1
        # Refused (any code: a doubled string may also fail on the server's memory, query-failed) or answered.
        assert seconds <= ONE_SECOND.timeout_seconds + 2, (make.__name__, len(cypher), code, seconds)
    assert {"answered", "too-deep", "query-timeout"} <= set(seen), seen
    await answers_at_once(store)


async def test_rows_are_read_back_only_up_to_the_byte_bound(store: Store, graph: None) -> None:
    # About 1.3 MB a row; reading stops before the row that would pass 4 MiB.
    big = "UNWIND range(1, 50) AS i RETURN i, reduce(s = 'xxxxxxxxxx', j IN range(1, 17) | s + s) AS s"
    limits = SandboxLimits(max_bytes=4 * 1024 * 1024, max_text_chars=5)
    result = await CypherSandbox().run(store, big, limits=limits)
    assert [row["i"] for row in result] == [1, 2, 3] and result.rows[0]["s"] == "xxxxx"
    assert result.truncated and result.bytes_cut and result.texts_cut
    small = await CypherSandbox().run(store, "UNWIND range(1, 50) AS i RETURN i", limits=limits)
    assert len(small.rows) == 50 and not (small.truncated or small.bytes_cut)


CHUNK = (
    "CREATE (:Chunk {id: 'c1', text: 't', documentId: 'd1', embedding: [0.5, 0.25, 0.125], staged: [0.75, 0.5, 0.25]})"
)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (c:Chunk) RETURN toString(c.embedding) AS v",
        "MATCH (c:Chunk) RETURN [x IN c.embedding | toString(x)] AS v",
        "MATCH (c:Chunk) RETURN [x IN c.embedding | toInteger(x * 1e9)] AS v",
        "MATCH (c:Chunk) RETURN c.embedding[0..32] AS v",
        "MATCH (c:Chunk) RETURN reduce(s = '', x IN c.embedding | s + toString(x) + ',') AS v",
        "MATCH (c:Chunk) RETURN c['embedding'] AS v",
        "MATCH (c:Chunk) RETURN c['emb' + 'edding'] AS v",
        "MATCH (c:Chunk) RETURN toString(properties(c)) AS v",
        "MATCH (c:Chunk) RETURN [k IN keys(c) | toString(c[k])] AS v",
    ],
)
async def test_a_stored_vector_is_unreadable_through_arithmetic_and_text(
    store: Store, graph: None, cypher: str
) -> None:
    await store.execute(CHUNK)
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        result, _ = await outcome(CypherSandbox(), store, cypher)
    finally:
        remove()
    assert isinstance(result, QueryRefused) and result.code == "vector-not-readable"
    assert events == []


async def test_a_parameter_naming_the_vector_is_refused(store: Store, graph: None) -> None:
    await store.execute(CHUNK)
    with pytest.raises(QueryRefused) as refused:
        await CypherSandbox().run(store, "MATCH (c:Chunk) RETURN toString(c[$key]) AS v", {"key": "embedding"})
    assert refused.value.code == "vector-not-readable"
    text = await CypherSandbox().run(store, "MATCH (c:Chunk) RETURN c[$key] AS v", {"key": "text"})
    assert text.rows == ({"v": "t"},)


@pytest.fixture
async def staged_index(store: Store, graph: None) -> AsyncIterator[str]:
    """A vector index on a property no layout names (a re-embedding's custom staging property)."""
    await store.execute(CHUNK)
    await store.execute(
        "CREATE VECTOR INDEX sandbox_staged IF NOT EXISTS FOR (c:Chunk) ON (c.staged) WITH [c.documentId] "
        "OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}"
    )
    try:
        yield "staged"
    finally:
        await store.execute("DROP INDEX sandbox_staged IF EXISTS")


async def test_a_property_of_any_vector_index_is_unreadable(store: Store, staged_index: str) -> None:
    cypher = f"MATCH (c:Chunk) RETURN toString(c.{staged_index}) AS v"
    with pytest.raises(QueryRefused) as refused:
        await CypherSandbox().run(store, cypher)
    assert refused.value.code == "vector-not-readable"
    with pytest.raises(QueryRefused) as given:
        await CypherSandbox().run(store, "MATCH (c:Chunk) RETURN c[$key] AS v", {"key": staged_index})
    assert given.value.code == "vector-not-readable"
    unread = await CypherSandbox(vector_indexes=False).run(store, cypher)
    assert unread.rows == ({"v": "[0.75, 0.5, 0.25]"},), "only the index makes it known"
    filtered = await CypherSandbox().run(store, "MATCH (c:Chunk) RETURN c.documentId AS d")
    assert filtered.rows == ({"d": "d1"},), "the index's filter property stays readable"
