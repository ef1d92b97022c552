"""Plain text and Markdown: UTF-8 files or in-memory texts, taken byte for byte."""

from __future__ import annotations

import asyncio

from graphrag_orm.codes import DocumentErrorCode
from graphrag_orm.errors import LoadError
from graphrag_orm.loaders.base import MAX_DOCUMENT_BYTES_BOUNDS, LoadedDocument, check_bound, read_bounded, unsupported
from graphrag_orm.loaders.markdown import first_title
from graphrag_orm.sources import Source

__all__ = ["TextLoader"]

_BOM = b"\xef\xbb\xbf"


class TextLoader:
    """Loads ``text/plain`` and ``text/markdown`` sources, files or texts, as UTF-8.

    - A leading UTF-8 byte-order mark is removed; nothing else is changed (line
      endings, tabs and trailing whitespace stay, so byte positions are the file's
      positions after the mark).
    - Invalid UTF-8 is refused with ``invalid-utf8``, naming the first bad byte; a
      text source with a lone surrogate is refused the same way.
    - A document over ``max_document_bytes`` (1 KiB to 256 MiB, default 16 MiB,
      counted without the mark) is refused with ``document-too-large``; a file's size
      is checked with ``stat`` before it is read, and it is never read past the limit.
    - I/O errors are ``read-failed``; another media type is ``unsupported-media-type``.
    - The title is the source metadata's title, else, for Markdown, the first
      non-empty ATX heading outside fenced code, else None.

    File reading runs in a worker thread (``asyncio.to_thread``), never on the event loop.
    """

    media_types = frozenset({"text/plain", "text/markdown"})

    def __init__(self, max_document_bytes: int = 16 << 20) -> None:
        self.max_document_bytes = check_bound("max_document_bytes", max_document_bytes, *MAX_DOCUMENT_BYTES_BOUNDS)

    def can_load(self, source: Source) -> bool:
        """True for a ``text/plain`` or ``text/markdown`` file or text."""
        return source.media_type in self.media_types

    async def load(self, source: Source) -> LoadedDocument:
        """The source's UTF-8 bytes and title; raises ``LoadError`` as the class says."""
        if not self.can_load(source):
            raise unsupported(source, "the text loader takes text/plain and text/markdown")
        return await asyncio.to_thread(self._load, source)

    def _load(self, source: Source) -> LoadedDocument:
        limit = self.max_document_bytes
        if source.text is not None:
            raw = self._encode(source.text, source.source_uri, limit)
        else:
            assert source.path is not None  # a Source has a path or a text
            raw = read_bounded(source.path, limit, "max_document_bytes", allowance=len(_BOM))
        utf8 = raw[len(_BOM) :] if raw.startswith(_BOM) else raw
        if len(utf8) > limit:
            raise LoadError(
                DocumentErrorCode.DOCUMENT_TOO_LARGE,
                f"{source.source_uri} is {len(utf8):,} bytes, over max_document_bytes ({limit:,} bytes)",
            )
        try:
            utf8.decode("utf-8")
        except UnicodeDecodeError as error:
            raise LoadError(
                DocumentErrorCode.INVALID_UTF8,
                f"{source.source_uri} is not valid UTF-8: {error.reason} at byte {error.start}",
            ) from None
        title = source.metadata.title
        if title is None and source.media_type == "text/markdown":
            title = first_title(utf8)
        return LoadedDocument(source_uri=source.source_uri, media_type=source.media_type, title=title, utf8=utf8)

    @staticmethod
    def _encode(text: str, source_uri: str, limit: int) -> bytes:
        # Every character is at least one byte, so a longer text is too large before
        # paying for its encoding.
        if len(text) > limit + 1:
            raise LoadError(
                DocumentErrorCode.DOCUMENT_TOO_LARGE,
                f"{source_uri} has {len(text):,} characters, over max_document_bytes ({limit:,} bytes)",
            )
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise LoadError(
                DocumentErrorCode.INVALID_UTF8,
                f"{source_uri} is not valid Unicode: {error.reason} at character {error.start}",
            ) from None
