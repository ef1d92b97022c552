"""The sandbox's pure gates: the text gate (each attack refused with its code, nothing legitimate) and the plan check."""

from __future__ import annotations

import pytest

from graphrag_orm.errors import ConfigurationError, QueryRefused
from graphrag_orm.store.gate import CypherGate, code_of
from graphrag_orm.store.sandbox import check_plan
from graphrag_orm.store.store import Plan

GATE = CypherGate()


def refusal(cypher: str, gate: CypherGate = GATE) -> str:
    with pytest.raises(QueryRefused) as refused:
        gate.check(cypher)
    assert "\n" not in refused.value.message
    return refused.value.code


@pytest.mark.parametrize(
    "cypher",
    [
        "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD CSV FROM 'file:///../../../../etc/hostname' AS row RETURN row",
        "LOAD CSV FROM 'http://127.0.0.1:8080/' AS row RETURN row",
        "load csv with headers from 'file:///x' as row return row",
        "MATCH (d:Document) WITH d LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "CALL { LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row } RETURN row",
        "SHOW TRANSACTIONS",
        "SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery",
        "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
        "SHOW USERS",
        "SHOW DATABASES",
        "CALL dbms.listConfig()",
        "CALL dbms.listConfig() YIELD name RETURN name",
        "CALL db.labels",
        "MATCH (n) CALL db.labels() YIELD label RETURN label",
        "OPTIONAL CALL db.labels() YIELD label RETURN label",
        "CALL /* x */ db.x()",
        "CALL/**/db.labels()",
        "LOAD // x\n CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD/**/CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD // x\r CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD // x\u2028 CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) DETACH DELETE n', {}) AS x",
        "RETURN `apoc`.`cypher`.run('RETURN 1') AS x",
        "RETURN `apoc.cypher.run`('RETURN 1') AS x",
        "RETURN apoc . text . join(['a'], '') AS x",
        "RETURN apoc/**/.text.join(['a'], '') AS x",
        "RETURN my.plugin.fn() AS x",
        "RETURN db.nameFromElementId('x') AS x",
        "RETURN vector.other(1) AS x",
        "USE system MATCH (n) RETURN n",
        "MATCH (n) CALL { USE neo4j MATCH (m) RETURN m } RETURN n",
        "MATCH (n) CALL (n) { WITH n RETURN n.id AS id } IN TRANSACTIONS RETURN id",
        "CREATE (:Intruder) RETURN 1 AS one",
        "MERGE (n:Intruder) RETURN n",
        "EXPLAIN MATCH (n) RETURN n",
        "PROFILE MATCH (n) RETURN n",
        "CYPHER runtime=slotted MATCH (n) RETURN n",
        "CYPHER 25 SHOW TRANSACTIONS",
        "RETURN 1 AS one; MATCH (n) DETACH DELETE n",
        "RETURN 1 AS one; SHOW USERS",
        "RETURN 1 AS x UNION SHOW USERS",
        "MATCH (n) RETURN n.id AS id UNION ALL CREATE (m) RETURN m.id AS id",
        "CALL { CREATE (x) RETURN x } RETURN x",
        "MATCH (n) WHERE EXISTS { SHOW TRANSACTIONS } RETURN n",
        "WHEN true THEN RETURN 1 AS x",
        "MATCH (n) RETURN n.id AS call",
        "FOREACH (x IN [1] | CREATE ())",
    ],
)
def test_each_attack_is_refused_as_not_allowed(cypher: str) -> None:
    assert refusal(cypher) == "not-allowed"


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (d:Document) WHERE d.title = 'LOAD CSV' RETURN d.id",
        'MATCH (d:Document) WHERE d.title = "CALL db.labels()" RETURN d.id',
        "MATCH (d:Document) WHERE d.title = 'it\\'s LOAD CSV; SHOW USERS' RETURN d.id AS documentId",
        "MATCH (d:Document) // LOAD CSV FROM 'file:///etc/passwd'\nRETURN d.id AS documentId",
        "MATCH (d:Document) /* CALL db.labels() */ RETURN d.id AS documentId",
        "MATCH (d:Document) RETURN d.id AS documentId;",
        "CYPHER 25 MATCH (d:Document) RETURN d.id AS documentId",
        "OPTIONAL MATCH (d:Document) RETURN d.id AS documentId",
        "WITH 1 AS x RETURN x",
        "UNWIND $chunkIds AS id MATCH (c:Chunk {id: id})-[:IN_DOCUMENT]->(d:Document) RETURN id AS chunkId",
        "RETURN range(1, 1000) AS numbers, 'short' AS text",
        "RETURN reduce(s = '', i IN range(1, 12) | s + 'abcdefghij') AS text",
        "MATCH (d:Document) WHERE d.title = $title RETURN d.id AS documentId",
        "MATCH (d:Document) RETURN d.id AS documentId ORDER BY documentId DESC",
        "CALL { MATCH (d:Document) RETURN d } RETURN d.id AS documentId",
        "MATCH (d:Document) CALL (d) { MATCH (c:Chunk {documentId: d.id}) RETURN count(c) AS n } RETURN d.id, n",
        "OPTIONAL CALL { MATCH (d:Document) RETURN d } RETURN d.id AS documentId",
        "MATCH (d:Document) WHERE EXISTS { (d)<-[:IN_DOCUMENT]-(:Chunk) } RETURN d.id AS documentId",
        "MATCH (d:Document) WHERE COUNT { MATCH (d)<-[:IN_DOCUMENT]-(c) RETURN c } > 2 RETURN d.id",
        "MATCH (d:Document) RETURN COLLECT { MATCH (d)<--(c:Chunk) RETURN c.id } AS ids",
        "MATCH (d:Document) WHERE EXISTS { p = (d)<--() } RETURN d.id",
        "MATCH (a:Document) RETURN a.id AS id UNION MATCH (b:Section) RETURN b.id AS id",
        "MATCH (a:Document) RETURN a.id AS id UNION ALL MATCH (b:Section) RETURN b.id AS id",
        "MATCH (c:Chunk) RETURN vector.similarity.cosine(c.embedding, $v) AS score",
        "RETURN date.truncate('month', date()) AS d, duration.between(date(), date()) AS span",
        "RETURN datetime.fromepoch(0) AS t, point.distance(point({x: 0, y: 0}), point({x: 1, y: 1})) AS d",
        "RETURN coll.sort([3, 1, 2]) AS sorted",
        "MATCH (n) RETURN n.use AS u, n.call AS c, n {.load, .show} AS m, {use: 1, transactions: 2} AS map",
        "MATCH (use:Thing) RETURN use.id AS id",
        "MATCH (n:`LOAD CSV`) RETURN n.`CALL db.labels()` AS `SHOW USERS`",
        "WITH 1 AS `call` RETURN `call`",
        "MATCH p = (a)-[*1..3]->(b) RETURN length(p), [x IN nodes(p) | x.id][0..2] AS ids",
        "RETURN 1.5e3 AS n, 0x1F AS h, .5 AS half, -1 AS neg",
        "MATCH (d:Document) RETURN count(*) AS n, toLower(d.title) AS t, exists(d.title) AS e",
        "MATCH (d:Document) RETURN CASE WHEN d.title IS NULL THEN 'none' ELSE d.title END AS title",
        "MATCH (c:Chunk) SEARCH c IN (VECTOR INDEX chunks FOR $v LIMIT 5) SCORE AS score RETURN c.id, score",
        "RETURN 'Zürich ☕' AS café",
    ],
)
def test_a_legitimate_read_passes(cypher: str) -> None:
    GATE.check(cypher)


