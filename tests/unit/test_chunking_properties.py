"""Property-based tests: the chunker's invariants on thousands of generated documents.

Documents mix headings (valid and almost-valid), fences of both kinds and several
lengths (closed, unclosed, with backticks in the info string), lists, blank lines
with spaces and tabs, CRLF, multi-byte characters and emoji, long lines and empty
documents. Each test states how many examples it runs; together they run about three
thousand in a unit-test run (``deadline=None``: timing is the benchmark's job).
"""

from __future__ import annotations

import os
import re
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphrag_orm.chunking import Chunker, ChunkerOptions, ChunkPlan
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.loaders.markdown import outline

# About 2,600 examples in all, about 10 s on one idle core. GRAPHRAG_HYPOTHESIS_SCALE multiplies
# every count (for example 10 for a deep run before a release).
_SCALE = float(os.environ.get("GRAPHRAG_HYPOTHESIS_SCALE", "1"))
EXAMPLES_MARKDOWN = int(1_000 * _SCALE)
EXAMPLES_PLAIN = int(300 * _SCALE)
EXAMPLES_TOKENS = int(300 * _SCALE)
EXAMPLES_OUTLINE = int(500 * _SCALE)
EXAMPLES_PROSE = int(500 * _SCALE)

_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --- Generated documents -----------------------------------------------------------------------

_ALPHABET = st.sampled_from([*"abcdefgh xyz   \t.,;:!?-*_>|`~#()[]0123456789", "é", "ß", "東", "😀", "🚲", "\u00a0"])
_words = st.text(_ALPHABET, max_size=60)
_indent = st.sampled_from(["", " ", "  ", "   ", "    ", "\t"])

_heading = st.builds(
    lambda indent, hashes, gap, title, closing: f"{indent}{'#' * hashes}{gap}{title}{closing}",
    _indent,
    st.integers(1, 7),
    st.sampled_from([" ", "\t", "  ", ""]),
    _words,
    st.sampled_from(["", " #", " ###", "#", " # "]),
)
_fence = st.builds(
    lambda indent, char, length, info: f"{indent}{char * length}{info}",
    _indent,
    st.sampled_from(["`", "~"]),
    st.integers(2, 5),
    st.sampled_from(["", "python", " js ", "a`b", "  "]),
)
_blank = st.sampled_from(["", " ", "\t", "  \t "])
_list_item = st.builds(lambda marker, text: f"{marker} {text}", st.sampled_from(["-", "*", "1.", ">"]), _words)
_long_line = st.builds(
    lambda word, times: word * times, st.sampled_from(["long ", "é", "😀", "x", "東京 "]), st.integers(20, 400)
)
_line = st.one_of(_words, _words, _words, _blank, _heading, _heading, _fence, _list_item, _long_line)
_short = st.text(_ALPHABET, min_size=1, max_size=40).filter(lambda text: text.strip(" \t") != "")

# Blocks give the documents structure (paragraphs between blank lines, real headings,
# fences that usually close), so that packing, overlap and sections are exercised; the
# noise lines keep the almost-valid cases coming.
_paragraph = st.builds(
    lambda lines, blanks: lines + blanks,
    st.lists(st.one_of(_short, _short, _list_item), min_size=1, max_size=4),
    st.one_of(st.lists(_blank, min_size=1, max_size=2), st.lists(_blank, min_size=1, max_size=2), st.just([])),
)
_real_heading = st.builds(lambda level, title: ["#" * level + " " + title], st.integers(1, 6), _short)
_blank_block = st.lists(_blank, min_size=1, max_size=3)


@st.composite
def _fenced_block(draw: st.DrawFn) -> list[str]:
    char = draw(st.sampled_from(["`", "~"]))
    length = draw(st.integers(3, 5))
    indent = draw(st.sampled_from(["", " ", "   "]))
    body = draw(st.lists(st.one_of(_words, _blank, _heading, st.just(char * (length - 1))), max_size=6))
    lines = [f"{indent}{char * length}{draw(st.sampled_from(['', 'python', ' sh ']))}", *body]
    if draw(st.integers(0, 4)):  # usually closed, sometimes left open to the end
        lines.append(f"{draw(st.sampled_from(['', '  ']))}{char * draw(st.integers(length, length + 2))} ")
    return lines


_block = st.one_of(
    _paragraph,
    _paragraph,
    _paragraph,
    _paragraph,
    _paragraph,
    _real_heading,
    _real_heading,
    _blank_block,
    _blank_block,
    _fenced_block(),
    st.lists(_line, min_size=1, max_size=3),
)


