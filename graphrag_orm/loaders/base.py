"""The loader contract: what a loader promises about the document it returns."""

from __future__ import annotations

import os
import stat
from bisect import bisect_right
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import Field, computed_field, field_validator, model_validator

from graphrag_orm.codes import DocumentErrorCode, ErrorCode
from graphrag_orm.errors import ConfigurationError, LoadError
from graphrag_orm.loaders.outline import NO_OUTLINE, DocumentOutline, Heading
from graphrag_orm.sources import Source, clean_title, content_hash
from graphrag_orm.values import Value

__all__ = [
    "MAX_DOCUMENT_BYTES_BOUNDS",
    "NO_OUTLINE",
    "DocumentLoader",
    "DocumentOutline",
    "Heading",
    "LoadedDocument",
]

MAX_DOCUMENT_BYTES_BOUNDS = (1 << 10, 256 << 20)
"""Inclusive bounds of every loader's ``max_document_bytes``: 1 KiB to 256 MiB."""

_COMPUTED_KEYS = ("content_hash", "contentHash", "length_bytes", "lengthBytes")


class LoadedDocument(Value):
    """A document as loaded: its UTF-8 bytes, which every byte position refers to.

    ``utf8`` is valid UTF-8 without the byte-order mark the source may have had;
    construction refuses anything else (pydantic ``ValidationError``), so a custom
    loader cannot hand the chunker bytes it would split inside a code point.
    ``page_starts`` (PDF only) holds, for each page in order, the offset where that
    page's text starts: non-decreasing, within ``[0, length_bytes]`` and at code-point
    boundaries. ``content_hash`` is the SHA-256 of ``utf8``, computed once. ``title`` is
    cleaned and bounded (:func:`~graphrag_orm.sources.clean_title`: one line, no control
    characters, at most 500 characters), whichever loader set it. ``outline`` is what a
    loader knows of the document's structure (headings, fenced blocks) for the chunker's
    sections; it is checked against the bytes (increasing heading starts, each line
    inside the document, levels 1 to 6, fences inside the document) and never dumped.
    """

    source_uri: str
    media_type: str
    title: str | None = None
    utf8: bytes = Field(repr=False)
    page_starts: tuple[int, ...] | None = None
    #: The structure the loader found (None: none given; see :attr:`structure`).
    outline: DocumentOutline | None = Field(default=None, repr=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        # Dumps carry the computed fields; they are derived, so reading one back drops them.
        if isinstance(data, dict) and any(key in data for key in _COMPUTED_KEYS):
            data = {key: value for key, value in data.items() if key not in _COMPUTED_KEYS}
        return data

    @field_validator("title")
    @classmethod
    def _clean_title(cls, title: str | None) -> str | None:
        return clean_title(title)

    @field_validator("utf8")
    @classmethod
    def _valid_utf8(cls, utf8: bytes) -> bytes:
        try:
            utf8.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"not valid UTF-8 at byte {error.start}") from None
        return utf8

    @model_validator(mode="after")
    def _valid_page_starts(self) -> LoadedDocument:
        if self.page_starts is not None:
            previous = 0
            for start in self.page_starts:
                if start < previous or start > len(self.utf8):
                    raise ValueError("page starts must be non-decreasing offsets within the document")
                if start < len(self.utf8) and self.utf8[start] & 0xC0 == 0x80:
                    raise ValueError(f"page start {start} is inside a UTF-8 code point")
                previous = start
        return self

    @model_validator(mode="after")
    def _valid_outline(self) -> LoadedDocument:
        if self.outline is None:
            return self
        size, previous = len(self.utf8), -1
        for heading in self.outline.headings:
            if not (previous < heading.start < heading.line_end <= size and 1 <= heading.level <= 6):
                raise ValueError(f"heading at {heading.start} is not a line of the document in order (level 1 to 6)")
            previous = heading.start
        if any(not 0 <= start <= end <= size for start, end in self.outline.fences):
            raise ValueError("a fenced block lies outside the document")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def content_hash(self) -> str:
        """SHA-256 (lower-case hex) of ``utf8``."""
        return content_hash(self.utf8)

    @cached_property
    def structure(self) -> DocumentOutline:
        """The headings and fenced blocks the chunker cuts by: the loader's :attr:`outline` when
        it gave one, else the Markdown outline of a ``text/markdown`` document
        (:mod:`graphrag_orm.loaders.markdown`), else none."""
        if self.outline is not None:
            return self.outline
        if self.media_type == "text/markdown":
            from graphrag_orm.loaders.markdown import outline  # the loader package's one Markdown reader

            return outline(self.utf8)
        return NO_OUTLINE

    @computed_field  # type: ignore[prop-decorator]
    @property
    def length_bytes(self) -> int:
        """The number of UTF-8 bytes."""
        return len(self.utf8)

    def page_of(self, byte: int) -> int | None:
        """The 1-based page holding ``byte``, or None for a document without pages.

        A page without text spans no bytes, so it never holds one. Raises
        ``ValueError`` for an offset outside ``[0, length_bytes)``.
        """
        if not 0 <= byte < len(self.utf8):
            raise ValueError(f"byte {byte} is outside the document")
        if not self.page_starts:
            return None
        # The last page starting at or before the byte: with equal starts, the empty
        # pages come first, so the page that has the byte wins.
        return bisect_right(self.page_starts, byte)


