"""How a failed call to a model endpoint becomes one coded error, and which failures are worth another try.

The model clients raise :class:`~graphrag_orm.errors.ModelCallFailed` themselves, so
every surface (CLI, HTTP, tools, MCP, evaluation) reports a model failure as a code and
one line, never as an SDK traceback:

- ``model-unreachable``: no connection could be opened before the endpoint ever answered
  (see :func:`unreachable`);
- ``model-timeout``: no answer within the client's timeout (time queued at the server counts);
- ``model-unavailable``: the connection broke, or the server said it is busy or down
  (:data:`TRANSIENT_STATUSES`, or a 500 whose body says it is overloaded);
- ``model-request-rejected``: any other status; the server refused this request, and the
  same request would be refused again (llama-cpp-python answers a ``response_format`` it
  does not support with a 500, for instance).

Only ``model-timeout`` and ``model-unavailable`` are transient. Messages name the owner,
the endpoint (no key, no query), the status and the setting to change; never the
provider's message, which can echo the input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ModelCallFailed

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "CLIENT_FAILURES",
    "TRANSIENT_STATUSES",
    "endpoint_of",
    "failure_of",
    "http_errors",
    "is_transient_failure",
    "is_transient_status",
    "unreachable",
]

TRANSIENT_STATUSES: Final = frozenset({408, 429, 502, 503, 504})
"""Statuses worth another try: a timeout at the server, a rate limit, a gateway or a server that is busy or down."""

CLIENT_FAILURES: Final = frozenset(
    {ErrorCode.MODEL_TIMEOUT.value, ErrorCode.MODEL_UNAVAILABLE.value, ErrorCode.MODEL_REQUEST_REJECTED.value}
)
"""The codes a client raises for one failed call; a retry policy classifies them as it would the SDK's error."""

_REJECTED_HINTS: Final = {
    "OpenAIChat": "; a server without response_format json_schema may need GRAPHRAG_STRUCTURED_OUTPUT=json_object"
}

_TRANSIENT_CODES: Final = frozenset({ErrorCode.MODEL_TIMEOUT.value, ErrorCode.MODEL_UNAVAILABLE.value})


#: The HTTP clients whose errors are classified (recent openai releases speak httpx2; its
#: errors are classified like httpx's).
_HTTP_CLIENTS = ("httpx", "httpx2")


def http_errors(name: str) -> tuple[type[BaseException], ...]:
    """The ``name`` error classes (``TransportError``, ``HTTPStatusError``) of the HTTP clients
    something imported.

    As with openai, an httpx error can only exist once httpx is imported, so classifying
    errors never imports an HTTP client (a process that calls no model never loads one).
    """
    found: list[type[BaseException]] = []
    for client in _HTTP_CLIENTS:
        cls = getattr(sys.modules.get(client), name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


def _overloaded(body: Any) -> bool:
    """Whether a 500's error body says the server is overloaded (read, never logged)."""
    return "overload" in str(body).lower()


def is_transient_status(status: int, body: Any = None) -> bool:
    """Whether an HTTP status (with its error body, for a 500) is worth another try."""
    return status in TRANSIENT_STATUSES or (status == 500 and _overloaded(body))


def is_transient_failure(error: ModelCallFailed) -> bool:
    """Whether a client's own coded failure is worth another try."""
    return error.code in _TRANSIENT_CODES


def failure_of(
    error: BaseException, client: AsyncOpenAI, owner: str, *, answered: bool, timeout: float | None
) -> ModelCallFailed | None:
    """The coded failure an SDK error stands for, or ``None`` when it is not one of the SDK's."""
    import openai

    refused = None if answered else unreachable(error, client, owner)
    if refused is not None:
        return refused
    endpoint = endpoint_of(client)
    if isinstance(error, (openai.APITimeoutError, *http_errors("TimeoutException"))):
        waited = f" within {timeout:g} s" if timeout is not None else ""
        return ModelCallFailed(
            ErrorCode.MODEL_TIMEOUT,
            f"{owner}: the model at {endpoint} did not answer{waited}; time queued at the server counts "
            "(raise GRAPHRAG_CHAT_TIMEOUT, lower the output limits, or use one lane: GRAPHRAG_LANES=1)",
            attempts=1,
            status=None,
        )
    if isinstance(error, (openai.APIConnectionError, *http_errors("TransportError"))):
        return ModelCallFailed(
            ErrorCode.MODEL_UNAVAILABLE,
            f"{owner}: the connection to the model at {endpoint} broke before a whole reply",
            attempts=1,
            status=None,
        )
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        if is_transient_status(status, error.body):
            return ModelCallFailed(
                ErrorCode.MODEL_UNAVAILABLE,
                f"{owner}: the model at {endpoint} is busy or down (HTTP {status})",
                attempts=1,
                status=status,
            )
        hint = _REJECTED_HINTS.get(owner, "")
        return ModelCallFailed(
            ErrorCode.MODEL_REQUEST_REJECTED,
            f"{owner}: the model at {endpoint} refused the request (HTTP {status}){hint}",
            attempts=1,
            status=status,
        )
    return None


def endpoint_of(client: AsyncOpenAI) -> str:
    """The client's endpoint as messages show it: scheme, host, port and path (no user information, no query)."""
    parts = urlsplit(str(client.base_url))
    host = parts.hostname or ""
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def _never_connected(error: BaseException) -> str | None:
    """The name of the connect failure under an SDK connection error (refused, unknown host), or None.

    A timeout, a dropped connection or a cut stream is not one: the endpoint was reached.
    """
    from openai import APIConnectionError, APITimeoutError

    if not isinstance(error, APIConnectionError) or isinstance(error, APITimeoutError):
        return None
    cause: BaseException | None = error.__cause__ or error.__context__
    for _ in range(8):  # the chain is short; a bound keeps a cyclic one from looping
        if cause is None:
            return None
        if type(cause).__name__ == "ConnectError" or isinstance(cause, ConnectionRefusedError):
            return type(cause).__name__
        cause = cause.__cause__ or cause.__context__
    return None


def unreachable(error: BaseException, client: AsyncOpenAI, owner: str) -> ModelCallFailed | None:
    """``ModelCallFailed("model-unreachable")`` when ``error`` says no connection could be opened.

    The clients raise it only while they have never had an answer: a closed port or an
    unknown host on the first call is a setting to fix, not a blip to retry (it is a
    :class:`~graphrag_orm.errors.GraphRagError`, so a retry policy passes it on at once).
    After one answer, the same failure stays the SDK's transient error. The message names
    the endpoint and ``OPENAI_BASE_URL``, never the key.
    """
    failure = _never_connected(error)
    if failure is None:
        return None
    return ModelCallFailed(
        ErrorCode.MODEL_UNREACHABLE,
        f"{owner}: the model endpoint {endpoint_of(client)} is not reachable ({failure}); check OPENAI_BASE_URL, "
        "or set GRAPHRAG_MODEL_MODE=offline to use the offline stand-ins",
        attempts=1,
        status=None,
    )
