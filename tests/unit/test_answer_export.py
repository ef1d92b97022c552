"""Answer export: round trips, what is written, what is refused, and what the offline check finds."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from graphrag_orm.answers import Answer, AnswerExport, AnswerReceipt, Disposition, ExportError
from graphrag_orm.citations import Citation, locate
from graphrag_orm.evidence import ContextItem, Evidence, EvidenceItem, Grounding, PageStart, Provenance, Rewrite
from graphrag_orm.values import Limit

# Two pages: page 2 starts at document byte 1,020 ("Page two" below).
PAGED = EvidenceItem(
    chunk_id="chunk-paged",
    document_id="doc-pdf",
    source_uri="file:///manual.pdf",
    title="Manual",
    text="Torque to 5 Nm. Café stop.\nPage two starts here.",
    start_byte=1000,
    end_byte=1000 + len("Torque to 5 Nm. Café stop.\nPage two starts here.".encode()),
    score=0.5,
    pages=(PageStart(page=1, start_byte=0), PageStart(page=2, start_byte=1028)),
    text_origin="ocr: Tesseract 5.3",
)
PLAIN = EvidenceItem(
    chunk_id="chunk-plain",
    document_id="doc-text",
    source_uri="text:notes",
    text="Alice was beginning to get very tired.",
    start_byte=0,
    end_byte=len("Alice was beginning to get very tired."),
    score=0.25,
)
EVIDENCE = Evidence(
    question="What torque?",
    items=(PAGED, PLAIN),
    context=(ContextItem(chunk_id="chunk-next", text="Next passage.", reason="neighbour"),),
    utf8_bytes=PAGED.end_byte - PAGED.start_byte + PLAIN.end_byte,
    omitted_items=1,
    limits_reached=(Limit(name="MaxItems", value=2),),
    provenance=Provenance(server_version="2026.09.0", embedding_set_id="set:256:cosine", indexes=("v", "f")),
    rewrite=Rewrite(asked="And the torque?", standalone="What torque?", turns_used=1, outcome="rewritten"),
)
RECEIPT = AnswerReceipt(chat_calls=2, input_tokens=120, output_tokens=30, retrieval_seconds=0.12, answer_seconds=1.5)


def cite(item: EvidenceItem, quote: str) -> Citation:
    citation = locate(item, quote)
    assert citation is not None
    return citation


ANSWER = Answer(
    disposition=Disposition.ANSWERED,
    text="Torque it to 5 Nm.",
    citations=(cite(PAGED, "Torque to 5 Nm."), cite(PAGED, "Café stop. Page two"), cite(PLAIN, "very tired")),
    evidence=EVIDENCE,
    receipt=RECEIPT,
)
REFUSAL = Answer(
    disposition=Disposition.INSUFFICIENT_EVIDENCE,
    reason="citation-not-found",
    evidence=EVIDENCE,
    receipt=RECEIPT,
)


def edited(answer: Answer, index: int = 0, **changes: Any) -> Answer:
    citations = list(answer.citations)
    citations[index] = citations[index].model_copy(update=changes)
    return answer.model_copy(update={"citations": tuple(citations)})


# --- round trips ----------------------------------------------------------------------


def test_an_answer_round_trips_and_checks_clean() -> None:
    read = AnswerExport.from_json(AnswerExport.to_json(ANSWER))
    assert read == ANSWER
    assert AnswerExport.check(read) == []


def test_a_refusal_round_trips_with_its_reason_and_evidence_and_checks_clean() -> None:
    read = AnswerExport.from_json(AnswerExport.to_json(REFUSAL))
    assert read == REFUSAL
    assert read.reason == "citation-not-found" and read.text is None and read.evidence == EVIDENCE
    assert AnswerExport.check(read) == []


def test_the_document_has_format_time_version_and_a_camel_case_answer() -> None:
    before = datetime.now(UTC)
    document = json.loads(AnswerExport.to_json(ANSWER))
    assert document["format"] == "graphrag-orm-answer/1"
    exported = datetime.fromisoformat(document["exportedUtc"])
    assert exported.utcoffset() is not None and exported.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    assert before <= exported <= datetime.now(UTC)
    assert document["toolkit"] == "0.1.0"
    answer = document["answer"]
    assert answer["disposition"] == "Answered"
    assert answer["receipt"] == {
        "chatCalls": 2,
        "inputTokens": 120,
        "outputTokens": 30,
        "retrievalSeconds": 0.12,
        "answerSeconds": 1.5,
        "repairs": 0,
    }
    assert answer["citations"][0]["grounding"] == "Source"
    assert {"startByte", "endByte", "chunkId", "documentId", "endPage"} <= set(answer["citations"][0])
    assert answer["evidence"]["rewrite"]["turnsUsed"] == 1
    assert answer["reason"] is None


def test_text_origin_is_written_only_where_it_is_set() -> None:
    answer = json.loads(AnswerExport.to_json(ANSWER))["answer"]
    assert answer["citations"][0]["textOrigin"] == "ocr: Tesseract 5.3"
    assert "textOrigin" not in answer["citations"][2]
    assert answer["evidence"]["items"][0]["textOrigin"] == "ocr: Tesseract 5.3"
    assert "textOrigin" not in answer["evidence"]["items"][1]


# --- what from_json refuses -----------------------------------------------------------


def _document(**answer_changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(AnswerExport.to_json(ANSWER))
    for key, value in answer_changes.items():
        if value is ...:
            del document["answer"][key]
        else:
            document["answer"][key] = value
    return document


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({**_document(), "format": "graphbridge-graphrag-answer/1"}),
        json.dumps({k: v for k, v in _document().items() if k != "format"}),
        json.dumps({k: v for k, v in _document().items() if k != "answer"}),
        json.dumps(_document(citations=...)),
        json.dumps(_document(citations=None)),
        json.dumps(_document(evidence=...)),
        json.dumps(_document(evidence=None)),
        json.dumps(_document(disposition="Maybe")),
        json.dumps(_document(receipt=...)),
        json.dumps(_document(extra=1)),
    ],
)
def test_from_json_refuses_what_is_not_a_whole_answer_export(text: str) -> None:
    with pytest.raises(ExportError) as raised:
        AnswerExport.from_json(text)
    assert raised.value.code == "invalid-export"


# --- what check finds -----------------------------------------------------------------


def only(problems: list[str], fragment: str) -> None:
    assert len(problems) == 1, problems
    assert fragment in problems[0], problems


def test_check_finds_an_edited_quote() -> None:
    only(AnswerExport.check(edited(ANSWER, quote="Torque to 6 Nm.")), "citation 1: its quote is not")


def test_check_finds_a_quote_edited_only_in_typography() -> None:
    only(AnswerExport.check(edited(ANSWER, 1, quote="Cafe stop.\nPage two")), "citation 2: its quote is not")


def test_check_finds_a_span_outside_its_evidence_item() -> None:
    only(AnswerExport.check(edited(ANSWER, start_byte=990)), "outside its evidence item")


def test_check_finds_a_citation_of_a_chunk_that_is_not_an_evidence_item() -> None:
    only(AnswerExport.check(edited(ANSWER, chunk_id="chunk-next")), "is not an evidence item")


def test_check_finds_another_document() -> None:
    only(AnswerExport.check(edited(ANSWER, document_id="doc-other")), "is not the evidence item's")


def test_check_finds_pages_that_are_not_the_items() -> None:
    assert ANSWER.citations[1].page == 1 and ANSWER.citations[1].end_page == 2
    only(AnswerExport.check(edited(ANSWER, 1, end_page=1)), "its pages (1, 1) are not its evidence item's (1, 2)")
    only(AnswerExport.check(edited(ANSWER, page=2)), "pages")


def test_check_finds_a_grounding_that_is_not_the_items() -> None:
    only(AnswerExport.check(edited(ANSWER, grounding=Grounding.CHUNK)), "grounding")


def test_check_finds_a_dropped_text_origin() -> None:
    only(AnswerExport.check(edited(ANSWER, text_origin=None)), "text origin")


def test_check_compares_bytes_so_a_split_character_never_passes() -> None:
    start = ANSWER.citations[1].start_byte + len(b"Caf")  # "é" is two bytes: stop after the first
    split = edited(ANSWER, 1, start_byte=start - 3, end_byte=start + 1, quote="Caf\ufffd", end_page=1)
    stored = PAGED.text.encode()[start - 3 - PAGED.start_byte : start + 1 - PAGED.start_byte]
    assert stored.decode(errors="replace") == "Caf\ufffd"  # decoded text would have passed
    only(AnswerExport.check(split), "its quote is not")


def test_check_reports_an_inverted_span_without_raising() -> None:
    only(AnswerExport.check(edited(ANSWER, start_byte=1010, end_byte=1005)), "inverted")


def test_check_reports_an_empty_span() -> None:
    only(AnswerExport.check(edited(ANSWER, start_byte=1005, end_byte=1005, quote="")), "empty")


def test_check_finds_an_uncited_answer() -> None:
    only(AnswerExport.check(ANSWER.model_copy(update={"citations": ()})), "has no citations")


def test_check_finds_an_answer_without_text_or_with_a_reason() -> None:
    only(AnswerExport.check(ANSWER.model_copy(update={"text": "  "})), "has no text")
    only(AnswerExport.check(ANSWER.model_copy(update={"reason": "no-citations"})), "refusal reason")


def test_check_finds_a_refusal_with_text_citations_or_an_unknown_reason() -> None:
    only(AnswerExport.check(REFUSAL.model_copy(update={"text": "Still, Northwind."})), "a refusal has text")
    only(AnswerExport.check(REFUSAL.model_copy(update={"citations": ANSWER.citations})), "a refusal has citations")
    only(AnswerExport.check(REFUSAL.model_copy(update={"reason": "because"})), "is not a refusal reason")
    only(AnswerExport.check(REFUSAL.model_copy(update={"reason": None})), "is not a refusal reason")


def test_check_finds_an_evidence_item_whose_text_is_not_its_span() -> None:
    shorter = PAGED.model_copy(update={"end_byte": PAGED.end_byte - 1})
    evidence = EVIDENCE.model_copy(update={"items": (shorter, PLAIN)})
    problems = AnswerExport.check(ANSWER.model_copy(update={"evidence": evidence}))
    assert len(problems) == 2 and all("text is" in p for p in problems)


def test_check_reports_missing_lists_without_raising() -> None:
    missing = Answer.model_construct(
        disposition=Disposition.ANSWERED,
        text="x",
        citations=None,  # type: ignore[arg-type]
        evidence=None,  # type: ignore[arg-type]
        receipt=RECEIPT,
    )
    problems = AnswerExport.check(missing)
    assert "the answer has no citations list" in problems and "the answer has no evidence" in problems
    no_items = Evidence.model_construct(question="q", items=None)  # type: ignore[arg-type]
    problems = AnswerExport.check(ANSWER.model_copy(update={"evidence": no_items}))
    assert "the evidence has no items list" in problems
    assert any("is not an evidence item" in p for p in problems)


def test_check_reads_the_json_of_an_export_as_well() -> None:
    answer = json.loads(AnswerExport.to_json(ANSWER))["answer"]
    assert AnswerExport.check(answer) == []
    answer["citations"][2]["quote"] = "very tired!"
    del answer["evidence"]["items"][1]["text"]
    only(AnswerExport.check(answer), "citation 3: its evidence item has no readable span or text")
    assert AnswerExport.check({"disposition": "Answered"}) == [
        "the answer has no citations list",
        "the answer has no evidence",
        "an Answered answer has no text",
    ]


def test_check_survives_garbage_shapes() -> None:
    for garbage in ({"citations": [1, None, "x"], "evidence": {"items": "nope"}}, {"evidence": 3}):
        problems = AnswerExport.check(garbage)
        assert problems and all(isinstance(p, str) for p in problems)
