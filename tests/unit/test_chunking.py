"""The chunker's rules, one behaviour each; and the token counters it measures with."""

from __future__ import annotations

import re
from typing import Any

import pytest
import tiktoken

from graphrag_orm.chunking import (
    CHUNKER_VERSION,
    Chunker,
    ChunkerOptions,
    ChunkPlan,
    SectionSpan,
    chunk_id,
    section_id,
)
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.tokens import ByteEstimateCounter, TiktokenCounter, TokenCounter, counter_identity


def doc(text: str, media_type: str = "text/markdown") -> LoadedDocument:
    return LoadedDocument(source_uri="text:test", media_type=media_type, utf8=text.encode("utf-8"))


def plan_of(
    text: str,
    media_type: str = "text/markdown",
    counter: TokenCounter | None = None,
    **options: Any,
) -> tuple[LoadedDocument, ChunkPlan]:
    document = doc(text, media_type)
    return document, Chunker(ChunkerOptions(**options), token_counter=counter).plan(document)


def texts(text: str, media_type: str = "text/markdown", **options: Any) -> list[str]:
    document, plan = plan_of(text, media_type, **options)
    return plan.texts(document.utf8)


class WordCounter:
    """Counts runs of letters and each other non-space character as one token."""

    identity = "test:words"

    def count(self, text: str) -> int:
        return len(re.findall(r"\w+|[^\w\s]", text))


# --- Options ---------------------------------------------------------------------------------


def test_default_options() -> None:
    options = ChunkerOptions()
    assert (options.max_utf8_bytes, options.max_tokens, options.overlap_paragraphs) == (2048, None, 1)


