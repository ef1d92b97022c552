"""Documents another library chunked: :class:`ChunkedDocument`, and the plan its chunks make once placed.

:meth:`IngestionService.ingest_chunked <graphrag_orm.ingestion.IngestionService.ingest_chunked>`
loads the document's source as ``ingest`` does, places the caller's chunks in its bytes
with the text locator (:mod:`graphrag_orm.placement`) and writes the plan
:func:`plan_placed` makes:

- **Chunks**: the placed chunks in the caller's order (skipped empty ones left out),
  numbered from 0, each the stored bytes of its span, so ``chunk.text ==
  utf8[start:end].decode()`` holds as for the toolkit's own chunks.
- **Sections**: a Markdown document keeps the sections its headings give, by the same
  rules as the toolkit's chunker (:mod:`graphrag_orm.chunking`, rule 1), whoever
  chunked it: they are the document's structure, not the chunker's. A chunk belongs to
  the innermost section that holds its whole span; a chunk that crosses a heading
  belongs to the section holding both sides of it, or to none at the top level. Plain
  text and PDF have no sections.
- **Fingerprints**: the plan's fingerprint (which chunk and section ids hash) is the
  SHA-256 of the locator's version and the caller's chunker fingerprint, so the same
  document chunked by another splitter gets other ids. The settings fingerprint a
  document stores (what the unchanged check compares) is that of the call (the plan's
  fingerprint, the embedding set, extraction) with a digest of the document's chunks
  (:func:`document_fingerprint`): a splitter whose fingerprint misses a setting still
  writes a document again when its chunks change.
"""

from __future__ import annotations

import hashlib
import json
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Final

from graphrag_orm.chunking import Chunker, ChunkerOptions, ChunkPlan, ChunkSpan, SectionSpan
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.placement import PLACEMENT_VERSION, ChunkText, PlacementCounts, place
from graphrag_orm.sources import Source
from graphrag_orm.values import Value

__all__ = [
    "MAX_FINGERPRINT_CHARS",
    "ChunkedDocument",
    "check_fingerprint",
    "chunks_digest",
    "document_fingerprint",
    "innermost_section",
    "plan_fingerprint",
    "plan_placed",
    "sections_of",
]

#: The longest chunker fingerprint accepted, in characters.
MAX_FINGERPRINT_CHARS: Final = 1_000

# Sections do not depend on the chunker's budget; the largest budget plans fewest chunks.
_SECTIONS = Chunker(ChunkerOptions(max_utf8_bytes=16_384, overlap_paragraphs=0))


class ChunkedDocument(Value):
    """A :class:`~graphrag_orm.sources.Source` and the chunks another library cut it into, in order.

    Build it with :meth:`create`. The source is loaded when ingested, as ``ingest``
    loads it, and every chunk is placed in those bytes.
    """

    source: Source
    chunks: tuple[ChunkText, ...]

    @classmethod
    def create(cls, source: Source, chunks: Iterable[str | ChunkText]) -> ChunkedDocument:
        """``source`` with ``chunks`` (texts, or :class:`~graphrag_orm.placement.ChunkText`
        with a heading context or a span), in the order the splitter gave them.

        Raises ``ConfigurationError("invalid-source")`` when ``source`` is not a
        ``Source`` or a chunk is neither a ``str`` nor a ``ChunkText`` (the message names
        its index and type, never its text).
        """
        if not isinstance(source, Source):
            raise ConfigurationError(
                ErrorCode.INVALID_SOURCE, f"a chunked document needs a Source, not a {type(source).__name__}"
            )
        if isinstance(chunks, str | bytes):
            raise ConfigurationError(ErrorCode.INVALID_SOURCE, "chunks must be a list of texts, not one text")
        items: list[ChunkText] = []
        for index, chunk in enumerate(chunks):
            if isinstance(chunk, ChunkText):
                items.append(chunk)
            elif isinstance(chunk, str):
                items.append(ChunkText(chunk))
            else:
                raise ConfigurationError(
                    ErrorCode.INVALID_SOURCE, f"chunk {index} is a {type(chunk).__name__}, not a str or ChunkText"
                )
        return cls(source=source, chunks=tuple(items))


