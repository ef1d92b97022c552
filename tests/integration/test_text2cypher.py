"""``rag.graph.ask`` against the real Neo4j with a scripted model: every gate refuses what it should.

The model is a ``ScriptedChat`` that replies with the query a test names, so each
attack reaches the gates exactly as a model's reply would: through the reply reader, the
text gate, EXPLAIN's checks and the read transaction. Nothing is mocked.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from graphrag_orm.chat import ScriptedChat
from graphrag_orm.codes import GraphRefusal, LimitName
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.facade import GraphRag
from graphrag_orm.sources import Sources
from graphrag_orm.store import StatementEvent, Store
from graphrag_orm.store.gate import CypherGate
from graphrag_orm.text2cypher import GraphAnswer, GraphQuestions, Text2CypherOptions
from graphrag_orm.values import Limit

PAGES = {
    "tyres": "Tyres wear faster on gravel. Check the pressure every week.",
    "brakes": "Brake pads last about two thousand kilometres. The BC-310 caliper needs care.",
}


class Model:
    """The scripted model: replies with ``{"cypher": <the next query>}``, and ``insufficient`` when set."""

    def __init__(self) -> None:
        self.cypher = "RETURN 1 AS one"
        self.insufficient: str | None = None
        self.chat = ScriptedChat(lambda request: json.dumps({"cypher": self.cypher, "insufficient": self.insufficient}))


class _OpenGate(CypherGate):
    """A text gate that lets everything through, to show what the server's plan alone refuses."""

    def check(self, cypher: str) -> None:
        return None


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
async def rag(store: Store, graph: None, model: Model) -> AsyncIterator[GraphRag]:
    """A facade with Text2Cypher enabled, on the suite's database, holding two small documents."""
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=model.chat,
        text2cypher=Text2CypherOptions(),
    )
    rag.store.bind(store.driver, store.database)
    receipt = await rag.ingestion.ingest([Sources.text(name, text) for name, text in PAGES.items()])
    assert receipt.failed == 0
    yield rag


async def ask(rag: GraphRag, model: Model, cypher: str, question: str = "A question about the graph?") -> GraphAnswer:
    model.cypher = cypher
    assert rag.graph is not None
    answer = await rag.graph.ask(question)
    assert "\n" not in answer.message
    return answer


async def graph_counts(store: Store) -> tuple[int, int]:
    row = (
        await store.read("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS n, count(r) AS r")
    ).single()
    assert row is not None
    return row["n"], row["r"]


TEXT_GATE_REFUSALS = [
    "CREATE (:Intruder) RETURN 1 AS one",
    "MERGE (n:Intruder) RETURN n",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "CALL db.labels()",
    "CALL/**/db.labels()",
    "LOAD/**/CSV FROM 'http://127.0.0.1:9/' AS row RETURN row",
    "RETURN apoc.text.join(['a', 'b'], '') AS joined",
    "USE system MATCH (n) RETURN n",
    "MATCH (c:Chunk) CALL (c) { RETURN c.id AS id } IN TRANSACTIONS RETURN id",
    "SHOW TRANSACTIONS",
    "SHOW USERS",
    "MATCH (d:Document) RETURN d.id; MATCH (c:Chunk) DETACH DELETE c",
]


@pytest.mark.parametrize("cypher", TEXT_GATE_REFUSALS)
async def test_the_text_gate_refuses_each_attack_before_anything_reaches_the_server(
    rag: GraphRag, model: Model, store: Store, cypher: str
) -> None:
    before = await graph_counts(store)
    events: list[StatementEvent] = []
    remove = rag.store.add_hook(events.append)
    try:
        answer = await ask(rag, model, cypher)
    finally:
        remove()
    assert answer.refusal == GraphRefusal.NOT_ALLOWED, answer.message
    assert answer.query == cypher and answer.rows == () and not answer.answered
    assert events == [], "the text gate refuses before any statement is sent"
    assert await graph_counts(store) == before


async def test_a_detach_delete_after_match_is_planned_as_a_write_refused_and_deletes_nothing(
    rag: GraphRag, model: Model, store: Store
) -> None:
    before = await graph_counts(store)
    answer = await ask(rag, model, "MATCH (n) DETACH DELETE n")
    assert answer.refusal == GraphRefusal.NOT_READ_ONLY and answer.message.endswith("not read-only")
    assert await graph_counts(store) == before and before[0] > 0


