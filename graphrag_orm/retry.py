"""Retries of model calls: which failures are transient, how long to wait, what it cost.

Ingestion and extraction call models in parallel lanes; a call that fails for a
transient reason (a rate limit, a busy or unreachable gateway, a dropped connection, a
timeout; see :mod:`graphrag_orm.model_failures`) is tried
again with exponential backoff, and every other failure ends the call at once.
The model clients of this package are built with their own retries turned off,
so a call is never retried twice over. Retrieval and answers do not use this
policy: a person is waiting for them.

Nothing here logs or keeps request text: a failure is described by its exception
type and HTTP status only, because provider messages can echo the input.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random as _random
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import GraphRagError, ModelCallFailed
from graphrag_orm.model_failures import CLIENT_FAILURES, http_errors, is_transient_failure, is_transient_status
from graphrag_orm.values import Options, Value

__all__ = [
    "ModelCallFailed",
    "RetryOptions",
    "RetryPolicy",
    "RetrySummary",
    "RetryTally",
    "is_transient_default",
    "retry_after_default",
]

T = TypeVar("T")

_log = logging.getLogger(__name__)


class RetryOptions(Options):
    """How model calls of ingestion and extraction are retried.

    Bounds: ``max_retries`` 0..10 (4), ``initial_backoff_seconds`` 0..60 (1.0),
    ``max_backoff_seconds`` from ``initial_backoff_seconds`` to 600 (60.0),
    ``jitter`` 0..1 (0.25, the largest random fraction added to a backoff).
    ``is_transient`` replaces :func:`is_transient_default`; ``retry_after``
    replaces :func:`retry_after_default` (return seconds, or ``None`` for no hint).
    The two callables are left out of JSON and of the JSON schema.
    A value outside its bounds is ``ConfigurationError("invalid-option")``.
    """

    max_retries: int = Field(default=4, ge=0, le=10)
    initial_backoff_seconds: float = Field(default=1.0, ge=0.0, le=60.0)
    max_backoff_seconds: float = Field(default=60.0, ge=0.0, le=600.0)
    jitter: float = Field(default=0.25, ge=0.0, le=1.0)
    is_transient: SkipJsonSchema[Callable[[BaseException], bool] | None] = Field(default=None, exclude=True)
    retry_after: SkipJsonSchema[Callable[[BaseException], float | None] | None] = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _max_not_below_initial(self) -> RetryOptions:
        if self.max_backoff_seconds < self.initial_backoff_seconds:
            raise ValueError("max_backoff_seconds must be at least initial_backoff_seconds")
        return self


class RetrySummary(Value):
    """What retrying cost: retries made, how many answered a rate limit (429), seconds waited.

    Summaries add up with ``+``, so a run can merge the summaries of its documents.
    """

    retries: int = Field(default=0, ge=0)
    rate_limited: int = Field(default=0, ge=0)
    waited_seconds: float = Field(default=0.0, ge=0.0)

    def __add__(self, other: RetrySummary) -> RetrySummary:
        if not isinstance(other, RetrySummary):
            return NotImplemented
        return RetrySummary(
            retries=self.retries + other.retries,
            rate_limited=self.rate_limited + other.rate_limited,
            waited_seconds=self.waited_seconds + other.waited_seconds,
        )


class RetryTally:
    """A mutable accumulator of retries; :meth:`summary` reads it as a :class:`RetrySummary`.

    Safe to share between tasks and threads (updates take a lock), so one tally
    can collect the retries of a whole run while another collects one document's.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._retries = 0
        self._rate_limited = 0
        self._waited = 0.0

    def record(self, *, rate_limited: bool, waited_seconds: float) -> None:
        """Count one retry, whether it answered a rate limit, and the wait before it."""
        with self._lock:
            self._retries += 1
            self._rate_limited += int(rate_limited)
            self._waited += waited_seconds

    def summary(self) -> RetrySummary:
        """What this tally has counted so far."""
        with self._lock:
            return RetrySummary(retries=self._retries, rate_limited=self._rate_limited, waited_seconds=self._waited)


def _openai() -> Any:
    """The openai module when something imported it, else None.

    An openai error can only exist once openai is imported, so classifying errors never
    imports the SDK itself (``import graphrag_orm`` stays free of it).
    """
    return sys.modules.get("openai")


def status_of(error: BaseException) -> int | None:
    """The HTTP status an openai or httpx error (or a client's coded failure) answered with, or ``None``."""
    if isinstance(error, ModelCallFailed):
        return error.status
    openai = _openai()
    if openai is not None and isinstance(error, openai.APIStatusError):
        code = error.status_code
        return code if isinstance(code, int) else None
    if isinstance(error, http_errors("HTTPStatusError")):
        code = getattr(getattr(error, "response", None), "status_code", None)
        return code if isinstance(code, int) else None
    return None


def is_transient_default(error: BaseException) -> bool:
    """Whether ``error`` is worth another try when :class:`RetryOptions` names no test.

    Transient: a client's ``model-timeout`` and ``model-unavailable``; openai's
    ``APIStatusError`` and httpx's ``HTTPStatusError`` with 408, 429, 502, 503 or 504,
    or 500 when the error body says the server is overloaded (any other 500 is the
    server refusing this request, and is not retried); openai's ``APIConnectionError``
    and ``APITimeoutError``; httpx transport errors and timeouts; ``TimeoutError``
    (``asyncio.TimeoutError``) and ``ConnectionError``. Everything else, cancellation
    included, is not.
    """
    if isinstance(error, asyncio.CancelledError):
        return False
    if isinstance(error, ModelCallFailed) and error.code in CLIENT_FAILURES:
        return is_transient_failure(error)
    status = status_of(error)
    if status is not None:
        return is_transient_status(status, getattr(error, "body", None))
    openai = _openai()
    connection_errors: tuple[type[BaseException], ...] = () if openai is None else (openai.APIConnectionError,)
    return isinstance(error, (*connection_errors, *http_errors("TransportError"), TimeoutError, ConnectionError))