@pytest.mark.parametrize(
    ("option", "value", "bounds"),
    [
        ("max_utf8_bytes", 63, "64 to 16,384"),
        ("max_utf8_bytes", 16_385, "64 to 16,384"),
        ("overlap_paragraphs", -1, "0 to 4"),
        ("overlap_paragraphs", 5, "0 to 4"),
        ("max_tokens", 0, "1 to 1,000,000"),
    ],
)
def test_out_of_range_options_are_refused_naming_the_bounds(option: str, value: int, bounds: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        ChunkerOptions(**{option: value})
    assert raised.value.code == "invalid-option"
    assert option in raised.value.message and bounds in raised.value.message


@pytest.mark.parametrize("value", [True, 100.0, "100"])
def test_options_must_be_integers(value: object) -> None:
    with pytest.raises(ConfigurationError) as raised:
        ChunkerOptions(max_utf8_bytes=value)  # type: ignore[arg-type]
    assert raised.value.code == "invalid-option" and "max_utf8_bytes" in raised.value.message


def test_a_copy_with_out_of_range_options_is_refused_by_the_chunker() -> None:
    copied = ChunkerOptions().model_copy(update={"max_utf8_bytes": 10})  # pydantic does not check copies
    with pytest.raises(ConfigurationError):
        Chunker(copied)


def test_options_read_from_camel_case_json() -> None:
    options = ChunkerOptions.model_validate_json('{"maxUtf8Bytes": 512, "overlapParagraphs": 0}')
    assert options == ChunkerOptions(max_utf8_bytes=512, overlap_paragraphs=0)
    with pytest.raises(ValueError, match="invalid-option"):
        ChunkerOptions.model_validate_json('{"maxUtf8Bytes": 20}')


# --- Sections --------------------------------------------------------------------------------


def _sections(text: str) -> list[tuple[int, int, str, int | None, str]]:
    document, plan = plan_of(text)
    return [(s.order, s.level, s.title, s.parent_order, plan.section_text(document.utf8, s)) for s in plan.sections]


def test_sections_nest_and_run_to_the_next_heading_of_the_same_or_higher_level() -> None:
    text = "Preface\n# A\na\n## A.1\nx\n### A.1.a\ny\n## A.2\nz\n# B\nb\n"
    assert _sections(text) == [
        (0, 1, "A", None, "# A\na\n## A.1\nx\n### A.1.a\ny\n## A.2\nz\n"),
        (1, 2, "A.1", 0, "## A.1\nx\n### A.1.a\ny\n"),
        (2, 3, "A.1.a", 1, "### A.1.a\ny\n"),
        (3, 2, "A.2", 0, "## A.2\nz\n"),
        (4, 1, "B", None, "# B\nb\n"),
    ]


def test_a_skipped_level_still_nests_under_the_nearest_higher_heading() -> None:
    parents = [(level, parent) for _, level, _, parent, _ in _sections("## Two\n#### Four\n### Three\n# One\n")]
    assert parents == [(2, None), (4, 0), (3, 0), (1, None)]


def test_text_before_the_first_heading_belongs_to_no_section() -> None:
    document, plan = plan_of("Intro text.\n\n# Title\nBody.\n")
    assert plan.chunks[0].section_order is None
    assert plan.section_for(plan.chunks[0]) is None
    assert plan.chunk_text(document.utf8, plan.chunks[0]) == "Intro text.\n\n"
    section = plan.section_for(plan.chunks[1])
    assert isinstance(section, SectionSpan) and section.title == "Title"


def test_a_chunk_belongs_to_the_innermost_section() -> None:
    _, plan = plan_of("# A\na\n## B\nb\n# C\nc\n")
    assert [chunk.section_order for chunk in plan.chunks] == [0, 1, 2]


def test_plain_text_and_pdf_have_no_sections() -> None:
    for media_type in ("text/plain", "application/pdf"):
        _, plan = plan_of("# Looks like a heading\n\nbody\n", media_type)
        assert plan.sections == ()
        assert all(chunk.section_order is None for chunk in plan.chunks)
        assert len(plan.chunks) == 1


def test_headings_in_fenced_code_open_no_section() -> None:
    text = "# Real\n\n```bash\n# a comment\n```\n\n~~~~\n## also code\n~~~~\n"
    assert [title for _, _, title, _, _ in _sections(text)] == ["Real"]


# --- Chunks and headings ---------------------------------------------------------------------


def test_a_heading_always_starts_a_new_chunk() -> None:
    assert texts("# A\nshort\n# B\nshort\n") == ["# A\nshort\n", "# B\nshort\n"]


def test_the_empty_document_has_no_chunks() -> None:
    _, plan = plan_of("")
    assert plan.chunks == () and plan.sections == ()


def test_one_short_paragraph_is_one_chunk() -> None:
    assert texts("Just this.") == ["Just this."]


def test_paragraphs_pack_whole_up_to_the_budget() -> None:
    paragraph = "x" * 29 + "\n\n"  # 31 bytes
    chunks = texts(paragraph * 5, max_utf8_bytes=64, overlap_paragraphs=0)
    assert chunks == [paragraph * 2, paragraph * 2, paragraph]


def test_a_chunk_may_be_exactly_the_budget() -> None:
    paragraph = "y" * 30 + "\n\n"  # 32 bytes: two make exactly 64
    assert texts(paragraph * 2, max_utf8_bytes=64) == [paragraph * 2]


def test_the_heading_line_is_a_paragraph_that_packs_with_the_text_after_it() -> None:
    text = "# Title\nfirst line\nsecond line\n"
    assert texts(text) == [text]
    # With a small budget the heading line and the paragraph part at the heading line.
    body = "b" * 60 + "\n"
    assert texts("# Title\n" + body, max_utf8_bytes=64) == ["# Title\n", body]


def test_a_fenced_block_with_blank_lines_stays_one_paragraph() -> None:
    block = "```\nline one\n\nline two\n\n\nline three\n```\n"
    before = "Before " + "b" * 30 + "\n\n"
    chunks = texts(before + block + "\nAfter.\n", max_utf8_bytes=64, overlap_paragraphs=0)
    assert chunks == [before, block + "\nAfter.\n"]


def test_leading_blank_lines_join_the_first_paragraph() -> None:
    assert texts("\n\n  \nText.\n\nMore.\n", max_utf8_bytes=64, overlap_paragraphs=0) == ["\n\n  \nText.\n\nMore.\n"]


def test_blank_lines_before_the_first_heading_are_a_chunk_of_their_own() -> None:
    document, plan = plan_of("\n\n# Title\nBody\n")
    assert plan.texts(document.utf8) == ["\n\n", "# Title\nBody\n"]
    assert plan.chunks[0].section_order is None


def test_crlf_blank_lines_separate_paragraphs_and_titles_lose_the_cr() -> None:
    text = "# Title\r\n\r\nOne one one one one one one one.\r\n\r\nTwo two two two two two two two.\r\n"
    document, plan = plan_of(text, max_utf8_bytes=64, overlap_paragraphs=0)
    assert plan.sections[0].title == "Title"
    assert plan.texts(document.utf8) == [
        "# Title\r\n\r\nOne one one one one one one one.\r\n\r\n",
        "Two two two two two two two two.\r\n",
    ]


# --- Cutting a paragraph over budget ---------------------------------------------------------


def test_an_over_budget_paragraph_is_cut_at_line_breaks_first() -> None:
    lines = [f"line {n:02d} " + "z" * 20 + "\n" for n in range(6)]  # 29 bytes each
    chunks = texts("".join(lines), max_utf8_bytes=64, overlap_paragraphs=0)
    assert chunks == [lines[0] + lines[1], lines[2] + lines[3], lines[4] + lines[5]]


def test_a_long_line_is_cut_after_whitespace() -> None:
    words = " ".join(["word"] * 40)  # 199 bytes, no line break
    chunks = texts(words, max_utf8_bytes=64, overlap_paragraphs=0)
    assert "".join(chunks) == words
    assert all(len(chunk.encode()) <= 64 for chunk in chunks)
    assert all(chunk.endswith(" ") for chunk in chunks[:-1])
    assert chunks[0] == "word " * 12  # the last space within 64 bytes is the 60th byte


def test_text_without_whitespace_is_cut_at_code_point_boundaries() -> None:
    text = "é" * 50 + "😀" * 20 + "東" * 30  # 2-, 4- and 3-byte code points
    document, plan = plan_of(text, "text/plain", max_utf8_bytes=64)
    assert "".join(plan.texts(document.utf8)) == text
    for chunk in plan.chunks:
        assert chunk.end_byte - chunk.start_byte <= 64
    assert [chunk.end_byte - chunk.start_byte for chunk in plan.chunks][:3] == [64, 64, 64]


def test_the_last_piece_of_a_cut_paragraph_packs_with_what_follows() -> None:
    long_line = "a" * 100 + "\n\n"
    chunks = texts(long_line + "short\n\nshorter\n", "text/plain", max_utf8_bytes=64, overlap_paragraphs=1)
    assert chunks == ["a" * 64, "a" * 36 + "\n\nshort\n\nshorter\n"]


# --- Overlap ---------------------------------------------------------------------------------


def test_overlap_repeats_the_previous_paragraph() -> None:
    paragraphs = [f"Paragraph {n} " + "p" * 14 + "\n\n" for n in range(4)]  # 28 bytes each
    chunks = texts("".join(paragraphs), max_utf8_bytes=64, overlap_paragraphs=1)
    assert chunks == [
        paragraphs[0] + paragraphs[1],
        paragraphs[1] + paragraphs[2],
        paragraphs[2] + paragraphs[3],
    ]


def test_no_overlap_when_it_is_zero() -> None:
    paragraphs = [f"Paragraph {n} " + "p" * 14 + "\n\n" for n in range(4)]
    chunks = texts("".join(paragraphs), max_utf8_bytes=64, overlap_paragraphs=0)
    assert chunks == [paragraphs[0] + paragraphs[1], paragraphs[2] + paragraphs[3]]


def test_overlap_takes_as_many_paragraphs_as_fit_up_to_the_setting() -> None:
    small = [f"s{n}\n\n" for n in range(3)]  # 4 bytes each
    big = "B" * 58 + "\n\n"  # 60 bytes: with one small paragraph, 64
    chunks = texts("".join(small) + big, max_utf8_bytes=64, overlap_paragraphs=4)
    assert chunks == ["".join(small), small[2] + big]


def test_overlap_is_dropped_when_the_budget_has_no_room() -> None:
    first = "f" * 40 + "\n\n"
    second = "s" * 40 + "\n\n"
    assert texts(first + second, max_utf8_bytes=64, overlap_paragraphs=2) == [first, second]


def test_overlap_never_repeats_the_heading_or_crosses_a_heading() -> None:
    body = ["Alpha alpha alpha alpha.\n\n", "Beta beta beta beta beta.\n\n", "Gamma gamma gamma.\n"]
    text = "# Head\n\n" + "".join(body) + "# Next\n\nDelta.\n"
    chunks = texts(text, max_utf8_bytes=64, overlap_paragraphs=4)
    assert chunks == [
        "# Head\n\n" + body[0] + body[1],
        body[1] + body[2],
        "# Next\n\nDelta.\n",
    ]


def test_overlap_never_repeats_a_cut_paragraph() -> None:
    cut = "c" * 100 + "\n\n"
    chunks = texts(cut + "tail\n\n" + "t" * 50 + "\n", "text/plain", max_utf8_bytes=64, overlap_paragraphs=1)
    # The third chunk repeats "tail" (a whole paragraph), never the paragraph that was cut.
    assert chunks == ["c" * 64, "c" * 36 + "\n\ntail\n\n", "tail\n\n" + "t" * 50 + "\n"]


# --- Token budgets ---------------------------------------------------------------------------


def test_max_tokens_is_enforced_with_a_counter_and_counts_are_recorded() -> None:
    paragraphs = "".join(f"one two three {n}\n\n" for n in range(6))  # 4 tokens each
    document, plan = plan_of(paragraphs, counter=WordCounter(), max_tokens=9, overlap_paragraphs=0)
    assert [chunk.token_count for chunk in plan.chunks] == [8, 8, 8]
    for chunk in plan.chunks:
        assert WordCounter().count(plan.chunk_text(document.utf8, chunk)) == chunk.token_count


def test_the_token_budget_packs_as_many_paragraphs_as_fit() -> None:
    paragraphs = "".join(f"w{n} x\n\n" for n in range(7))  # 2 tokens each
    document, plan = plan_of(paragraphs, counter=WordCounter(), max_tokens=6, overlap_paragraphs=0)
    assert plan.texts(document.utf8) == ["w0 x\n\nw1 x\n\nw2 x\n\n", "w3 x\n\nw4 x\n\nw5 x\n\n", "w6 x\n\n"]
    assert [chunk.token_count for chunk in plan.chunks] == [6, 6, 2]


def test_max_tokens_is_ignored_without_a_counter() -> None:
    paragraphs = "".join(f"one two three {n}\n\n" for n in range(6))
    _, plan = plan_of(paragraphs, max_tokens=1)
    assert len(plan.chunks) == 1 and plan.chunks[0].token_count is None


def test_a_counter_without_max_tokens_only_reports_counts() -> None:
    _, plan = plan_of("a b c\n\nd e\n", counter=WordCounter())
    assert [chunk.token_count for chunk in plan.chunks] == [5]


def test_a_paragraph_over_the_token_budget_is_cut_at_whitespace() -> None:
    document, plan = plan_of("w " * 30, "text/plain", counter=WordCounter(), max_tokens=7)
    assert "".join(plan.texts(document.utf8)) == "w " * 30
    assert [chunk.token_count for chunk in plan.chunks] == [7, 7, 7, 7, 2]


def test_a_single_code_point_over_max_tokens_stands_alone() -> None:
    class Expensive:
        def count(self, text: str) -> int:
            return 3 * len(text)

    document, plan = plan_of("abc", "text/plain", counter=Expensive(), max_tokens=1)
    assert plan.texts(document.utf8) == ["a", "b", "c"]
    assert [chunk.token_count for chunk in plan.chunks] == [3, 3, 3]


def test_byte_estimate_counter_rounds_up() -> None:
    counter = ByteEstimateCounter()
    assert [counter.count(text) for text in ("", "a", "abcd", "abcde", "😀")] == [0, 1, 1, 2, 1]
    assert counter_identity(counter) == "estimate:utf8-bytes/4"


def _byte_level_encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name="test-bytes",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([value]): value for value in range(256)},
        special_tokens={},
    )


