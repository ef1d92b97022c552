"""The real-model suite: live against a served model when asked, replayed from its recordings otherwise.

``make test-real`` sets ``GRAPHRAG_REAL_MODEL_URL`` (the served model's ``/v1`` address, see
``make llm-serve``): each request with no recording is sent to the model and its reply is
recorded, with the model's name and the date, into :data:`RECORDING`. Without the variable
(``make test``) every reply is replayed from that file and no model is called; a request
with no recording fails with the command that records it.
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from graphrag_orm.chat import ChatClient, Recorder, RecordingMissing
from graphrag_orm.chat.endpoint import ChatEndpoint

MODEL = os.environ.get("GRAPHRAG_REAL_MODEL", "qwen2.5-coder-0.5b")
RECORDING = Path(__file__).resolve().parents[1] / "data" / "recordings" / f"{MODEL}.json"
RERECORD = (
    f"make llm-serve MODEL={MODEL} && make test-real  "
    "(GRAPHRAG_REAL_MODEL_URL=http://127.0.0.1:8371/v1 records what is missing)"
)


def live_url() -> str | None:
    return (os.environ.get("GRAPHRAG_REAL_MODEL_URL") or "").strip() or None


def _serving(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


#: Answers of a subprocess surface (the CLI) are bounded as the suite's are: a slow model writes ~4 tokens/s.
SURFACE_ANSWER_TOKENS = 256


def surface_recording(surface: str) -> Path:
    """The recording a subprocess surface writes and replays: a file of its own, since the
    suite's recorder rewrites :data:`RECORDING` whole after each new entry."""
    return RECORDING.with_name(f"{MODEL}-{surface}.json")


def surface_environment(recording: Path) -> dict[str, str]:
    """The variables that make a ``graphrag-orm`` subprocess record from the served model
    (``GRAPHRAG_MODEL_MODE=record``) or replay ``recording`` (``replay``, no model called)."""
    url = live_url()
    if url is None:
        if not recording.is_file():
            pytest.fail(f"no recording at {recording}; record it with: {RERECORD}", pytrace=False)
        return {"GRAPHRAG_MODEL_MODE": "replay", "GRAPHRAG_RECORDINGS": str(recording)}
    if not _serving(url):
        pytest.skip(f"GRAPHRAG_REAL_MODEL_URL={url} does not answer /models: start it with make llm-serve")
    return {
        "GRAPHRAG_MODEL_MODE": "record",
        "GRAPHRAG_RECORDINGS": str(recording),
        "GRAPHRAG_PROVIDER": "openai-compatible",
        "OPENAI_BASE_URL": url,
        "GRAPHRAG_CHAT_MODEL": MODEL,
        "GRAPHRAG_STRUCTURED_OUTPUT": "json_object",
        "GRAPHRAG_CHAT_TIMEOUT": "900",
        "GRAPHRAG_ANSWER_MAX_TOKENS": str(SURFACE_ANSWER_TOKENS),
    }


@pytest.fixture(scope="session")
def recorder() -> Iterator[Recorder]:
    url = live_url()
    if url is None:
        if not RECORDING.is_file():
            pytest.fail(f"no recording at {RECORDING}; record it with: {RERECORD}", pytrace=False)
        yield Recorder(RECORDING, "replay")
        return
    if not _serving(url):
        pytest.skip(f"GRAPHRAG_REAL_MODEL_URL={url} does not answer /models: start it with make llm-serve")
    RECORDING.parent.mkdir(parents=True, exist_ok=True)
    yield Recorder(RECORDING, "record")


@pytest.fixture
async def real_chat(recorder: Recorder) -> AsyncIterator[ChatClient]:
    """The served model (recorded) live, or its recordings replayed; a missing one fails with the command."""
    url = live_url()
    inner = None
    if url is not None:
        from graphrag_orm.chat.openai import OpenAIChat

        # llama-cpp-python's server: the schema as json_object, both limit fields, a long timeout.
        endpoint = ChatEndpoint(structured_output="json_object", token_limit="both", timeout_seconds=900)
        inner = OpenAIChat(MODEL, base_url=url, endpoint=endpoint)
    try:
        yield recorder.chat(inner)
    finally:
        if inner is not None:
            await inner.aclose()


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Iterator[None]:
    """A replay that meets a request with no recording fails with the command that records it."""
    outcome = yield
    missing = outcome.exception
    while missing is not None and not isinstance(missing, RecordingMissing):
        missing = missing.__cause__ or missing.__context__
    if isinstance(missing, RecordingMissing):
        outcome.force_exception(pytest.fail.Exception(f"{missing.message}; record it with: {RERECORD}", pytrace=False))
