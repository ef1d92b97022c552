"""GRAPHRAG_MODEL_MODE: offline ignores keys, live fails closed, replay never calls, record stops at its budget.

The model clients talk to the loopback OpenAI-compatible server over real HTTP; each
test counts the requests it received.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_orm.chat import ChatMessage, ChatRequest, ExtractiveChat, OpenAIChat, RecordingChat
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import HashingEmbedder, LocalEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.environment import (
    DEFAULT_MAX_CALLS,
    ModelMode,
    graphrag_from_env,
    model_settings,
    models_from_env,
)
from graphrag_orm.errors import CallBudgetExceeded, ConfigurationError, ModelModeError, RecordingMissing
from tests.support.openai_server import OpenAIServer

KEY = "sk-live-key-that-must-never-show-4b1d"
COMPLETIONS = "/v1/chat/completions"


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="system", content="Answer."), ChatMessage(role="user", content=text)))


def test_offline_is_the_default_and_a_key_being_set_changes_nothing() -> None:
    # The dev venv has the local extra: the local model embeds by default (tests/unit/test_default_embedder.py).
    for environ in ({}, {"OPENAI_API_KEY": KEY}, {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}):
        choice = models_from_env(environ)
        assert choice.mode == ModelMode.OFFLINE
        assert isinstance(choice.chat, ExtractiveChat) and "stand-in" in choice.chat_label
        assert isinstance(choice.embedder, LocalEmbedder) and choice.embedding_set.dimensions == 384
        assert "local model, offline" in choice.embedder_label
        named = models_from_env({**environ, "GRAPHRAG_EMBEDDING_MODEL": "hashing"})
        assert isinstance(named.embedder, HashingEmbedder) and named.embedding_set == OFFLINE_EMBEDDING_SET
        assert "stand-in" in named.embedder_label


def test_offline_refuses_a_providers_embedding_model_instead_of_calling_it() -> None:
    environ = {"GRAPHRAG_EMBEDDING_MODEL": "text-embedding-3-small", "GRAPHRAG_EMBEDDING_DIMENSIONS": "1536"}
    with pytest.raises(ModelModeError) as refused:
        models_from_env({**environ, "OPENAI_API_KEY": KEY})
    assert refused.value.code == ErrorCode.MODEL_SETTING_MISSING
    assert "GRAPHRAG_MODEL_MODE=live" in refused.value.message


@pytest.mark.parametrize(
    ("environ", "needed"),
    [
        ({"GRAPHRAG_MODEL_MODE": "live"}, "GRAPHRAG_PROVIDER"),
        ({"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai"}, "OPENAI_API_KEY"),
        (
            {"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai", "OPENAI_BASE_URL": "http://u:pw@h:1/v1?q=1"},
            "OPENAI_API_KEY",
        ),
        (
            {"GRAPHRAG_MODEL_MODE": "live", "GRAPHRAG_PROVIDER": "openai-compatible", "OPENAI_API_KEY": KEY},
            "OPENAI_BASE_URL",
        ),
        ({"GRAPHRAG_MODEL_MODE": "record", "GRAPHRAG_RECORDINGS": "r.json"}, "GRAPHRAG_PROVIDER"),
        ({"GRAPHRAG_MODEL_MODE": "replay"}, "GRAPHRAG_RECORDINGS"),
        (
            {"GRAPHRAG_MODEL_MODE": "record", "GRAPHRAG_PROVIDER": "openai", "OPENAI_API_KEY": KEY},
            "GRAPHRAG_RECORDINGS",
        ),
    ],
)
def test_a_mode_or_provider_missing_a_variable_fails_closed_and_prints_the_settings_without_the_key(
    environ: dict[str, str], needed: str
) -> None:
    with pytest.raises(ModelModeError) as refused:
        models_from_env(environ)
    message = refused.value.message
    assert refused.value.code == ErrorCode.MODEL_SETTING_MISSING
    assert f"needs {needed}" in message and "\n" not in message
    assert f"GRAPHRAG_MODEL_MODE={environ['GRAPHRAG_MODEL_MODE']}" in message
    assert KEY not in message and "pw" not in message and "q=1" not in message
    if environ.get("OPENAI_API_KEY"):
        assert "OPENAI_API_KEY=***" in message
    if "OPENAI_BASE_URL" in environ:
        assert "OPENAI_BASE_URL=http://h:1/v1" in message


@pytest.mark.parametrize(
    ("variable", "code", "allowed"),
    [
        ("GRAPHRAG_MODEL_MODE", ErrorCode.UNKNOWN_MODEL_MODE, "offline, live, replay, record"),
        ("GRAPHRAG_PROVIDER", ErrorCode.UNKNOWN_PROVIDER, "openai, openai-compatible"),
    ],
)
def test_an_unknown_mode_or_provider_names_the_allowed_values_and_not_the_value(
    variable: str, code: ErrorCode, allowed: str
) -> None:
    with pytest.raises(ModelModeError) as refused:
        model_settings({variable: "sk-typed-here-by-mistake"})
    assert refused.value.code == code and allowed in refused.value.message
    assert "sk-typed" not in refused.value.message


@pytest.mark.parametrize("budget", ["0", "1001", "forty", "-3"])
def test_a_call_budget_outside_its_bounds_is_refused(budget: str) -> None:
    environ = {"GRAPHRAG_MODEL_MODE": "record", "GRAPHRAG_PROVIDER": "openai", "OPENAI_API_KEY": KEY}
    with pytest.raises(ConfigurationError) as refused:
        model_settings({**environ, "GRAPHRAG_RECORDINGS": "r.json", "GRAPHRAG_MAX_CALLS": budget})
    assert refused.value.code == ErrorCode.INVALID_OPTION


def test_record_mode_budget_defaults_to_forty(tmp_path: Path) -> None:
    environ = {"GRAPHRAG_MODEL_MODE": "record", "GRAPHRAG_PROVIDER": "openai", "OPENAI_API_KEY": KEY}
    assert model_settings({**environ, "GRAPHRAG_RECORDINGS": str(tmp_path)}).max_calls == DEFAULT_MAX_CALLS == 40


async def test_live_calls_the_named_compatible_endpoint_and_labels_the_model(openai_server: OpenAIServer) -> None:
    environ = {
        "GRAPHRAG_MODEL_MODE": "live",
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": openai_server.url,
        "GRAPHRAG_CHAT_MODEL": "loopback-model",
    }
    choice = models_from_env(environ)
    assert isinstance(choice.chat, OpenAIChat) and choice.chat_label == "loopback-model (live, openai-compatible)"
    reply = await choice.chat.complete(ask("one"))
    assert reply.text and len(openai_server.requests_to(COMPLETIONS)) == 1


def record_environ(server: OpenAIServer, recordings: Path, budget: int) -> dict[str, str]:
    return {
        "GRAPHRAG_MODEL_MODE": "record",
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": server.url,
        "GRAPHRAG_RECORDINGS": str(recordings),
        "GRAPHRAG_MAX_CALLS": str(budget),
    }


async def test_record_sends_what_is_missing_within_its_budget_and_not_one_call_more(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.chat_responder = lambda body: "reply to " + body["messages"][-1]["content"]
    choice = models_from_env(record_environ(openai_server, tmp_path, budget=2))
    assert isinstance(choice.chat, RecordingChat) and "recorded into" in choice.chat_label
    assert (await choice.chat.complete(ask("one"))).text == "reply to one"
    assert (await choice.chat.complete(ask("one"))).text == "reply to one"  # replayed: no call
    assert (await choice.chat.complete(ask("two"))).text == "reply to two"
    with pytest.raises(CallBudgetExceeded) as spent:
        await choice.chat.complete(ask("three"))
    assert spent.value.code == ErrorCode.CALL_BUDGET_EXCEEDED and "MaxCalls" in spent.value.message
    with pytest.raises(CallBudgetExceeded):
        async for _ in choice.chat.stream(ask("four")):
            pass
    assert len(openai_server.requests_to(COMPLETIONS)) == 2
    assert (tmp_path / "recordings.json").is_file()

    # A new process (a new budget) replays both at zero calls and records only "three".
    again = models_from_env(record_environ(openai_server, tmp_path, budget=1))
    assert (await again.chat.complete(ask("two"))).text == "reply to two"
    assert (await again.chat.complete(ask("three"))).text == "reply to three"
    assert len(openai_server.requests_to(COMPLETIONS)) == 3


async def test_replay_answers_from_the_recording_at_zero_requests_and_fails_on_a_missing_one(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    recorded = models_from_env(record_environ(openai_server, tmp_path / "r.json", budget=5))
    await recorded.chat.complete(ask("one"))
    sent = len(openai_server.requests)
    environ = {
        "GRAPHRAG_MODEL_MODE": "replay",
        "GRAPHRAG_RECORDINGS": str(tmp_path / "r.json"),
        # A provider named for another tool changes nothing: replay never calls.
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": openai_server.url,
    }
    choice = models_from_env(environ)
    assert choice.mode == ModelMode.REPLAY and "replayed from" in choice.chat_label
    assert (await choice.chat.complete(ask("one"))).text == (await recorded.chat.complete(ask("one"))).text
    with pytest.raises(RecordingMissing) as missing:
        await choice.chat.complete(ask("never recorded"))
    assert missing.value.code == ErrorCode.RECORDING_MISSING
    assert len(openai_server.requests) == sent


def test_replay_of_a_recording_that_does_not_exist_is_refused_before_any_request(tmp_path: Path) -> None:
    with pytest.raises(ModelModeError) as refused:
        models_from_env({"GRAPHRAG_MODEL_MODE": "replay", "GRAPHRAG_RECORDINGS": str(tmp_path / "nothing.json")})
    assert refused.value.code == ErrorCode.MODEL_SETTING_MISSING


async def test_record_replays_and_records_a_providers_embeddings_within_the_same_budget(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    environ = {
        **record_environ(openai_server, tmp_path, budget=1),
        "GRAPHRAG_EMBEDDING_MODEL": "loopback-embedder",
        "GRAPHRAG_EMBEDDING_DIMENSIONS": "8",
    }
    choice = models_from_env(environ)
    assert choice.embedding_set.model == "loopback-embedder" and "recorded" in choice.embedder_label
    first = await choice.embedder.embed(["a passage"])
    assert list(await choice.embedder.embed(["a passage"])) == list(first)
    with pytest.raises(CallBudgetExceeded):
        await choice.chat.complete(ask("one"))
    assert len(openai_server.requests) == 1
    replayed = models_from_env({**environ, "GRAPHRAG_MODEL_MODE": "replay"})
    assert list(await replayed.embedder.embed(["a passage"])) == list(first)
    assert len(openai_server.requests) == 1


def test_graphrag_from_env_wires_the_chosen_clients() -> None:
    rag, choice = graphrag_from_env()
    assert choice.mode == ModelMode.OFFLINE and rag.embedding_set == OFFLINE_EMBEDDING_SET
