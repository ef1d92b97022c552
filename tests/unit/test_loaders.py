"""The text loader, the loader registry, LoadedDocument and the Markdown outline."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from graphrag_orm.errors import ConfigurationError, LoadError
from graphrag_orm.loaders import DocumentLoader, LoadedDocument, LoaderRegistry, PdfLoader, TextLoader
from graphrag_orm.loaders import base as loaders_base
from graphrag_orm.loaders.markdown import first_title, outline
from graphrag_orm.sources import Source, SourceMetadata, Sources, content_hash

BOM = b"\xef\xbb\xbf"


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- The text loader -------------------------------------------------------------------------


async def test_text_file_loads_byte_for_byte(tmp_path: Path) -> None:
    data = "line one\r\n\ttabbed  \r\nünïcödé 😀\n".encode()
    document = await TextLoader().load(Sources.file(_write(tmp_path / "a.txt", data)))
    assert document.utf8 == data
    assert document.media_type == "text/plain"
    assert document.title is None
    assert document.page_starts is None
    assert document.source_uri == (tmp_path / "a.txt").as_uri()
    assert document.content_hash == content_hash(data)
    assert document.length_bytes == len(data)


async def test_a_leading_byte_order_mark_is_removed(tmp_path: Path) -> None:
    document = await TextLoader().load(Sources.file(_write(tmp_path / "a.md", BOM + b"# Hi\n")))
    assert document.utf8 == b"# Hi\n"
    inner = await TextLoader().load(Sources.file(_write(tmp_path / "b.txt", b"x" + BOM)))
    assert inner.utf8 == b"x" + BOM  # only a leading mark is removed


async def test_a_text_source_loses_its_byte_order_mark_too() -> None:
    document = await TextLoader().load(Sources.text("a", "\ufeffhello"))
    assert document.utf8 == b"hello"


async def test_invalid_utf8_is_refused_naming_the_byte(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.txt", b"good \xff bad")
    with pytest.raises(LoadError) as raised:
        await TextLoader().load(Sources.file(path))
    assert raised.value.code == "invalid-utf8"
    assert "byte 5" in raised.value.message


async def test_a_truncated_code_point_is_invalid_utf8(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.txt", "café".encode()[:-1])
    with pytest.raises(LoadError) as raised:
        await TextLoader().load(Sources.file(path))
    assert raised.value.code == "invalid-utf8"


async def test_a_text_with_a_lone_surrogate_is_invalid_utf8() -> None:
    with pytest.raises(LoadError) as raised:
        await TextLoader().load(Sources.text("a", "bad \ud800 text"))
    assert raised.value.code == "invalid-utf8"


async def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.touch()
    os.truncate(path, 1 << 30)  # sparse: reading it would take a gibibyte of memory
    with pytest.raises(LoadError) as raised:
        await TextLoader(max_document_bytes=1024).load(Sources.file(path))
    assert raised.value.code == "document-too-large"
    assert "1,073,741,824 bytes" in raised.value.message


async def test_the_limit_is_exact_and_does_not_count_the_byte_order_mark(tmp_path: Path) -> None:
    loader = TextLoader(max_document_bytes=1024)
    exact = await loader.load(Sources.file(_write(tmp_path / "a.txt", BOM + b"x" * 1024)))
    assert exact.length_bytes == 1024
    with pytest.raises(LoadError) as raised:
        await loader.load(Sources.file(_write(tmp_path / "b.txt", b"x" * 1025)))
    assert raised.value.code == "document-too-large"
    with pytest.raises(LoadError):
        await loader.load(Sources.text("t", "é" * 513))  # 1,026 bytes in 513 characters


@pytest.mark.parametrize("size", [1025, 1026, 1027, 1028, 1 << 20])
async def test_a_size_refusal_states_the_real_limit(tmp_path: Path, size: int) -> None:
    # The reader allows the three bytes of a byte-order mark; the message must not.
    path = _write(tmp_path / "big.txt", b"x" * size)
    with pytest.raises(LoadError) as raised:
        await TextLoader(max_document_bytes=1024).load(Sources.file(path))
    assert raised.value.code == "document-too-large"
    assert "over max_document_bytes (1,024 bytes)" in raised.value.message
    assert f"{size:,} bytes" in raised.value.message


async def test_the_default_limit_is_stated_as_16_mib(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.touch()
    os.truncate(path, (16 << 20) + 4)
    with pytest.raises(LoadError) as raised:
        await TextLoader().load(Sources.file(path))
    assert "over max_document_bytes (16,777,216 bytes)" in raised.value.message


async def test_a_missing_file_or_a_folder_is_read_failed(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.md", tmp_path):
        with pytest.raises(LoadError) as raised:
            await TextLoader().load(Sources.file(path, media_type="text/markdown"))
        assert raised.value.code == "read-failed"


async def test_the_text_loader_refuses_other_media_types(tmp_path: Path) -> None:
    loader = TextLoader()
    source = Sources.file(tmp_path / "a.pdf")
    assert not loader.can_load(source)
    with pytest.raises(LoadError) as raised:
        await loader.load(source)
    assert raised.value.code == "unsupported-media-type"


async def test_markdown_title_is_the_first_heading_outside_code(tmp_path: Path) -> None:
    text = "Intro\n\n```\n# Not this\n```\n\n#\n\n## The Title ##\n\n# Later\n"
    document = await TextLoader().load(Sources.text("a", text, media_type="text/markdown"))
    assert document.title == "The Title"


async def test_plain_text_has_no_title_even_with_a_hash_line() -> None:
    document = await TextLoader().load(Sources.text("a", "# not a title in plain text\n"))
    assert document.title is None


async def test_the_metadata_title_wins() -> None:
    source = Sources.text("a", "# Heading\n", "text/markdown", metadata=SourceMetadata(title="Chosen"))
    assert (await TextLoader().load(source)).title == "Chosen"


async def test_file_reading_happens_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []
    original = loaders_base.read_bounded

    def spy(path: Path, limit: int, what: str, **kwargs: int) -> bytes:
        seen.append(threading.get_ident())
        return original(path, limit, what, **kwargs)

    monkeypatch.setattr("graphrag_orm.loaders.text.read_bounded", spy)
    await TextLoader().load(Sources.file(_write(tmp_path / "a.txt", b"x")))
    assert seen and seen[0] != loop_thread


@pytest.mark.parametrize("bad", [1023, 256 * 1024 * 1024 + 1, 0, -1, True, 2.5])
def test_the_text_loader_refuses_an_out_of_range_limit(bad: object) -> None:
    with pytest.raises(ConfigurationError) as raised:
        TextLoader(max_document_bytes=bad)  # type: ignore[arg-type]
    assert raised.value.code == "invalid-option"
    assert "max_document_bytes" in raised.value.message and "1,024" in raised.value.message


# --- The registry ---------------------------------------------------------------------------


async def test_the_default_registry_loads_text_and_markdown(tmp_path: Path) -> None:
    registry = LoaderRegistry.default()
    assert registry.media_types == ("application/pdf", "text/markdown", "text/plain")
    markdown = await registry.load(Sources.file(_write(tmp_path / "a.md", b"# A\n")))
    assert markdown.title == "A" and markdown.media_type == "text/markdown"
    plain = await registry.load(Sources.text("t", "text"))
    assert plain.utf8 == b"text"


async def test_the_registry_refuses_an_unknown_media_type(tmp_path: Path) -> None:
    registry = LoaderRegistry.default()
    for source in (Sources.file(tmp_path / "a.docx"), Sources.text("t", "x", media_type="text/html")):
        assert not registry.can_load(source)
        with pytest.raises(LoadError) as raised:
            await registry.load(source)
        assert raised.value.code == "unsupported-media-type"


async def test_the_registry_refuses_a_pdf_given_as_text() -> None:
    with pytest.raises(LoadError) as raised:
        await LoaderRegistry.default().load(Sources.text("t", "x", media_type="application/pdf"))
    assert raised.value.code == "unsupported-media-type"


async def test_the_registry_passes_its_limit_to_every_loader(tmp_path: Path) -> None:
    registry = LoaderRegistry.default(max_document_bytes=1024)
    with pytest.raises(LoadError) as raised:
        await registry.load(Sources.file(_write(tmp_path / "a.md", b"x" * 2000)))
    assert raised.value.code == "document-too-large"
    pdf = registry.loader_for(Sources.file(tmp_path / "a.pdf"))
    assert isinstance(pdf, PdfLoader) and pdf.max_document_bytes == 1024


class _UpperLoader:
    """A custom loader: upper-cases text sources of one media type."""

    def can_load(self, source: Source) -> bool:
        return source.text is not None

    async def load(self, source: Source) -> LoadedDocument:
        assert source.text is not None
        return LoadedDocument(
            source_uri=source.source_uri, media_type=source.media_type, utf8=source.text.upper().encode()
        )


async def test_a_custom_loader_registers_by_media_type() -> None:
    loader = _UpperLoader()
    assert isinstance(loader, DocumentLoader)
    registry = LoaderRegistry.default()
    registry.register("Text/X-Shout", loader)
    document = await registry.load(Sources.text("t", "hey", media_type="text/x-shout"))
    assert document.utf8 == b"HEY"
    registry.register("text/plain", loader)  # replaces the text loader for text/plain
    assert (await registry.load(Sources.text("t", "abc"))).utf8 == b"ABC"


# --- LoadedDocument ---------------------------------------------------------------------------


def test_a_loaded_document_refuses_invalid_utf8() -> None:
    with pytest.raises(ValidationError, match="UTF-8"):
        LoadedDocument(source_uri="text:a", media_type="text/plain", utf8=b"\xc3")


@pytest.mark.parametrize("starts", [(0, 5, 3), (0, 99), (-1,), (0, 2)])
def test_a_loaded_document_refuses_bad_page_starts(starts: tuple[int, ...]) -> None:
    with pytest.raises(ValidationError):
        LoadedDocument(
            source_uri="text:a", media_type="application/pdf", utf8="aé bcdefgh".encode(), page_starts=starts
        )


def test_page_of_finds_the_page_holding_a_byte() -> None:
    # Page 2 is empty: it starts where page 3 does and holds no byte.
    document = LoadedDocument(
        source_uri="text:a", media_type="application/pdf", utf8=b"one\n\nthree", page_starts=(0, 5, 5)
    )
    assert [document.page_of(byte) for byte in (0, 4, 5, 9)] == [1, 1, 3, 3]
    with pytest.raises(ValueError):
        document.page_of(10)
    plain = LoadedDocument(source_uri="text:a", media_type="text/plain", utf8=b"x")
    assert plain.page_of(0) is None


def test_a_loaded_document_round_trips_through_json() -> None:
    document = LoadedDocument(source_uri="text:a", media_type="text/markdown", title="T", utf8="é😀".encode())
    data = document.to_json()
    assert '"contentHash"' in data and '"lengthBytes":6' in data
    assert LoadedDocument.model_validate_json(data) == document
    assert "utf8" not in repr(document)


# --- The Markdown outline ---------------------------------------------------------------------


def _headings(text: str) -> list[tuple[int, str]]:
    return [(heading.level, heading.title) for heading in outline(text.encode()).headings]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# One", [(1, "One")]),
        ("###### Six", [(6, "Six")]),
        ("####### Seven", []),
        ("#NoSpace", []),
        ("#\tTab", [(1, "Tab")]),
        ("   # Three spaces", [(1, "Three spaces")]),
        ("    # Four spaces", []),
        ("\t# Tab indent", []),
        ("#", [(1, "")]),
        ("# ###", [(1, "")]),
        ("## Closed ##  ", [(2, "Closed")]),
        ("# Hash#tag", [(1, "Hash#tag")]),
        ("# Escaped \\#", [(1, "Escaped \\#")]),
        ("# CRLF title\r", [(1, "CRLF title")]),
        ("> # Quote", []),
        ("- # List item", []),
        ("# Ünïcödé 😀", [(1, "Ünïcödé 😀")]),
    ],
)
def test_atx_heading_rules(line: str, expected: list[tuple[int, str]]) -> None:
    assert _headings(f"intro\n{line}\nafter\n") == expected


def test_headings_inside_fences_do_not_count() -> None:
    text = (
        "```python\n# code comment\n```\n"
        "# Real\n"
        "~~~~\n# tilde\n~~~\n# still inside: the closing run is too short\n~~~~~ \n"
        "## After tilde\n"
        "  ```\n# indented fence\n   ```\n"
        "### After indented\n"
        "``` info with `backtick`\n# not a fence, so a heading\n"
        "```\n# inside a fence opened above\n"
    )
    assert _headings(text) == [(1, "Real"), (2, "After tilde"), (3, "After indented"), (1, "not a fence, so a heading")]


def test_fences_are_reported_with_their_spans() -> None:
    text = b"a\n```\nx\n```\nb\n~~~\nunclosed\n"
    fences = outline(text).fences
    assert fences == ((2, 12), (14, len(text)))
    assert text[2:12] == b"```\nx\n```\n"


def test_a_backtick_fence_is_not_closed_by_tildes_or_a_line_with_text() -> None:
    text = "```\n~~~\n``` not closing\n# inside\n```\n# outside\n"
    assert _headings(text) == [(1, "outside")]


def test_headings_on_the_first_and_last_line_without_newline() -> None:
    assert _headings("# First") == [(1, "First")]
    assert _headings("# First\ntext\n## Last") == [(1, "First"), (2, "Last")]
    spans = outline(b"# First\ntext\n## Last").headings
    assert [(h.start, h.line_end) for h in spans] == [(0, 8), (13, 20)]


def test_first_title_skips_empty_headings_and_code() -> None:
    assert first_title(b"```\n# code\n```\n#\n# Real\n") == "Real"
    assert first_title(b"no headings") is None
