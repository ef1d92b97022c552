"""The answer request: instructions, the evidence and question blocks, and the reply's schema.

The request is a pure function of the evidence (its items, context and question)
and the output bound, so one recorded or scripted reply serves ``answer()`` and
``stream()`` alike: :meth:`ChatRequest.fingerprint` is the same for both.

The reply's schema meets strict structured output's rules: one closed object whose
fields are all required, the optional ones nullable::

    {"answer": string|null,
     "citations": [{"chunkId": string, "quote": string}] | null,
     "insufficient": string|null}

:func:`parse_reply` also reads the two shapes of API.md section 7, with absent keys
read as ``null``: ``{"answer": "...", "citations": [...]}`` and
``{"insufficient": "..."}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from graphrag_orm.chat.base import ChatRequest, json_request
from graphrag_orm.chat.endpoint import nullable
from graphrag_orm.chat.evidence_block import ANSWER_SCHEMA_NAME, render_evidence, render_question
from graphrag_orm.chat.reply_json import is_utf8, read_object
from graphrag_orm.evidence import Evidence

__all__ = [
    "ANSWER_INSTRUCTIONS",
    "ANSWER_SCHEMA",
    "ReplyCitation",
    "ReplyReading",
    "answer_request",
    "parse_reply",
]

ANSWER_INSTRUCTIONS: Final = """\
You answer questions from evidence, and only from evidence.

The user message holds an <evidence> block and a <question> block, each one line of JSON.
"items" are the passages you may cite, each with its chunkId. "context" entries only help
you read (neighbouring passages, query results): never cite them and never answer from
them alone.

Reply with one JSON object: {"answer": ..., "citations": ..., "insufficient": ...}.

When the items answer the question:
- "answer": a short answer in your own words, using only what the items say.
- "citations": one or more {"chunkId": ..., "quote": ...}, enough to support every claim
  of the answer. "chunkId" is the chunkId of the item the quote comes from. "quote" is
  copied exactly from that item's text, as one unbroken stretch: same words, same case,
  same spelling. Never join text from two items or from two places in one item; when
  speech is interrupted by narration, quote each part of the speech separately.
- "insufficient": null.

When the items do not answer the question:
- "answer": null, "citations": null,
- "insufficient": one sentence saying what is missing.

Never use outside knowledge, and never guess."""

_NULLABLE_STRING: Final = nullable({"type": "string"})

ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "answer": _NULLABLE_STRING,
        "citations": nullable(
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"chunkId": {"type": "string"}, "quote": {"type": "string"}},
                    "required": ["chunkId", "quote"],
                    "additionalProperties": False,
                },
            }
        ),
        "insufficient": _NULLABLE_STRING,
    },
    "required": ["answer", "citations", "insufficient"],
    "additionalProperties": False,
}
"""The reply's JSON schema, strict-compatible (closed objects, all fields required, optional ones nullable)."""

_REPLY_KEYS: Final = frozenset(ANSWER_SCHEMA["properties"])
_CITATION_KEYS: Final = frozenset(("chunkId", "quote"))


def answer_request(evidence: Evidence, max_output_tokens: int) -> ChatRequest:
    """The chat request for ``evidence``: instructions, then the evidence and question blocks.

    Strict structured output with :data:`ANSWER_SCHEMA`, named ``"answer"``,
    temperature 0. The evidence's question is the one answered (after a follow-up
    rewrite, the standalone question).
    """
    user = (
        "Answer the question from the evidence items. Cite items by chunkId; never cite context.\n\n"
        f"{render_evidence(evidence.items, evidence.context)}\n\n"
        f"{render_question(evidence.question)}"
    )
    return json_request(
        ANSWER_INSTRUCTIONS, user, schema=ANSWER_SCHEMA, name=ANSWER_SCHEMA_NAME, max_output_tokens=max_output_tokens
    )


@dataclass(frozen=True, slots=True)
class ReplyCitation:
    """One citation as the model wrote it: not yet located."""

    chunk_id: str
    quote: str


@dataclass(frozen=True, slots=True)
class ReplyReading:
    """What a reply says: an answer with citations, a decline, both, or nothing readable.

    Either ``problem`` is set (unreadable) and nothing else, or at least one of
    ``answer`` (non-blank, untrimmed, with ``citations``, possibly empty) and
    ``declined`` (the model's reason) is. A small model under the strict schema
    often fills both; :func:`~graphrag_orm.answers.service.verify` decides.
    """

    answer: str | None = None
    citations: tuple[ReplyCitation, ...] = ()
    declined: str | None = None
    problem: str | None = None


def parse_reply(text: str, *, truncated: bool = False) -> ReplyReading:
    """Read a reply under these rules; never raises.

    Unreadable (``problem`` set): a reply cut at the output limit (``truncated``);
    text that is not one JSON value (whitespace around it is allowed; a Markdown
    fence is not); a value that is not an object; an unknown or duplicate key; a
    field of the wrong type (``answer`` and ``insufficient`` string or null,
    ``citations`` an array or null of objects with exactly the string fields
    ``chunkId`` and ``quote``); a string holding a lone surrogate; and an object
    that neither answers nor declines (no non-blank ``answer`` or ``insufficient``).

    Declined: ``insufficient`` holds non-whitespace text; a blank one (``""``) reads
    as null. Answered: a non-blank ``answer``; ``citations`` null or absent reads as
    none. Both are read when both are there: which one stands is the citations'
    check's to say, not the parser's.
    """
    if truncated:
        return ReplyReading(problem="the reply was cut off at the output limit")
    value = read_object(text, _REPLY_KEYS)
    if isinstance(value, str):
        return ReplyReading(problem=value)
    answer, citations, insufficient = value.get("answer"), value.get("citations"), value.get("insufficient")
    if not isinstance(answer, str | None) or not isinstance(insufficient, str | None):
        return ReplyReading(problem="answer and insufficient must be strings or null")
    if not isinstance(citations, list | None):
        return ReplyReading(problem="citations must be an array or null")
    read: list[ReplyCitation] = []
    for entry in citations or []:
        if not isinstance(entry, dict) or set(entry) != _CITATION_KEYS:
            return ReplyReading(problem="a citation is not an object of chunkId and quote")
        chunk_id, quote = entry["chunkId"], entry["quote"]
        if not isinstance(chunk_id, str) or not isinstance(quote, str):
            return ReplyReading(problem="a citation's chunkId and quote must be strings")
        read.append(ReplyCitation(chunk_id, quote))
    strings = [s for s in (answer, insufficient, *(c.chunk_id for c in read), *(c.quote for c in read)) if s]
    if not all(is_utf8(s) for s in strings):
        return ReplyReading(problem="a string holds a lone surrogate")
    declined = insufficient if insufficient is not None and insufficient.strip() else None
    if answer is None or not answer.strip():
        if declined is not None:
            return ReplyReading(declined=declined)
        return ReplyReading(problem="the reply neither answers nor says the evidence is insufficient")
    return ReplyReading(answer=answer, citations=tuple(read), declined=declined)
