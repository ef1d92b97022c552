"""Titles are bounded: one line, no control characters, at most 500 characters, and counted by the budget."""

from __future__ import annotations

import json

import pytest

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.evidence import Evidence, EvidenceItem
from graphrag_orm.loaders import LoadedDocument, TextLoader
from graphrag_orm.retrieval.budget import apply_budget
from graphrag_orm.sources import MAX_TITLE_CHARS, SourceMetadata, Sources, clean_title

TEN_MB = 10_000_000


def item(number: int, text: str, title: str | None) -> EvidenceItem:
    return EvidenceItem(
        chunk_id=f"chunk-{number}",
        document_id="doc",
        source_uri="text:doc",
        title=title,
        text=text,
        start_byte=0,
        end_byte=len(text.encode()),
        score=1.0 / (number + 1),
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Field Guide", "Field Guide"),
        ("  Field Guide \t", "Field Guide"),
        ("Field\x00 Gu\x1bide\x7f", "Field Guide"),
        ("Annual\nReport\r\n2026", "Annual Report 2026"),
        ("One\u2028Two\u2029Three\x85Four\x0bFive\x0cSix", "One Two Three Four Five Six"),
        ("C1\x9b controls\x80 go", "C1 controls go"),
        ("a\tb", "a\tb"),  # a tab keeps a title on one line, as Markdown headings have it
        ("lone \ud800surrogate", "lone surrogate"),
        ("\x00\n \t", None),
        ("", None),
        (None, None),
    ],
)
def test_a_title_is_one_line_without_control_characters(raw: str | None, clean: str | None) -> None:
    assert clean_title(raw) == clean


def test_a_long_title_is_cut_to_the_bound_and_says_so() -> None:
    cut = clean_title("word " * 1_000)
    assert cut is not None and len(cut) == MAX_TITLE_CHARS and cut.endswith("word…")
    assert clean_title(cut) == cut  # cleaning is idempotent
    at_a_space = clean_title("x" * (MAX_TITLE_CHARS - 2) + " more words")
    assert at_a_space == "x" * (MAX_TITLE_CHARS - 2) + "…"
    exact = "é" * MAX_TITLE_CHARS
    assert clean_title(exact) == exact


async def test_a_10_mb_heading_gives_a_bounded_title() -> None:
    text = "# " + "x" * TEN_MB + "\n\nThe body.\n"
    document = await TextLoader().load(Sources.text("huge", text, "text/markdown"))
    assert document.title is not None and len(document.title) == MAX_TITLE_CHARS
    assert document.title.endswith("…")


def test_a_huge_heading_gives_a_bounded_section_title() -> None:
    utf8 = ("# " + "y" * 100_000 + "\n\nThe body.\n").encode()
    document = LoadedDocument(source_uri="text:s", media_type="text/markdown", utf8=utf8)
    (section,) = Chunker(ChunkerOptions()).plan(document).sections
    assert len(section.title) == MAX_TITLE_CHARS and section.start_byte == 0 and section.end_byte == len(utf8)


async def test_a_cr_only_markdown_file_is_not_its_own_title() -> None:
    text = "# Old Mac notes\rThe first line of the body.\rThe second line.\r" * 1_000
    document = await TextLoader().load(Sources.text("mac", text, "text/markdown"))
    assert document.title == "Old Mac notes"
    assert document.utf8 == text.encode()  # the text itself is untouched


async def test_a_metadata_title_is_bounded_too() -> None:
    metadata = SourceMetadata(title="Chosen\ntitle\x07 " + "z" * TEN_MB)
    assert metadata.title is not None and len(metadata.title) == MAX_TITLE_CHARS
    assert metadata.title.startswith("Chosen title zzz")
    document = await TextLoader().load(Sources.text("m", "body", metadata=metadata))
    assert document.title == metadata.title


def test_a_loaded_document_from_a_custom_loader_has_its_title_bounded() -> None:
    document = LoadedDocument(source_uri="text:c", media_type="text/plain", title="A\r\nB\x00", utf8=b"x")
    assert document.title == "A B"


def test_a_10_mb_title_cannot_make_8_evidence_items_serialize_to_80_mb() -> None:
    # Titles already stored before the bound come back from the graph as they are.
    ranked = [item(number, "The caliper is recalled. " * 4, "T" * TEN_MB) for number in range(8)]
    budget = apply_budget(ranked, max_items=8, max_utf8_bytes=16_384)
    evidence = Evidence(question="q", items=budget.items, utf8_bytes=budget.utf8_bytes)
    assert len(budget.items) == 8
    assert len(evidence.to_json().encode()) < 16_384 + 8 * 1_024


def test_titles_count_in_the_evidence_budget() -> None:
    ranked = [item(number, "x" * 100, "Title " * 20) for number in range(8)]  # 100 + 119 bytes an item
    budget = apply_budget(ranked, max_items=8, max_utf8_bytes=1_000)
    counted = sum(len(i.text.encode()) + len((i.title or "").encode()) for i in budget.items)
    assert budget.utf8_bytes == counted <= 1_000
    assert [len(i.text) for i in budget.items] == [100, 100, 100, 100, 5]
    assert budget.omitted == 3 and [limit.name for limit in budget.limits] == ["MaxUtf8Bytes"]
    serialized = sum(len(json.dumps(i.title).encode()) - 2 + len(i.text.encode()) for i in budget.items)
    assert serialized == budget.utf8_bytes


def test_an_item_whose_title_alone_does_not_fit_is_left_out_and_counted() -> None:
    ranked = [item(0, "x" * 100, None), item(1, "y" * 100, "Long title " * 10)]
    budget = apply_budget(ranked, max_items=8, max_utf8_bytes=150)
    assert [i.chunk_id for i in budget.items] == ["chunk-0"]
    assert budget.utf8_bytes == 100 and budget.omitted == 1
