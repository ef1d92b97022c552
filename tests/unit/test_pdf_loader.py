"""The PDF loader, on PDFs built here with pypdf (no binary fixture is committed)."""

from __future__ import annotations

import io
import itertools
import os
import re
import time
import types
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject, NumberObject

from graphrag_orm.chunking import Chunker, ChunkerOptions
from graphrag_orm.errors import ConfigurationError, LoadError
from graphrag_orm.loaders import LoaderRegistry, PdfLoader
from graphrag_orm.loaders import pdf as pdf_module
from graphrag_orm.sources import SourceMetadata, Sources

Paragraphs = list[list[str]]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _content(paragraphs: Paragraphs, size: int = 12, leading: int = 14, gap: int = 30) -> str:
    """A content stream drawing lines top-down: ``leading`` apart, ``gap`` between paragraphs."""
    operators = ["BT", f"/F1 {size} Tf", "72 720 Td"]
    for number, paragraph in enumerate(paragraphs):
        for line_number, line in enumerate(paragraph):
            if number or line_number:
                operators.append(f"0 -{gap if line_number == 0 else leading} Td")
            operators.append(f"({_escape(line)}) Tj")
    operators.append("ET")
    return "\n".join(operators)


def build_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A PDF whose pages have the given content streams, with Helvetica as /F1."""
    writer = PdfWriter()
    for content in pages:
        page = writer.add_blank_page(612, 792)
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
            }
        )
        fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
        stream = DecodedStreamObject()
        stream.set_data(content.encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    if title is not None:
        writer.add_metadata({"/Title": title})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _rewrite(data: bytes, change: object) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    change(writer)  # type: ignore[operator]
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _file(tmp_path: Path, data: bytes, name: str = "doc.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


THREE_PAGES = [
    _content([["First line of para one,", "second line of para one."], ["Para two, café."]]),
    _content([["Page two text."]]),
    _content([["Page three (last)."]]),
]


async def test_a_three_page_pdf_gives_its_text_page_map_and_title(tmp_path: Path) -> None:
    path = _file(tmp_path, build_pdf(THREE_PAGES, title="Field Guide"))
    document = await PdfLoader().load(Sources.file(path))
    text = (
        "First line of para one,\nsecond line of para one.\n\nPara two, café.\n\nPage two text.\n\nPage three (last)."
    )
    assert document.utf8.decode("utf-8") == text
    assert document.media_type == "application/pdf"
    assert document.title == "Field Guide"
    second = document.utf8.index(b"Page two")
    third = document.utf8.index(b"Page three")
    assert document.page_starts == (0, second, third)
    assert second == len("First line of para one,\nsecond line of para one.\n\nPara two, café.\n\n".encode())
    assert [document.page_of(byte) for byte in (0, second - 1, second, third)] == [1, 1, 2, 3]


async def test_a_page_without_text_spans_no_bytes(tmp_path: Path) -> None:
    pages = [_content([["One."]]), "", _content([["Three."]]), ""]
    document = await PdfLoader().load(Sources.file(_file(tmp_path, build_pdf(pages))))
    assert document.utf8 == b"One.\n\nThree."
    assert document.page_starts == (0, 6, 6, 12)
    assert document.page_of(6) == 3


async def test_the_metadata_title_wins_and_no_title_is_none(tmp_path: Path) -> None:
    path = _file(tmp_path, build_pdf(THREE_PAGES, title="In the file"))
    chosen = await PdfLoader().load(Sources.file(path, metadata=SourceMetadata(title="Chosen")))
    assert chosen.title == "Chosen"
    untitled = await PdfLoader().load(Sources.file(_file(tmp_path, build_pdf(THREE_PAGES), "b.pdf")))
    assert untitled.title is None


async def test_a_pdf_without_text_is_pdf_no_text(tmp_path: Path) -> None:
    path = _file(tmp_path, build_pdf(["", "0 0 m 100 100 l S"]))
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(path))
    assert raised.value.code == "pdf-no-text"


async def test_a_damaged_page_is_pdf_unreadable_naming_the_page(tmp_path: Path) -> None:
    damaged = "BT /F1 12 Tf 72 720 Td (an unterminated string Tj ET"
    path = _file(tmp_path, build_pdf([_content([["fine"]]), damaged, _content([["fine"]])]))
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(path))
    assert raised.value.code == "pdf-unreadable"
    assert "page 2 of 3" in raised.value.message


async def test_a_page_whose_contents_are_not_a_stream_is_pdf_unreadable(tmp_path: Path) -> None:
    def break_page_two(writer: PdfWriter) -> None:
        writer.pages[1][NameObject("/Contents")] = NumberObject(5)

    path = _file(tmp_path, _rewrite(build_pdf(THREE_PAGES), break_page_two))
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(path))
    assert raised.value.code == "pdf-unreadable"
    assert "page 2 of 3" in raised.value.message and "not a stream" in raised.value.message


async def test_a_page_whose_resources_are_not_a_dictionary_is_pdf_unreadable(tmp_path: Path) -> None:
    def break_page_three(writer: PdfWriter) -> None:
        writer.pages[2][NameObject("/Resources")] = NumberObject(3)

    path = _file(tmp_path, _rewrite(build_pdf(THREE_PAGES), break_page_three))
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(path))
    assert raised.value.code == "pdf-unreadable" and "page 3 of 3" in raised.value.message


async def test_any_failure_inside_pypdf_is_classified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypdf import PageObject

    def explode(self: PageObject, *args: object, **kwargs: object) -> str:
        raise KeyError("/Font")

    monkeypatch.setattr(PageObject, "extract_text", explode)
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(_file(tmp_path, build_pdf(THREE_PAGES))))
    assert raised.value.code == "pdf-unreadable" and "page 1 of 3" in raised.value.message
    assert "KeyError" in raised.value.message


@pytest.mark.parametrize("data", [b"not a pdf at all", b"%PDF-1.7\n", b""])
async def test_a_file_that_is_not_a_pdf_is_pdf_unreadable(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(_file(tmp_path, data)))
    assert raised.value.code == "pdf-unreadable"


async def test_a_truncated_pdf_is_pdf_unreadable(tmp_path: Path) -> None:
    data = build_pdf(THREE_PAGES)
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(_file(tmp_path, data[: len(data) // 3])))
    assert raised.value.code == "pdf-unreadable"


async def test_an_encrypted_pdf_is_pdf_unreadable_unless_its_user_password_is_empty(tmp_path: Path) -> None:
    plain = build_pdf(THREE_PAGES)
    locked = _rewrite(plain, lambda writer: writer.encrypt("secret", algorithm="RC4-128"))
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(_file(tmp_path, locked, "locked.pdf")))
    assert raised.value.code == "pdf-unreadable" and "encrypted" in raised.value.message

    owner_only = _rewrite(plain, lambda writer: writer.encrypt("", "owner", algorithm="RC4-128"))
    document = await PdfLoader().load(Sources.file(_file(tmp_path, owner_only, "open.pdf")))
    assert document.utf8.startswith(b"First line")


async def test_more_pages_than_max_pages_is_document_too_large(tmp_path: Path) -> None:
    path = _file(tmp_path, build_pdf(["", "", ""]))  # empty pages: the bound is checked first
    with pytest.raises(LoadError) as raised:
        await PdfLoader(max_pages=2).load(Sources.file(path))
    assert raised.value.code == "document-too-large" and "3 pages" in raised.value.message


async def test_a_file_over_max_file_bytes_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.pdf"
    path.touch()
    os.truncate(path, 1 << 30)  # sparse: reading it would take a gibibyte of memory
    with pytest.raises(LoadError) as raised:
        await PdfLoader(max_file_bytes=1024).load(Sources.file(path))
    assert raised.value.code == "document-too-large" and "max_file_bytes" in raised.value.message


async def test_text_over_max_document_bytes_is_document_too_large(tmp_path: Path) -> None:
    line = "x" * 60
    pages = [_content([[line] * 10]) for _ in range(3)]  # about 610 bytes of text a page
    path = _file(tmp_path, build_pdf(pages))
    with pytest.raises(LoadError) as raised:
        await PdfLoader(max_document_bytes=1024).load(Sources.file(path))
    assert raised.value.code == "document-too-large" and "first 2 pages" in raised.value.message


async def test_without_pypdf_a_pdf_is_unsupported_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("graphrag_orm.loaders.pdf._pypdf", lambda: None)
    source = Sources.file(_file(tmp_path, build_pdf(THREE_PAGES)))
    for loader in (PdfLoader(), LoaderRegistry.default()):
        with pytest.raises(LoadError) as raised:
            await loader.load(source)
        assert raised.value.code == "unsupported-media-type"
        assert "graphrag-orm[pdf]" in raised.value.message


async def test_a_missing_pdf_is_read_failed(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(tmp_path / "missing.pdf"))
    assert raised.value.code == "read-failed"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_file_bytes", 1023),
        ("max_file_bytes", (1 << 30) + 1),
        ("max_pages", 0),
        ("max_pages", 100_001),
        ("max_document_bytes", 100),
        ("max_parse_seconds", 0),
        ("max_parse_seconds", 3_601),
        ("max_page_content_bytes", (64 << 10) - 1),
        ("max_page_content_bytes", (64 << 20) + 1),
    ],
)
def test_the_pdf_loader_refuses_out_of_range_options(option: str, value: int) -> None:
    with pytest.raises(ConfigurationError) as raised:
        PdfLoader(**{option: value})
    assert raised.value.code == "invalid-option" and option in raised.value.message


async def test_pdf_chunks_are_exact_spans_with_pages(tmp_path: Path) -> None:
    pages = [
        _content([[f"Page {page} paragraph {n} says something." for _ in range(3)] for n in range(4)])
        for page in range(1, 4)
    ]
    document = await LoaderRegistry.default().load(Sources.file(_file(tmp_path, build_pdf(pages))))
    plan = Chunker(ChunkerOptions(max_utf8_bytes=256, overlap_paragraphs=0)).plan(document)
    assert plan.sections == ()
    assert b"".join(document.utf8[c.start_byte : c.end_byte] for c in plan.chunks) == document.utf8
    for chunk in plan.chunks:
        text = plan.chunk_text(document.utf8, chunk)
        page = document.page_of(chunk.start_byte)
        assert text.startswith(f"Page {page} ")


# --- Hostile PDFs: small on disk, expensive to parse -----------------------------------------


def shared_pages(count: int, content: bytes = b"", declared: int | None = None) -> bytes:
    """A PDF whose page tree lists one page ``count`` times (pypdf reads ``count`` pages).

    The page's content stream is ``content``, compressed, so megabytes of operators take a
    few kilobytes on disk; ``declared`` is the page tree's ``/Count`` (default ``count``).
    """
    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    stream = DecodedStreamObject()
    stream.set_data(content)
    page[NameObject("/Contents")] = writer._add_object(stream.flate_encode())
    tree = writer.root_object["/Pages"].get_object()
    reference = tree["/Kids"][0]
    tree[NameObject("/Kids")] = ArrayObject([reference] * count)
    tree[NameObject("/Count")] = NumberObject(count if declared is None else declared)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def never_flatten(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building pypdf's page list (every page object of the file) fail the test."""

    def flatten(*args: object, **kwargs: object) -> None:
        raise AssertionError("the page list was built before the page count was checked")

    monkeypatch.setattr(PdfReader, "_flatten", flatten)


