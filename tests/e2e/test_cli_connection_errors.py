"""Bad connection settings, as a user meets them: the real CLI in a subprocess.

Each case ends with exit code 1 and one line on stderr carrying the stable code, never
a traceback and never the password or the API key.
"""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

from graphrag_orm.store.connection import ConnectionSettings
from tests.e2e.test_cli import QUICKSTART, cli

PASSWORD = "pw-that-must-never-show-7f3a"
API_KEY = "sk-key-that-must-never-show-9c1e"
LIVE = {"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai-compatible"}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _refused(result: subprocess.CompletedProcess[str], code: str, *secrets: str) -> str:
    """The one error line, after checking exit code, code, and that no trace or secret shows."""
    everything = result.stdout + result.stderr
    assert result.returncode == 1, everything
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"({code})" in lines[0], result.stderr
    assert "Traceback" not in everything
    for secret in secrets:
        assert secret not in everything
    return lines[0]


@pytest.mark.parametrize("command", [["documents"], ["migrations", "status"]])
def test_a_neo4j_uri_that_is_not_bolt_is_invalid_uri(command: list[str]) -> None:
    line = _refused(
        cli(*command, env={"NEO4J_URI": f"http://neo4j:{PASSWORD}@localhost:7474", "NEO4J_PASSWORD": PASSWORD}),
        "invalid-uri",
        PASSWORD,
    )
    assert "bolt" in line


def test_a_database_name_the_server_does_not_have_is_database_not_found(neo4j_settings: ConnectionSettings) -> None:
    line = _refused(cli("documents", env={"NEO4J_DATABASE": "nope"}), "database-not-found", neo4j_settings.password)
    assert "'nope'" in line and "NEO4J_DATABASE" in line


def test_a_wrong_password_is_auth_failed_not_unavailable(neo4j_settings: ConnectionSettings) -> None:
    line = _refused(cli("runs", env={"NEO4J_PASSWORD": PASSWORD}), "auth-failed", PASSWORD)
    assert "NEO4J_PASSWORD" in line and "not reachable" not in line
    assert "printed by" not in line, "neo4j start never prints the password"
    assert "first start of its home" in line and "'graphrag-local'" in line, "where the password really comes from"


def test_an_unreachable_server_stays_database_unavailable() -> None:
    port = _closed_port()
    line = _refused(cli("runs", env={"NEO4J_URI": f"bolt://127.0.0.1:{port}"}), "database-unavailable")
    assert "graphrag-orm neo4j start" in line


def test_an_unreachable_chat_endpoint_is_model_unreachable_at_the_first_call(graph: None) -> None:
    cli("ingest", str(QUICKSTART), check=True)
    endpoint = f"http://127.0.0.1:{_closed_port()}/v1"
    line = _refused(
        cli(
            "ask",
            "How many items can a member borrow?",
            env={**LIVE, "OPENAI_BASE_URL": endpoint, "OPENAI_API_KEY": API_KEY},
        ),
        "model-unreachable",
        API_KEY,
    )
    assert endpoint in line and "OPENAI_BASE_URL" in line


def test_an_unreachable_embedding_endpoint_is_model_unreachable_for_search_and_ingest(graph: None) -> None:
    # The offline set's name and size with a real client: the toolkit's own vector index fits it.
    real = {
        **LIVE,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{_closed_port()}/v1",
        "OPENAI_API_KEY": API_KEY,
        "GRAPHRAG_EMBEDDING_MODEL": "graphrag-orm/hashing-v1",
        "GRAPHRAG_EMBEDDING_DIMENSIONS": "256",
    }
    _refused(cli("search", "laser cutter", env=real), "model-unreachable", API_KEY)
    ingested = cli("ingest", str(QUICKSTART), "--json", env=real)
    _refused(ingested, "model-unreachable", API_KEY)
    receipt = json.loads(ingested.stdout)
    assert {d["errorCode"] for d in receipt["documents"]} == {"model-unreachable"}
