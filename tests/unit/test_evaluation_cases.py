"""Evaluation cases: the JSONL format, what is skipped, and a coded error naming the line, never its text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_orm.errors import EvaluationError
from graphrag_orm.evaluation import EvalCase, load_cases, parse_cases

SECRET = "the-patient-is-called-Ada"


def write(tmp_path: Path, *lines: str | bytes) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines))
    return path


def test_camel_and_snake_names_blank_and_comment_lines_and_numbered_ids(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# a comment",
        json.dumps({"question": "Q1?", "answerable": True, "requiredPhrases": ["DRINK ME"]}),
        "",
        "   ",
        json.dumps({"id": "named", "question": "Q2?", "answerable": False, "expected_documents": ["doc-a"]}),
        json.dumps({"question": "Q3?", "answerable": True, "required_phrases": ["a", "b"]}),
    )
    cases = load_cases(path)
    assert [case.id for case in cases] == ["1", "named", "3"]
    assert cases[0].required_phrases == ("DRINK ME",) and cases[0].answerable is True
    assert cases[1].expected_documents == ("doc-a",) and cases[1].answerable is False
    assert cases[2].required_phrases == ("a", "b")
    assert EvalCase.model_validate_json(cases[0].to_json()) == cases[0]
    assert '"requiredPhrases"' in cases[0].to_json()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{" + SECRET, "not JSON"),
        (json.dumps([SECRET]), "not a JSON object"),
        (
            json.dumps({"question": SECRET, "answerable": True, "requiredPhrase": ["x"]}),
            "unknown field 'requiredPhrase'",
        ),
        (json.dumps({"question": SECRET}), "answerable: Field required"),
        (json.dumps({"question": SECRET, "answerable": "yes"}), "answerable"),
        (json.dumps({"question": SECRET, "answerable": 1}), "answerable"),
        (json.dumps({"question": "", "answerable": True}), "question"),
        (json.dumps({"question": SECRET, "answerable": True, "requiredPhrases": ["_ * "]}), "only whitespace"),
        (json.dumps({"question": SECRET, "answerable": True, "requiredPhrases": [SECRET] * 65}), "requiredPhrases"),
    ],
)
def test_a_bad_line_is_invalid_cases_naming_the_line_never_its_text(tmp_path: Path, line: str, problem: str) -> None:
    path = write(tmp_path, json.dumps({"question": "fine", "answerable": True}), "# comment", line)
    with pytest.raises(EvaluationError) as raised:
        load_cases(path)
    assert raised.value.code == "invalid-cases"
    assert raised.value.message.startswith("cases line 3: ")
    assert problem in raised.value.message
    assert SECRET not in raised.value.message and "\n" not in raised.value.message


def test_a_repeated_id_names_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps({"id": "2", "question": "a", "answerable": True}),
        json.dumps({"question": "b", "answerable": True}),
    )
    with pytest.raises(EvaluationError, match=r"cases line 2: its id repeats line 1's"):
        load_cases(path)


def test_a_line_that_is_not_utf8_an_empty_file_and_a_missing_file(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"question": "a", "answerable": True}), b'{"question": "\xff"}')
    with pytest.raises(EvaluationError, match="cases line 2: not UTF-8"):
        load_cases(path)
    with pytest.raises(EvaluationError, match="holds no case") as raised:
        load_cases(write(tmp_path, "# only a comment", ""))
    assert raised.value.code == "invalid-cases"
    with pytest.raises(EvaluationError, match="cannot read the cases file") as raised:
        load_cases(tmp_path / "absent.jsonl")


def test_line_numbers_count_only_line_feeds() -> None:
    # A line separator inside a JSON string is text, not a new line of the file.
    text = json.dumps({"question": "a\u2028b", "answerable": True}, ensure_ascii=False) + "\n{bad"
    with pytest.raises(EvaluationError, match="cases line 2: not JSON"):
        parse_cases(text)
