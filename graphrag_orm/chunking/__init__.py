"""The chunker: sections and chunks of a loaded document, as exact byte spans.

Every span is ``[start_byte, end_byte)`` into the document's UTF-8 bytes, at code-point
boundaries, so ``utf8[start:end].decode("utf-8")`` is always the span's text.

The rules, in the order they apply:

1. **Sections** (from the loaded document's outline,
   :attr:`~graphrag_orm.loaders.LoadedDocument.structure`: for ``text/markdown`` each ATX
   heading outside fenced code, see :mod:`graphrag_orm.loaders.markdown`). Each heading opens a
   section runs from its heading line to the byte before the next heading of the same
   or a higher level (fewer ``#``), or to the end; so it includes its subsections, and
   its ``parent_order`` is the nearest enclosing section. Text before the first heading
   belongs to no section. Plain text and PDF have no sections.

The package: :mod:`.options` (the budget), :mod:`.plan` (spans and ids), :mod:`.packing`
(paragraphs and packing), :mod:`.chunker` (the :class:`Chunker`).
2. **Segments.** The document is cut at the start of every heading line; no chunk ever
   crosses one, so a heading always starts a new chunk, and the chunk may begin with
   that heading line. A chunk's ``section_order`` is the innermost section holding it
   (the heading's own section), or None before the first heading.
3. **Paragraphs.** A paragraph is a run of non-blank lines with the blank lines after
   it (a blank line holds only spaces and tabs before its ``\n`` or ``\r\n``; blank
   space at the very end joins the last paragraph). In Markdown the heading line (with
   the blank lines after it) is a paragraph of its own, and blank lines inside fenced
   code (the outline's fenced blocks) do not end a paragraph, so a fenced block stays whole when it fits. Blank
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

from graphrag_orm.chunking.chunker import CHUNKER_VERSION, Chunker, EmbedderTokenCounter, within_window
from graphrag_orm.chunking.options import (
    MAX_TOKENS_BOUNDS,
    MAX_UTF8_BYTES_BOUNDS,
    OVERLAP_PARAGRAPHS_BOUNDS,
    ChunkerOptions,
)
from graphrag_orm.chunking.plan import ChunkPlan, ChunkSpan, PlanIds, SectionSpan, chunk_id, plan_ids, section_id

__all__ = [
    "CHUNKER_VERSION",
    "MAX_TOKENS_BOUNDS",
    "MAX_UTF8_BYTES_BOUNDS",
    "OVERLAP_PARAGRAPHS_BOUNDS",
    "ChunkPlan",
    "ChunkSpan",
    "Chunker",
    "ChunkerOptions",
    "EmbedderTokenCounter",
    "PlanIds",
    "SectionSpan",
    "chunk_id",
    "plan_ids",
    "section_id",
    "within_window",
]
