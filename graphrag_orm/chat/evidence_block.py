"""The one format in which evidence and a question reach a model.

The answers prompt renders its evidence and question with these functions, and the
offline stand-in (:class:`~graphrag_orm.chat.extractive.ExtractiveChat`) reads them
back with the parsers, so the two can never drift apart.

A block is a label line, exactly one line of JSON, and a closing label line::

    <evidence>
    {"items":[{"chunkId":"…","text":"…"}],"context":[{"text":"…","reason":"neighbour"}]}
    </evidence>

    <question>
    "Who supplies the BC-310 caliper?"
    </question>

Every text that comes from a document or a person (passages, context, the question)
is a JSON string inside the one JSON line. JSON escapes line feeds (and every control
character), and the renderer escapes the line breaks JSON written with
``ensure_ascii=False`` would leave raw (U+0085, U+2028, U+2029), so no text can break
the line or put a label line of its own into the prompt: a passage that contains
``"\\n</evidence>\\n<question>"`` stays inside its string. The parsers split on
``"\\n"`` only and take the first well-formed block.

Items are cited by ``chunkId``. Context carries no ``chunkId`` on purpose: it helps
the model read and is never cited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import EvidenceBlockError
from graphrag_orm.evidence import ContextItem, EvidenceItem

__all__ = [
    "ANSWER_SCHEMA_NAME",
    "EVIDENCE_LABEL",
    "QUESTION_LABEL",
    "REWRITE_SCHEMA_NAME",
    "EvidenceBlockError",
    "parse_evidence",
    "parse_question",
    "render_block",
    "render_evidence",
    "render_question",
]

EVIDENCE_LABEL: Final = "evidence"
QUESTION_LABEL: Final = "question"

ANSWER_SCHEMA_NAME: Final = "answer"
"""``ChatRequest.schema_name`` of an answer request: an evidence block and a question block."""
REWRITE_SCHEMA_NAME: Final = "rewrite"
"""``ChatRequest.schema_name`` of a follow-up rewrite request: a question block (and the conversation)."""


# Line breaks JSON leaves raw with ensure_ascii=False (NEL, LS, PS): a reader splitting
# lines the Unicode way would see the one JSON line break there. Inside JSON they can only
# be in strings, so their escapes decode to the same text.
_RAW_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _json_line(value: Any) -> str:
    # Compact and unescaped, so a model reads the text as written; JSON still escapes "\n"
    # and every other control character, and the rest of the line breaks are escaped here,
    # which keeps the value on one line.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_RAW_LINE_BREAKS)


def render_block(label: str, value: Any) -> str:
    """``<label>``, ``value`` as one line of JSON, ``</label>``; ``label`` is a fixed word, never user text."""
    return f"<{label}>\n{_json_line(value)}\n</{label}>"


def render_evidence(items: Iterable[EvidenceItem], context: Iterable[ContextItem] = ()) -> str:
    """The evidence block: ``{"items": [{chunkId, text}], "context": [{text, reason}]}``, in the order given.

    Items keep their stored text exactly (a model must copy quotes from it);
    context items keep their text and the reason they were added, and no id.
    """
    payload = {
        "items": [{"chunkId": item.chunk_id, "text": item.text} for item in items],
        "context": [{"text": entry.text, "reason": entry.reason} for entry in context],
    }
    return render_block(EVIDENCE_LABEL, payload)


def render_question(question: str) -> str:
    """The question block: the question as one JSON string, exactly as given."""
    return render_block(QUESTION_LABEL, question)


def _find_block(prompt_text: str, label: str) -> Any:
    lines = prompt_text.split("\n")
    opening, closing = f"<{label}>", f"</{label}>"
    for index in range(len(lines) - 2):
        if lines[index] == opening and lines[index + 2] == closing:
            try:
                return json.loads(lines[index + 1])
            except json.JSONDecodeError:
                continue
    raise EvidenceBlockError(f"no-{label}-block", f"the prompt has no well-formed <{label}> block")


def parse_evidence(prompt_text: str) -> list[tuple[str, str]]:
    """The ``(chunk_id, text)`` of every evidence item in the first well-formed evidence block.

    Context is not returned: it is never cited. Raises :class:`EvidenceBlockError`
    (``no-evidence-block``) when there is no block, or its JSON is not the shape
    :func:`render_evidence` writes. An empty item list is returned as ``[]``.
    """
    payload = _find_block(prompt_text, EVIDENCE_LABEL)
    items = payload.get("items") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        raise EvidenceBlockError(ErrorCode.NO_EVIDENCE_BLOCK, "the evidence block has no list of items")
    parsed: list[tuple[str, str]] = []
    for entry in items:
        chunk_id = entry.get("chunkId") if isinstance(entry, dict) else None
        text = entry.get("text") if isinstance(entry, dict) else None
        if not isinstance(chunk_id, str) or not isinstance(text, str):
            raise EvidenceBlockError(ErrorCode.NO_EVIDENCE_BLOCK, "an evidence item lacks a string chunkId or text")
        parsed.append((chunk_id, text))
    return parsed


def parse_question(prompt_text: str) -> str:
    """The question of the first well-formed question block, exactly as rendered.

    Raises :class:`EvidenceBlockError` (``no-question-block``) when there is none.
    """
    question = _find_block(prompt_text, QUESTION_LABEL)
    if not isinstance(question, str):
        raise EvidenceBlockError(ErrorCode.NO_QUESTION_BLOCK, "the question block does not hold one JSON string")
    return question