def test_tiktoken_counter_counts_with_a_given_encoding() -> None:
    counter = TiktokenCounter(_byte_level_encoding())
    assert counter.count("héllo <|endoftext|>") == len("héllo <|endoftext|>".encode())
    assert counter.identity == "tiktoken:test-bytes"


def test_tiktoken_counter_offline_is_a_clear_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(name: str) -> tiktoken.Encoding:
        raise ConnectionError("no network")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    with pytest.raises(ConfigurationError) as raised:
        TiktokenCounter("o200k_base")
    assert raised.value.code == "tokenizer-unavailable"
    assert "TIKTOKEN_CACHE_DIR" in raised.value.message


def test_tiktoken_counter_refuses_an_unknown_encoding() -> None:
    with pytest.raises(ConfigurationError) as raised:
        TiktokenCounter("no-such-encoding")
    assert raised.value.code == "invalid-option"


def test_tiktoken_counter_with_o200k_base_when_its_data_is_available() -> None:
    try:
        counter = TiktokenCounter()
    except ConfigurationError as error:
        pytest.skip(f"o200k_base is not available offline here: {error.code}")
    assert counter.count("hello world") == 2
    assert counter.identity == "tiktoken:o200k_base"


# --- Fingerprints and ids --------------------------------------------------------------------