@pytest.mark.parametrize(
    "cypher",
    ["", "   ", "// only a comment", "/* unterminated", "RETURN 'unterminated", "RETURN `unterminated", ";"],
)
def test_text_that_is_not_a_query_is_an_invalid_query(cypher: str) -> None:
    assert refusal(cypher) == "invalid-query"


def test_the_code_has_comments_blanked_strings_emptied_and_names_unquoted() -> None:
    code = code_of("MATCH (d:`My Label`) // LOAD CSV\nWHERE d.title = 'CALL db.x()' /* SHOW */ RETURN d.`a``b`")
    assert code == "MATCH ( d : My Label ) WHERE d . title = '' RETURN d . a`b"


def test_a_query_over_the_length_bound_is_refused() -> None:
    gate = CypherGate(max_chars=100)
    gate.check("RETURN " + "1" * 93)
    refused = refusal("RETURN " + "1" * 94, gate)
    assert refused == "not-allowed"


def test_the_length_bound_has_a_maximum() -> None:
    with pytest.raises(ConfigurationError) as refused:
        CypherGate(max_chars=1_000_000)
    assert refused.value.code == "invalid-option"


@pytest.mark.parametrize(
    ("plan", "code"),
    [
        (Plan("rw", ("ProduceResults", "SetProperty", "AllNodesScan")), "not-read-only"),
        (Plan("w", ("ProduceResults", "Create")), "not-read-only"),
        (Plan("s", ("CreateIndex",)), "not-read-only"),
        (Plan(None, ()), "not-read-only"),
        (Plan("r", ("ProduceResults", "ProcedureCall")), "not-allowed"),
        (Plan("r", ("ProduceResults", "LoadCSV")), "not-allowed"),
        (Plan("r", ("ProduceResults", "TransactionApply", "Argument")), "not-allowed"),
        (Plan("r", ("ShowTransactions",)), "not-allowed"),
        (Plan("r", ("TerminateTransactions",)), "not-allowed"),
    ],
)
def test_the_plan_check_refuses_a_plan_that_may_write_or_reaches_past_the_graph(plan: Plan, code: str) -> None:
    with pytest.raises(QueryRefused) as refused:
        check_plan(plan)
    assert refused.value.code == code


def test_the_plan_check_passes_a_read_only_plan() -> None:
    check_plan(Plan("r", ("ProduceResults", "Filter", "NodeByLabelScan")))