@runtime_checkable
class DocumentLoader(Protocol):
    """Turns a :class:`~graphrag_orm.sources.Source` into a :class:`LoadedDocument`.

    ``can_load`` only looks at the source (media type, file or text), never at the
    file. ``load`` raises :class:`~graphrag_orm.errors.LoadError` whose ``code`` is a
    :class:`~graphrag_orm.codes.DocumentErrorCode` string; it does file I/O off the
    event loop.
    """

    def can_load(self, source: Source) -> bool: ...

    async def load(self, source: Source) -> LoadedDocument: ...


def check_bound(name: str, value: int, low: int, high: int) -> int:
    """``value`` if ``low <= value <= high``, else ``ConfigurationError("invalid-option")``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, f"{name} must be an integer from {low:,} to {high:,}, not {value!r}"
        )
    return value


def read_bounded(path: Path, limit: int, what: str, *, allowance: int = 0) -> bytes:
    """A regular file's bytes, refused (``document-too-large``) when over ``limit + allowance``.

    ``allowance`` is what the caller removes before applying ``limit`` itself (the text
    loader's byte-order mark); a refusal always states ``limit``, the bound the caller
    configured. The size is checked with ``stat`` before anything is read, and at most
    ``limit + allowance + 1`` bytes are ever read, so a file that grows meanwhile is
    refused too. Any ``OSError`` (missing, unreadable, not a regular file) is ``read-failed``.
    Blocking: call it through ``asyncio.to_thread``.
    """
    most = limit + allowance
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise LoadError(DocumentErrorCode.READ_FAILED, f"{path} is not a regular file")
        if info.st_size > most:
            raise _too_large(path, info.st_size, limit, what)
        with open(path, "rb") as handle:
            data = handle.read(most + 1)
    except OSError as error:
        raise LoadError(DocumentErrorCode.READ_FAILED, f"could not read {path}: {error.strerror or error}") from None
    if len(data) > most:
        raise _too_large(path, len(data), limit, what)
    return data


def _too_large(path: Path, size: int, limit: int, what: str) -> LoadError:
    return LoadError(DocumentErrorCode.DOCUMENT_TOO_LARGE, f"{path} is {size:,} bytes, over {what} ({limit:,} bytes)")


def unsupported(source: Source, why: str) -> LoadError:
    """The ``unsupported-media-type`` refusal for ``source``, saying why."""
    return LoadError(
        DocumentErrorCode.UNSUPPORTED_MEDIA_TYPE,
        f"{source.source_uri} ({source.media_type}) cannot be loaded: {why}",
    )
