"""One repair turn for an answer whose citations do not verify.

A weak model quotes the right sentence with a capital it does not have, or credits a
quote to the neighbouring evidence item. When the first reply is refused as
``citation-not-found``, the model is told which quote was not found in which item and
asked once more: the first request's user message, its reply, then the note, as one user
message (so the evidence and question blocks stay in the last user message, where every
reader of the request looks for them).
The second reply is judged by exactly the same rules as the first: nothing is forgiven
that :mod:`graphrag_orm.citations` does not forgive, and a second failure is the refusal.
The note names the chunk id and the quote as the model wrote them (bounded), never
anything the evidence does not already hold.
"""

from __future__ import annotations

import json
from typing import Final

from graphrag_orm.answers.prompt import ReplyReading
from graphrag_orm.chat.base import ChatMessage, ChatRequest
from graphrag_orm.citations import locate
from graphrag_orm.evidence import Evidence

__all__ = ["MAX_NOTED_QUOTE_CHARS", "repair_request", "unfound_citation"]

MAX_NOTED_QUOTE_CHARS: Final = 300
"""The most characters of the failed quote the repair note repeats; a longer one is cut with an ellipsis."""


def unfound_citation(reading: ReplyReading, evidence: Evidence) -> tuple[str, str, bool] | None:
    """The first citation that does not verify: ``(chunk_id, quote, is_item)``, or ``None`` when all do."""
    for cited in reading.citations:
        item = evidence.item(cited.chunk_id)
        if item is None:
            return cited.chunk_id, cited.quote, False
        if locate(item, cited.quote) is None:
            return cited.chunk_id, cited.quote, True
    return None


def _note(chunk_id: str, quote: str, is_item: bool) -> str:
    shown = quote if len(quote) <= MAX_NOTED_QUOTE_CHARS else quote[: MAX_NOTED_QUOTE_CHARS - 1] + "…"
    where = (
        f"was not found in the text of the evidence item with chunkId {json.dumps(chunk_id)}"
        if is_item
        else f"cites chunkId {json.dumps(chunk_id)}, which is not an evidence item"
    )
    return (
        f"Your citation with the quote {json.dumps(shown, ensure_ascii=False)} {where}. "
        "A quote must be copied exactly from the item whose chunkId it names: same words, same case, "
        "same spelling, one unbroken stretch. Reply again with the whole JSON object, quoting exactly; "
        "if the items do not answer the question, set answer and citations to null and say what is "
        "missing in insufficient."
    )


def repair_request(first: ChatRequest, reply_text: str, failure: tuple[str, str, bool]) -> ChatRequest:
    """The first request with its user message followed by the reply and the note on the failed citation."""
    *before, asked = first.messages
    content = f"{asked.content}\n\n<previous-reply>\n{reply_text.strip()}\n</previous-reply>\n\n{_note(*failure)}"
    return first.model_copy(update={"messages": (*before, ChatMessage(role="user", content=content))})
