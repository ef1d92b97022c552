"""The text locator: where each chunk another library made sits in a document's UTF-8 bytes.

A splitter (LangChain, LlamaIndex, a header splitter) hands back chunk *texts*; the
toolkit stores byte spans. :func:`place` finds every chunk's span in the stored bytes,
in order, and says how it found it (:class:`PlacementMethod`). Per chunk, the first
rule that places it wins (where it looks is said below the rules):

1. ``given``: the producer's own span (``ChunkText.start_byte``/``end_byte``), used only
   when the stored bytes there are exactly the chunk's text and the span comes after
   the previous chunk's. A span that lies is ignored, never trusted, and the rules
   below recover the chunk instead.
2. Byte-exact, at or after the previous chunk's start (splitters overlap chunks, so a
   chunk may start inside the one before it): first, when the text starts with the
   chunk's ``context`` and a line break (the heading path a header splitter added),
   the text after them (``prefix-removed``); then the whole text (``exact``).
3. ``normalised``: the same texts, located with whitespace runs normalised exactly as
   quote location does (:mod:`graphrag_orm.citations`): any run of Unicode whitespace
   matches any other non-empty run, and whitespace at either end of the chunk is
   ignored, so a blank line that became one line break, or trailing spaces a splitter
   stripped, still place. Whitespace is never optional (``ab`` never matches ``a b``),
   and nothing else is forgiven: no case folding, no Unicode normalisation, no other
   character. The span runs from the first to the last non-whitespace character matched.
4. Heading lines at the text's start that rules 2 and 3 could not place with the rest
   (a heading path prepended without a ``context``): one, then two, ... up to
   :data:`MAX_HEADING_LINES` Markdown heading lines (``#`` to ``######``, with the blank
   lines after them) removed, the rest located as in rules 2 and 3. Heading lines that
   are at that place in the document are placed by rule 2 or 3 and stay in the chunk.

Which occurrence: a chunk goes to its leftmost place after the previous chunk. "After"
means a span starting later than the previous chunk's start, or at the same start and
ending later; so spans strictly increase, two chunks never share a span (nor a chunk
id), and a chunk found only before the previous chunk's start (out of order) is not
placed. An exact occurrence near the previous chunk (ending at most 64 KiB past its
end plus the chunk's length, where a splitter's next chunk is) is taken at once;
otherwise the leftmost normalised occurrence is taken, and it counts as exact when the
whole text is byte-exact there (every exact occurrence is also a normalised one, so
none lies before it). So a chunk whose whitespace a splitter changed is not pulled to a
later, byte-identical passage, and a failed search never scans the rest of the
document once per rule. Only an exact text that ties with the previous chunk's start
is looked for over the whole rest of the document, last.

A chunk that is empty or only whitespace is ``skipped``: it has no span and is not
stored. A chunk no rule places (one longer than the document, text the document
does not hold, out of order, or a lone surrogate) raises
:class:`~graphrag_orm.errors.ChunkNotPlaced` (``position-not-recovered``), naming the
chunk's index, never its text, and the caller writes nothing of the document.

What a caller may rely on: every span is ``[start_byte, end_byte)`` into the
document's bytes, never inside a code point, and the stored text of a placed chunk is
``utf8[start_byte:end_byte].decode("utf-8")``, the document's own bytes: once a prefix
is removed or whitespace normalised, that differs from the text the producer gave (no
heading path, the document's whitespace). Bounds: at most ``max_chunks`` chunks
(``document-too-large`` beyond); each search is ``bytes.find``/``str.find`` from the
previous chunk's start, and the normalised copy of the text is made once, only when a
chunk needs it (13 MiB of Markdown in 3,646 chunks: 0.1 s when every chunk is exact,
1.2 s when every one needs normalising; docs/ingest.md). With ``normalised=False`` the
exact search runs over the whole rest of the document.

The whitespace normalisation itself (:class:`Normalised`, :func:`normalise_runs`,
:func:`collapse_whitespace`, in :mod:`graphrag_orm.whitespace`) is the one quote location
uses too, so the two can never drift apart.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from enum import StrEnum
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Final

from pydantic import Field, ValidationError

from graphrag_orm.codes import DocumentErrorCode, ErrorCode
from graphrag_orm.errors import ChunkNotPlaced, ConfigurationError, DocumentFailure
from graphrag_orm.values import Value
from graphrag_orm.whitespace import WHITESPACE_SEEDS, Normalised, collapse_whitespace, normalise_runs

__all__ = [
    "MAX_CHUNKS",
    "MAX_HEADING_LINES",
    "PLACEMENT_VERSION",
    "WHITESPACE_SEEDS",
    "ChunkText",
    "Normalised",
    "PlacedChunk",
    "Placement",
    "PlacementCounts",
    "PlacementMethod",
    "collapse_whitespace",
    "normalise_runs",
    "place",
]

PLACEMENT_VERSION: Final = "graphrag-orm.placement/1"
"""Changes whenever the rules above change; chunked ingestion puts it in its fingerprint."""

MAX_CHUNKS: Final = 15_000
"""The most chunks :func:`place` takes by default (the ingestion's own bound is lower)."""

MAX_HEADING_LINES: Final = 6
"""The most heading lines rule 3 removes from a chunk's start: a heading path has six levels."""


class PlacementMethod(StrEnum):
    """How a chunk was placed (the module's rules); ``skipped`` chunks have no span."""

    GIVEN = "given"
    EXACT = "exact"
    PREFIX_REMOVED = "prefix-removed"
    NORMALISED = "normalised"
    SKIPPED = "skipped"


class ChunkText(Value):
    """One chunk as another library produced it: its text, and what the producer knows.

    ``context`` is the heading path a header splitter prepended to the text (with a line
    break after it), if any. ``start_byte``/``end_byte`` are the producer's span, when
    it knows one; it is checked against the stored bytes, never trusted (a span that
    does not match is ignored). ``ChunkText("text")`` takes the text positionally. A
    value of the wrong type, or a negative offset, is ``ConfigurationError("invalid-source")``.
    """

    text: str
    context: str | None = None
    start_byte: int | None = Field(default=None, ge=0)
    end_byte: int | None = Field(default=None, ge=0)

    if TYPE_CHECKING:

        def __init__(
            self,
            text: str,
            context: str | None = None,
            start_byte: int | None = None,
            end_byte: int | None = None,
        ) -> None: ...

    else:

        def __init__(
            self, text: Any = None, context: Any = None, start_byte: Any = None, end_byte: Any = None, **data: Any
        ) -> None:
            if text is not None:
                data["text"] = text
            for name, value in (("context", context), ("start_byte", start_byte), ("end_byte", end_byte)):
                if value is not None:
                    data[name] = value
            try:
                super().__init__(**data)
            except ValidationError as error:
                detail = error.errors()[0]
                where = ".".join(str(part) for part in detail["loc"]) or "chunk"
                raise ConfigurationError(ErrorCode.INVALID_SOURCE, f"ChunkText.{where}: {detail['msg']}") from None


class PlacedChunk(Value):
    """Where chunk ``index`` (its position in the producer's list) was placed, and how."""

    index: int
    method: PlacementMethod
    start_byte: int | None = None
    end_byte: int | None = None


class PlacementCounts(Value):
    """How many chunks each rule placed, and how many were skipped as empty."""

    given: int = 0
    exact: int = 0
    prefix_removed: int = 0
    normalised: int = 0
    skipped: int = 0

    @property
    def placed(self) -> int:
        return self.given + self.exact + self.prefix_removed + self.normalised

    def __add__(self, other: PlacementCounts) -> PlacementCounts:
        return PlacementCounts(
            given=self.given + other.given,
            exact=self.exact + other.exact,
            prefix_removed=self.prefix_removed + other.prefix_removed,
            normalised=self.normalised + other.normalised,
            skipped=self.skipped + other.skipped,
        )


class Placement(Value):
    """Every chunk's placement, in the producer's order (skipped ones included)."""

    chunks: tuple[PlacedChunk, ...]

    @property
    def counts(self) -> PlacementCounts:
        tally = dict.fromkeys(PlacementMethod, 0)
        for chunk in self.chunks:
            tally[chunk.method] += 1
        return PlacementCounts(
            given=tally[PlacementMethod.GIVEN],
            exact=tally[PlacementMethod.EXACT],
            prefix_removed=tally[PlacementMethod.PREFIX_REMOVED],
            normalised=tally[PlacementMethod.NORMALISED],
            skipped=tally[PlacementMethod.SKIPPED],
        )

    @property
    def spans(self) -> list[tuple[int, int]]:
        """The placed chunks' spans, in order (skipped chunks left out)."""
        return [(c.start_byte, c.end_byte) for c in self.chunks if c.start_byte is not None and c.end_byte is not None]


# A Markdown heading line at the start of a chunk, with the blank lines after it.
_HEADING_LINE: Final = re.compile(r" {0,3}#{1,6}(?=[ \t\r\n]|\Z)[^\r\n]*(?:\r\n|\n|\r|\Z)[ \t\r\n]*")
_CHECKPOINT: Final = 4_096
# How far past the previous chunk's end an exact match is taken without a normalised search.
_NEAR: Final = 1 << 16


class _Document:
    """A document's bytes, with its text, normalised text and offset maps made on demand."""

    def __init__(self, utf8: bytes) -> None:
        self.utf8 = utf8
        self.ascii = utf8.isascii()
        self._text: str | None = None
        self._normalised: Normalised | None = None
        self._bytes_at: list[int] | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.utf8.decode("utf-8")
        return self._text

    @property
    def normalised(self) -> Normalised:
        if self._normalised is None:
            self._normalised = normalise_runs(self.text)
        return self._normalised

    def _checkpoints(self) -> list[int]:
        # The byte offset of every _CHECKPOINT-th character: conversions then encode at most
        # one stretch, and the table is len / 4,096 integers.
        if self._bytes_at is None:
            text = self.text
            sizes = (len(text[at : at + _CHECKPOINT].encode("utf-8")) for at in range(0, len(text), _CHECKPOINT))
            self._bytes_at = [0, *accumulate(sizes)]
        return self._bytes_at

    def byte_of(self, char: int) -> int:
        if self.ascii:
            return char
        block = char // _CHECKPOINT
        return self._checkpoints()[block] + len(self.text[block * _CHECKPOINT : char].encode("utf-8"))

    def char_of(self, byte: int) -> int:
        """The character index of ``byte``, a code-point boundary."""
        if self.ascii:
            return byte
        table = self._checkpoints()
        block = bisect_right(table, byte) - 1
        return block * _CHECKPOINT + len(self.utf8[table[block] : byte].decode("utf-8"))


def _after(start: int, end: int, previous: tuple[int, int]) -> bool:
    return start > previous[0] or (start == previous[0] and end > previous[1])


def _candidates(chunk: ChunkText) -> list[list[tuple[str, PlacementMethod]]]:
    """The texts rules 2 to 4 try, in two rounds, with the method each one names.

    The first round is the text without its context prefix (when it has one) and the
    whole text; the second, the text with one, two, ... heading lines removed from its
    start: heading lines that are at that place in the document stay in the chunk.
    """
    text = chunk.text
    first: list[tuple[str, PlacementMethod]] = []
    context = chunk.context
    if context and context.strip() and text.startswith(context):
        rest = text[len(context) :]
        if rest.startswith(("\n", "\r")):
            first.append((rest.lstrip("\r\n"), PlacementMethod.PREFIX_REMOVED))
    first.append((text, PlacementMethod.EXACT))
    second: list[tuple[str, PlacementMethod]] = []
    rest = text
    for _ in range(MAX_HEADING_LINES):
        heading = _HEADING_LINE.match(rest)
        if heading is None:
            break
        rest = rest[heading.end() :]
        second.append((rest, PlacementMethod.PREFIX_REMOVED))
    seen: set[str] = set()
    rounds: list[list[tuple[str, PlacementMethod]]] = []
    for round_ in (first, second):
        kept = [(t, m) for t, m in round_ if t.strip() and t not in seen]
        seen.update(t for t, _ in kept)
        rounds.append(kept)
    return rounds


def _find_exact(utf8: bytes, needle: bytes, previous: tuple[int, int], limit: int | None = None) -> int:
    """The leftmost byte-exact occurrence after ``previous`` (ending by ``limit``), or -1."""
    end = len(utf8) if limit is None else min(limit, len(utf8))
    at = utf8.find(needle, previous[0], end)
    while at >= 0 and not _after(at, at + len(needle), previous):
        at = utf8.find(needle, at + 1, end)
    return at


def _find_normalised(document: _Document, needle: str, previous: tuple[int, int]) -> tuple[int, int] | None:
    normalised = document.normalised
    low = normalised.at_or_after(document.char_of(previous[0]))
    while True:
        at = normalised.text.find(needle, low)
        if at < 0:
            return None
        first = normalised.original(at)
        last = normalised.original(at + len(needle) - 1) + 1
        start = document.byte_of(first)
        end = start + len(document.text[first:last].encode("utf-8"))
        if _after(start, end, previous):
            return start, end
        low = at + 1


def _encoded(text: str) -> bytes | None:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no stored byte sequence can equal it
        return None


def _given(chunk: ChunkText, utf8: bytes, previous: tuple[int, int]) -> tuple[int, int] | None:
    start, end = chunk.start_byte, chunk.end_byte
    if start is None or end is None or not 0 <= start < end <= len(utf8) or not _after(start, end, previous):
        return None
    return (start, end) if utf8[start:end] == _encoded(chunk.text) else None


def _not_placed(index: int, chunk: ChunkText, document: _Document) -> ChunkNotPlaced:
    encoded = _encoded(chunk.text)
    if encoded is None:
        why = "its text is not valid Unicode"
    elif len(encoded) > len(document.utf8):
        why = "it is longer than the document"
    elif index > 0 and document.utf8.find(encoded) >= 0:
        why = "its text is only found before the previous chunk's start (out of order)"
    else:
        why = "its text is not in the document"
    return ChunkNotPlaced(index, f"chunk {index} could not be placed in the document's text: {why}")


def place(
    utf8: bytes,
    chunks: Sequence[ChunkText | str],
    *,
    normalised: bool = True,
    max_chunks: int = MAX_CHUNKS,
) -> Placement:
    """Place ``chunks``, in order, in the document ``utf8`` by the module's rules.

    ``utf8`` must be valid UTF-8 (a loaded document's bytes). ``normalised=False``
    leaves rule 4 out, for callers that keep the producer's text and so need it to be
    exactly the span's bytes (adoption). Raises :class:`~graphrag_orm.errors.ChunkNotPlaced`
    (``position-not-recovered``, with the chunk's ``index``) for the first chunk no rule
    places, and ``DocumentFailure("document-too-large")`` for more than ``max_chunks``
    chunks. Pure: reads nothing else, writes nothing.
    """
    if len(chunks) > max_chunks:
        raise DocumentFailure(
            DocumentErrorCode.DOCUMENT_TOO_LARGE, f"{len(chunks):,} chunks, over the bound of {max_chunks:,}"
        )
    document = _Document(utf8)
    previous = (0, 0)
    placed: list[PlacedChunk] = []
    for index, item in enumerate(chunks):
        chunk = ChunkText(item) if isinstance(item, str) else item
        if not chunk.text.strip():
            placed.append(PlacedChunk(index=index, method=PlacementMethod.SKIPPED))
            continue
        found = _place_one(chunk, document, previous, normalised)
        if found is None:
            raise _not_placed(index, chunk, document)
        (start, end), method = found
        placed.append(PlacedChunk(index=index, method=method, start_byte=start, end_byte=end))
        previous = (start, end)
    return Placement(chunks=tuple(placed))


def _exact_at(document: _Document, text: str, needle: bytes, span: tuple[int, int], previous: tuple[int, int]) -> int:
    """Where ``needle`` starts if the whole text is byte-exact at the normalised ``span``, else -1."""
    leading = len(text) - len(text.lstrip())
    start = span[0] - len(text[:leading].encode("utf-8"))
    if start >= 0 and document.utf8.startswith(needle, start) and _after(start, start + len(needle), previous):
        return start
    return -1


def _place_one(
    chunk: ChunkText, document: _Document, previous: tuple[int, int], normalised: bool
) -> tuple[tuple[int, int], PlacementMethod] | None:
    utf8 = document.utf8
    span = _given(chunk, utf8, previous)
    if span is not None:
        return span, PlacementMethod.GIVEN
    rounds = _candidates(chunk)
    for candidates in rounds:
        encoded = [(text, _encoded(text), method) for text, method in candidates]
        # Near the previous chunk, where a splitter's next chunk is: the exact text at once.
        for _, needle, method in encoded:
            if needle is not None:
                limit = None if not normalised else previous[1] + len(needle) + _NEAR
                at = _find_exact(utf8, needle, previous, limit)
                if at >= 0:
                    return (at, at + len(needle)), method
        if not normalised:
            continue
        # Further on, the leftmost normalised occurrence; every exact one is also normalised,
        # so the text is exact there or at no earlier place.
        for text, needle, method in encoded:
            collapsed = collapse_whitespace(text)
            if len(collapsed) > len(document.text):
                continue
            span = _find_normalised(document, collapsed, previous)
            if span is None:
                continue
            at = -1 if needle is None else _exact_at(document, text, needle, span, previous)
            if at >= 0:
                return (at, at + len(needle or b"")), method
            return span, PlacementMethod.NORMALISED
    if normalised:
        # An exact text whose trimmed span ties with the previous chunk's: a last, full look.
        for candidates in rounds:
            for text, method in candidates:
                needle = _encoded(text)
                if needle is not None and (at := _find_exact(utf8, needle, previous)) >= 0:
                    return (at, at + len(needle)), method
    return None
