"""JSON of evidence items and citations leaves out pages and the text origin when they are unset."""

from __future__ import annotations

import json

from graphrag_orm.citations import Citation, locate
from graphrag_orm.evidence import Evidence, EvidenceItem, PageStart

TEXT = "Alice was beginning to get very tired."


def plain_item() -> EvidenceItem:
    return EvidenceItem(
        chunk_id="chunk-1",
        document_id="doc-1",
        source_uri="file:///a.md",
        text=TEXT,
        start_byte=0,
        end_byte=len(TEXT.encode()),
        score=0.5,
    )


def paged_derived_item() -> EvidenceItem:
    return plain_item().model_copy(
        update={"pages": (PageStart(page=1, start_byte=0),), "text_origin": "ocr: Tesseract 5.3"}
    )


def located(item: EvidenceItem) -> Citation:
    citation = locate(item, "very tired")
    assert citation is not None
    return citation


def test_an_item_without_pages_or_origin_leaves_both_out_of_its_json() -> None:
    data = json.loads(plain_item().to_json())
    assert "pages" not in data and "textOrigin" not in data
    assert data["chunkId"] == "chunk-1" and data["grounding"] == "Source"
    nested = json.loads(Evidence(question="q", items=(plain_item(),)).to_json())["items"][0]
    assert "pages" not in nested and "textOrigin" not in nested


def test_an_item_with_pages_and_origin_writes_both() -> None:
    data = json.loads(paged_derived_item().to_json())
    assert data["pages"] == [{"page": 1, "startByte": 0}]
    assert data["textOrigin"] == "ocr: Tesseract 5.3"


def test_a_citation_leaves_out_unset_pages_and_origin_and_writes_set_ones() -> None:
    plain = json.loads(located(plain_item()).to_json())
    assert not {"page", "endPage", "textOrigin"} & set(plain)
    derived = json.loads(located(paged_derived_item()).to_json())
    assert (derived["page"], derived["endPage"], derived["textOrigin"]) == (1, 1, "ocr: Tesseract 5.3")


def test_json_without_the_unset_fields_reads_back_to_the_same_values() -> None:
    for item in (plain_item(), paged_derived_item()):
        assert EvidenceItem.model_validate_json(item.to_json()) == item
        citation = located(item)
        assert Citation.model_validate_json(citation.to_json()) == citation


def test_python_dumps_keep_every_field() -> None:
    dumped = plain_item().model_dump()
    assert dumped["pages"] is None and dumped["text_origin"] is None
    assert located(plain_item()).model_dump()["text_origin"] is None
