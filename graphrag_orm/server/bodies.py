"""Reading request bodies and parameters before any work: a value, or the problem that refuses it.

Every check here runs before a read or a model call, and none raises: each function
returns the parsed value or a :class:`~graphrag_orm.server.problems.Problem`. Bounds:
a body of at most :data:`MAX_BODY_BYTES`, JSON only (``Content-Type: application/json``,
so a browser on another origin must ask first), no field but those listed (so a caller
can never send a ``scope``), a question or query of 1 to the retrieval's
``max_question_chars`` characters that is not only whitespace, at most ``max_history_turns`` earlier turns,
each a question and an answer, both strings (a turn whose answer is null or missing is
refused like any other wrong type), the question within the same bound and the answer
within :data:`MAX_TURN_ANSWER_CHARS`. A limit is an integer, and an integral number
(``2.0``) is one, as JSON Schema says; ``2.5``, ``true`` and ``"2"`` are not.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import BeforeValidator, Field, StrictInt, StrictStr, ValidationError

from graphrag_orm.answers.turns import Turn
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import QuestionRefused
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.server.options import ServerOptions
from graphrag_orm.server.problems import Problem, ProblemCode, problem
from graphrag_orm.values import Value, integral

__all__ = [
    "DEFAULT_DOCUMENTS_LIMIT",
    "DEFAULT_SEARCH_LIMIT",
    "MAX_BODY_BYTES",
    "MAX_DOCUMENTS_LIMIT",
    "MAX_SEARCH_LIMIT",
    "MAX_TURN_ANSWER_CHARS",
    "AskBody",
    "HistoryTurn",
    "SearchBody",
    "is_json",
    "read_ask",
    "read_documents_limit",
    "read_search",
    "too_large",
]

MAX_BODY_BYTES: Final = 1_048_576
MAX_TURN_ANSWER_CHARS: Final = 20_000
DEFAULT_SEARCH_LIMIT: Final = 5
MAX_SEARCH_LIMIT: Final = 20
DEFAULT_DOCUMENTS_LIMIT: Final = 50
MAX_DOCUMENTS_LIMIT: Final = 1_000
# Digits (at most five) and, as JSON writes an integral number, an optional zero fraction.
_INTEGRAL_TEXT: Final = re.compile(r"([0-9]{1,5})(?:\.0{1,5})?")


class HistoryTurn(Value):
    """An earlier turn as a caller sends it: its question and the answer it was given, both strings."""

    question: StrictStr
    answer: StrictStr


class AskBody(Value):
    """``POST {prefix}/ask``: the question and the conversation so far, oldest turn first.

    ``mode``: ``documents`` (the default) answers from retrieved passages; ``global``
    answers a question about the whole corpus from the community reports (no history).
    """

    question: StrictStr
    history: tuple[HistoryTurn, ...] = ()
    mode: Literal["documents", "global"] = Field(
        "documents",
        description="documents: from retrieved passages; global: about the whole corpus, from the community reports",
    )

    def turns(self) -> tuple[Turn, ...]:
        return tuple(Turn(question=turn.question, answer=turn.answer) for turn in self.history)


class SearchBody(Value):
    """``POST {prefix}/search``: the query and how many passages (1..20, default 5)."""

    query: StrictStr
    limit: Annotated[StrictInt, BeforeValidator(integral)] = Field(DEFAULT_SEARCH_LIMIT)


def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` names JSON (``application/json``, parameters allowed)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


def too_large() -> Problem:
    return problem(ProblemCode.INVALID_REQUEST, f"the body is larger than {MAX_BODY_BYTES:,} bytes")


def _invalid(error: ValidationError, fields: str) -> Problem:
    kinds = {item["type"] for item in error.errors()}
    if "json_invalid" in kinds:
        return problem(ProblemCode.INVALID_REQUEST, "the body is not valid JSON")
    if "extra_forbidden" in kinds:
        return problem(ProblemCode.INVALID_REQUEST, f"the body may hold only {fields}")
    return problem(ProblemCode.INVALID_REQUEST, f"the body must be a JSON object with {fields} of the right types")


def _question(text: str, bound: int, what: str) -> Problem | None:
    try:
        check_question(text, bound)
    except QuestionRefused as refused:
        if refused.code == ErrorCode.EMPTY_QUESTION:
            return problem(ProblemCode.EMPTY_QUESTION, f"the {what} is empty or only whitespace")
        if refused.code == ErrorCode.QUESTION_TOO_LONG:
            return problem(
                ProblemCode.QUESTION_TOO_LONG, f"the {what} has {len(text):,} characters; the bound is {bound:,}"
            )
        return problem(ProblemCode.INVALID_REQUEST, f"the {what} is not valid Unicode text")
    return None


def read_ask(raw: bytes, options: ServerOptions, bound: int, *, global_mode: bool = False) -> AskBody | Problem:
    """The ask body, or why it is refused (``invalid-request``, ``mode-not-available``,
    ``too-many-turns``, ``empty-question``, ``question-too-long``), checked in that order;
    ``bound`` is the question bound (the retrieval's ``max_question_chars``);
    ``global_mode``: whether the graph answers ``"mode": "global"`` (it has an ontology)."""
    if len(raw) > MAX_BODY_BYTES:
        return too_large()
    try:
        body = AskBody.model_validate_json(raw, strict=True)
    except ValidationError as error:
        return _invalid(
            error, '"question" (a string), "history" (a list of {"question", "answer"}) and "mode" (documents, global)'
        )
    if body.mode == "global":
        if not global_mode:
            return problem(
                ProblemCode.MODE_NOT_AVAILABLE, "this graph has no ontology, so no community reports to answer from"
            )
        if body.history:
            return problem(ProblemCode.INVALID_REQUEST, "a global question takes no history")
    if len(body.history) > options.max_history_turns:
        return problem(
            ProblemCode.TOO_MANY_TURNS,
            f"the history has {len(body.history)} turns; the bound is {options.max_history_turns}",
        )
    refused = _question(body.question, bound, "question")
    if refused is not None:
        return refused
    for number, turn in enumerate(body.history, start=1):
        if len(turn.question) > bound:
            return problem(
                ProblemCode.QUESTION_TOO_LONG,
                f"turn {number}'s question has {len(turn.question):,} characters; the bound is {bound:,}",
            )
        if len(turn.answer) > MAX_TURN_ANSWER_CHARS:
            return problem(
                ProblemCode.INVALID_REQUEST,
                f"turn {number}'s answer has {len(turn.answer):,} characters; the bound is {MAX_TURN_ANSWER_CHARS:,}",
            )
        if any(_lone_surrogate(text) for text in (turn.question, turn.answer)):
            return problem(ProblemCode.INVALID_REQUEST, f"turn {number} is not valid Unicode text")
    return body


def read_search(raw: bytes, bound: int) -> SearchBody | Problem:
    """The search body, or why it is refused (``invalid-request``, ``invalid-limit``,
    ``empty-question``, ``question-too-long``); ``bound`` is the question bound."""
    if len(raw) > MAX_BODY_BYTES:
        return too_large()
    try:
        body = SearchBody.model_validate_json(raw, strict=True)
    except ValidationError as error:
        if all(tuple(item["loc"][:1]) == ("limit",) for item in error.errors()):
            return _limit_problem(MAX_SEARCH_LIMIT)
        return _invalid(error, '"query" (a string) and "limit" (an integer)')
    if not 1 <= body.limit <= MAX_SEARCH_LIMIT:
        return _limit_problem(MAX_SEARCH_LIMIT)
    refused = _question(body.query, bound, "query")
    return refused if refused is not None else body


def read_documents_limit(values: list[str]) -> int | Problem:
    """``?limit=`` of the documents list: one integer from 1 to 1,000 (50 when absent);
    ``5.0`` is the integer 5, as JSON Schema counts it."""
    if not values:
        return DEFAULT_DOCUMENTS_LIMIT
    found = _INTEGRAL_TEXT.fullmatch(values[0].strip())
    if len(values) > 1 or found is None:
        return _limit_problem(MAX_DOCUMENTS_LIMIT)
    limit = int(found.group(1))
    return limit if 1 <= limit <= MAX_DOCUMENTS_LIMIT else _limit_problem(MAX_DOCUMENTS_LIMIT)


def _limit_problem(maximum: int) -> Problem:
    return problem(ProblemCode.INVALID_LIMIT, f"the limit must be an integer from 1 to {maximum:,}")


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
