"""Sources and identity: URIs, document ids, media types, folders and metadata."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from graphrag_orm.errors import ConfigurationError
from graphrag_orm.sources import (
    Source,
    SourceMetadata,
    Sources,
    content_hash,
    document_id,
    media_type_for,
    normalize_uri,
)


def test_a_file_is_its_absolute_file_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = Sources.file("notes/a b.md")
    assert source.source_uri == (tmp_path / "notes" / "a b.md").as_uri()
    assert source.source_uri.startswith("file:///") and "a%20b.md" in source.source_uri
    assert source.path == tmp_path / "notes" / "a b.md"
    assert source.media_type == "text/markdown"


def test_a_file_path_with_dot_segments_names_the_same_document(tmp_path: Path) -> None:
    direct = Sources.file(tmp_path / "a.md")
    roundabout = Sources.file(tmp_path / "sub" / ".." / "a.md")
    assert roundabout.document_id == direct.document_id


def test_a_file_named_by_uri_keeps_that_uri(tmp_path: Path) -> None:
    source = Sources.file(tmp_path / "guide.md", uri="HTTPS://Example.ORG:443/Docs/Guide.md")
    assert source.source_uri == "https://example.org/Docs/Guide.md"
    assert source.path == tmp_path / "guide.md"


def test_document_id_is_sha256_of_the_normalised_uri(tmp_path: Path) -> None:
    source = Sources.file(tmp_path / "a.md", uri="https://example.org/a.md")
    expected = hashlib.sha256(b"https://example.org/a.md").hexdigest()
    assert source.document_id == expected == document_id("https://example.org/a.md")
    assert len(expected) == 64 and expected == expected.lower()


def test_content_hash_is_sha256_of_the_bytes() -> None:
    assert content_hash(b"abc") == hashlib.sha256(b"abc").hexdigest()


@pytest.mark.parametrize(
    ("given", "normalised"),
    [
        ("HTTP://Example.COM:80/A/B?Q=1#F", "http://example.com/A/B?Q=1#F"),
        ("https://example.com:443", "https://example.com"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://example.com:443/x", "http://example.com:443/x"),
        ("https://example.com:/x", "https://example.com/x"),
        ("wss://Host:443/socket", "wss://host/socket"),
        ("ftp://Files.Example.com:21/pub", "ftp://files.example.com/pub"),
        ("https://User:Pass@Example.com/", "https://User:Pass@example.com/"),
        ("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x"),
        ("http://[2001:DB8::1]:8080/x", "http://[2001:db8::1]:8080/x"),
        ("urn:ISBN:0451450523", "urn:ISBN:0451450523"),
        ("TEXT:Some-Id", "text:Some-Id"),
        ("file:///Home/A%20B.md", "file:///Home/A%20B.md"),
        ("https://example.com/a/../b/%7e", "https://example.com/a/../b/%7e"),
    ],
)
def test_normalize_uri_lowercases_scheme_and_host_and_drops_the_default_port(given: str, normalised: str) -> None:
    assert normalize_uri(given) == normalised


@pytest.mark.parametrize(
    "bad",
    ["", "relative/path.md", "/absolute/path", "://no-scheme", "https://a b/", "https://x:port/", "1http://x/"],
)
def test_normalize_uri_refuses_what_is_not_an_absolute_uri(bad: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        normalize_uri(bad)
    assert raised.value.code == "invalid-source"


def test_a_text_source_is_text_colon_its_id() -> None:
    source = Sources.text("release notes/1", "hello", media_type="Text/Markdown")
    assert source.source_uri == "text:release notes/1"
    assert source.media_type == "text/markdown"
    assert source.text == "hello" and source.path is None
    assert source.document_id == hashlib.sha256(b"text:release notes/1").hexdigest()


@pytest.mark.parametrize("bad_id", ["", "   ", "a\nb", "tab\there"])
def test_a_text_source_needs_a_usable_id(bad_id: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Sources.text(bad_id, "text")
    assert raised.value.code == "invalid-source"


def test_a_text_source_refuses_a_malformed_media_type() -> None:
    with pytest.raises(ConfigurationError):
        Sources.text("a", "text", media_type="text/plain; charset=latin-1")


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("a.md", "text/markdown"),
        ("a.MARKDOWN", "text/markdown"),
        ("a.txt", "text/plain"),
        ("a.Pdf", "application/pdf"),
        ("a.docx", None),
        ("README", None),
    ],
)
def test_media_type_for_maps_suffixes(name: str, media_type: str | None) -> None:
    assert media_type_for(name) == media_type


def test_an_unknown_suffix_is_octet_stream_and_an_explicit_media_type_wins(tmp_path: Path) -> None:
    assert Sources.file(tmp_path / "a.docx").media_type == "application/octet-stream"
    assert Sources.file(tmp_path / "notes.txt", media_type="text/markdown").media_type == "text/markdown"


def _tree(root: Path) -> None:
    for relative in ["b.md", "a.md", "z.txt", "sub/c.md", "sub/deeper/d.md", "Ä/ü ß.md", "sub/e.MD"]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {relative}\n", encoding="utf-8")


def test_folder_lists_matching_files_in_stable_relative_path_order(tmp_path: Path) -> None:
    _tree(tmp_path)
    names = [Path(source.path or "").relative_to(tmp_path).as_posix() for source in Sources.folder(tmp_path)]
    assert names == sorted(names)
    assert set(names) == {"a.md", "b.md", "sub/c.md", "sub/deeper/d.md", "Ä/ü ß.md"} | (
        {"sub/e.MD"} if os.path.normcase("A") == "a" else set()
    )


def test_folder_without_recursion_stays_at_the_top(tmp_path: Path) -> None:
    _tree(tmp_path)
    sources = Sources.folder(tmp_path, pattern="*", recursive=False)
    assert [source.path.name for source in sources if source.path] == ["a.md", "b.md", "z.txt"]
    assert [source.media_type for source in sources] == ["text/markdown", "text/markdown", "text/plain"]


def test_folder_with_base_uri_joins_percent_encoded_relative_paths(tmp_path: Path) -> None:
    _tree(tmp_path)
    uris = [source.source_uri for source in Sources.folder(tmp_path, base_uri="HTTPS://Example.org/docs")]
    assert "https://example.org/docs/a.md" in uris
    assert "https://example.org/docs/sub/deeper/d.md" in uris
    assert "https://example.org/docs/%C3%84/%C3%BC%20%C3%9F.md" in uris


def test_folder_sources_have_the_same_ids_wherever_the_folder_is(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    _tree(first)
    _tree(second)
    base = "https://example.org/repo/"
    ids_first = [source.document_id for source in Sources.folder(first, base_uri=base)]
    ids_second = [source.document_id for source in Sources.folder(second, base_uri=base)]
    assert ids_first == ids_second
    assert [s.document_id for s in Sources.folder(first)] != [s.document_id for s in Sources.folder(second)]


def test_folder_does_not_follow_directory_links(tmp_path: Path) -> None:
    _tree(tmp_path)
    before = Sources.folder(tmp_path)
    try:
        (tmp_path / "sub" / "loop").symlink_to(tmp_path, target_is_directory=True)
    except OSError:
        pytest.skip("symbolic links are not available here")
    assert Sources.folder(tmp_path) == before


@pytest.mark.parametrize(
    ("path_kind", "pattern", "base_uri"),
    [
        ("missing", "*.md", None),
        ("file", "*.md", None),
        ("folder", "", None),
        ("folder", "sub/*.md", None),
        ("folder", "*.md", "docs/"),
        ("folder", "*.md", "https://example.org/docs/?v=1"),
    ],
)
def test_folder_refuses_bad_input(tmp_path: Path, path_kind: str, pattern: str, base_uri: str | None) -> None:
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    path = {"missing": tmp_path / "nope", "file": tmp_path / "a.md", "folder": tmp_path}[path_kind]
    with pytest.raises(ConfigurationError) as raised:
        Sources.folder(path, pattern=pattern, base_uri=base_uri)
    assert raised.value.code == "invalid-source"


def test_metadata_is_optional_and_replaceable_field_by_field(tmp_path: Path) -> None:
    source = Sources.file(tmp_path / "scan.md", metadata=SourceMetadata(title="Scan", published="Spring 2024"))
    changed = source.with_metadata(text_origin="ocr: Tesseract 5.3", title=None)
    assert changed.metadata == SourceMetadata(published="Spring 2024", text_origin="ocr: Tesseract 5.3")
    assert source.metadata.title == "Scan"  # the original is unchanged
    replaced = source.with_metadata(SourceMetadata(publisher="ACME"), url="https://example.org/scan")
    assert replaced.metadata == SourceMetadata(publisher="ACME", url="https://example.org/scan")
    assert Sources.text("a", "x").metadata == SourceMetadata()


def test_with_metadata_refuses_unknown_fields() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Sources.text("a", "x").with_metadata(author="someone")
    assert raised.value.code == "invalid-source"


def test_a_source_round_trips_through_camel_case_json(tmp_path: Path) -> None:
    source = Sources.file(tmp_path / "a.md", metadata=SourceMetadata(text_origin="transcript"))
    data = source.to_json()
    assert '"sourceUri"' in data and '"documentId"' in data and '"textOrigin"' in data
    assert Source.model_validate_json(data) == source


def test_a_source_refuses_a_stale_document_id(tmp_path: Path) -> None:
    data = Sources.text("a", "x").model_dump(by_alias=True)
    data["documentId"] = "0" * 64
    with pytest.raises(ValueError, match="documentId"):
        Source.model_validate(data)


def test_a_source_has_exactly_one_of_path_and_text() -> None:
    with pytest.raises(ValueError):
        Source(source_uri="text:a", media_type="text/plain")
    with pytest.raises(ValueError):
        Source(source_uri="text:a", media_type="text/plain", text="x", path=Path("/a.md"))
