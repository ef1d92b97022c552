"""The chunker: sections and chunks of a loaded document, as exact byte spans.

Every span is ``[start_byte, end_byte)`` into the document's UTF-8 bytes, at code-point
boundaries, so ``utf8[start:end].decode("utf-8")`` is always the span's text.

The rules, in the order they apply:

1. **Sections** (``text/markdown`` only). Each ATX heading outside fenced code opens a
   section (see :mod:`graphrag_orm.loaders.markdown` for what counts as a heading). A
   section runs from its heading line to the byte before the next heading of the same
   or a higher level (fewer ``#``), or to the end; so it includes its subsections, and
   its ``parent_order`` is the nearest enclosing section. Text before the first heading
   belongs to no section. Plain text and PDF have no sections.
2. **Segments.** The document is cut at the start of every heading line; no chunk ever
   crosses one, so a heading always starts a new chunk, and the chunk may begin with
   that heading line. A chunk's ``section_order`` is the innermost section holding it
   (the heading's own section), or None before the first heading.
3. **Paragraphs.** A paragraph is a run of non-blank lines with the blank lines after
   it (a blank line holds only spaces and tabs before its ``\n`` or ``\r\n``; blank
   space at the very end joins the last paragraph). In Markdown the heading line (with
   the blank lines after it) is a paragraph of its own, and blank lines inside fenced
   code do not end a paragraph, so a fenced block stays whole when it fits. Blank
   lines at the very start of the document join the first paragraph. Paragraphs tile
   the document: every byte is in exactly one.
4. **Packing.** A chunk takes as many whole paragraphs, in order, as fit the budget:
   at most ``max_utf8_bytes`` bytes, always, and at most ``max_tokens`` tokens when a
   token counter is set (the longest fitting run is found by binary search, which
   assumes a count does not fall when text is appended, as holds for tiktoken in
   practice; whatever the counter, every chunk is measured against the budget). A
   paragraph that does not fit alone is cut into pieces: the
   longest prefix that fits and ends after a line break; failing that, after a
   whitespace character (space, tab, CR, FF, VT); failing that, at a code-point
   boundary. Every piece but the last is a chunk of its own; the last piece starts
   the next chunk, and whole paragraphs after it pack with it.
5. **Overlap.** When a chunk starts with a whole paragraph, it first repeats up to
   ``overlap_paragraphs`` whole paragraphs immediately before it: the largest number
   ``m`` such that those ``m`` paragraphs and the new first paragraph together fit the
   budget. Overlap paragraphs come from the same segment only (never across a
   heading), never include the heading paragraph or a paragraph that was cut, and
   start after the previous chunk's start. So chunk starts and ends both strictly
   increase, and the byte budget is never exceeded to make room for overlap.

What is never done: no byte is skipped (the chunks together cover the whole document,
overlap only repeats bytes), no span splits a code point, no text is changed or
trimmed, and an empty document has no chunks. A chunk holds only whitespace in two
cases: the document is all whitespace, or it starts with blank lines before its first
heading (those bytes must be in a chunk, and no chunk crosses a heading). One
exception to ``max_tokens``: a single code point whose token count alone exceeds it
is a chunk by itself, because a code point cannot be split.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, field_validator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.base import input_window, token_count_function
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.loaders.base import LoadedDocument
from graphrag_orm.loaders.markdown import Heading, outline
from graphrag_orm.tokens import ByteEstimateCounter, TokenCounter, counter_identity
from graphrag_orm.values import Value

__all__ = [
    "CHUNKER_VERSION",
    "ChunkPlan",
    "ChunkSpan",
    "Chunker",
    "ChunkerOptions",
    "EmbedderTokenCounter",
    "SectionSpan",
    "chunk_id",
    "section_id",
    "within_window",
]

CHUNKER_VERSION = "graphrag-orm.chunker/1"
"""Changes whenever the rules above change, so the fingerprint and chunk ids change too."""

MAX_UTF8_BYTES_BOUNDS = (64, 16_384)
OVERLAP_PARAGRAPHS_BOUNDS = (0, 4)
MAX_TOKENS_BOUNDS = (1, 1_000_000)

# A line ending followed by one or more blank lines (and blank space at the very end):
# its end is where the next paragraph starts.
_BLANK_RUN = re.compile(rb"\n(?:[ \t]*\r?\n)+(?:[ \t]*\r?\Z)?")
_BLANK_LINE = re.compile(rb"[ \t]*(?:\r?\n|\r?\Z)")
_LINE_BREAK = (b"\n",)
_LINE_BREAK_PATTERN = re.compile(rb"\n")
_WHITESPACE = (b" ", b"\t", b"\r", b"\f", b"\v")
_WHITESPACE_PATTERN = re.compile(rb"[ \t\r\f\v]")


def _invalid_option(name: str, bounds: tuple[int, int], value: object) -> ConfigurationError:
    low, high = bounds
    return ConfigurationError(ErrorCode.INVALID_OPTION, f"{name} must be from {low:,} to {high:,}, not {value!r}")


class ChunkerOptions(Value):
    """The chunker's budget and overlap; refused outside their bounds.

    - ``max_utf8_bytes``: 64 to 16,384 (default 2,048); exact and always enforced.
    - ``max_tokens``: None (default) or 1 to 1,000,000; enforced only when the chunker
      has a token counter.
    - ``overlap_paragraphs``: 0 to 4 (default 1) whole paragraphs repeated at the
      start of the next chunk when the budget allows (see the module's rule 5).

    Building it with out-of-range or non-integer values raises
    ``ConfigurationError("invalid-option")`` naming the option and its bounds
    (``model_validate`` raises pydantic's ``ValidationError`` wrapping the same message).
    """

    max_utf8_bytes: int = Field(default=2_048, strict=True)
    max_tokens: int | None = Field(default=None, strict=True)
    overlap_paragraphs: int = Field(default=1, strict=True)

    if TYPE_CHECKING:
        # What callers see: keyword arguments with their types and defaults.
        def __init__(
            self, *, max_utf8_bytes: int = 2_048, max_tokens: int | None = None, overlap_paragraphs: int = 1
        ) -> None: ...

    else:

        def __init__(self, **data: Any) -> None:
            # pydantic reports a validator's error inside a ValidationError; the
            # toolkit's contract is a ConfigurationError, so unwrap it here (pydantic
            # also calls this for model_validate and JSON).
            try:
                super().__init__(**data)
            except ValidationError as error:
                raise _configuration_error(error) from None

    @field_validator("max_utf8_bytes")
    @classmethod
    def _check_bytes(cls, value: int) -> int:
        if not MAX_UTF8_BYTES_BOUNDS[0] <= value <= MAX_UTF8_BYTES_BOUNDS[1]:
            raise _invalid_option("max_utf8_bytes", MAX_UTF8_BYTES_BOUNDS, value)
        return value

    @field_validator("max_tokens")
    @classmethod
    def _check_tokens(cls, value: int | None) -> int | None:
        if value is not None and not MAX_TOKENS_BOUNDS[0] <= value <= MAX_TOKENS_BOUNDS[1]:
            raise _invalid_option("max_tokens", MAX_TOKENS_BOUNDS, value)
        return value

    @field_validator("overlap_paragraphs")
    @classmethod
    def _check_overlap(cls, value: int) -> int:
        if not OVERLAP_PARAGRAPHS_BOUNDS[0] <= value <= OVERLAP_PARAGRAPHS_BOUNDS[1]:
            raise _invalid_option("overlap_paragraphs", OVERLAP_PARAGRAPHS_BOUNDS, value)
        return value


def _configuration_error(error: ValidationError) -> ConfigurationError:
    for detail in error.errors():
        original = detail.get("ctx", {}).get("error")
        if isinstance(original, ConfigurationError):
            return original
    detail = error.errors()[0]
    name = ".".join(str(part) for part in detail["loc"]) or "options"
    return ConfigurationError(ErrorCode.INVALID_OPTION, f"{name}: {detail['msg']}")


class SectionSpan(Value):
    """One Markdown section: ``[start_byte, end_byte)`` from its heading line to the next
    heading of the same or a higher level. ``order`` counts sections from 0 in document
    order; ``level`` is 1 to 6; ``title`` may be empty; ``parent_order`` is the enclosing
    section's order, or None at the top.
    """

    order: int
    level: int
    title: str
    start_byte: int
    end_byte: int
    parent_order: int | None = None


class ChunkSpan(Value):
    """One chunk: ``[start_byte, end_byte)``, ``order`` from 0, the innermost section's
    order (None before the first heading and for documents without sections), and its
    token count when the chunker had a token counter (else None).
    """

    order: int
    start_byte: int
    end_byte: int
    section_order: int | None = None
    token_count: int | None = None


class ChunkPlan(Value):
    """A document's sections and chunks, and the fingerprint of the chunker that made them."""

    sections: tuple[SectionSpan, ...]
    chunks: tuple[ChunkSpan, ...]
    fingerprint: str

    @staticmethod
    def chunk_text(utf8: bytes, chunk: ChunkSpan) -> str:
        """The chunk's text: exactly ``utf8[start_byte:end_byte]`` decoded."""
        return utf8[chunk.start_byte : chunk.end_byte].decode("utf-8")

    @staticmethod
    def section_text(utf8: bytes, section: SectionSpan) -> str:
        """The section's text, heading line and subsections included."""
        return utf8[section.start_byte : section.end_byte].decode("utf-8")

    def section_for(self, chunk: ChunkSpan) -> SectionSpan | None:
        """The innermost section holding ``chunk``, or None."""
        return None if chunk.section_order is None else self.sections[chunk.section_order]

    def texts(self, utf8: bytes) -> list[str]:
        """Every chunk's text, in order."""
        return [utf8[chunk.start_byte : chunk.end_byte].decode("utf-8") for chunk in self.chunks]


def _hash_parts(kind: str, *parts: str) -> str:
    # Length-prefixed parts: no two different tuples of strings give the same input.
    digest = hashlib.sha256()
    for part in (kind, *parts):
        encoded = part.encode("utf-8")
        digest.update(f"{len(encoded)}:".encode("ascii"))
        digest.update(encoded)
    return digest.hexdigest()


def chunk_id(document_id: str, content_hash: str, fingerprint: str, start_byte: int, end_byte: int) -> str:
    """SHA-256 (lower-case hex) of the document id, content hash, chunker fingerprint and span.

    The parts are length-prefixed and tagged ``chunk``, so no other input (nor any
    section id) gives the same id.
    """
    return _hash_parts("chunk", document_id, content_hash, fingerprint, str(start_byte), str(end_byte))


def section_id(document_id: str, content_hash: str, fingerprint: str, order: int) -> str:
    """SHA-256 (lower-case hex) of the document id, content hash, chunker fingerprint and
    the section's order, length-prefixed and tagged ``section``.
    """
    return _hash_parts("section", document_id, content_hash, fingerprint, str(order))


class Chunker:
    """Plans the sections and chunks of a :class:`LoadedDocument` by the module's rules.

    Pure and deterministic: the same bytes, media type, options and token counter
    give the same plan. It never reads or writes anything else. Time is linear in the
    document's size (one regular-expression pass per kind of boundary and one step per
    paragraph), plus the token counter's own cost when one is set.
    """

    def __init__(self, options: ChunkerOptions | None = None, token_counter: TokenCounter | None = None) -> None:
        # Rebuilt so that a copy made with model_copy(update=...), which pydantic does
        # not validate, is still held to the bounds.
        self.options = ChunkerOptions(**options.model_dump()) if options is not None else ChunkerOptions()
        self.token_counter = token_counter
        settings = {
            "version": CHUNKER_VERSION,
            "maxUtf8Bytes": self.options.max_utf8_bytes,
            "maxTokens": self.options.max_tokens if token_counter is not None else None,
            "overlapParagraphs": self.options.overlap_paragraphs,
            "tokenCounter": counter_identity(token_counter) if token_counter is not None else None,
        }
        canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
        self._fingerprint = hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of :data:`CHUNKER_VERSION` and the settings that shape chunks:
        the byte budget, the overlap and, with a token counter, the token budget and the
        counter's identity. (Without a counter ``max_tokens`` has no effect and is left out.)
        """
        return self._fingerprint

    def plan(self, document: LoadedDocument) -> ChunkPlan:
        """The sections (``text/markdown`` only) and chunks of ``document``."""
        utf8 = document.utf8
        size = len(utf8)
        if size == 0:
            return ChunkPlan(sections=(), chunks=(), fingerprint=self._fingerprint)

        headings: list[Heading] = []
        fences: list[tuple[int, int]] = []
        if document.media_type == "text/markdown":
            headings, fences = outline(utf8)
        breaks = _paragraph_breaks(utf8, fences)
        work = _Packer(utf8, self.options, self.token_counter)

        first_heading = headings[0].start if headings else size
        if first_heading > 0:
            bounds = [0, *_inside(breaks, 0, first_heading), first_heading]
            if len(bounds) > 2 and utf8[0] in b" \t\r\n" and not utf8[0 : bounds[1]].strip(b" \t\r\n"):
                del bounds[1]  # leading blank lines join the first paragraph
            work.pack(bounds, None, overlap_floor=0)
        for order, heading in enumerate(headings):
            end = headings[order + 1].start if order + 1 < len(headings) else size
            bounds = [heading.start]
            if heading.line_end < end and not _BLANK_LINE.match(utf8, heading.line_end):
                bounds.append(heading.line_end)  # the heading line is a paragraph of its own
            bounds.extend(_inside(breaks, heading.start, end))
            bounds.append(end)
            work.pack(bounds, order, overlap_floor=1)

        return ChunkPlan(sections=_sections(headings, size), chunks=tuple(work.chunks), fingerprint=self._fingerprint)


class EmbedderTokenCounter:
    """A :class:`~graphrag_orm.tokens.TokenCounter` from an embedder's own ``count_tokens``.

    Its ``identity`` names the embedder's class and model, so the chunker's fingerprint
    (and so chunk ids) change with the tokenizer.
    """

    def __init__(self, embedder: object) -> None:
        count = token_count_function(embedder)
        if count is None:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"{type(embedder).__name__} has no count_tokens")
        self._count = count
        model = getattr(embedder, "model_name", None) or getattr(embedder, "model", None) or ""
        self.identity = f"embedder:{type(embedder).__name__}:{model}"

    def count(self, text: str) -> int:
        """The embedder's token count of ``text``."""
        return int(self._count(text))


def within_window(chunker: Chunker, embedder: object) -> Chunker:
    """A chunker like ``chunker`` whose chunks fit the embedder's window (``max_input_tokens``).

    The token budget becomes the window (or the chunker's own ``max_tokens`` when that is
    smaller), counted with the embedder's ``count_tokens``; an embedder without one is
    measured with the chunker's own token counter, else estimated at four UTF-8 bytes a
    token (:class:`~graphrag_orm.tokens.ByteEstimateCounter`, an estimate, not a bound).
    An embedder that declares no window gets ``chunker`` back unchanged. The byte
    budget and the overlap stay as they are.
    """
    window = input_window(embedder)
    if window is None:
        return chunker
    options = chunker.options
    budget = window if options.max_tokens is None else min(options.max_tokens, window)
    budget = min(max(budget, MAX_TOKENS_BOUNDS[0]), MAX_TOKENS_BOUNDS[1])
    counter: TokenCounter
    if token_count_function(embedder) is not None:
        counter = EmbedderTokenCounter(embedder)
    elif chunker.token_counter is not None:
        counter = chunker.token_counter
    else:
        counter = ByteEstimateCounter()
    return Chunker(options.model_copy(update={"max_tokens": budget}), counter)


def _paragraph_breaks(utf8: bytes, fences: list[tuple[int, int]]) -> list[int]:
    """Where paragraphs start after blank lines, except inside fenced code; sorted."""
    breaks = [match.end() for match in _BLANK_RUN.finditer(utf8)]
    if not fences or not breaks:
        return breaks
    kept: list[int] = []
    taken = 0
    for start, end in fences:
        low = bisect_right(breaks, start, taken)
        high = bisect_left(breaks, end, low)
        kept.extend(breaks[taken:low])
        taken = high
    kept.extend(breaks[taken:])
    return kept


def _inside(breaks: list[int], start: int, end: int) -> list[int]:
    """The breaks strictly between ``start`` and ``end``."""
    return breaks[bisect_right(breaks, start) : bisect_left(breaks, end)]


def _sections(headings: list[Heading], size: int) -> tuple[SectionSpan, ...]:
    ends = [size] * len(headings)
    parents: list[int | None] = [None] * len(headings)
    open_sections: list[int] = []
    for order, heading in enumerate(headings):
        while open_sections and headings[open_sections[-1]].level >= heading.level:
            ends[open_sections.pop()] = heading.start
        parents[order] = open_sections[-1] if open_sections else None
        open_sections.append(order)
    return tuple(
        SectionSpan(
            order=order,
            level=heading.level,
            title=heading.title,
            start_byte=heading.start,
            end_byte=ends[order],
            parent_order=parents[order],
        )
        for order, heading in enumerate(headings)
    )


class _Packer:
    """Packs one segment's paragraphs at a time into chunks; see the module's rules 4 and 5."""

    def __init__(self, utf8: bytes, options: ChunkerOptions, counter: TokenCounter | None) -> None:
        self.utf8 = utf8
        self.budget = options.max_utf8_bytes
        self.overlap = options.overlap_paragraphs
        self.max_tokens = options.max_tokens or 0
        # ``tokens_of`` reports a span's tokens whenever there is a counter; the budget
        # check uses it only when there is also a token budget.
        self.tokens_of: Callable[[int, int], int] | None = None
        if counter is not None:
            count = counter.count
            self.tokens_of = lambda start, end: count(utf8[start:end].decode("utf-8"))
        self.enforce_tokens = self.tokens_of is not None and options.max_tokens is not None
        self.chunks: list[ChunkSpan] = []

    def _measure(self, start: int, end: int) -> int:
        """The span's token count (0 without a token budget) if it fits the budget, else -1."""
        if end - start > self.budget:
            return -1
        if not self.enforce_tokens:
            return 0
        assert self.tokens_of is not None
        tokens = self.tokens_of(start, end)
        return tokens if tokens <= self.max_tokens else -1

    def _emit(self, start: int, end: int, tokens: int, section: int | None) -> None:
        token_count: int | None = None
        if self.enforce_tokens:
            token_count = tokens
        elif self.tokens_of is not None:
            token_count = self.tokens_of(start, end)
        self.chunks.append(
            ChunkSpan(
                order=len(self.chunks),
                start_byte=start,
                end_byte=end,
                section_order=section,
                token_count=token_count,
            )
        )

    def pack(self, bounds: list[int], section: int | None, overlap_floor: int) -> None:
        """Chunks for the paragraphs ``[bounds[i], bounds[i + 1])`` of one segment.

        ``bounds`` strictly increases. ``overlap_floor`` is the lowest paragraph index
        that may be repeated as overlap (1 skips a heading paragraph).
        """
        paragraphs = len(bounds) - 1
        budget = self.budget
        previous_first = -1
        index = 0
        while index < paragraphs:
            end_first = bounds[index + 1]
            overlap = max(0, min(self.overlap, index - overlap_floor, index - previous_first - 1))
            tokens = -1
            while overlap > 0:
                tokens = self._measure(bounds[index - overlap], end_first)
                if tokens >= 0:
                    break
                overlap -= 1
            first = index - overlap
            start = bounds[first]
            if overlap == 0:
                tokens = self._measure(start, end_first)
                if tokens < 0:
                    start, tokens = self._cut_paragraph(start, end_first, section)
                    overlap_floor = index + 1  # a cut paragraph is never repeated

            # A byte budget is monotone: the furthest boundary within it is found at once.
            last = bisect_right(bounds, start + budget, index + 1) - 1
            if self.enforce_tokens and last > index + 1:
                # Usually the bytes bind first and one count settles it; otherwise a binary
                # search over the paragraphs in between, each answer measured.
                more = self._measure(start, bounds[last])
                if more >= 0:
                    tokens = more
                else:
                    fitting = self._largest_fitting(start, bounds[index + 2 : last])
                    if fitting is None:
                        last = index + 1
                    else:
                        last = bisect_left(bounds, fitting[0], index + 2, last)
                        tokens = fitting[1]
            self._emit(start, bounds[last], tokens, section)
            previous_first = first
            index = last

    def _cut_paragraph(self, start: int, end: int, section: int | None) -> tuple[int, int]:
        """Emit the leading pieces of an over-budget paragraph; return where its last
        piece (which fits, or is one code point over ``max_tokens``) starts, and its tokens.
        """
        while True:
            cut = self._cut(start, end)
            if cut is None:  # one code point over max_tokens: it stands alone
                assert self.tokens_of is not None
                return start, self.tokens_of(start, end)
            position, tokens = cut
            self._emit(start, position, tokens, section)
            start = position
            rest = self._measure(start, end)
            if rest >= 0:
                return start, rest

    def _cut(self, start: int, end: int) -> tuple[int, int] | None:
        """The best cut of ``[start, end)``: ``(position, tokens)`` with ``start < position < end``
        and ``[start, position)`` within budget; None when no cut exists (one code point).
        """
        utf8 = self.utf8
        limit = min(start + self.budget, end - 1)
        if limit <= start:
            return None
        # Line breaks, then whitespace: the cut goes right after the separator.
        for separators, pattern in ((_LINE_BREAK, _LINE_BREAK_PATTERN), (_WHITESPACE, _WHITESPACE_PATTERN)):
            found = max(utf8.rfind(separator, start, limit) for separator in separators)
            if found < start:
                continue
            if not self.enforce_tokens:
                return found + 1, 0
            tokens = self._measure(start, found + 1)
            if tokens >= 0:  # the usual case: the bytes bound the cut, not the tokens
                return found + 1, tokens
            cuts = [match.end() for match in pattern.finditer(utf8, start, found)]
            fitting = self._largest_fitting(start, cuts)
            if fitting is not None:
                return fitting
        # A code-point boundary: step back over continuation bytes.
        position = limit
        while position > start and utf8[position] & 0xC0 == 0x80:
            position -= 1
        if position <= start:
            return None
        if not self.enforce_tokens:
            return position, 0
        tokens = self._measure(start, position)
        if tokens >= 0:
            return position, tokens
        boundaries = [cut for cut in range(start + 1, position) if utf8[cut] & 0xC0 != 0x80]
        fitting = self._largest_fitting(start, boundaries)
        if fitting is not None:
            return fitting
        assert self.tokens_of is not None
        first = boundaries[0] if boundaries else position  # one code point over the token budget
        return first, self.tokens_of(start, first)

    def _largest_fitting(self, start: int, cuts: list[int]) -> tuple[int, int] | None:
        """The largest cut whose prefix fits, by binary search: token counts grow with
        the prefix in practice, and every answer is measured, so a counter that is not
        monotone can only cost the best cut, never the budget.
        """
        low, high = 0, len(cuts) - 1
        best: tuple[int, int] | None = None
        while low <= high:
            middle = (low + high) // 2
            tokens = self._measure(start, cuts[middle])
            if tokens >= 0:
                best = (cuts[middle], tokens)
                low = middle + 1
            else:
                high = middle - 1
        return best