async def test_100_000_empty_pages_reach_the_max_pages_refusal_before_any_page_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = shared_pages(100_000)
    assert len(data) < 1 << 20
    path = _file(tmp_path, data)
    never_flatten(monkeypatch)
    started = time.perf_counter()
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(path))
    elapsed = time.perf_counter() - started
    assert raised.value.code == "document-too-large"
    assert "100,000 pages, over max_pages (5,000)" in raised.value.message
    assert elapsed < 5.0, elapsed  # about 0.4 s: reading the page tree's list of 100,000 references


async def test_a_page_tree_that_understates_its_count_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, shared_pages(100_000, declared=1))
    never_flatten(monkeypatch)
    with pytest.raises(LoadError) as raised:
        await PdfLoader(max_pages=100).load(Sources.file(path))
    assert raised.value.code == "document-too-large"
    assert "more than 100 pages, over max_pages (100)" in raised.value.message


async def test_a_page_count_within_max_pages_loads_every_page(tmp_path: Path) -> None:
    path = _file(tmp_path, shared_pages(50, _content([["Same page."]]).encode(), declared=7))
    document = await PdfLoader(max_pages=50).load(Sources.file(path))
    assert document.utf8 == b"\n\n".join([b"Same page."] * 50) and len(document.page_starts or ()) == 50


