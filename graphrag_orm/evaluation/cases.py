"""Evaluation cases and the JSONL file that holds them.

One JSON object a line::

    {"id": "q1", "question": "...", "answerable": true,
     "requiredPhrases": ["DRINK ME"], "expectedDocuments": ["<document id or source URI>"]}

``question`` and ``answerable`` are required; ``requiredPhrases`` (evidence that must be
retrieved), ``expectedDocuments`` and ``id`` are optional (snake_case names are read
too). Blank lines and lines starting with ``#`` are skipped. A case without an ``id``
gets its position among the file's cases (``"1"``, ``"2"``, ...); ids are unique.

Anything else is :class:`~graphrag_orm.errors.EvaluationError` (``invalid-cases``)
naming the line and what is wrong (an unknown or missing field, a wrong type, a bound),
never the line's text: a file that is not UTF-8, a line that is not a JSON object, a
repeated id, a file with no case or over :data:`MAX_FILE_BYTES`. Bounds: a question of
1 to 100,000 characters, at most 64 phrases and 64 documents of 1 to 2,000 characters
each, an id of 1 to 200 characters. A phrase must hold something besides whitespace
and emphasis marks, since those are skipped when it is looked for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Final

from pydantic import Field, StrictBool, ValidationError, field_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import EvaluationError
from graphrag_orm.values import Value

__all__ = ["MAX_FILE_BYTES", "EvalCase", "load_cases", "parse_cases"]

MAX_FILE_BYTES: Final = 16 * 1024 * 1024
"""The largest cases file read (16 MiB)."""

_Text = Annotated[str, Field(min_length=1, max_length=2_000)]


class EvalCase(Value):
    """One labelled question: whether it can be answered from the corpus, and what must be retrieved."""

    question: str = Field(min_length=1, max_length=100_000)
    answerable: StrictBool
    required_phrases: tuple[_Text, ...] = Field(default=(), max_length=64)
    expected_documents: tuple[_Text, ...] = Field(default=(), max_length=64)
    id: str | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("required_phrases")
    @classmethod
    def _phrases_hold_text(cls, phrases: tuple[str, ...]) -> tuple[str, ...]:
        if any(not phrase.replace("_", "").replace("*", "").strip() for phrase in phrases):
            raise ValueError("a phrase holds only whitespace or emphasis marks")
        return phrases


def _invalid(line: int, problem: str) -> EvaluationError:
    return EvaluationError(ErrorCode.INVALID_CASES, f"cases line {line}: {problem}")


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])[:60]
    if first["type"] == "extra_forbidden":
        return f"unknown field {where!r}"
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def parse_cases(text: str, *, first_line: int = 1) -> tuple[EvalCase, ...]:
    """The cases of JSONL ``text``, every one with an id; see the module for what is refused."""
    cases: list[EvalCase] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=first_line):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise _invalid(number, f"not JSON ({error.msg})") from None
        if not isinstance(data, dict):
            raise _invalid(number, "not a JSON object")
        try:
            case = EvalCase.model_validate(data)
        except ValidationError as error:
            raise _invalid(number, _problem(error)) from None
        if case.id is None:
            case = case.model_copy(update={"id": str(len(cases) + 1)})
        assert case.id is not None
        if case.id in seen:
            raise _invalid(number, f"its id repeats line {seen[case.id]}'s")
        seen[case.id] = number
        cases.append(case)
    return tuple(cases)


def load_cases(path: Path | str) -> tuple[EvalCase, ...]:
    """The cases of the JSONL file at ``path``; ``invalid-cases`` naming the line when one cannot be read."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise EvaluationError(ErrorCode.INVALID_CASES, f"the cases file is over {MAX_FILE_BYTES:,} bytes")
        data = path.read_bytes()
    except OSError as error:
        raise EvaluationError(
            ErrorCode.INVALID_CASES, f"cannot read the cases file: {error.strerror or type(error).__name__}"
        ) from None
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid(number, "not UTF-8") from None
    cases = parse_cases(data.decode("utf-8").removeprefix("\ufeff"))
    if not cases:
        raise EvaluationError(ErrorCode.INVALID_CASES, "the cases file holds no case")
    return cases
