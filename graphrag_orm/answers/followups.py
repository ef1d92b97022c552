"""Follow-up questions: one chat call rewrites the question so that it stands alone.

Retrieval embeds and searches the question as written, so "Which organization does
he work for?" finds nothing about the person meant. With history, the answers
service first asks the chat client for ``{"question": "..."}`` (strict schema, named
``"rewrite"``), then retrieves the rewritten question.

Bounds:

- the newest :data:`MAX_TURNS` (6) turns are sent, oldest first; with more, the
  evidence reports ``Limit("HistoryTurns", 6)``;
- each earlier answer is cut to :data:`MAX_ANSWER_CHARS` (1,000) characters, and
  each earlier question to the retrieval's ``max_question_chars``;
- a rewrite longer than :data:`MAX_REWRITE_CHARS` (2,000) characters, or than
  ``max_question_chars`` when that is smaller, or holding a line break, is unreadable.

Outcomes (:class:`RewriteOutcome`): ``rewritten``; ``unchanged`` when the reply is
the question as asked (compared after trimming whitespace); ``unreadable`` when the
reply is not that JSON, is cut off at the output limit, or breaks a bound, and the
question is then retrieved as asked. An exception from the chat client is not an
unreadable reply: it propagates, and nothing is retrieved.

The toolkit keeps no conversation: the caller passes the history each time. Earlier
answers are never evidence: they reach only the rewrite, never the answer prompt.
The ``GraphRag.Rewrite`` span carries the turns used, the outcome and token counts,
never the question, the history or the rewrite.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from graphrag_orm.answers.turns import Turn
from graphrag_orm.chat.base import ChatClient, ChatReply, ChatRequest, json_request
from graphrag_orm.chat.evidence_block import REWRITE_SCHEMA_NAME, render_block, render_question
from graphrag_orm.codes import LimitName
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_REWRITE_CHARS",
    "MAX_TURNS",
    "REWRITE_INSTRUCTIONS",
    "REWRITE_SCHEMA",
    "RewriteOutcome",
    "Rewritten",
    "read_rewrite",
    "rewrite",
    "rewrite_request",
]

MAX_TURNS: Final = 6
MAX_ANSWER_CHARS: Final = 1_000
MAX_REWRITE_CHARS: Final = 2_000
REWRITE_OUTPUT_TOKENS: Final = 1_024
"""The rewrite call's output bound: room for 2,000 characters of question and its JSON."""

CONVERSATION_LABEL: Final = "conversation"

# Every line separator str.splitlines() knows: a rewrite must be one line in any reader.
_LINE_BREAKS: Final = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")

REWRITE_INSTRUCTIONS: Final = """\
You rewrite a follow-up question so that it can be understood without the conversation.

The user message holds a <conversation> block (earlier turns, oldest first, as JSON) and a
<question> block (the new question, as a JSON string).
- Replace pronouns and references ("he", "it", "that release") with what they refer to
  in the conversation.
- Keep the question's meaning, language and form. Do not answer it and add nothing else.
- If the question already stands alone, return it exactly as it is.

Reply with one JSON object: {"question": "..."}, the question on one line."""

REWRITE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"question": {"type": "string"}},
    "required": ["question"],
    "additionalProperties": False,
}


class RewriteOutcome(StrEnum):
    """What became of a follow-up: rewritten, already standalone, or an unreadable reply."""

    REWRITTEN = "rewritten"
    UNCHANGED = "unchanged"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class Rewritten:
    """The question to retrieve, the outcome, the turns used, the bounds reached, and the call's reply."""

    standalone: str
    outcome: RewriteOutcome
    turns_used: int
    limits: tuple[Limit, ...]
    reply: ChatReply


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def rewrite_request(question: str, history: Sequence[Turn], max_question_chars: int) -> ChatRequest:
    """The rewrite request for ``question`` and the newest :data:`MAX_TURNS` turns of ``history``."""
    turns = [
        {
            "question": _cut(turn.question, max_question_chars),
            "answer": None if turn.answer is None else _cut(turn.answer, MAX_ANSWER_CHARS),
        }
        for turn in history[-MAX_TURNS:]
    ]
    user = f"{render_block(CONVERSATION_LABEL, turns)}\n\n{render_question(question)}"
    return json_request(
        REWRITE_INSTRUCTIONS,
        user,
        schema=REWRITE_SCHEMA,
        name=REWRITE_SCHEMA_NAME,
        max_output_tokens=REWRITE_OUTPUT_TOKENS,
    )


def read_rewrite(reply: ChatReply, question: str, max_question_chars: int) -> tuple[str, RewriteOutcome]:
    """The question to retrieve and the outcome, by the module's rules; never raises."""
    if reply.truncated:
        return question, RewriteOutcome.UNREADABLE
    try:
        value = json.loads(reply.text)
    except ValueError:
        return question, RewriteOutcome.UNREADABLE
    standalone = value.get("question") if isinstance(value, dict) and set(value) == {"question"} else None
    if not isinstance(standalone, str):
        return question, RewriteOutcome.UNREADABLE
    standalone = standalone.strip()
    if (
        not standalone
        or len(standalone) > min(MAX_REWRITE_CHARS, max_question_chars)
        or any(char in _LINE_BREAKS for char in standalone)
    ):
        return question, RewriteOutcome.UNREADABLE
    try:
        standalone.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a "\ud800" escape
        return question, RewriteOutcome.UNREADABLE
    if standalone == question.strip():
        return question, RewriteOutcome.UNCHANGED
    return standalone, RewriteOutcome.REWRITTEN


async def rewrite(chat: ChatClient, question: str, history: Sequence[Turn], max_question_chars: int) -> Rewritten:
    """One chat call that makes ``question`` stand alone, traced as ``GraphRag.Rewrite``."""
    turns_used = min(len(history), MAX_TURNS)
    limits = (Limit(name=LimitName.HISTORY_TURNS.value, value=MAX_TURNS),) if len(history) > MAX_TURNS else ()
    with span(SpanName.REWRITE, turns=turns_used) as traced:
        reply = await chat.complete(rewrite_request(question, history, max_question_chars))
        standalone, outcome = read_rewrite(reply, question, max_question_chars)
        traced.set("outcome", outcome.value)
        if reply.usage is not None and reply.usage.input_tokens is not None:
            traced.set("input_tokens", reply.usage.input_tokens)
        if reply.usage is not None and reply.usage.output_tokens is not None:
            traced.set("output_tokens", reply.usage.output_tokens)
    return Rewritten(standalone, outcome, turns_used, limits, reply)
