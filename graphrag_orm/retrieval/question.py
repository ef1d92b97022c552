"""The one check a question passes before retrieval (and before a follow-up's rewrite)."""

from __future__ import annotations

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import QuestionRefused

__all__ = ["QuestionRefused", "check_question"]


def check_question(question: str, max_chars: int) -> None:
    """Return when ``question`` may be retrieved; otherwise raise :class:`QuestionRefused`.

    ``empty-question`` for an empty or whitespace-only question, ``question-too-long``
    for one of more than ``max_chars`` characters, ``invalid-question`` for one that is
    not Unicode text UTF-8 can carry (a lone surrogate, as a broken decoder leaves).
    Reads nothing and calls nothing.
    """
    if not question or not question.strip():
        raise QuestionRefused(ErrorCode.EMPTY_QUESTION, "the question is empty")
    if len(question) > max_chars:
        raise QuestionRefused(
            ErrorCode.QUESTION_TOO_LONG, f"the question has {len(question)} characters; the bound is {max_chars}"
        )
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as error:
        raise QuestionRefused(
            ErrorCode.INVALID_QUESTION, f"the question holds a lone surrogate at character {error.start}"
        ) from None
