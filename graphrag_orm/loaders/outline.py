"""A document's structure as a loader found it: headings and fenced blocks, by byte offset."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["NO_OUTLINE", "DocumentOutline", "Heading"]


class Heading(NamedTuple):
    """One heading: its line ``[start, line_end)`` (with the line ending), level (1 to 6) and title."""

    start: int
    line_end: int
    level: int
    title: str


class DocumentOutline(NamedTuple):
    """A document's headings in document order, and its fenced blocks as ``(start, end)`` byte offsets.

    The chunker opens a section at each heading and never ends a paragraph inside a
    fenced block. A fence's span runs from its opening line's first byte to the byte
    after its closing line (with the line ending), or to the end of the document.
    """

    headings: tuple[Heading, ...]
    fences: tuple[tuple[int, int], ...]


NO_OUTLINE = DocumentOutline((), ())
"""The outline of a document without structure (plain text, PDF)."""