async def test_a_15_mb_content_stream_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    operators = b"0 0 m 10 10 l S\n" * (15_000_000 // 16)  # 15 MB of path operators, no text
    data = shared_pages(1, operators)
    assert len(data) < 256 << 10
    started = time.perf_counter()
    with pytest.raises(LoadError) as raised:
        await PdfLoader().load(Sources.file(_file(tmp_path, data)))
    elapsed = time.perf_counter() - started
    assert raised.value.code == "document-too-large"
    assert "page 1 of 1" in raised.value.message
    assert "over max_page_content_bytes (4,194,304 bytes)" in raised.value.message
    assert elapsed < 5.0, elapsed  # decoding is fast; parsing it would take tens of seconds


async def test_parsing_stops_at_the_deadline_within_a_page(tmp_path: Path) -> None:
    # 30 pages of about 0.15 s each (more on a loaded host): over a one-second deadline.
    # Which page is reached depends on the host's speed; that the deadline holds inside a
    # page does not (the check runs before each operator).
    text = b"BT /F1 12 Tf 72 700 Td " + b"(x) Tj " * 10_000 + b"ET"
    path = _file(tmp_path, shared_pages(30, text))
    started = time.perf_counter()
    with pytest.raises(LoadError) as raised:
        await PdfLoader(max_parse_seconds=1, max_document_bytes=1 << 20).load(Sources.file(path))
    elapsed = time.perf_counter() - started
    assert raised.value.code == "pdf-timeout"
    reached = re.search(r"max_parse_seconds \(1 s\); stopped at page (\d+) of 30$", raised.value.message)
    assert reached is not None and 1 <= int(reached.group(1)) <= 30, raised.value.message
    assert elapsed < 3.0, elapsed


async def test_the_deadline_names_the_page_it_stopped_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A clock that moves 10 ms each time the loader reads it: the deadline (1 s) is 100
    # reads after parsing starts, whatever the host's speed. Each page costs one read
    # between pages and one per operator (14 here), so the loader stops on page 7.
    ticks = itertools.count()
    monkeypatch.setattr(pdf_module, "time", types.SimpleNamespace(monotonic=lambda: next(ticks) * 0.01))
    text = b"BT /F1 12 Tf 72 700 Td " + b"(x) Tj " * 10 + b"ET"
    path = _file(tmp_path, shared_pages(30, text))
    with pytest.raises(LoadError) as raised:
        await PdfLoader(max_parse_seconds=1).load(Sources.file(path))
    assert raised.value.code == "pdf-timeout"
    assert raised.value.message.endswith("max_parse_seconds (1 s); stopped at page 7 of 30"), raised.value.message


async def test_a_pdf_title_with_control_characters_is_cleaned(tmp_path: Path) -> None:
    title = "Field\x00 Guide\x1b\r\nto the\u2028Coast\x85\x07"
    document = await PdfLoader().load(Sources.file(_file(tmp_path, build_pdf(THREE_PAGES, title=title))))
    assert document.title == "Field Guide to the Coast"