async def test_a_query_over_max_query_chars_is_not_allowed(rag: GraphRag, model: Model, store: Store) -> None:
    graph = GraphQuestions(rag.store, rag.model, model.chat, Text2CypherOptions(max_query_chars=40))
    model.cypher = "MATCH (d:Document) WHERE d.title = 'a long title' RETURN d.id AS id"
    answer = await graph.ask("Which document has a long title?")
    assert answer.refusal == GraphRefusal.NOT_ALLOWED and "the bound is 40" in answer.message


async def test_a_syntax_error_is_an_invalid_query_with_the_servers_status_code(rag: GraphRag, model: Model) -> None:
    answer = await ask(rag, model, "MATCH (d:Document RETURN d.title")
    assert answer.refusal == GraphRefusal.INVALID_QUERY
    assert "Neo.ClientError.Statement.SyntaxError" in answer.message and "title" not in answer.message


async def test_a_write_the_text_gate_lets_through_is_not_read_only_and_writes_nothing(
    rag: GraphRag, model: Model, store: Store
) -> None:
    answer = await ask(rag, model, "MATCH (d:Document) SET d.pwned = true RETURN d.id AS id")
    assert answer.refusal == GraphRefusal.NOT_READ_ONLY
    assert (await store.read("MATCH (d:Document) WHERE d.pwned RETURN count(d) AS n")).value("n") == 0


@pytest.mark.parametrize(
    ("cypher", "operator"),
    [
        ("CALL db.labels() YIELD label RETURN label", "ProcedureCall"),
        ("CALL/**/db.labels()", "ProcedureCall"),
        ("LOAD/**/CSV FROM 'http://127.0.0.1:9/' AS row RETURN row", "LoadCSV"),
    ],
)
async def test_the_servers_plan_refuses_what_a_weaker_gate_let_through(
    rag: GraphRag, model: Model, cypher: str, operator: str
) -> None:
    graph = GraphQuestions(rag.store, rag.model, model.chat, gate=_OpenGate())
    model.cypher = cypher
    answer = await graph.ask("What does the server hold?")
    assert answer.refusal == GraphRefusal.NOT_ALLOWED and operator in answer.message


async def test_a_keyword_inside_a_string_literal_refuses_nothing(rag: GraphRag, model: Model, store: Store) -> None:
    await store.execute("CREATE (:Document {id: 'literal', title: 'LOAD CSV; CALL db.labels() // USE system'})")
    answer = await ask(
        rag, model, "MATCH (d:Document) WHERE d.title = 'LOAD CSV; CALL db.labels() // USE system' RETURN d.id AS id"
    )
    assert answer.answered, answer.message
    assert answer.rows == ({"id": "literal"},)


async def test_the_row_cap_stops_an_enormous_result_quickly_and_reports_it(rag: GraphRag, model: Model) -> None:
    began = time.monotonic()
    answer = await ask(rag, model, "UNWIND range(1, 100000000) AS n RETURN n")
    seconds = time.monotonic() - began
    assert answer.answered and [row["n"] for row in answer.rows] == list(range(1, 51))
    assert answer.limits_reached == (Limit(name=LimitName.GRAPH_QUERY_ROWS, value=50),)
    assert answer.message == "the query returned 50 rows (more were there)"
    assert seconds < 5, f"the cap read {seconds:.1f} s: it must not read the whole result"


async def test_exactly_max_rows_is_not_a_limit_reached(rag: GraphRag, model: Model) -> None:
    answer = await ask(rag, model, "UNWIND range(1, 50) AS n RETURN n")
    assert len(answer.rows) == 50 and answer.limits_reached == ()


async def test_a_timeout_is_query_timeout(rag: GraphRag, model: Model) -> None:
    graph = GraphQuestions(rag.store, rag.model, model.chat, Text2CypherOptions(timeout_seconds=0.5))
    model.cypher = "UNWIND range(1, 1000000000) AS i WITH i WHERE i < 0 RETURN count(i) AS n"
    began = time.monotonic()
    answer = await graph.ask("How many negative numbers are there?")
    assert answer.refusal == GraphRefusal.QUERY_TIMEOUT and "timeout" in answer.message
    assert time.monotonic() - began < 10, "never retried past the timeout"


async def test_a_server_error_while_it_runs_is_query_failed_without_the_querys_values(
    rag: GraphRag, model: Model
) -> None:
    answer = await ask(rag, model, "UNWIND [1, 0] AS d RETURN 7919 / d AS x")
    assert answer.refusal == GraphRefusal.QUERY_FAILED and "7919" not in answer.message


