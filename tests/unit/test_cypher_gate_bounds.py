"""The text gate's bounds on one expression's cost, and its refusal of reads of a stored vector.

Each bound has its own code: ``too-deep`` (nesting and chained operators past
``max_depth``), ``regex-not-allowed`` (``=~``), ``range-too-large`` (a ``range()`` the gate
cannot size, or over ``max_range_items``), ``vector-not-readable`` (a vector property's
name, every property at once, a computed key). Pure: nothing is sent anywhere.
"""

from __future__ import annotations

import time

import pytest

from graphrag_orm.errors import ConfigurationError, QueryRefused
from graphrag_orm.store.gate import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_RANGE_ITEMS,
    MAX_DEPTH,
    MAX_RANGE_ITEMS,
    CypherGate,
    check_vector_reads,
)

GATE = CypherGate()
VECTORS = ("embedding", "embeddingNext")


def refusal(cypher: str, gate: CypherGate = GATE) -> str:
    with pytest.raises(QueryRefused) as refused:
        gate.check(cypher)
        check_vector_reads(cypher, VECTORS)
    message = refused.value.message
    assert "\n" not in message and "aaaa" not in message and "'" not in message, "never the query's values"
    return refused.value.code


def nested(opening: str, closing: str, depth: int) -> str:
    return f"RETURN {opening * depth}1{closing * depth} AS x"


@pytest.mark.parametrize(("opening", "closing"), [("[", "]"), ("(", ")"), ("[{a: ", "}]")])
def test_nesting_past_the_bound_is_too_deep_and_up_to_it_passes(opening: str, closing: str) -> None:
    per_level = len(opening.replace(" ", "").replace(":", "").replace("a", ""))
    levels = DEFAULT_MAX_DEPTH // per_level
    GATE.check(nested(opening, closing, levels))
    assert refusal(nested(opening, closing, levels + 1)) == "too-deep"


@pytest.mark.parametrize(
    "cypher",
    [
        nested("[", "]", 300),
        nested("(", ")", 1_000),
        "RETURN " + "{a: " * 100 + "1" + "}" * 100 + " AS x",
        "RETURN " + "CASE WHEN true THEN " * 70 + "1" + " END" * 70 + " AS x",
        "RETURN 'a'" + " + 'a'" * 70 + " AS x",
        "MATCH (n) RETURN n" + ".a" * 70 + " AS x",
        "RETURN " + "NOT " * 70 + "true AS x",
        "RETURN 'a'" + " || 'a'" * 70 + " AS x",
        "WITH [1] AS l RETURN l" + "[0]" * 70 + " AS x",
        "RETURN " + "(1 + " * 40 + "1" + ")" * 40 + " AS x",
    ],
    ids=["brackets", "parentheses", "maps", "case", "concatenation", "properties", "not", "pipes", "subscripts", "mix"],
)
def test_deep_nesting_and_long_chains_are_too_deep_within_a_second(cypher: str) -> None:
    began = time.monotonic()
    assert refusal(cypher) == "too-deep"
    assert time.monotonic() - began < 1


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (d:Document) WHERE " + " AND ".join(f"d.p{i} = {i}" for i in range(100)) + " RETURN d.id",
        "MATCH (a)" + "-->()" * 100 + " RETURN a.id",
        "MATCH (a)" + "<-[:R]-()" * 50 + " RETURN a.id",
        "RETURN " + ", ".join(f"{i} + {i} AS x{i}" for i in range(100)),
        "RETURN [" + ", ".join(f"'a' + 'b' + '{i}'" for i in range(200)) + "] AS x",
    ],
    ids=["conjunction", "pattern", "relationships", "columns", "list"],
)
def test_long_but_flat_queries_pass(cypher: str) -> None:
    GATE.check(cypher)


def test_the_depth_bound_is_an_option_with_a_maximum() -> None:
    deep = nested("[", "]", 80)
    assert refusal(deep) == "too-deep"
    CypherGate(max_depth=MAX_DEPTH).check(deep)
    assert refusal(nested("[", "]", 10), CypherGate(max_depth=5)) == "too-deep"
    with pytest.raises(ConfigurationError) as refused:
        CypherGate(max_depth=MAX_DEPTH + 1)
    assert refused.value.code == "invalid-option"


@pytest.mark.parametrize(
    "cypher",
    [
        "RETURN 'aaaaaaaaaaaaaaaaaaaaaaaaaaa!' =~ '(.*a){20}' AS m",
        "MATCH (d:Document) WHERE d.title =~ $pattern RETURN d.id",
        "MATCH (d:Document) WHERE d.title =/* x */~ '.*' RETURN d.id",
    ],
)
def test_the_regex_operator_is_refused_unless_allowed(cypher: str) -> None:
    assert refusal(cypher) == "regex-not-allowed"
    CypherGate(allow_regex=True).check(cypher)


def test_a_regex_inside_a_string_refuses_nothing() -> None:
    GATE.check("MATCH (d:Document) WHERE d.title = 'x =~ y' RETURN d.id")