def _header(headers: Any, name: str) -> str | None:
    """A header value, case-insensitively, from httpx headers or a plain mapping."""
    if not isinstance(headers, Mapping) and not hasattr(headers, "get"):
        return None
    value = headers.get(name)
    if value is None and isinstance(headers, Mapping):
        for key, item in headers.items():
            if isinstance(key, str) and key.lower() == name:
                value = item
                break
    return value if isinstance(value, str) else None


def _seconds(value: str, divisor: float) -> float | None:
    try:
        seconds = float(value) / divisor
    except ValueError:
        return None
    if math.isnan(seconds):
        return None
    # An overflowing figure is an excessive wait, not a malformed one: keep it
    # infinite so it fails the call at once rather than being ignored.
    return max(seconds, 0.0)


def retry_after_default(error: BaseException) -> float | None:
    """The server's retry hint in seconds, read from the error's response headers.

    ``retry-after-ms`` (milliseconds) wins over ``retry-after`` (seconds, or an
    HTTP date). Returns ``None`` when the error carries no response or no
    readable hint; a hint in the past is 0. A client's coded failure is read through
    the SDK error it was raised from.
    """
    if isinstance(error, ModelCallFailed) and error.__cause__ is not None:
        error = error.__cause__
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = _header(headers, name)
        if value is not None:
            seconds = _seconds(value.strip(), divisor)
            if seconds is not None:
                return seconds
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


class RetryPolicy:
    """Runs a model call, retrying transient failures with backoff, and counts the retries.

    The wait before retry ``n`` (from 0) is ``initial * 2**n``, plus a random
    fraction of up to ``jitter`` of it, capped at ``max_backoff_seconds``. A
    server's retry hint is honoured instead; a hint longer than
    ``max_backoff_seconds`` fails the call at once, without waiting.

    ``sleep`` and ``random`` can be replaced (tests assert waits without sleeping).
    Never retried nor wrapped: ``asyncio.CancelledError`` (and every other
    ``BaseException`` that is not an ``Exception``), and a
    :class:`~graphrag_orm.errors.GraphRagError` the test does not call transient,
    because it already carries its own code; a client's failure of one call
    (``model-request-rejected``, ...) is wrapped in the caller's code like the SDK's error.
    """

    def __init__(
        self,
        options: RetryOptions | None = None,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options if options is not None else RetryOptions()
        self._sleep = sleep
        self._random = random
        self._is_transient = self.options.is_transient or is_transient_default
        self._retry_after = self.options.retry_after or retry_after_default
        self._tally = RetryTally()

    @property
    def summary(self) -> RetrySummary:
        """Every retry this policy has made, over all its calls."""
        return self._tally.summary()

    def backoff(self, attempt: int) -> float:
        """The wait before retry ``attempt`` (0 for the first) when the server gave no hint."""
        options = self.options
        base = options.initial_backoff_seconds * 2.0**attempt
        wait = base + base * options.jitter * self._random()
        return min(wait, options.max_backoff_seconds)

    async def run(
        self,
        operation: Callable[[], Awaitable[T]],
        *,
        code: str,
        tally: RetryTally | None = None,
    ) -> T:
        """Await ``operation()`` until it succeeds, or raise :class:`ModelCallFailed`.

        ``operation`` is called anew for each try (so it must build a fresh
        awaitable). ``code`` (required, e.g. ``embedding-failed`` or
        ``extraction-failed``) is the error code when the call fails for any reason
        but a rate limit. Each retry is counted in this policy's :attr:`summary`
        and, when given, in ``tally`` (a per-document or per-run count).
        """
        attempt = 0
        while True:
            try:
                return await operation()
            except Exception as error:
                transient = self._is_transient(error)
                own_failure = isinstance(error, ModelCallFailed) and error.code in CLIENT_FAILURES
                if not transient and isinstance(error, GraphRagError) and not own_failure:
                    raise
                status = status_of(error)
                rate_limited = status == 429
                failure_code = DocumentErrorCode.RATE_LIMITED.value if rate_limited else str(code)
                named = error.code if isinstance(error, GraphRagError) else type(error).__name__
                described = named + (f" (HTTP {status})" if status is not None else "")
                if not transient:
                    raise ModelCallFailed(
                        failure_code,
                        f"model call failed and is not retried: {described}",
                        attempts=attempt + 1,
                        status=status,
                    ) from error
                if attempt >= self.options.max_retries:
                    raise ModelCallFailed(
                        failure_code,
                        f"model call failed after {attempt + 1} attempts: {described}",
                        attempts=attempt + 1,
                        status=status,
                    ) from error
                hint = self._retry_after(error)
                if hint is not None and hint > self.options.max_backoff_seconds:
                    raise ModelCallFailed(
                        failure_code,
                        f"model call failed: {described} asked to wait {hint:.1f} s, more than "
                        f"the longest wait of {self.options.max_backoff_seconds:.1f} s",
                        attempts=attempt + 1,
                        status=status,
                    ) from error
                wait = hint if hint is not None else self.backoff(attempt)
                _log.info("retrying model call after %s in %.2f s (retry %d)", described, wait, attempt + 1)
                self._tally.record(rate_limited=rate_limited, waited_seconds=wait)
                if tally is not None:
                    tally.record(rate_limited=rate_limited, waited_seconds=wait)
                # The wait is counted before it happens, so a run cancelled mid-wait
                # still reports the retry it was waiting for.
                await self._sleep(wait)
                attempt += 1