_prose_block = st.one_of(_paragraph, _paragraph, _paragraph, _paragraph, _real_heading, _fenced_block())


@st.composite
def markdown_documents(draw: st.DrawFn) -> bytes:
    """Any mix of blocks and noise; or, one time in two, prose: many paragraphs between
    headings, so that chunks hold several paragraphs and overlap has work to do."""
    if draw(st.booleans()):
        blocks = draw(st.lists(_prose_block, min_size=4, max_size=30))
    else:
        blocks = draw(st.lists(_block, max_size=30))
    lines = [line for block in blocks for line in block]
    newline = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    if newline == "mixed":
        endings = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines), max_size=len(lines)))
    else:
        endings = [newline] * len(lines)
    text = "".join(line + ending for line, ending in zip(lines, endings, strict=True))
    if text and draw(st.booleans()):
        text = text.rstrip("\r\n")  # no final line ending
    return text.encode("utf-8")


options = st.builds(
    ChunkerOptions,
    max_utf8_bytes=st.one_of(st.integers(64, 600), st.integers(64, 200), st.sampled_from([64, 65, 2_048])),
    overlap_paragraphs=st.integers(0, 4),
)

# --- An independent heading oracle: line by line, CommonMark's rules as regular expressions -----

_ORACLE_FENCE = re.compile(rb" {0,3}(`{3,}|~{3,})(.*)")
_ORACLE_HEADING = re.compile(rb" {0,3}(#{1,6})(?:[ \t]+(.*)|)")
_ORACLE_CLOSING = re.compile(rb"(?:^|[ \t]+)#+$")


def oracle_headings(utf8: bytes) -> list[tuple[int, int, str]]:
    """(start, level, title) of every ATX heading outside fenced code."""
    found: list[tuple[int, int, str]] = []
    fence: bytes | None = None
    offset = 0
    for raw in utf8.split(b"\n"):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        start, offset = offset, offset + len(raw) + 1
        fence_match = _ORACLE_FENCE.fullmatch(line)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[:1] == fence[:1]
                and len(fence_match.group(1)) >= len(fence)
                and not fence_match.group(2).strip(b" \t")
            ):
                fence = None
            continue
        if fence_match and not (fence_match.group(1)[:1] == b"`" and b"`" in fence_match.group(2)):
            fence = fence_match.group(1)
            continue
        heading = _ORACLE_HEADING.fullmatch(line)
        if heading:
            rest = (heading.group(2) or b"").strip(b" \t")
            closing = _ORACLE_CLOSING.search(rest)
            if closing:
                rest = rest[: closing.start()]
            found.append((start, len(heading.group(1)), rest.strip(b" \t").decode("utf-8", "replace")))
    return found


def oracle_sections(headings: list[tuple[int, int, str]], size: int) -> list[tuple[int, int, str, int, int | None]]:
    """(start, level, title, end, parent) by the definition: end at the next heading of the same
    or a higher level; parent the nearest earlier heading of a lower level still open."""
    sections = []
    for index, (start, level, title) in enumerate(headings):
        end = next((s for s, lvl, _ in headings[index + 1 :] if lvl <= level), size)
        parent = None
        for earlier in range(index - 1, -1, -1):
            if headings[earlier][1] < level:
                parent = earlier
                break
        # The parent must still be open: nothing of its level or higher came in between.
        if parent is not None and any(headings[k][1] <= headings[parent][1] for k in range(parent + 1, index)):
            parent = None
        sections.append((start, level, title, end, parent))
    return sections


# --- The invariants ---------------------------------------------------------------------------

_BLANK_LINE = re.compile(rb"[ \t]*\r?\n")


def is_boundary(utf8: bytes, position: int) -> bool:
    return position == len(utf8) or utf8[position] & 0xC0 != 0x80


