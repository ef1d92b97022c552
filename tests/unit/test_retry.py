"""RetryPolicy around real model calls over loopback HTTP, and its options and summaries."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import AsyncIterator

import httpx
import openai
import pytest
import pytest_asyncio

from graphrag_orm.chat import ChatMessage, ChatRequest, OpenAIChat
from graphrag_orm.embeddings import OpenAIEmbedder
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.retry import (
    ModelCallFailed,
    RetryOptions,
    RetryPolicy,
    RetrySummary,
    RetryTally,
    is_transient_default,
    retry_after_default,
)
from tests.support.openai_server import OpenAIServer

try:  # the openai SDK's HTTP library: httpx2 in recent releases, httpx before
    import httpx2 as sdk_httpx
except ImportError:  # pragma: no cover
    import httpx as sdk_httpx  # type: ignore[no-redef]

EMBEDDINGS = "/v1/embeddings"


class Sleeps:
    """An injected sleep: records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest_asyncio.fixture
async def embedder(openai_server: OpenAIServer) -> AsyncIterator[OpenAIEmbedder]:
    async with OpenAIEmbedder("test-embedding", base_url=openai_server.url, api_key="test-key", timeout=2) as e:
        yield e


def policy(sleeps: Sleeps, **options: object) -> RetryPolicy:
    return RetryPolicy(RetryOptions(**options), sleep=sleeps, random=lambda: 0.5)