def check_fingerprint(fingerprint: object) -> str:
    """``fingerprint`` if it is a non-blank string of at most :data:`MAX_FINGERPRINT_CHARS`
    characters without control characters; else ``ConfigurationError("invalid-option")``."""
    if not isinstance(fingerprint, str) or not fingerprint.strip():
        raise ConfigurationError(ErrorCode.INVALID_OPTION, "chunker_fingerprint must be a non-empty string")
    if len(fingerprint) > MAX_FINGERPRINT_CHARS:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            f"chunker_fingerprint is {len(fingerprint):,} characters, over {MAX_FINGERPRINT_CHARS:,}",
        )
    if any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in fingerprint):
        raise ConfigurationError(ErrorCode.INVALID_OPTION, "chunker_fingerprint must not hold control characters")
    return fingerprint


def plan_fingerprint(chunker_fingerprint: str) -> str:
    """The plan's fingerprint for chunks placed from ``chunker_fingerprint``'s splitter."""
    body = json.dumps({"placement": PLACEMENT_VERSION, "chunker": chunker_fingerprint}, sort_keys=True)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def chunks_digest(chunks: Sequence[ChunkText]) -> str:
    """SHA-256 of the chunks' texts, contexts and given spans, in order (length-prefixed parts)."""
    digest = hashlib.sha256()
    for chunk in chunks:
        for part in (chunk.text, chunk.context, chunk.start_byte, chunk.end_byte):
            if part is None:
                digest.update(b"none;")
                continue
            encoded = str(part).encode("utf-8", "surrogatepass")
            digest.update(f"{len(encoded)}:".encode("ascii"))
            digest.update(encoded)
    return digest.hexdigest()


def document_fingerprint(settings_fingerprint: str, chunks: Sequence[ChunkText]) -> str:
    """The settings fingerprint a chunked document stores: the call's, with its chunks' digest."""
    body = json.dumps({"settings": settings_fingerprint, "chunks": chunks_digest(chunks)}, sort_keys=True)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def sections_of(loaded: LoadedDocument) -> tuple[SectionSpan, ...]:
    """The document's sections by the toolkit chunker's rule 1 (``text/markdown`` only)."""
    if loaded.media_type != "text/markdown" or not loaded.utf8:
        return ()
    return _SECTIONS.plan(loaded).sections


def innermost_section(sections: Sequence[SectionSpan], starts: Sequence[int], start: int, end: int) -> int | None:
    """The order of the innermost section holding all of ``[start, end)``, or None.

    ``sections`` are in document order and ``starts`` their start bytes. Sections nest,
    so the walk goes from the last section starting at or before ``start`` up through
    its parents (at most six levels).
    """
    at = bisect_right(starts, start) - 1
    order: int | None = at if at >= 0 else None
    while order is not None:
        section = sections[order]
        if section.start_byte <= start and end <= section.end_byte:
            return order
        order = section.parent_order
    return None


def plan_placed(
    loaded: LoadedDocument, chunks: Sequence[ChunkText], fingerprint: str, *, max_chunks: int
) -> tuple[ChunkPlan, PlacementCounts]:
    """The plan of ``chunks`` placed in ``loaded``, and how many each rule placed.

    Raises ``ChunkNotPlaced`` (``position-not-recovered``) for a chunk the locator cannot
    place and ``DocumentFailure("document-too-large")`` for more than ``max_chunks``.
    """
    placement = place(loaded.utf8, chunks, max_chunks=max_chunks)
    sections = sections_of(loaded)
    starts = [section.start_byte for section in sections]
    spans = tuple(
        ChunkSpan(
            order=order,
            start_byte=start,
            end_byte=end,
            section_order=innermost_section(sections, starts, start, end),
        )
        for order, (start, end) in enumerate(placement.spans)
    )
    return ChunkPlan(sections=sections, chunks=spans, fingerprint=fingerprint), placement.counts