def check_plan(utf8: bytes, plan: ChunkPlan, chosen: ChunkerOptions, markdown: bool) -> None:
    size = len(utf8)
    chunks = plan.chunks
    if size == 0:
        assert chunks == () and plan.sections == ()
        return

    # Every chunk: within the budget, at code-point boundaries, its text exactly its bytes.
    for order, chunk in enumerate(chunks):
        assert chunk.order == order
        assert 0 <= chunk.start_byte < chunk.end_byte <= size
        assert chunk.end_byte - chunk.start_byte <= chosen.max_utf8_bytes
        assert is_boundary(utf8, chunk.start_byte) and is_boundary(utf8, chunk.end_byte)
        assert plan.chunk_text(utf8, chunk).encode("utf-8") == utf8[chunk.start_byte : chunk.end_byte]

    # Together they cover every byte; starts and ends strictly increase; no gap.
    assert chunks[0].start_byte == 0 and chunks[-1].end_byte == size
    heading_ends = {h.line_end for h in outline(utf8).headings} if markdown else set()
    for previous, chunk in pairwise(chunks):
        assert previous.start_byte < chunk.start_byte <= previous.end_byte < chunk.end_byte
        if chosen.overlap_paragraphs == 0:
            assert chunk.start_byte == previous.end_byte
        elif chunk.start_byte < previous.end_byte:
            # Overlap starts at a paragraph: after a blank line or right after a heading line.
            line_start = utf8.rfind(b"\n", 0, max(chunk.start_byte - 1, 0)) + 1
            assert _BLANK_LINE.fullmatch(utf8[line_start : chunk.start_byte]) or chunk.start_byte in heading_ends

    headings = oracle_headings(utf8) if markdown else []
    starts = [start for start, _, _ in headings]
    # No chunk crosses a heading line: a heading line can only be where a chunk starts.
    for chunk in chunks:
        assert not any(chunk.start_byte < start < chunk.end_byte for start in starts)
    # A chunk's section is the innermost one: the last heading at or before its start.
    for chunk in chunks:
        before = [index for index, start in enumerate(starts) if start <= chunk.start_byte]
        assert chunk.section_order == (before[-1] if before else None)

    # Sections match the definition, and a section's text is exactly its bytes.
    expected = oracle_sections(headings, size)
    actual = [(s.start_byte, s.level, s.title, s.end_byte, s.parent_order) for s in plan.sections]
    assert actual == expected
    for order, section in enumerate(plan.sections):
        assert section.order == order
        assert plan.section_text(utf8, section).encode("utf-8") == utf8[section.start_byte : section.end_byte]


@settings(_SETTINGS, max_examples=EXAMPLES_MARKDOWN)
@given(utf8=markdown_documents(), chosen=options)
def test_markdown_plans_keep_every_invariant(utf8: bytes, chosen: ChunkerOptions) -> None:
    document = LoadedDocument(source_uri="text:generated", media_type="text/markdown", utf8=utf8)
    plan = Chunker(chosen).plan(document)
    check_plan(utf8, plan, chosen, markdown=True)
    assert Chunker(chosen).plan(document) == plan  # deterministic


@settings(_SETTINGS, max_examples=EXAMPLES_PLAIN)
@given(utf8=markdown_documents(), chosen=options)
def test_plain_text_plans_keep_every_invariant_and_have_no_sections(utf8: bytes, chosen: ChunkerOptions) -> None:
    document = LoadedDocument(source_uri="text:generated", media_type="text/plain", utf8=utf8)
    plan = Chunker(chosen).plan(document)
    check_plan(utf8, plan, chosen, markdown=False)
    assert all(chunk.section_order is None for chunk in plan.chunks)


class SymbolCounter:
    """Deterministic and cheap: a run of letters or digits, or any other non-space character,
    is a token; so is each run of whitespace; a character beyond the BMP (an emoji) counts
    two more, so with a small budget one emoji alone is over it."""

    identity = "test:symbols"
    _token = re.compile(r"[^\W_]+|\s+|.", re.DOTALL)
    _astral = re.compile(r"[\U00010000-\U0010FFFF]")

    def count(self, text: str) -> int:
        return len(self._token.findall(text)) + 2 * len(self._astral.findall(text))


@settings(_SETTINGS, max_examples=EXAMPLES_TOKENS)
@given(utf8=markdown_documents(), chosen=options, max_tokens=st.integers(1, 60))
def test_token_budgets_are_enforced_with_a_counter(utf8: bytes, chosen: ChunkerOptions, max_tokens: int) -> None:
    counter = SymbolCounter()
    chosen = ChunkerOptions(
        max_utf8_bytes=chosen.max_utf8_bytes, max_tokens=max_tokens, overlap_paragraphs=chosen.overlap_paragraphs
    )
    document = LoadedDocument(source_uri="text:generated", media_type="text/markdown", utf8=utf8)
    plan = Chunker(chosen, token_counter=counter).plan(document)
    check_plan(utf8, plan, chosen, markdown=True)
    for chunk in plan.chunks:
        text = plan.chunk_text(utf8, chunk)
        assert chunk.token_count == counter.count(text)
        assert chunk.token_count <= max_tokens or len(text) == 1  # one code point cannot be split


