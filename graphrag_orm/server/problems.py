"""Problem responses (RFC 9457, ``application/problem+json``): refusals before any work.

Each carries a stable ``code``; ``detail`` is one line written here, never the caller's
input, stored text or an exception message.
"""

from __future__ import annotations

from typing import Final

from graphrag_orm.codes import ProblemCode
from graphrag_orm.values import Value

__all__ = ["PROBLEM_MEDIA_TYPE", "Problem", "ProblemCode", "problem"]

PROBLEM_MEDIA_TYPE: Final = "application/problem+json"


_TITLES: Final[dict[ProblemCode, str]] = {
    ProblemCode.EMPTY_QUESTION: "The question is empty",
    ProblemCode.QUESTION_TOO_LONG: "The question is too long",
    ProblemCode.TOO_MANY_TURNS: "The history has too many turns",
    ProblemCode.MODE_NOT_AVAILABLE: "This graph does not answer in that mode",
    ProblemCode.INVALID_LIMIT: "The limit is out of bounds",
    ProblemCode.INVALID_REQUEST: "The request is not one these endpoints take",
    ProblemCode.DOCUMENT_NOT_FOUND: "No such document",
    ProblemCode.RETRIEVAL_FAILED: "Retrieval failed",
    ProblemCode.READ_FAILED: "Reading the graph failed",
    ProblemCode.NOT_FOUND: "Nothing is served here",
    ProblemCode.METHOD_NOT_ALLOWED: "The method is not allowed here",
    ProblemCode.HTTP_ERROR: "The request was not served",
    ProblemCode.INTERNAL_ERROR: "The server failed",
    ProblemCode.TENANT_REQUIRED: "The request has no tenant",
    ProblemCode.INVALID_TENANT: "The request's tenant is not a tenant id",
}


class Problem(Value):
    """One problem response's body; ``type`` is a non-resolvable tag URI naming the code."""

    type: str
    title: str
    status: int
    detail: str
    code: ProblemCode


def problem(code: ProblemCode, detail: str, status: int = 400) -> Problem:
    """The problem of ``code`` with its title and ``detail`` (one line, written by the toolkit)."""
    return Problem(
        type=f"tag:graphrag-orm,2026:problem:{code.value}",
        title=_TITLES[code],
        status=status,
        detail=detail,
        code=code,
    )
