"""What a graph answer's rows may hold, against the real Neo4j: plain JSON data, never a vector.

Dates, times, durations and points come back as text; a node or relationship as its
properties without the embedding; a list of more than 32 numbers with a fractional one
is left out wherever it stands; long lists and strings are cut and each cut reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from graphrag_orm.chat import ScriptedChat
from graphrag_orm.codes import GraphRefusal, LimitName
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from graphrag_orm.store.sandbox import CypherSandbox, SandboxResult
from graphrag_orm.text2cypher import GraphAnswer, GraphQuestions, Text2CypherOptions
from graphrag_orm.values import Limit

MODEL = for_layout(Layout.DEFAULT)
VECTOR_LEFT_OUT = "(vector left out)"


@pytest.fixture
async def chunks(store: Store, graph: None) -> AsyncIterator[None]:
    """Two documents whose chunks carry 256-dimensional embeddings."""
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    receipt = await ingestion.ingest(
        [
            Sources.text("a", "Tyres wear faster on gravel.\n\nCheck them weekly."),
            Sources.text("b", "Brakes need care."),
        ]
    )
    assert receipt.failed == 0
    yield


async def rows_of(store: Store, cypher: str, options: Text2CypherOptions | None = None) -> GraphAnswer:
    chat = ScriptedChat(lambda request: json.dumps({"cypher": cypher}))
    answer = await GraphQuestions(store, MODEL, chat, options).ask("What does the graph hold?")
    assert answer.answered, answer.message
    json.dumps([dict(row) for row in answer.rows], allow_nan=False)  # plain JSON data, nothing else
    return answer


def numeric_lists_longer_than_32(value: Any) -> list[list[Any]]:
    """Every list of more than 32 numbers anywhere in ``value``."""
    if isinstance(value, dict):
        return [found for v in value.values() for found in numeric_lists_longer_than_32(v)]
    if isinstance(value, list):
        if len(value) > 32 and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return [value]
        return [found for v in value for found in numeric_lists_longer_than_32(v)]
    return []


async def test_match_chunk_return_chunk_never_returns_a_vector(store: Store, chunks: None) -> None:
    answer = await rows_of(store, "MATCH (c:Chunk) RETURN c ORDER BY c.documentId, c.order")
    assert len(answer.rows) >= 2
    for row in answer.rows:
        chunk = row["c"]
        assert "embedding" not in chunk and chunk["text"] and chunk["embeddingSetId"]
    assert numeric_lists_longer_than_32(list(answer.rows)) == []


NAMING_THE_VECTOR = [
    "MATCH (c:Chunk) RETURN c.embedding AS vector",
    "MATCH (c:Chunk) RETURN c {.*} AS chunk",
    "MATCH (c:Chunk) RETURN collect(c.embedding) AS vectors",
    "MATCH (c:Chunk) RETURN {outer: [{inner: c.embedding}]} AS nested",
    "MATCH (c:Chunk) RETURN properties(c) AS map",
]


class _UncheckedSandbox(CypherSandbox):
    """The sandbox without its vector-name checks: the output filter, the second layer, alone."""

    def check(self, cypher: str, parameters: Mapping[str, Any] | None = None) -> None:
        self.gate.check(cypher)


async def unchecked_rows(store: Store, cypher: str) -> SandboxResult:
    return await _UncheckedSandbox(vector_indexes=False).run(store, cypher)


@pytest.mark.parametrize("cypher", NAMING_THE_VECTOR)
async def test_a_query_reading_the_embedding_is_refused_as_vector_not_readable(
    store: Store, chunks: None, cypher: str
) -> None:
    chat = ScriptedChat(lambda request: json.dumps({"cypher": cypher}))
    answer = await GraphQuestions(store, MODEL, chat).ask("What does the graph hold?")
    assert answer.refusal == GraphRefusal.VECTOR_NOT_READABLE and not answer.rows


@pytest.mark.parametrize("cypher", [*NAMING_THE_VECTOR, "MATCH p = (:Chunk)-[:IN_DOCUMENT]->(:Document) RETURN p"])
async def test_behind_the_gate_an_embedding_is_left_out_wherever_the_query_puts_it(
    store: Store, chunks: None, cypher: str
) -> None:
    result = await unchecked_rows(store, cypher)
    assert result.rows and numeric_lists_longer_than_32(list(result.rows)) == []


async def test_behind_the_gate_a_returned_vector_is_marked_as_left_out(store: Store, chunks: None) -> None:
    result = await unchecked_rows(store, "MATCH (c:Chunk) RETURN c.embedding AS vector, c {.*} AS chunk LIMIT 1")
    (row,) = result.rows
    assert row["vector"] == VECTOR_LEFT_OUT and row["chunk"]["embedding"] == VECTOR_LEFT_OUT


async def test_the_layouts_embedding_property_is_left_out_of_a_node_however_short(store: Store, graph: None) -> None:
    await store.execute("CREATE (:Chunk {id: 'tiny', embedding: [0.5, 0.25, 0.125, 1.0], text: 't'})")
    answer = await rows_of(store, "MATCH (c:Chunk {id: 'tiny'}) RETURN c")
    assert answer.rows == ({"c": {"id": "tiny", "text": "t"}},)


async def test_a_long_numeric_list_with_one_fractional_value_is_a_vector_whatever_its_mix(store: Store) -> None:
    answer = await rows_of(
        store,
        "RETURN [i IN range(1, 40) | CASE WHEN i = 7 THEN 7.5 ELSE i END] AS mixed, "
        "[i IN range(1, 40) | toFloat(i)] AS whole_floats, range(1, 40) AS integers, "
        "[i IN range(1, 32) | i / 3.0] AS thirty_two, [i IN range(1, 40) | toString(i)] AS strings",
    )
    (row,) = answer.rows
    assert row["mixed"] == VECTOR_LEFT_OUT
    assert row["whole_floats"] == [float(i) for i in range(1, 41)], "no fractional value: not an embedding"
    assert row["integers"] == list(range(1, 41)) and len(row["thirty_two"]) == 32 and len(row["strings"]) == 40


async def test_a_node_keeps_no_numeric_list_property_longer_than_32_but_keeps_other_lists(
    store: Store, graph: None
) -> None:
    await store.execute(
        "CREATE (:Document {id: 'pages', pageStarts: range(0, 39), tags: [i IN range(1, 40) | 't' + i], "
        "short: [0.5, 1.5]})"
    )
    answer = await rows_of(store, "MATCH (d:Document {id: 'pages'}) RETURN d, d.pageStarts AS starts")
    (row,) = answer.rows
    assert "pageStarts" not in row["d"] and len(row["d"]["tags"]) == 40 and row["d"]["short"] == [0.5, 1.5]
    assert row["starts"] == list(range(40)), "returned on its own, a list of integers is kept"


async def test_dates_times_durations_and_points_come_back_as_text(store: Store) -> None:
    values = (
        "date('2026-03-01') AS day, datetime('2026-03-01T10:15:30.5+01:00') AS at, "
        "localdatetime('2026-03-01T10:15:30') AS local_at, time('10:15:30+02:00') AS clock, "
        "localtime('10:15:30') AS local_clock, duration('P1Y2M3DT4H5M6.5S') AS span, "
        "point({x: 1, y: 2}) AS flat, point({longitude: 1.5, latitude: 2.5, height: 10}) AS place"
    )
    answer = await rows_of(store, f"RETURN {values}")
    (row,) = answer.rows
    assert row["day"] == "2026-03-01"
    assert row["at"] == "2026-03-01T10:15:30.500000000+01:00" and row["local_at"] == "2026-03-01T10:15:30.000000000"
    assert row["clock"] == "10:15:30.000000000+02:00" and row["local_clock"] == "10:15:30.000000000"
    # Durations and points read as Cypher's own toString writes them.
    texts = await rows_of(
        store,
        f"WITH {values.replace(' AS ', ' AS _')} RETURN toString(_span) AS span, "
        "toString(_flat) AS flat, toString(_place) AS place",
    )
    (server,) = texts.rows
    assert row["span"] == server["span"] == "P1Y2M3DT4H5M6.5S"
    assert row["flat"] == server["flat"] and row["place"] == server["place"]
    assert row["place"] == "point({x: 1.5, y: 2.5, z: 10.0, crs: 'wgs-84-3d'})"


async def test_a_stored_datetime_and_a_byte_array_are_text(store: Store, chunks: None) -> None:
    await store.execute("CREATE (:Blob {data: $data})", {"data": b"\x00\x01binary"})
    answer = await rows_of(
        store, "MATCH (d:Document) WITH d ORDER BY d.sourceUri LIMIT 1 MATCH (b:Blob) RETURN d.ingestedAt AS at, b"
    )
    (row,) = answer.rows
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d)", row["at"]), row["at"]
    assert row["b"] == {"data": "(bytes left out)"}


async def test_long_lists_and_strings_are_cut_and_each_cut_reported(store: Store) -> None:
    options = Text2CypherOptions(max_list_items=10, max_text_chars=12)
    answer = await rows_of(
        store,
        "RETURN range(1, 20) AS numbers, reduce(s = '', i IN range(1, 30) | s + 'x') AS text, "
        "{inner: [reduce(s = '', i IN range(1, 30) | s + 'y')]} AS nested",
        options,
    )
    (row,) = answer.rows
    assert row["numbers"] == list(range(1, 11)) and row["text"] == "x" * 12 and row["nested"] == {"inner": ["y" * 12]}
    assert answer.limits_reached == (
        Limit(name=LimitName.GRAPH_QUERY_LIST_ITEMS, value=10),
        Limit(name=LimitName.GRAPH_QUERY_TEXT, value=12),
    )
    whole = await rows_of(store, "RETURN range(1, 10) AS numbers, 'twelve chars' AS text", options)
    assert whole.limits_reached == ()
