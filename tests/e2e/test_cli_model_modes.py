"""GRAPHRAG_MODEL_MODE as a user meets it: the real CLI in a subprocess, the loopback model server counting requests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from graphrag_orm.chat.evidence_block import parse_evidence
from tests.e2e.test_cli import QUICKSTART, cli
from tests.support.openai_server import OpenAIServer

KEY = "sk-key-that-must-never-show-77aa"
QUESTION = "How many items can a member borrow at a time?"
QUOTE = "Members can borrow up to twelve items at a time."
COMPLETIONS = "/v1/chat/completions"


def cite_the_borrowing_rule(body: dict[str, Any]) -> str:
    """An answer quoting the rule from the evidence item that holds it."""
    items = parse_evidence(body["messages"][-1]["content"])
    chunk = next((chunk_id for chunk_id, text in items if QUOTE in text), "not-in-evidence")
    return json.dumps({"answer": "Twelve items.", "citations": [{"chunkId": chunk, "quote": QUOTE}]})


def refused(result: subprocess.CompletedProcess[str], code: str) -> str:
    """The one error line of a refused command (exit 1, the code, no traceback, never the key)."""
    everything = result.stdout + result.stderr
    assert result.returncode == 1, everything
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"({code})" in lines[0], result.stderr
    assert "Traceback" not in everything and KEY not in everything
    return lines[0]


def test_offline_is_the_default_even_with_a_key_and_an_endpoint_set(graph: None, openai_server: OpenAIServer) -> None:
    cli("ingest", str(QUICKSTART), check=True)
    named = {"GRAPHRAG_MODEL_MODE": "", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": openai_server.url}
    asked = cli("ask", QUESTION, env=named, check=True)
    assert "offline stand-in" in asked.stdout and QUOTE in asked.stdout
    assert openai_server.requests == []


def test_live_with_a_variable_missing_fails_closed_with_the_settings_and_the_key_hidden() -> None:
    line = refused(
        cli("ask", QUESTION, env={"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai"}),
        "model-setting-missing",
    )
    assert "needs OPENAI_API_KEY" in line and "OPENAI_API_KEY=(unset)" in line
    compatible = {"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai-compatible", "OPENAI_API_KEY": KEY}
    line = refused(cli("ask", QUESTION, env=compatible), "model-setting-missing")
    assert "needs OPENAI_BASE_URL" in line and "OPENAI_API_KEY=***" in line
    line = refused(cli("search", "laser", env={"GRAPHRAG_MODEL_MODE": "live"}), "model-setting-missing")
    assert "GRAPHRAG_PROVIDER" in line


def test_an_unknown_mode_or_provider_is_refused_naming_the_allowed_values() -> None:
    line = refused(cli("ask", QUESTION, env={"GRAPHRAG_MODEL_MODE": "paid"}), "unknown-model-mode")
    assert "offline, live, replay, record" in line
    line = refused(
        cli("ingest", str(QUICKSTART), env={"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "acme"}),
        "unknown-provider",
    )
    assert "openai, openai-compatible" in line


def test_record_then_replay_answers_at_zero_requests_and_a_missing_recording_fails(
    graph: None, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    cli("ingest", str(QUICKSTART), check=True)
    openai_server.chat_responder = cite_the_borrowing_rule
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    record = {
        "GRAPHRAG_MODEL_MODE": "record",
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": openai_server.url,
        "GRAPHRAG_CHAT_MODEL": "loopback-model",
        "GRAPHRAG_RECORDINGS": str(recordings),
    }
    recorded = cli("ask", QUESTION, env=record, check=True)
    assert "Twelve items." in recorded.stdout and "loopback-model (recorded into" in " ".join(recorded.stdout.split())
    assert len(openai_server.requests_to(COMPLETIONS)) == 1
    assert (recordings / "recordings.json").is_file()

    replay = {"GRAPHRAG_MODEL_MODE": "replay", "GRAPHRAG_RECORDINGS": str(recordings)}
    replayed = cli("ask", QUESTION, env=replay, check=True)
    assert "Twelve items." in replayed.stdout and "replayed from" in replayed.stdout
    refused(cli("ask", "Who runs the maker space?", env=replay), "recording-missing")
    assert len(openai_server.requests) == 1


def test_record_stops_at_its_call_budget_and_sends_nothing_past_it(
    graph: None, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.chat_responder = lambda body: json.dumps({"entities": [], "relationships": []})
    record = {
        "GRAPHRAG_MODEL_MODE": "record",
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": openai_server.url,
        "GRAPHRAG_RECORDINGS": str(tmp_path / "extraction.json"),
        "GRAPHRAG_MAX_CALLS": "2",
    }
    preview = json.loads(cli("ingest", str(QUICKSTART), "--preview", "--json", "--ontology", "generic").stdout)
    assert preview["extractionCalls"] > 2
    ingested = cli("ingest", str(QUICKSTART), "--json", "--ontology", "generic", env=record)
    assert ingested.returncode == 1 and "Traceback" not in ingested.stdout + ingested.stderr
    receipt = json.loads(ingested.stdout)
    # A document whose extraction went over the budget is not written (ingestion reports it failed).
    assert any(document["status"] == "Failed" for document in receipt["documents"])
    assert len(openai_server.requests_to(COMPLETIONS)) == 2
