"""Recordings: record real calls over loopback HTTP once, replay them at zero calls."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
from array import array
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphrag_orm.call_budget import BudgetedChat, CallBudget
from graphrag_orm.chat import (
    ChatChunk,
    ChatMessage,
    ChatRequest,
    OpenAIChat,
    Recorder,
    RecordingMissing,
    RecordingRefused,
    ScriptedChat,
)
from graphrag_orm.embeddings import OpenAIEmbedder
from graphrag_orm.errors import ConfigurationError
from tests.support.openai_server import OpenAIServer

API_KEY = "test-key-never-recorded"
LONG_QUESTION = "Which supplier makes the part that bulletin 7 covers, and since when? " * 3


def ask(text: str = LONG_QUESTION) -> ChatRequest:
    return ChatRequest(
        messages=(ChatMessage(role="system", content="Answer."), ChatMessage(role="user", content=text)),
        response_schema={"type": "object"},
    )


def entries(path: Path) -> list[dict[str, object]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "graphrag-orm-recording"
    result: list[dict[str, object]] = document["entries"]
    return result


async def test_a_chat_call_is_recorded_then_replayed_at_zero_calls(openai_server: OpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "recording.json"
    async with OpenAIChat("test-chat", base_url=openai_server.url, api_key=API_KEY) as real:
        recorded = await Recorder(path, "record").chat(real).complete(ask())
    assert len(openai_server.requests) == 1

    replayed = await Recorder(path, "replay").chat(None).complete(ask())
    assert replayed == recorded
    assert len(openai_server.requests) == 1

    (entry,) = entries(path)
    assert entry["request"] == ask().fingerprint()
    assert entry["kind"] == "chat"
    assert entry["model"] == "test-chat"
    assert entry["finishReason"] == "stop"
    assert entry["usage"] == {"inputTokens": 11, "outputTokens": 7, "reasoningTokens": 3}
    assert isinstance(entry["date"], str) and len(entry["date"]) == 10
    assert isinstance(entry["hint"], str) and len(entry["hint"]) == 80 and LONG_QUESTION.startswith(entry["hint"])
    assert "key" not in entry
    text = path.read_text(encoding="utf-8")
    assert API_KEY not in text
    assert "127.0.0.1" not in text
    assert LONG_QUESTION not in text


async def test_record_mode_calls_the_model_only_for_missing_entries(tmp_path: Path) -> None:
    path = tmp_path / "recording.json"
    model = ScriptedChat(lambda request: "reply to " + request.messages[-1].content)
    first = Recorder(path, "record")
    await first.chat(model).complete(ask("one"))
    again = Recorder(path, "record")
    chat = again.chat(model)
    await chat.complete(ask("one"))
    await chat.complete(ask("two"))
    assert [call.messages[-1].content for call in model.calls] == ["one", "two"]
    assert (first.model_calls, again.model_calls) == (1, 1)
    assert len(entries(path)) == 2


async def test_a_stream_is_recorded_and_replayed_in_pieces(openai_server: OpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "recording.json"
    openai_server.chat_responder = lambda body: '{"answer": "recorded while streaming"}'
    async with OpenAIChat("test-chat", base_url=openai_server.url, api_key=API_KEY) as real:
        live = [chunk async for chunk in Recorder(path, "record").chat(real).stream(ask())]
    replay = [chunk async for chunk in Recorder(path, "replay").chat(None).stream(ask())]
    assert live[-1].reply is not None and replay[-1].reply is not None
    assert replay[-1].reply == live[-1].reply
    assert "".join(chunk.delta for chunk in replay) == '{"answer": "recorded while streaming"}'
    assert len(replay) > 2
    assert len(openai_server.requests) == 1


async def test_a_replayed_stream_hands_the_loop_a_turn_before_each_piece(tmp_path: Path) -> None:
    path = tmp_path / "recording.json"
    await Recorder(path, "record").chat(ScriptedChat(lambda request: "word " * 100)).complete(ask())
    pieces: list[ChatChunk] = []

    async def read() -> None:
        async for chunk in Recorder(path, "replay").chat(None).stream(ask()):
            pieces.append(chunk)

    reader = asyncio.create_task(read())
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert len(pieces) == 1 and not reader.done()
    reader.cancel()  # a server whose client left cancels its reader between two pieces
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert len(pieces) == 1


async def test_a_stream_closed_early_records_nothing(openai_server: OpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "recording.json"
    openai_server.chat_responder = lambda body: "word " * 200
    openai_server.stream_delay = 0.01
    async with (
        OpenAIChat("test-chat", base_url=openai_server.url, api_key=API_KEY) as real,
        contextlib.aclosing(Recorder(path, "record").chat(real).stream(ask())) as chunks,
    ):
        async for _chunk in chunks:
            break
    assert not path.exists()


async def test_embeddings_are_recorded_as_exact_float32_and_replayed(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "recording.json"
    openai_server.embed_function = lambda text, dimensions: [0.1 * (i + 1) for i in range(dimensions)]
    openai_server.mangle_embeddings = None
    texts = ["first chunk of text", "second chunk"]
    async with OpenAIEmbedder("test-embedding", dimensions=4, base_url=openai_server.url, api_key=API_KEY) as real:
        recorded = await Recorder(path, "record").embedder(real, 4).embed(texts)
    replayed = await Recorder(path, "replay").embedder(None, 4).embed(texts)
    expected = array("f", [0.1, 0.2, 0.3, 0.4]).tolist()
    assert recorded == replayed == [expected, expected]
    assert recorded.input_tokens == replayed.input_tokens == 6  # the server counts words
    assert len(openai_server.requests) == 1
    (entry,) = entries(path)
    assert entry["kind"] == "embedding" and entry["dimensions"] == 4 and entry["model"] == "test-embedding"
    with pytest.raises(RecordingMissing):
        await Recorder(path, "replay").embedder(None, 8).embed(texts)


class DoubleEmbedder:
    """Returns float64 values that float32 cannot hold exactly."""

    model = "doubles"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.1, -1 / 3, 2.0] for _ in texts]


async def test_recorded_vectors_are_rounded_to_float32_in_record_and_replay_alike(tmp_path: Path) -> None:
    path = tmp_path / "recording.json"
    recorded = await Recorder(path, "record").embedder(DoubleEmbedder(), 3).embed(["text"])
    replayed = await Recorder(path, "replay").embedder(None, 3).embed(["text"])
    assert recorded == replayed == [array("f", [0.1, -1 / 3, 2.0]).tolist()]
    assert recorded.input_tokens is None


async def test_replay_refuses_a_request_with_no_entry(tmp_path: Path) -> None:
    with pytest.raises(RecordingMissing) as missing:
        await Recorder(tmp_path / "absent.json", "replay").chat(None).complete(ask())
    assert missing.value.code == "recording-missing"
    assert ask().fingerprint() in str(missing.value)


async def test_an_entry_holding_a_secret_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("PROVIDER_API_KEY", secret)
    path = tmp_path / "recording.json"
    leaky = ScriptedChat(lambda request: f"my key is {secret}")
    with pytest.raises(RecordingRefused) as refused:
        await Recorder(path, "record").chat(leaky).complete(ask())
    assert refused.value.code == "secret-in-recording"
    assert "PROVIDER_API_KEY" in str(refused.value)
    assert secret not in str(refused.value)
    assert not path.exists()


async def test_secrets_are_matched_by_variable_name_and_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("session_token", "tok-abcdefgh")
    monkeypatch.setenv("SHORT_PASSWORD", "abc")  # under 8 characters: not a secret worth matching
    monkeypatch.setenv("GREETING", "hello there friend")  # the name does not say secret
    recorder = Recorder(tmp_path / "recording.json", "record")
    harmless = ScriptedChat(lambda request: "abc: hello there friend")
    await recorder.chat(harmless).complete(ask("harmless"))
    with pytest.raises(RecordingRefused):
        await recorder.chat(ScriptedChat(lambda request: "tok-abcdefgh")).complete(ask("leaky"))
    with pytest.raises(RecordingRefused):  # the hint is request text, and is checked too
        await recorder.chat(harmless).complete(ask("please use tok-abcdefgh"))
    assert len(entries(tmp_path / "recording.json")) == 1


async def test_saving_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "recording.json"
    recorder = Recorder(path, "record")
    chat = recorder.chat(ScriptedChat(lambda request: "reply"))
    await chat.complete(ask("one"))
    before = path.read_bytes()

    def failing_replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        await chat.complete(ask("two"))
    assert path.read_bytes() == before
    assert sorted(p.name for p in os.scandir(tmp_path)) == ["recording.json"]


def test_recorder_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError):
        Recorder(tmp_path / "r.json", "live")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        Recorder(tmp_path / "r.json", "record").chat(None)
    with pytest.raises(ConfigurationError):
        Recorder(tmp_path / "r.json", "record").embedder(None, 8)
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigurationError):
        Recorder(tmp_path / "broken.json", "replay")


LEAKED = "s3cr3t-Pa55w0rd-x7"


async def _refused(tmp_path: Path, reply: str, question: str = "harmless question") -> RecordingRefused:
    path = tmp_path / "recording.json"
    with pytest.raises(RecordingRefused) as refused:
        await Recorder(path, "record").chat(ScriptedChat(lambda request: reply)).complete(ask(question))
    assert refused.value.code == "secret-in-recording"
    assert not path.exists()
    return refused.value


@pytest.mark.parametrize(
    ("name", "value", "leaked"),
    [
        # (ids name the case: pytest puts them in $PYTEST_CURRENT_TEST, which is scanned too)
        pytest.param("NEO4J_AUTH", f"neo4j/{LEAKED}", f"neo4j/{LEAKED}", id="neo4j-auth"),
        pytest.param("NEO4J_AUTH", f"neo4j/{LEAKED}", LEAKED, id="neo4j-auth-password-alone"),
        pytest.param("SMTP_PASS", LEAKED, LEAKED, id="pass"),
        pytest.param("GOOGLE_CREDENTIALS", LEAKED, LEAKED, id="credentials"),
        pytest.param("proxy_auth", LEAKED, LEAKED, id="auth-lower-case"),
        pytest.param("DATABASE_URL", f"postgres://app:{LEAKED}@db.internal:5432/app", LEAKED, id="url-password"),
        pytest.param(
            "DATABASE_URL", f"postgres://app:{LEAKED}@db.internal/app", f"postgres://app:{LEAKED}@db", id="url"
        ),
        pytest.param("HTTPS_PROXY", f"http://ops:{LEAKED}@proxy.internal:3128", LEAKED, id="proxy-url"),
        pytest.param("GIT_REMOTE", f"https://{LEAKED}@git.example.org/r.git", LEAKED, id="url-token-as-user"),
    ],
)
async def test_values_of_the_variables_a_secret_scanner_flags_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, leaked: str
) -> None:
    monkeypatch.setenv(name, value)
    refused = await _refused(tmp_path, f"the answer mentions {leaked} in passing")
    assert f"${name}" in refused.message
    assert LEAKED not in str(refused)


async def test_a_short_token_is_refused_as_a_whole_word_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "q7Zx9")
    await _refused(tmp_path, "use q7Zx9 to deploy")
    await _refused(tmp_path, "use Q7ZX9 to deploy")
    recorder = Recorder(tmp_path / "kept.json", "record")
    await recorder.chat(ScriptedChat(lambda request: "the word q7Zx9abc holds it only as a part")).complete(ask())
    assert len(recorder) == 1


async def test_flag_values_and_values_under_four_characters_are_not_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("KEYTIMEOUT", "1")
    monkeypatch.setenv("NEO4J_AUTH", "none")
    monkeypatch.setenv("SHORT_PASS", "abc")
    recorder = Recorder(tmp_path / "recording.json", "record")
    await recorder.chat(ScriptedChat(lambda request: "false 1 none abc: all harmless")).complete(ask())
    assert len(recorder) == 1


def _base64_in(prefix: bytes, secret: str) -> str:
    return base64.b64encode(prefix + secret.encode()).decode()


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(LEAKED.upper(), id="upper-cased"),
        pytest.param(LEAKED.lower(), id="lower-cased"),
        pytest.param(f"{LEAKED[:7]} {LEAKED[7:]}", id="split-by-a-space"),
        pytest.param(" ".join(LEAKED), id="spaced-out"),
        pytest.param(f"{LEAKED[:9]}\n{LEAKED[9:]}", id="split-by-a-line-break"),
        pytest.param(_base64_in(b"", LEAKED), id="base64"),
        pytest.param(_base64_in(b"x", LEAKED), id="base64-inside-at-offset-1"),
        pytest.param(_base64_in(b"Bearer ", LEAKED), id="base64-inside-at-offset-7"),
        pytest.param(base64.urlsafe_b64encode(b"u:" + LEAKED.encode()).decode().rstrip("="), id="urlsafe-base64"),
    ],
)
async def test_a_transformed_form_of_the_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    monkeypatch.setenv("PROVIDER_API_KEY", LEAKED)
    refused = await _refused(tmp_path, f"header: {form} (end)")
    assert "$PROVIDER_API_KEY" in refused.message


async def test_the_keys_first_characters_at_the_end_of_the_hint_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVIDER_API_KEY", LEAKED)
    question = "q" * 75 + " " + LEAKED + " is what I was given"
    assert LEAKED[:4] in question[:80] and LEAKED not in question[:80]
    await _refused(tmp_path, "a harmless reply", question)


async def test_an_embedding_hint_ending_with_the_keys_first_characters_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVIDER_API_KEY", LEAKED)
    path = tmp_path / "recording.json"
    with pytest.raises(RecordingRefused):
        await Recorder(path, "record").embedder(DoubleEmbedder(), 3).embed(["t" * 70 + " " + LEAKED])
    assert not path.exists()


async def test_a_key_beyond_the_hint_is_not_stored_and_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVIDER_API_KEY", LEAKED)
    path = tmp_path / "recording.json"
    question = "q" * 120 + " " + LEAKED
    await Recorder(path, "record").chat(ScriptedChat(lambda request: "a harmless reply")).complete(ask(question))
    assert LEAKED[:3] not in path.read_text(encoding="utf-8")
    assert len(entries(path)) == 1


async def test_a_url_with_a_password_is_refused_wherever_it_comes_from(tmp_path: Path) -> None:
    refused = await _refused(tmp_path, "connect with postgres://app:Zq81-kk@db.internal:5432/app")
    assert "Zq81-kk" not in str(refused)
    await _refused(tmp_path, "a harmless reply", "x" * 60 + " use https://ops:Zq81-kk@proxy.internal to reach it")


async def test_a_url_whose_password_is_a_placeholder_is_recorded(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "recording.json", "record")
    examples = "postgres://user:<password>@localhost/db, bolt://neo4j:${NEO4J_PASSWORD}@db, https://u:***@host"
    await recorder.chat(ScriptedChat(lambda request: f"for example {examples}")).complete(ask())
    assert len(recorder) == 1


def _recording_of(path: Path, entries: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"format": "graphrag-orm-recording", "version": 1, "entries": entries}), "utf-8")
    return path


async def test_a_replayed_chat_is_labelled_with_the_recorded_model_and_dates_never_its_class(tmp_path: Path) -> None:
    from graphrag_orm.evaluation.runner import label_of

    entry = {"kind": "chat", "text": "{}", "finishReason": "stop", "usage": None}
    path = _recording_of(
        tmp_path / "r.json",
        [
            {**entry, "request": "a", "model": "qwen2.5-coder-0.5b", "date": "2026-12-05"},
            {**entry, "request": "b", "model": "qwen2.5-coder-0.5b", "date": "2026-12-01"},
            {"kind": "embedding", "request": "c", "model": "an-embedder", "date": "2026-11-01", "vectors": []},
        ],
    )
    chat = Recorder(path, "replay").chat(None)
    assert chat.model == "qwen2.5-coder-0.5b"
    assert chat.label == "qwen2.5-coder-0.5b, recorded 2026-12-01 to 2026-12-05"
    assert label_of(chat).label == chat.label and not label_of(chat).stand_in
    empty = Recorder(_recording_of(tmp_path / "e.json", []), "replay").chat(None)
    assert empty.model is None and empty.label == "an unnamed model, recorded"
    assert "RecordingChat" not in label_of(empty).label


async def test_a_recording_chat_is_labelled_with_its_inner_client_model(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    async with OpenAIChat("loopback-model", base_url=openai_server.url, api_key=API_KEY) as inner:
        chat = Recorder(tmp_path / "r.json", "record").chat(inner)
        assert chat.model == "loopback-model" and chat.label == "loopback-model (recording)"
        # As GRAPHRAG_MODEL_MODE=record builds it: the budget between the recorder and the client.
        budgeted = Recorder(tmp_path / "b.json", "record").chat(BudgetedChat(inner, CallBudget(3)))
        assert budgeted.model == "loopback-model" and budgeted.label == "loopback-model (recording)"