@pytest.mark.parametrize(
    "cypher",
    [
        "RETURN size([x IN range(1, 100000000) WHERE x % 7 = 0]) AS n",
        "RETURN [x IN range(1, 3000000) | 'abcdefghij'] AS xs",
        "RETURN range(0, 100000) AS xs",
        "RETURN range(-100000, 1) AS xs",
        "RETURN range(1, 0x1000000) AS xs",
        "RETURN range(1, 10000000, 2) AS xs",
        "RETURN reduce(s = '', i IN range(1, 1000000) | s + 'x') AS s",
        "RETURN range(1, toInteger(1e9)) AS xs",
        "RETURN range(1, $n) AS xs",
        "WITH 5 AS n RETURN range(1, n) AS xs",
        "RETURN range(1, size($l) * 1000) AS xs",
        "UNWIND [range(1, 1000000)] AS r RETURN r",
    ],
)
def test_a_range_too_large_or_of_unknown_size_is_refused(cypher: str) -> None:
    assert refusal(cypher) == "range-too-large"


@pytest.mark.parametrize(
    "cypher",
    [
        "RETURN range(1, 100000) AS xs",
        "RETURN range(10, 1, -1) AS xs, range(0, 1000000, 100) AS ys",
        "RETURN [i IN range(0, size($l) - 1) | i] AS xs",
        "MATCH p = (a)-->(b) RETURN range(1, length(p)) AS xs",
        "UNWIND range(1, 100000000) AS n RETURN n",
        "UNWIND range(1, $n) AS n RETURN n",
        "MATCH (d:Document) RETURN d.range AS r",
    ],
)
def test_a_range_within_the_bound_of_a_known_size_or_streamed_passes(cypher: str) -> None:
    GATE.check(cypher)


def test_the_range_bound_is_an_option_with_a_maximum() -> None:
    comprehension = "RETURN size([x IN range(1, 100000000) WHERE x % 7 = 0]) AS n"
    CypherGate(max_range_items=MAX_RANGE_ITEMS).check(comprehension)
    assert DEFAULT_MAX_RANGE_ITEMS < 100_000_000 <= MAX_RANGE_ITEMS
    with pytest.raises(ConfigurationError):
        CypherGate(max_range_items=MAX_RANGE_ITEMS + 1)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (c:Chunk) RETURN toString(c.embedding) AS v",
        "MATCH (c:Chunk) RETURN [x IN c.embedding | toString(x)] AS v",
        "MATCH (c:Chunk) RETURN [x IN c.embedding | toInteger(x * 1e9)] AS v",
        "MATCH (c:Chunk) RETURN c.embedding[0..32] AS a, c.embedding[32..64] AS b",
        "MATCH (c:Chunk) RETURN reduce(s = '', x IN c.embedding | s + toString(x) + ',') AS v",
        "MATCH (c:Chunk) RETURN c.`embedding` AS v",
        "MATCH (c:Chunk) RETURN c {.embedding} AS v",
        "MATCH (c:Chunk) RETURN c {.`embedding`} AS v",
        "MATCH (c:Chunk) RETURN c['embedding'] AS v",
        'MATCH (c:Chunk) RETURN c["embedding"] AS v',
        "MATCH (c:Chunk) RETURN c['emb\\u0065dding'] AS v",
        "MATCH (c:Chunk) RETURN c['emb' + 'edding'] AS v",
        "MATCH (c:Chunk) RETURN c[toLower('EMBEDDING')] AS v",
        "MATCH (c:Chunk) UNWIND keys(c) AS k RETURN c[k] AS v",
        "MATCH (c:Chunk) RETURN properties(c) AS v",
        "MATCH (c:Chunk) RETURN toString(properties(c)) AS v",
        "MATCH (c:Chunk) RETURN c {.*} AS v",
        "MATCH (c:Chunk) RETURN c {.id, .*} AS v",
        "MATCH (c:Chunk) RETURN c.embeddingNext AS v",
        "MATCH (c:Chunk) RETURN vector.similarity.cosine(c.embedding, $v) AS score",
        "MATCH (c:Chunk) WITH c.embedding AS e RETURN size(e) AS n",
    ],
)
def test_a_read_of_a_stored_vector_is_vector_not_readable(cypher: str) -> None:
    assert refusal(cypher) == "vector-not-readable"


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (c:Chunk) RETURN c AS chunk, keys(c) AS names",
        "MATCH (c:Chunk) RETURN c.text AS text, c['text'] AS same, c[$key] AS given",
        "MATCH (d:Document) RETURN labels(d)[0] AS label, split(d.title, ' ')[-1] AS last, d.tags[1..3] AS some",
        "RETURN [1, 2, 3][1] AS x, [1, 2, 3][$i + 1] AS y, range(1, 10)[..2] AS z",
        "MATCH (d:Document) WHERE d.title CONTAINS 'embeddings' RETURN d.id",
        "MATCH (c:Chunk) RETURN c.embeddingSetId AS set",
    ],
)
def test_reads_that_cannot_reach_a_vector_pass(cypher: str) -> None:
    GATE.check(cypher)
    check_vector_reads(cypher, VECTORS)


def test_the_vector_names_are_the_given_ones() -> None:
    check_vector_reads("MATCH (c:Chunk) RETURN c.embedding AS v", ("vector",))
    with pytest.raises(QueryRefused):
        check_vector_reads("MATCH (c:Chunk) RETURN c.vector AS v", ("vector",))