async def test_an_answer_holds_the_query_columns_rows_and_receipt(rag: GraphRag, model: Model) -> None:
    answer = await ask(
        rag,
        model,
        "MATCH (c:Chunk)-[:IN_DOCUMENT]->(d:Document) RETURN d.id AS document, count(c) AS chunks ORDER BY document",
    )
    assert answer.answered and answer.refusal is None and answer.columns == ("document", "chunks")
    assert [row["document"] for row in answer.rows] == sorted(row["document"] for row in answer.rows)
    assert answer.message == "the query returned 2 rows"
    assert answer.receipt.chat_calls == 1 and answer.receipt.input_tokens is None
    document = json.loads(answer.to_json())
    assert document["columns"] == ["document", "chunks"] and document["refusal"] is None


async def test_a_query_beside_a_decline_runs_and_answers(rag: GraphRag, model: Model) -> None:
    model.insufficient = "The graph may not say."
    answer = await ask(rag, model, "MATCH (d:Document) RETURN count(d) AS documents")
    assert answer.answered and answer.rows == ({"documents": 2},)
    assert answer.query == "MATCH (d:Document) RETURN count(d) AS documents"


async def test_a_declined_query_the_server_cannot_plan_is_kept_as_not_run(rag: GraphRag, model: Model) -> None:
    model.insufficient = "The graph may not say."
    answer = await ask(rag, model, "MATCH (d:Document RETURN d")
    assert answer.refusal == GraphRefusal.MODEL_DECLINED and answer.query == "MATCH (d:Document RETURN d"
    assert "its query was not run (invalid-query: " in answer.message and answer.rows == ()


async def test_a_property_label_or_type_the_graph_never_held_is_unknown_name_not_nulls(
    rag: GraphRag, model: Model, caplog: pytest.LogCaptureFixture
) -> None:
    guess = f"price{uuid.uuid4().hex[:8]}"  # a name no test of the suite ever stored
    cypher = f"MATCH (d:Document) RETURN d.{guess} AS price"
    with caplog.at_level(logging.DEBUG, logger="neo4j.notifications"):
        answer = await ask(rag, model, cypher)
    assert answer.refusal == GraphRefusal.UNKNOWN_NAME and answer.rows == () and answer.query == cypher
    assert answer.message == (
        f"the query names property `{guess}`, which the graph has never held and the schema does not declare"
    )
    # The driver logs each notice with the query's text; none of those records is kept.
    assert not [r for r in caplog.records if r.name == "neo4j.notifications" or guess in r.getMessage()]
    answer = await ask(rag, model, f"MATCH (r:Recall{guess[-8:]})-[:RECALLS_{guess[-8:]}]->(d:Document) RETURN d.id")
    assert answer.refusal == GraphRefusal.UNKNOWN_NAME
    assert (
        f"label `Recall{guess[-8:]}`" in answer.message
        and f"relationship type `RECALLS_{guess[-8:]}`" in answer.message
    )


async def test_names_the_graph_holds_run_and_a_declined_guess_stays_declined(rag: GraphRag, model: Model) -> None:
    answer = await ask(rag, model, "MATCH (c:Chunk)-[:IN_DOCUMENT]->(d:Document) RETURN count(c.text) AS chunks")
    assert answer.answered and answer.rows == ({"chunks": 2},)
    model.insufficient = "The graph holds no prices."
    answer = await ask(rag, model, f"MATCH (d:Document) RETURN d.price{uuid.uuid4().hex[:8]}")
    assert answer.refusal == GraphRefusal.MODEL_DECLINED and "its query was not run (unknown-name: " in answer.message


async def test_a_callers_sandbox_still_reads_an_unknown_property_as_null(store: Store, graph: None) -> None:
    from graphrag_orm.store.sandbox import CypherSandbox

    result = await CypherSandbox().run(store, f"RETURN {{}}.zz{uuid.uuid4().hex[:8]} AS nothing")
    assert result.rows == ({"nothing": None},)


def test_the_sync_twin_asks_the_same_way(graph: None) -> None:
    chat = ScriptedChat(lambda request: json.dumps({"cypher": "UNWIND [2, 1] AS n RETURN n ORDER BY n"}))
    rag = GraphRag(
        embedding_set=OFFLINE_EMBEDDING_SET,
        embedder=HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        chat=chat,
        text2cypher=Text2CypherOptions(),
    )
    # The twin runs on its own loop, so it opens its own driver (NEO4J_* of the suite).
    with rag.sync().connect(check_schema=False, neomodel=False) as sync_rag:
        answer = sync_rag.graph.ask("Which numbers?")
    assert answer.rows == ({"n": 1}, {"n": 2}) and chat.call_count == 1
