"""The events of ``POST {prefix}/ask``, their JSON and their server-sent-event framing.

A stream is ``retrieved`` once, ``delta`` zero or more times, then exactly one of
``verified`` or ``refused``; or it ends with ``error`` (``retrieval-failed`` before
``retrieved``, ``model-failed`` after it). Data is one line of camelCase JSON (JSON
escapes line breaks, so no text can end an event early).

A global question (``"mode": "global"``) sends the same events without deltas: ``retrieved``
with no items (the community reports are its evidence; its ``limitsReached`` are the map's),
then ``verified`` (the answer, each citation located in the stored bytes now) or
``refused`` with a :class:`~graphrag_orm.codes.GlobalRefusal` reason (``no-reports``,
``no-relevant-finding``, ``citation-not-found``; with a chat model also ``model-declined``,
``unreadable-reply``, ``no-verified-claim``); its receipt counts the model's calls (none offline).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from graphrag_orm.answers.values import AnswerReceipt, Completed, Delta, Retrieved
from graphrag_orm.citations import Citation
from graphrag_orm.codes import GlobalRefusal, RefusalReason, StreamErrorCode
from graphrag_orm.evidence import ContextItem, EvidenceItem, ScopeTrace
from graphrag_orm.values import Limit, Value

__all__ = [
    "DeltaEvent",
    "ErrorEvent",
    "EventName",
    "RefusedEvent",
    "RetrievedEvent",
    "StreamErrorCode",
    "VerifiedEvent",
    "encode",
    "event_name",
    "event_of",
    "event_types",
]


class EventName(StrEnum):
    RETRIEVED = "retrieved"
    DELTA = "delta"
    VERIFIED = "verified"
    REFUSED = "refused"
    ERROR = "error"


class RetrievedEvent(Value):
    """The evidence the answer will stand on; ``trace_id`` is the W3C trace id (32 hex), or None."""

    items: tuple[EvidenceItem, ...]
    context_items: tuple[ContextItem, ...]
    utf8_bytes: int
    omitted_items: int
    limits_reached: tuple[Limit, ...]
    scope: ScopeTrace | None
    trace_id: str | None = Field(pattern=r"^[0-9a-f]{32}$")


class DeltaEvent(Value):
    """The next piece of the answer text; provisional until ``verified``."""

    text: str
    provisional: bool = True


class VerifiedEvent(Value):
    """The checked answer: its text replaces the deltas; each citation is located in the stored bytes."""

    answer: str
    citations: tuple[Citation, ...]
    receipt: AnswerReceipt


class RefusedEvent(Value):
    """A refusal with its reason; ``withdraws`` when deltas were sent and must be taken back.

    A global question's reason is a ``GlobalRefusal`` (``no-reports``, ``no-relevant-finding``,
    ``citation-not-found``, ``model-declined``, ``unreadable-reply``, ``no-verified-claim``)."""

    reason: RefusalReason | GlobalRefusal
    withdraws: bool
    receipt: AnswerReceipt


class ErrorEvent(Value):
    """The stream failed; only the code, never a message."""

    code: StreamErrorCode


Event = RetrievedEvent | DeltaEvent | VerifiedEvent | RefusedEvent | ErrorEvent

_NAMES: dict[type[Value], EventName] = {
    RetrievedEvent: EventName.RETRIEVED,
    DeltaEvent: EventName.DELTA,
    VerifiedEvent: EventName.VERIFIED,
    RefusedEvent: EventName.REFUSED,
    ErrorEvent: EventName.ERROR,
}


def event_types() -> tuple[tuple[EventName, type[Value]], ...]:
    """Each event's name and the value its data is, in the order a stream sends them."""
    return tuple((name, model) for model, name in _NAMES.items())


def event_of(update: Retrieved | Delta | Completed, trace_id: str | None = None) -> Event:
    """The event of one update of ``rag.answers.stream``."""
    if isinstance(update, Retrieved):
        evidence = update.evidence
        return RetrievedEvent(
            items=evidence.items,
            context_items=evidence.context,
            utf8_bytes=evidence.utf8_bytes,
            omitted_items=evidence.omitted_items,
            limits_reached=evidence.limits_reached,
            scope=evidence.scope,
            trace_id=trace_id,
        )
    if isinstance(update, Delta):
        return DeltaEvent(text=update.text)
    answer = update.answer
    if answer.answered:
        return VerifiedEvent(answer=answer.text or "", citations=answer.citations, receipt=answer.receipt)
    return RefusedEvent(
        reason=answer.reason or RefusalReason.UNREADABLE_RESPONSE, withdraws=update.withdraws, receipt=answer.receipt
    )


def event_name(event: Event) -> EventName:
    """The name ``event`` is sent under."""
    return _NAMES[type(event)]


def encode(event: Event) -> bytes:
    """One server-sent event: ``event: <name>``, one ``data:`` line of JSON, a blank line."""
    return f"event: {event_name(event).value}\ndata: {event.to_json()}\n\n".encode()