def test_the_fingerprint_is_stable_and_changes_with_every_setting() -> None:
    base = Chunker().fingerprint
    assert base == Chunker(ChunkerOptions()).fingerprint and len(base) == 64
    others = {
        Chunker(ChunkerOptions(max_utf8_bytes=1024)).fingerprint,
        Chunker(ChunkerOptions(overlap_paragraphs=0)).fingerprint,
        Chunker(token_counter=WordCounter()).fingerprint,
        Chunker(ChunkerOptions(max_tokens=100), token_counter=WordCounter()).fingerprint,
        Chunker(ChunkerOptions(max_tokens=100), token_counter=ByteEstimateCounter()).fingerprint,
    }
    assert base not in others and len(others) == 5
    # Without a counter max_tokens has no effect, so it does not change the fingerprint.
    assert Chunker(ChunkerOptions(max_tokens=100)).fingerprint == base
    assert CHUNKER_VERSION.startswith("graphrag-orm.chunker/")


def test_the_plan_carries_the_fingerprint_and_is_deterministic() -> None:
    chunker = Chunker(ChunkerOptions(max_utf8_bytes=64))
    document = doc("# A\n\n" + "text text text\n\n" * 20)
    assert chunker.plan(document) == chunker.plan(document)
    assert chunker.plan(document).fingerprint == chunker.fingerprint


