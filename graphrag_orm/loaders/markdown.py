"""ATX headings and fenced code blocks of a Markdown document, found by byte offset.

This is the one Markdown reader of the toolkit: the text loader takes a document's
title from it and the chunker its sections. It recognises, by CommonMark's rules
for a line at the top level of the document:

- an ATX heading: up to 3 spaces, 1 to 6 ``#``, then a space, a tab or the end of
  the line; the title is the rest of the line, up to a lone ``\\r`` if it has one,
  without its closing ``#`` sequence and surrounding spaces and tabs (escapes are not
  undone), then cleaned and bounded like every title
  (:func:`~graphrag_orm.sources.clean_title`: no control characters, at most 500
  characters);
- a fenced code block: up to 3 spaces, then 3 or more backticks or tildes (a
  backtick fence's info string must have no backtick); it closes at a line of up to
  3 spaces and at least as many of the same character, followed only by spaces and
  tabs, or at the end of the document. Nothing inside it is a heading.

Lines end at ``\\n``; a ``\\r`` right before it belongs to the line ending. Container
blocks (block quotes, list items) are not parsed, so ``> # Quote`` is not a heading,
and setext headings (underlined with ``=`` or ``-``) are not recognised. The scan is
linear: one regular-expression pass finds the few candidate lines, and only those
are looked at in Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from graphrag_orm.loaders.outline import DocumentOutline, Heading
from graphrag_orm.sources import clean_title

__all__ = ["Heading", "MarkdownOutline", "first_title", "outline"]

# Only lines that could open a heading or a fence are candidates; everything else
# is skipped by the regular-expression engine without a Python step. The pattern
# starts with a literal line feed (the engine searches for it fast, where ``^`` with
# MULTILINE would be tried at every byte); the first line is matched separately.
_CANDIDATE = re.compile(rb"\n {0,3}(?:#|```|~~~)")
_FIRST_CANDIDATE = re.compile(rb" {0,3}(?:#|```|~~~)")
_HASH, _BACKTICK, _TILDE, _SPACE, _TAB, _CR = 35, 96, 126, 32, 9, 13
_RUNS = {_HASH: re.compile(rb"#+"), _BACKTICK: re.compile(rb"`+"), _TILDE: re.compile(rb"~+")}


MarkdownOutline = DocumentOutline
"""The outline a Markdown document has (:class:`~graphrag_orm.loaders.base.DocumentOutline`)."""


def outline(utf8: bytes) -> MarkdownOutline:
    """Every ATX heading outside fenced code, and every fenced code block, of a document."""
    fences: list[tuple[int, int]] = []
    headings = tuple(_scan(utf8, fences))
    return DocumentOutline(headings, tuple(fences))


def first_title(utf8: bytes) -> str | None:
    """The title of the first ATX heading (outside fenced code) whose title is not empty."""
    for heading in _scan(utf8, None):
        if heading.title:
            return heading.title
    return None


def _scan(utf8: bytes, fences: list[tuple[int, int]] | None) -> Iterator[Heading]:
    n = len(utf8)
    # The candidate pattern includes the line feed before the line; the first line has none.
    match = _FIRST_CANDIDATE.match(utf8)
    feed = 0
    if match is None:
        match, feed = _CANDIDATE.search(utf8), 1
    while match is not None:
        start = match.start() + feed
        marker = match.end() - 1
        char = utf8[marker]
        if char != _HASH:
            marker -= 2  # the pattern consumed three fence characters
        newline = utf8.find(b"\n", marker)
        line_end = n if newline == -1 else newline + 1
        content_end = n if newline == -1 else newline
        if content_end > marker and utf8[content_end - 1] == _CR:
            content_end -= 1
        run_match = _RUNS[char].match(utf8, marker, content_end)
        run_end = run_match.end() if run_match else marker
        run = run_end - marker

        if char == _HASH:
            if run <= 6 and (run_end == content_end or utf8[run_end] in (_SPACE, _TAB)):
                yield Heading(start, line_end, run, _title(utf8[run_end:content_end]))
        elif char == _TILDE or utf8.find(b"`", run_end, content_end) == -1:
            # A fence opens: jump straight to its closing line, so nothing inside is
            # looked at (a backtick in the info string would make it inline code).
            close = _closing(char, run).search(utf8, line_end - 1) if newline != -1 else None
            fence_end = n if close is None else _line_end(utf8, close.end())
            if fences is not None:
                fences.append((start, fence_end))
            if close is None:
                return
            line_end = fence_end
        if line_end >= n:
            return
        match, feed = _CANDIDATE.search(utf8, line_end - 1), 1


def _line_end(utf8: bytes, position: int) -> int:
    newline = utf8.find(b"\n", position)
    return len(utf8) if newline == -1 else newline + 1


@lru_cache(maxsize=64)
def _closing(char: int, length: int) -> re.Pattern[bytes]:
    """A closing fence line for an opening run of ``length`` ``char`` characters."""
    run = re.escape(bytes([char]))
    return re.compile(rb"\n {0,3}" + run * length + run + rb"*[ \t]*\r?(?=\n|\Z)")


def _title(content: bytes) -> str:
    # CommonMark ends a line at a lone CR too, and a heading is one line: without this, a
    # file with CR line endings would be one heading line holding the whole text.
    text = content.split(b"\r", 1)[0].strip(b" \t")
    without_closing = text.rstrip(b"#")
    if not without_closing:
        text = b""
    elif without_closing != text and without_closing[-1] in (_SPACE, _TAB):
        text = without_closing.rstrip(b" \t")
    return clean_title(text.decode("utf-8", errors="replace")) or ""