async def test_a_transient_503_is_retried_then_succeeds(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.fail(503)
    retry = policy(sleeps)
    vectors = await retry.run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert len(vectors) == 1
    assert len(openai_server.requests_to(EMBEDDINGS)) == 2
    assert sleeps.waits == [1.125]  # 1 s backoff plus half of the 25 % jitter
    assert retry.summary == RetrySummary(retries=1, rate_limited=0, waited_seconds=1.125)


async def test_a_429_retry_after_hint_is_honoured_instead_of_the_backoff(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.rate_limit(retry_after="7")
    retry = policy(sleeps)
    await retry.run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert sleeps.waits == [7.0]
    assert retry.summary == RetrySummary(retries=1, rate_limited=1, waited_seconds=7.0)


async def test_retry_after_ms_wins_over_retry_after(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.rate_limit(retry_after="7", retry_after_ms="1500")
    await policy(sleeps).run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert sleeps.waits == [1.5]


async def test_a_hint_longer_than_the_longest_wait_fails_at_once_as_rate_limited(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.rate_limit(retry_after="120")
    retry = policy(sleeps, max_backoff_seconds=60)
    with pytest.raises(ModelCallFailed) as failure:
        await retry.run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert failure.value.code == "rate-limited"
    assert failure.value.status == 429
    assert isinstance(failure.value.__cause__, ModelCallFailed)
    assert isinstance(failure.value.__cause__.__cause__, openai.RateLimitError)
    assert sleeps.waits == []
    assert len(openai_server.requests_to(EMBEDDINGS)) == 1
    assert retry.summary == RetrySummary()


async def test_a_dropped_connection_is_retried(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.drop_connection()
    vectors = await policy(sleeps).run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert len(vectors) == 1
    assert len(openai_server.requests_to(EMBEDDINGS)) == 2
    assert len(sleeps.waits) == 1


async def test_a_client_timeout_is_retried(openai_server: OpenAIServer, sleeps: Sleeps) -> None:
    openai_server.delay(5)
    async with OpenAIEmbedder("m", base_url=openai_server.url, api_key="test-key", timeout=0.3) as quick:
        vectors = await policy(sleeps).run(lambda: quick.embed(["alpha"]), code="embedding-failed")
    assert len(vectors) == 1
    assert len(openai_server.requests_to(EMBEDDINGS)) == 2


async def test_a_400_is_not_retried_and_gives_the_callers_code(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.fail(400)
    with pytest.raises(ModelCallFailed) as failure:
        await policy(sleeps).run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert failure.value.code == "embedding-failed"
    assert failure.value.attempts == 1
    assert isinstance(failure.value.__cause__, ModelCallFailed)
    assert failure.value.__cause__.code == "model-request-rejected"
    assert isinstance(failure.value.__cause__.__cause__, openai.BadRequestError)
    assert len(openai_server.requests_to(EMBEDDINGS)) == 1
    assert sleeps.waits == []


async def test_a_500_that_refuses_the_request_is_tried_once(openai_server: OpenAIServer, sleeps: Sleeps) -> None:
    # llama-cpp-python's server answers a response_format it does not take with a 500: the
    # same request would be refused again, so four more tries only cost time.
    openai_server.fail(500, times=5)
    request = ChatRequest(messages=(ChatMessage(role="user", content="extract"),))
    async with OpenAIChat("test-chat", base_url=openai_server.url, api_key="test-key") as chat:
        with pytest.raises(ModelCallFailed) as failure:
            await policy(sleeps).run(lambda: chat.complete(request), code="extraction-failed")
    assert (failure.value.code, failure.value.attempts, failure.value.status) == ("extraction-failed", 1, 500)
    assert "model-request-rejected (HTTP 500)" in str(failure.value)
    assert len(openai_server.requests) == 1 and sleeps.waits == []


async def test_a_500_saying_the_server_is_overloaded_is_retried(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.fail(500, message="The server is overloaded, try again later")
    vectors = await policy(sleeps).run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert len(vectors) == 1 and len(sleeps.waits) == 1


async def test_exhausted_retries_give_the_callers_code(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.fail(503, times=3)
    with pytest.raises(ModelCallFailed) as failure:
        await policy(sleeps, max_retries=2).run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert failure.value.code == "embedding-failed"
    assert failure.value.attempts == 3
    assert len(openai_server.requests_to(EMBEDDINGS)) == 3
    assert sleeps.waits == [1.125, 2.25]


async def test_exhausted_retries_on_rate_limits_give_rate_limited(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.rate_limit(times=2)
    retry = policy(sleeps, max_retries=1)
    with pytest.raises(ModelCallFailed) as failure:
        await retry.run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert failure.value.code == "rate-limited"
    assert retry.summary.rate_limited == 1


async def test_chat_calls_are_retried_with_the_extraction_code(openai_server: OpenAIServer, sleeps: Sleeps) -> None:
    openai_server.fail(502, times=2)
    request = ChatRequest(messages=(ChatMessage(role="user", content="extract"),))
    async with OpenAIChat("test-chat", base_url=openai_server.url, api_key="test-key") as chat:
        with pytest.raises(ModelCallFailed) as failure:
            await policy(sleeps, max_retries=1).run(lambda: chat.complete(request), code="extraction-failed")
        assert failure.value.code == "extraction-failed"
        reply = await policy(sleeps).run(lambda: chat.complete(request), code="extraction-failed")
    assert reply.text


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    retry = RetryPolicy(RetryOptions(initial_backoff_seconds=1, max_backoff_seconds=5, jitter=0.5), random=lambda: 1.0)
    assert [retry.backoff(n) for n in range(4)] == [1.5, 3.0, 5.0, 5.0]
    still = RetryPolicy(RetryOptions(jitter=0.0), random=lambda: 1.0)
    assert [still.backoff(n) for n in range(3)] == [1.0, 2.0, 4.0]


async def test_cancellation_is_never_retried_nor_wrapped(sleeps: Sleeps) -> None:
    calls = 0

    async def cancelled() -> None:
        nonlocal calls
        calls += 1
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await policy(sleeps).run(cancelled, code="embedding-failed")
    assert calls == 1
    assert sleeps.waits == []


async def test_a_task_cancelled_while_waiting_stops_retrying() -> None:
    calls = 0

    async def failing() -> None:
        nonlocal calls
        calls += 1
        raise ConnectionError("down")

    retry = RetryPolicy(RetryOptions(initial_backoff_seconds=30, max_backoff_seconds=30))
    task = asyncio.ensure_future(retry.run(failing, code="embedding-failed"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == 1


async def test_a_toolkit_error_passes_through_with_its_own_code(sleeps: Sleeps) -> None:
    from graphrag_orm.embeddings import EmbeddingRejected

    async def rejected() -> None:
        raise EmbeddingRejected("embedding-dimensions", "vector 0 has 3 dimensions")

    with pytest.raises(EmbeddingRejected) as failure:
        await policy(sleeps).run(rejected, code="embedding-failed")
    assert failure.value.code == "embedding-dimensions"


async def test_a_custom_transient_test_replaces_the_default(sleeps: Sleeps) -> None:
    attempts = 0

    async def flaky() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise KeyError("flaky")
        return "done"

    retry = policy(sleeps, is_transient=lambda error: isinstance(error, KeyError), retry_after=lambda error: 0.25)
    assert await retry.run(flaky, code="extraction-failed") == "done"
    assert sleeps.waits == [0.25, 0.25]


async def test_a_client_that_retries_itself_can_refuse_every_retry(sleeps: Sleeps) -> None:
    async def down() -> None:
        raise ConnectionError("down")

    refuse_all = policy(sleeps, is_transient=lambda error: False)
    with pytest.raises(ModelCallFailed) as failure:
        await refuse_all.run(down, code="embedding-failed")
    assert failure.value.attempts == 1
    assert sleeps.waits == []


async def test_a_tally_counts_one_groups_retries_and_summaries_add_up(sleeps: Sleeps) -> None:
    failures = [ConnectionError("a"), TimeoutError("b")]

    async def recovering() -> int:
        if failures:
            raise failures.pop(0)
        return 1

    retry = policy(sleeps)
    document = RetryTally()
    await retry.run(recovering, code="embedding-failed", tally=document)
    failures.append(ConnectionError("c"))
    await retry.run(recovering, code="embedding-failed")
    assert document.summary() == RetrySummary(retries=2, rate_limited=0, waited_seconds=1.125 + 2.25)
    assert retry.summary.retries == 3
    total = document.summary() + RetrySummary(retries=1, rate_limited=1, waited_seconds=0.5)
    assert total == RetrySummary(retries=3, rate_limited=1, waited_seconds=1.125 + 2.25 + 0.5)
    assert total.to_json() == '{"retries":3,"rateLimited":1,"waitedSeconds":3.875}'


def sdk_response(status: int, headers: dict[str, str] | None = None) -> sdk_httpx.Response:
    request = sdk_httpx.Request("POST", "http://127.0.0.1/v1/embeddings")
    return sdk_httpx.Response(status, request=request, headers=headers or {})


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    return openai.APIStatusError("scripted", response=sdk_response(status, headers), body=None)


def test_default_classification() -> None:
    request = httpx.Request("POST", "http://127.0.0.1/v1/embeddings")
    assert all(is_transient_default(status_error(s)) for s in (408, 429, 502, 503, 504))
    assert not any(is_transient_default(status_error(s)) for s in (400, 401, 403, 404, 422, 500, 501, 599))
    overloaded = openai.APIStatusError("x", response=sdk_response(500), body={"error": {"message": "Overloaded"}})
    assert is_transient_default(overloaded)
    assert is_transient_default(openai.APIConnectionError(request=sdk_response(200).request))
    assert is_transient_default(openai.APITimeoutError(request=sdk_response(200).request))
    assert is_transient_default(httpx.ConnectError("refused", request=request))
    assert is_transient_default(httpx.ReadTimeout("slow", request=request))
    assert is_transient_default(
        httpx.HTTPStatusError("x", request=request, response=httpx.Response(503, request=request))
    )
    assert not is_transient_default(
        httpx.HTTPStatusError("x", request=request, response=httpx.Response(404, request=request))
    )
    assert is_transient_default(TimeoutError())  # asyncio.TimeoutError is the same class
    assert is_transient_default(ConnectionResetError())
    assert not is_transient_default(ValueError("bad"))
    assert not is_transient_default(asyncio.CancelledError())


def test_retry_hints_are_read_from_headers() -> None:
    assert retry_after_default(status_error(429, {"retry-after-ms": "250"})) == 0.25
    assert retry_after_default(status_error(429, {"Retry-After": "3"})) == 3.0
    assert retry_after_default(status_error(429, {"Retry-After": "-4"})) == 0.0
    assert retry_after_default(status_error(429, {"Retry-After": "soon"})) is None
    assert retry_after_default(status_error(429)) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    hint = retry_after_default(status_error(503, {"Retry-After": later}))
    assert hint is not None and 25 <= hint <= 31
    request = httpx.Request("POST", "http://127.0.0.1/v1/embeddings")
    plain = httpx.HTTPStatusError(
        "x", request=request, response=httpx.Response(429, request=request, headers={"Retry-After": "2"})
    )
    assert retry_after_default(plain) == 2.0
    assert retry_after_default(ConnectionError()) is None


async def test_an_http_date_hint_is_honoured(
    openai_server: OpenAIServer, embedder: OpenAIEmbedder, sleeps: Sleeps
) -> None:
    openai_server.rate_limit(retry_after=email.utils.formatdate(time.time() + 20, usegmt=True))
    await policy(sleeps).run(lambda: embedder.embed(["alpha"]), code="embedding-failed")
    assert len(sleeps.waits) == 1 and 15 <= sleeps.waits[0] <= 21


def test_options_are_bounded_and_callables_stay_out_of_json() -> None:
    defaults = RetryOptions()
    assert (defaults.max_retries, defaults.initial_backoff_seconds, defaults.max_backoff_seconds) == (4, 1.0, 60.0)
    assert defaults.jitter == 0.25
    for bad in ({"max_retries": 11}, {"jitter": 1.5}, {"initial_backoff_seconds": 10, "max_backoff_seconds": 5}):
        with pytest.raises(ConfigurationError) as refused:
            RetryOptions(**bad)
        assert refused.value.code == "invalid-option"
    custom = RetryOptions(is_transient=lambda error: True, retry_after=lambda error: None)
    assert "isTransient" not in custom.to_json()
    assert "retryAfter" not in custom.to_json()
    assert "isTransient" not in RetryOptions.model_json_schema(by_alias=True)["properties"]