def test_chunk_and_section_ids_are_sha256_and_never_collide() -> None:
    identifier = chunk_id("d" * 64, "c" * 64, "f" * 64, 0, 10)
    assert re.fullmatch(r"[0-9a-f]{64}", identifier)
    assert identifier == chunk_id("d" * 64, "c" * 64, "f" * 64, 0, 10)
    assert identifier != chunk_id("d" * 64, "c" * 64, "f" * 64, 0, 11)
    assert identifier != chunk_id("d" * 64, "c" * 64, "e" * 64, 0, 10)
    assert chunk_id("a", "bc", "f", 1, 2) != chunk_id("ab", "c", "f", 1, 2)
    assert chunk_id("a", "b", "c", 1, 23) != chunk_id("a", "b", "c", 12, 3)
    assert section_id("a", "b", "c", 0) != section_id("a", "b", "c", 1)
    assert section_id("a", "b", "c", 0) != chunk_id("a", "b", "c", 0, 0)


def test_plan_helpers_give_exact_texts() -> None:
    text = "Intro é\n\n# Title 😀\nBody\n"
    document, plan = plan_of(text)
    assert "".join(plan.texts(document.utf8)) == text
    section = plan.sections[0]
    assert plan.section_text(document.utf8, section) == "# Title 😀\nBody\n"
    assert plan.to_json().startswith('{"sections":[{"order":0,"level":1,"title":"Title 😀","startByte":')


# --- The outline a loader gives ------------------------------------------------------------


def test_a_loader_that_gives_an_outline_gets_sections_whatever_the_media_type() -> None:
    from pathlib import Path

    from graphrag_orm.loaders.base import DocumentOutline, Heading

    text = b"Intro\n\nGuide\nbody one\n\nDetails\nbody two\n"
    guide, details = text.index(b"Guide"), text.index(b"Details")
    outline = DocumentOutline(
        (
            Heading(guide, guide + len(b"Guide\n"), 1, "Guide"),
            Heading(details, details + len(b"Details\n"), 2, "Details"),
        ),
        (),
    )
    html = LoadedDocument(source_uri="file:///page.html", media_type="text/html", utf8=text, outline=outline)
    plan = Chunker().plan(html)
    assert [(s.title, s.level, s.parent_order) for s in plan.sections] == [("Guide", 1, None), ("Details", 2, 0)]
    assert text[plan.chunks[-1].start_byte :].startswith(b"Details")
    # The chunker reads the outline; it knows no format (the loaders own Markdown).
    package = Path(__file__).resolve().parents[2] / "graphrag_orm" / "chunking"
    assert not any("markdown" in path.read_text() for path in package.glob("*.py") if path.name != "__init__.py")
    assert "outline" not in html.model_dump()


@pytest.mark.parametrize(
    "heading",
    [(5, 3, 1, "backwards"), (0, 99, 1, "past the end"), (0, 4, 7, "level 7")],
)
def test_an_outline_that_does_not_fit_the_bytes_is_refused(heading: tuple[int, int, int, str]) -> None:
    from pydantic import ValidationError

    from graphrag_orm.loaders.base import DocumentOutline, Heading

    with pytest.raises(ValidationError):
        LoadedDocument(
            source_uri="text:x",
            media_type="text/plain",
            utf8=b"line\nmore text\n",
            outline=DocumentOutline((Heading(*heading),), ()),
        )
