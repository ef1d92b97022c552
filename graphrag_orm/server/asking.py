"""The events of one ``/ask``: ``rag.answers.stream`` read update by update, as server-sent events.

(A global question, ``"mode": "global"``, is one call of ``rag.global_answers``, sent as
``retrieved`` then ``verified`` or ``refused``: :func:`global_events`.)

One streamed model call per request, the service's own. Control goes to the event
loop after every event, so a client that went away is noticed before the next part,
whatever the chat client does. Closing the generator this module returns, or cancelling
the task reading it (the client went away), closes the answer stream, which closes the
streamed HTTP request to the model; nothing more is produced, and the
``graphrag_orm.server`` logger records one line at INFO (``ask stream cancelled after
<n> events (last: <name>)``). A failure ends the stream with an ``error``
event holding only its code: ``retrieval-failed`` before ``retrieved`` (the question's
rewrite and the retrieval), ``model-failed`` after it. The exception is logged by type
and code, never its message, which may quote a provider's reply or a path.

Tracing: the stream runs under the request's OpenTelemetry context, so the answer's
spans join the request's trace: the span an ASGI instrumentation opened, else the
caller's ``traceparent``. ``retrieved`` reports that trace id, or None without either.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import anyio
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import format_trace_id

from graphrag_orm.answers.service import AnswersService
from graphrag_orm.answers.turns import Turn
from graphrag_orm.answers.values import AnswerReceipt, Completed, Delta, Retrieved
from graphrag_orm.errors import CallBudgetExceeded, ModelCallFailed, RecordingMissing
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.server.events import (
    ErrorEvent,
    RefusedEvent,
    RetrievedEvent,
    StreamErrorCode,
    VerifiedEvent,
    encode,
    event_name,
    event_of,
)

if TYPE_CHECKING:
    from graphrag_orm.communities import GlobalAnswers
    from graphrag_orm.retrieval.scope import Scope

__all__ = ["MAX_CLOSE_SECONDS", "ask_events", "global_events", "request_context"]

_log = logging.getLogger("graphrag_orm.server")

#: Seconds closing the answer stream may take once the stream is cancelled (closing the model call).
MAX_CLOSE_SECONDS: Final = 5.0


def request_context(headers: Mapping[str, str]) -> tuple[otel_context.Context, str | None]:
    """The context to answer under and its W3C trace id: the current span's, else the caller's
    ``traceparent`` (through the configured propagators), else the current context and None."""
    current = trace.get_current_span().get_span_context()
    if current.is_valid:
        return otel_context.get_current(), format_trace_id(current.trace_id)
    extracted = propagate.extract(headers)
    remote = trace.get_current_span(extracted).get_span_context()
    if remote.is_valid:
        return extracted, format_trace_id(remote.trace_id)
    return otel_context.get_current(), None


async def ask_events(
    answers: AnswersService,
    question: str,
    history: Sequence[Turn],
    options: RetrievalOptions,
    context: otel_context.Context,
    trace_id: str | None,
) -> AsyncGenerator[bytes, None]:
    """``retrieved``, ``delta``\\ s, then ``verified`` or ``refused``; or ``error`` with a code."""
    updates = answers.stream(question, history=history, retrieval=options)
    began = False
    sent = 0
    last = "none"
    try:
        while True:
            failure: Exception | None = None
            update: Retrieved | Delta | Completed | None = None
            # Attached around the await only, in this frame: never across a yield.
            token = otel_context.attach(context)
            try:
                update = await anext(updates)
            except StopAsyncIteration:
                pass
            except Exception as error:
                failure = error
            finally:
                otel_context.detach(token)
            if update is None:
                code = StreamErrorCode.MODEL_FAILED if began else StreamErrorCode.RETRIEVAL_FAILED
                _log_failure(failure, code)
                yield encode(ErrorEvent(code=code))
                return
            event = event_of(update, trace_id)
            yield encode(event)
            sent += 1
            last = event_name(event).value
            if isinstance(update, Retrieved):
                began = True
            elif isinstance(update, Completed):
                return
            # Hand control to the event loop between parts: a disconnect is seen here, and
            # the task is cancelled before another part is made or written.
            await asyncio.sleep(0)
    except (GeneratorExit, asyncio.CancelledError):
        _log.info("ask stream cancelled after %d events (last: %s)", sent, last)
        raise
    finally:
        # Shielded and bounded: a cancelled task must still close the model call.
        with anyio.move_on_after(MAX_CLOSE_SECONDS, shield=True):
            await updates.aclose()


async def global_events(
    corpus: GlobalAnswers,
    question: str,
    scope: Scope | None,
    context: otel_context.Context,
    trace_id: str | None,
) -> AsyncGenerator[bytes, None]:
    """A global question's events: ``retrieved`` (no items), then ``verified`` or ``refused``;
    or ``error``: ``model-failed`` when a call of the model's map or reduce failed, else
    ``retrieval-failed`` (the reports could not be read). The receipt counts the model's calls
    and tokens; ``answer_seconds`` is the whole answer (the map and reduce read as they go)."""
    began = time.perf_counter()
    token = otel_context.attach(context)
    try:
        answer = await corpus.answer(question, scope=scope)
    except Exception as error:
        model_failed = isinstance(error, ModelCallFailed | CallBudgetExceeded | RecordingMissing)
        code = StreamErrorCode.MODEL_FAILED if model_failed else StreamErrorCode.RETRIEVAL_FAILED
        _log_failure(error, code)
        yield encode(ErrorEvent(code=code))
        return
    finally:
        otel_context.detach(token)
    seconds = round(time.perf_counter() - began, 6)
    yield encode(
        RetrievedEvent(
            items=(),
            context_items=(),
            utf8_bytes=0,
            omitted_items=0,
            limits_reached=answer.limits_reached,
            scope=None,
            trace_id=trace_id,
        )
    )
    await asyncio.sleep(0)
    if answer.calls:
        receipt = AnswerReceipt(
            chat_calls=answer.calls,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            retrieval_seconds=0.0,
            answer_seconds=seconds,
        )
    else:
        receipt = AnswerReceipt(chat_calls=0, retrieval_seconds=seconds, answer_seconds=0.0)
    if answer.refused is not None:
        yield encode(RefusedEvent(reason=answer.refused, withdraws=False, receipt=receipt))
    else:
        yield encode(VerifiedEvent(answer=answer.answer or "", citations=answer.citations, receipt=receipt))


def _log_failure(error: Exception | None, code: StreamErrorCode) -> None:
    if error is None:  # the stream ended without Completed: not expected of the service
        _log.error("ask stream ended early [%s]", code.value)
        return
    given = getattr(error, "code", None)
    cause = given if isinstance(given, str) and len(given) <= 64 else "-"
    _log.error("ask stream failed [%s]: %s (%s)", code.value, type(error).__name__, cause)
