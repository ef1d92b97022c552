"""The sandbox for caller- and model-supplied Cypher against the real Neo4j, and the local server's own refusals.

Each attack of the hostile review is refused with its code before anything reaches the
server; the server's plan refuses what a text gate could miss; a keyword inside a string
refuses nothing; rows, lists and strings are bounded and the cuts reported.
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j.exceptions import ClientError, Neo4jError

from graphrag_orm.errors import QueryRefused
from graphrag_orm.localdb import LocalDbSettings
from graphrag_orm.localdb.config import write_config
from graphrag_orm.store import StatementEvent, Store, StoreTransaction
from graphrag_orm.store.gate import CypherGate
from graphrag_orm.store.sandbox import CypherSandbox, SandboxLimits, check_plan
from graphrag_orm.store.store import Plan
from tests.database import TEST_PORT

SANDBOX = CypherSandbox()


class _OpenGate(CypherGate):
    """A text gate that lets everything through, to show what the plan check alone refuses."""

    def check(self, cypher: str) -> None:
        return None


async def refusal(store: Store, cypher: str, sandbox: CypherSandbox = SANDBOX, **parameters: object) -> QueryRefused:
    with pytest.raises(QueryRefused) as refused:
        await sandbox.run(store, cypher, parameters)
    assert "\n" not in refused.value.message
    return refused.value


@pytest.mark.parametrize(
    "attack",
    [
        "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD CSV FROM 'file:///../../../../etc/hostname' AS row RETURN row",
        "SHOW TRANSACTIONS",
        "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
        "SHOW USERS",
        "CALL dbms.listConfig()",
        "CALL /* x */ db.x()",
        "LOAD // x\n CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "RETURN apoc.cypher.runFirstColumnSingle('MATCH (n) RETURN n', {}) AS x",
    ],
)
async def test_each_attack_is_refused_as_not_allowed_before_it_reaches_the_server(
    store: Store, graph: None, attack: str
) -> None:
    events: list[StatementEvent] = []
    remove = store.add_hook(events.append)
    try:
        refused = await refusal(store, attack)
    finally:
        remove()
    assert refused.code == "not-allowed"
    assert events == [], "the text gate refuses before any statement is sent"


class _Counting(http.server.BaseHTTPRequestHandler):
    requests = 0

    def do_GET(self) -> None:
        type(self).requests += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a,b\n1,2\n")

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def loopback_url() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Counting.requests = 0
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


async def test_load_csv_from_a_loopback_url_is_refused_and_the_url_is_never_requested(
    store: Store, graph: None, loopback_url: str
) -> None:
    refused = await refusal(store, f"LOAD CSV FROM '{loopback_url}' AS row RETURN row")
    assert refused.code == "not-allowed"
    # Past the text gate, the server's plan still refuses it, before it runs.
    planned = await refusal(store, f"LOAD CSV FROM '{loopback_url}' AS row RETURN row", CypherSandbox(_OpenGate()))
    assert planned.code == "not-allowed" and "LoadCSV" in planned.message
    assert _Counting.requests == 0


async def test_a_keyword_inside_a_string_literal_refuses_nothing(store: Store, graph: None) -> None:
    await store.execute("CREATE (:Document {id: 'sandbox-doc', title: 'LOAD CSV'})")
    result = await SANDBOX.run(store, "MATCH (d:Document) WHERE d.title = 'LOAD CSV' RETURN d.id")
    assert [row["d.id"] for row in result] == ["sandbox-doc"]


@pytest.mark.parametrize(
    ("cypher", "operator"),
    [
        ("CALL db.labels() YIELD label RETURN label", "ProcedureCall"),
        ("CALL/**/db.labels()", "ProcedureCall"),
        ("LOAD/**/CSV FROM 'file:///etc/passwd' AS row RETURN row", "LoadCSV"),
    ],
)
async def test_the_plan_check_refuses_what_the_server_plans_as_a_procedure_call_or_load_csv(
    store: Store, graph: None, cypher: str, operator: str
) -> None:
    refused = await refusal(store, cypher, CypherSandbox(_OpenGate()))
    assert refused.code == "not-allowed" and operator in refused.message


async def test_the_plan_check_refuses_a_transaction_operator_and_a_command(store: Store, graph: None) -> None:
    async def plans(tx: StoreTransaction) -> list[Plan]:
        return [
            await tx.explain("UNWIND [1] AS i CALL (i) { RETURN i AS j } IN TRANSACTIONS RETURN j"),
            await tx.explain("SHOW TRANSACTIONS"),
        ]

    for plan in await store.read_work(plans, retry=False):
        with pytest.raises(QueryRefused) as refused:
            check_plan(Plan("r", plan.operators))
        assert refused.value.code == "not-allowed", plan


async def test_a_query_that_may_write_is_not_read_only_and_writes_nothing(store: Store, graph: None) -> None:
    await store.execute("CREATE (:Document {id: 'kept'})")
    refused = await refusal(store, "MATCH (d:Document) SET d.pwned = true RETURN d.id")
    assert refused.code == "not-read-only"
    opened = await refusal(store, "CREATE (:Intruder) RETURN 1 AS one", CypherSandbox(_OpenGate()))
    assert opened.code == "not-read-only"
    counts = await store.read(
        "MATCH (d:Document) WHERE d.pwned OPTIONAL MATCH (i:Intruder) RETURN count(d) + count(i) AS n"
    )
    assert counts.value("n") == 0


async def test_a_query_the_server_cannot_plan_is_an_invalid_query(store: Store, graph: None) -> None:
    refused = await refusal(store, "MATCH (n RETURN n")
    assert refused.code == "invalid-query"
    assert "Neo.ClientError" in refused.message


async def test_a_failure_while_it_runs_is_query_failed(store: Store, graph: None) -> None:
    assert (await refusal(store, "RETURN 1 / $zero AS x", zero=0)).code == "query-failed"


async def test_the_servers_transaction_timeout_is_query_timeout(store: Store, graph: None) -> None:
    # Streamed row by row (UNWIND is exempt from the range bound): the server's timeout holds between rows.
    slow = "UNWIND range(1, 1000000000) AS i WITH i WHERE i < 0 RETURN count(i) AS n"
    with pytest.raises(QueryRefused) as refused:
        await SANDBOX.run(store, slow, limits=SandboxLimits(timeout_seconds=0.5))
    assert refused.value.code == "query-timeout"
    cause = refused.value.__cause__
    assert isinstance(cause, Neo4jError) and cause.code is not None and "TransactionTimedOut" in cause.code


async def test_rows_lists_and_strings_are_bounded_and_the_cuts_reported(store: Store, graph: None) -> None:
    many = await SANDBOX.run(store, "UNWIND range(1, 500) AS i RETURN i", limits=SandboxLimits(max_rows=5))
    assert [row["i"] for row in many] == [1, 2, 3, 4, 5] and many.truncated
    cut = await SANDBOX.run(
        store,
        "RETURN range(1, 20) AS numbers, reduce(s = '', i IN range(1, 30) | s + 'x') AS text, "
        "[i IN range(1, 64) | toFloat(i) / 3] AS vector",
        limits=SandboxLimits(max_list_items=10, max_text_chars=12),
    )
    (row,) = cut.rows
    assert row["numbers"] == list(range(1, 11)) and row["text"] == "x" * 12
    assert row["vector"] == "(vector left out)"
    assert cut.lists_cut and cut.texts_cut and not cut.truncated
    whole = await SANDBOX.run(store, "RETURN range(1, 10) AS numbers, 'short' AS text")
    assert not (whole.lists_cut or whole.texts_cut or whole.truncated)


def _local_test_server() -> bool:
    return os.environ.get("NEO4J_URI") == f"bolt://127.0.0.1:{TEST_PORT}"


async def test_the_local_server_refuses_load_csv_of_a_file_url_even_outside_the_sandbox(
    store: Store, graph: None
) -> None:
    if not _local_test_server():
        pytest.skip("the suite runs against a server localdb did not configure")
    with pytest.raises(ClientError) as refused:
        await store.execute("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row")
    assert "allow_csv_import_from_file_urls" in str(refused.value)


def test_the_local_server_config_refuses_file_urls_and_imports_from_an_empty_folder(tmp_path: Path) -> None:
    settings = LocalDbSettings(tools_dir=tmp_path, home=tmp_path / "home", port=7999)
    conf = (write_config(settings) / "neo4j.conf").read_text().splitlines()
    assert "dbms.security.allow_csv_import_from_file_urls=false" in conf
    assert f"server.directories.import={settings.home / 'import'}" in conf
    assert (settings.home / "import").is_dir() and not any((settings.home / "import").iterdir())


def test_the_local_server_config_bounds_transaction_memory_below_its_heap(tmp_path: Path) -> None:
    settings = LocalDbSettings(tools_dir=tmp_path, home=tmp_path / "home", port=7999)
    conf = dict(
        line.split("=", 1) for line in (write_config(settings) / "neo4j.conf").read_text().splitlines() if "=" in line
    )
    mebibytes = {"m": 1, "g": 1024}

    def size(text: str) -> int:
        return int(text[:-1]) * mebibytes[text[-1]]

    per_transaction, total = size(conf["db.memory.transaction.max"]), size(conf["dbms.memory.transaction.total.max"])
    assert settings.heap == "1g" and per_transaction <= total < size(settings.heap)


def test_an_extra_setting_replaces_the_base_line_of_its_key(tmp_path: Path) -> None:
    settings = LocalDbSettings(
        tools_dir=tmp_path,
        home=tmp_path / "home",
        port=7999,
        heap="4g",
        extra_config=(("db.memory.transaction.max", "3g"), ("db.logs.query.enabled", "OFF")),
    )
    conf = (write_config(settings) / "neo4j.conf").read_text().splitlines()
    assert [line for line in conf if line.startswith("db.memory.transaction.max=")] == ["db.memory.transaction.max=3g"]
    assert "db.logs.query.enabled=OFF" in conf and "dbms.memory.transaction.total.max=640m" in conf
