"""A model endpoint that cannot be reached is ``model-unreachable`` at the first call, over real HTTP.

A closed loopback port: the connection is refused, so the setting is wrong, and the
error is coded at once instead of being retried with backoff. The key never shows.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from graphrag_orm.chat import ChatMessage, ChatRequest
from graphrag_orm.chat.openai import OpenAIChat
from graphrag_orm.cli.receipts import DOCUMENT_ERROR_MESSAGES
from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.embeddings.openai import OpenAIEmbedder
from graphrag_orm.errors import ModelCallFailed
from graphrag_orm.retry import RetryOptions, RetryPolicy

KEY = "sk-a-key-no-message-may-show"


@pytest.fixture
def closed_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    return f"http://127.0.0.1:{port}/v1"


def _request() -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content="Hello?"),))


async def test_an_embedder_on_a_closed_port_is_model_unreachable_without_a_retry(closed_endpoint: str) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    policy = RetryPolicy(RetryOptions(max_retries=4), sleep=sleep)
    async with OpenAIEmbedder("m", base_url=closed_endpoint, api_key=KEY) as embedder:
        with pytest.raises(ModelCallFailed) as refused:
            await policy.run(lambda: embedder.embed(["text"]), code="embedding-failed")
    assert refused.value.code == "model-unreachable"
    assert closed_endpoint in refused.value.message and "OPENAI_BASE_URL" in refused.value.message
    assert KEY not in str(refused.value)
    assert waits == [], "a setting to fix is not retried"


async def test_a_chat_client_on_a_closed_port_is_model_unreachable_for_replies_and_streams(
    closed_endpoint: str,
) -> None:
    async with OpenAIChat("m", base_url=closed_endpoint, api_key=KEY) as chat:
        with pytest.raises(ModelCallFailed) as refused:
            await chat.complete(_request())
        assert refused.value.code == "model-unreachable" and KEY not in str(refused.value)
        with pytest.raises(ModelCallFailed) as streamed:
            async for _ in chat.stream(_request()):
                pass
        assert streamed.value.code == "model-unreachable"


def test_importing_the_model_clients_does_not_import_the_openai_sdk() -> None:
    script = (
        "import sys, graphrag_orm, graphrag_orm.chat, graphrag_orm.embeddings, graphrag_orm.environment\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_every_document_error_code_has_a_message_for_the_receipt_table() -> None:
    assert set(DOCUMENT_ERROR_MESSAGES) == set(DocumentErrorCode)