@settings(_SETTINGS, max_examples=EXAMPLES_OUTLINE)
@given(utf8=markdown_documents())
def test_the_outline_matches_the_line_by_line_oracle(utf8: bytes) -> None:
    found = outline(utf8)
    assert [(h.start, h.level, h.title) for h in found.headings] == oracle_headings(utf8)
    for heading in found.headings:
        line = utf8[heading.start : heading.line_end]
        assert line.endswith(b"\n") or heading.line_end == len(utf8)
        assert b"\n" not in line[:-1]
    for start, end in found.fences:
        assert 0 <= start < end <= len(utf8)
        assert not any(start < h.start < end for h in found.headings)


# --- Packing and overlap against a plain reference, on prose built paragraph by paragraph -------

_prose_text = st.text(st.sampled_from([*"abcdefgh xyz.,;!?-", "é", "東", "😀"]), min_size=1, max_size=24).filter(
    lambda text: text.strip(" ") != ""
)


@st.composite
def prose(draw: st.DrawFn) -> tuple[bytes, list[tuple[bool, list[tuple[int, int]]]], int, int]:
    """A document built from known paragraphs: returns the bytes, each segment's paragraph
    spans (with whether it opens with a heading), a budget every paragraph fits, and an overlap."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    pieces: list[str] = []
    segments: list[tuple[bool, list[tuple[int, int]]]] = []
    offset = 0
    for number in range(draw(st.integers(1, 5))):
        heading = number > 0 or draw(st.booleans())
        paragraphs: list[tuple[int, int]] = []
        texts: list[str] = []
        if heading:
            blank_after = draw(st.booleans())
            texts.append("#" * draw(st.integers(1, 6)) + " " + draw(_prose_text) + newline + newline * blank_after)
        for _ in range(draw(st.integers(0, 12))):
            lines = draw(st.lists(_prose_text, min_size=1, max_size=3))
            blanks = draw(st.integers(1, 2))
            texts.append("".join(line.strip(" ") + newline for line in lines) + newline * blanks)
        for text in texts:
            size = len(text.encode("utf-8"))
            paragraphs.append((offset, offset + size))
            pieces.append(text)
            offset += size
        if paragraphs:
            segments.append((heading, paragraphs))
    utf8 = "".join(pieces).encode("utf-8")
    largest = max((end - start for _, spans in segments for start, end in spans), default=0)
    budget = draw(st.integers(max(64, largest), max(64, largest) + 300))
    return utf8, segments, budget, draw(st.integers(0, 4))


def reference_chunks(
    segments: list[tuple[bool, list[tuple[int, int]]]], budget: int, overlap: int
) -> list[tuple[int, int]]:
    """The module's rules 4 and 5, written plainly, for paragraphs that each fit the budget."""
    chunks: list[tuple[int, int]] = []
    for heading, spans in segments:
        floor = 1 if heading else 0
        previous_first = -1
        index = 0
        while index < len(spans):
            end = spans[index][1]
            repeat = 0
            for candidate in range(min(overlap, index - floor, index - previous_first - 1), 0, -1):
                if end - spans[index - candidate][0] <= budget:
                    repeat = candidate
                    break
            first = index - repeat
            last = index
            while last + 1 < len(spans) and spans[last + 1][1] - spans[first][0] <= budget:
                last += 1
            chunks.append((spans[first][0], spans[last][1]))
            previous_first, index = first, last + 1
    return chunks


@settings(_SETTINGS, max_examples=EXAMPLES_PROSE)
@given(case=prose())
def test_prose_chunks_follow_the_packing_and_overlap_rules(
    case: tuple[bytes, list[tuple[bool, list[tuple[int, int]]]], int, int],
) -> None:
    utf8, segments, budget, overlap = case
    chosen = ChunkerOptions(max_utf8_bytes=budget, overlap_paragraphs=overlap)
    plan = Chunker(chosen).plan(LoadedDocument(source_uri="text:prose", media_type="text/markdown", utf8=utf8))
    check_plan(utf8, plan, chosen, markdown=True)
    assert [(chunk.start_byte, chunk.end_byte) for chunk in plan.chunks] == reference_chunks(segments, budget, overlap)
