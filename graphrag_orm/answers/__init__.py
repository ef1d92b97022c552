"""Answers with evidence: every citation located in the stored text, or a refusal with its reason.

``AnswersService(retriever, chat, AnswersOptions()).answer(question)`` returns an
:class:`Answer`; ``stream(question)`` yields ``Retrieved``, ``Delta``\\ s and
``Completed``. Follow-ups pass ``history=[Turn(...), ...]`` and are rewritten to stand
alone first. ``AnswerExport`` writes an answer as one JSON document, reads it back, and
checks its citations against its evidence without a database.
"""

from typing import TYPE_CHECKING

from graphrag_orm.answers.export import EXPORT_FORMAT, AnswerExport, ExportError
from graphrag_orm.answers.followups import (
    MAX_ANSWER_CHARS,
    MAX_REWRITE_CHARS,
    MAX_TURNS,
    RewriteOutcome,
)
from graphrag_orm.answers.options import MAX_OUTPUT_TOKENS, AnswersOptions
from graphrag_orm.answers.prompt import ANSWER_INSTRUCTIONS, ANSWER_SCHEMA, answer_request, parse_reply
from graphrag_orm.answers.streaming import AnswerTextDecoder
from graphrag_orm.answers.turns import Turn
from graphrag_orm.answers.values import Answer, AnswerReceipt, AnswerUpdate, Completed, Delta, Disposition, Retrieved
from graphrag_orm.lazy import lazy_exports

if TYPE_CHECKING:
    from graphrag_orm.answers.service import AnswersService

__all__ = [
    "ANSWER_INSTRUCTIONS",
    "ANSWER_SCHEMA",
    "EXPORT_FORMAT",
    "MAX_ANSWER_CHARS",
    "MAX_OUTPUT_TOKENS",
    "MAX_REWRITE_CHARS",
    "MAX_TURNS",
    "Answer",
    "AnswerExport",
    "AnswerReceipt",
    "AnswerTextDecoder",
    "AnswerUpdate",
    "AnswersOptions",
    "AnswersService",
    "Completed",
    "Delta",
    "Disposition",
    "ExportError",
    "Retrieved",
    "RewriteOutcome",
    "Turn",
    "answer_request",
    "parse_reply",
]

__getattr__, __dir__ = lazy_exports(__name__, {"AnswersService": "graphrag_orm.answers.service"}, __all__)
