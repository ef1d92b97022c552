"""The chunker: plans a loaded document's sections and chunks by the rules of :mod:`graphrag_orm.chunking`."""

from __future__ import annotations

import hashlib
import json

from graphrag_orm.chunking.options import MAX_TOKENS_BOUNDS, ChunkerOptions
from graphrag_orm.chunking.packing import BLANK_LINE, Packer, inside, paragraph_breaks, sections_of
from graphrag_orm.chunking.plan import ChunkPlan
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.base import input_window, token_count_function
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.loaders.base import LoadedDocument
from graphrag_orm.tokens import ByteEstimateCounter, TokenCounter, counter_identity

__all__ = ["CHUNKER_VERSION", "Chunker", "EmbedderTokenCounter", "within_window"]

CHUNKER_VERSION = "graphrag-orm.chunker/1"
"""Changes whenever the rules above change, so the fingerprint and chunk ids change too."""


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
        """The sections (from the document's :attr:`~LoadedDocument.structure`) and chunks of ``document``."""
        utf8 = document.utf8
        size = len(utf8)
        if size == 0:
            return ChunkPlan(sections=(), chunks=(), fingerprint=self._fingerprint)

        headings, fences = document.structure
        breaks = paragraph_breaks(utf8, fences)
        work = Packer(utf8, self.options, self.token_counter)

        first_heading = headings[0].start if headings else size
        if first_heading > 0:
            bounds = [0, *inside(breaks, 0, first_heading), first_heading]
            if len(bounds) > 2 and utf8[0] in b" \t\r\n" and not utf8[0 : bounds[1]].strip(b" \t\r\n"):
                del bounds[1]  # leading blank lines join the first paragraph
            work.pack(bounds, None, overlap_floor=0)
        for order, heading in enumerate(headings):
            end = headings[order + 1].start if order + 1 < len(headings) else size
            bounds = [heading.start]
            if heading.line_end < end and not BLANK_LINE.match(utf8, heading.line_end):
                bounds.append(heading.line_end)  # the heading line is a paragraph of its own
            bounds.extend(inside(breaks, heading.start, end))
            bounds.append(end)
            work.pack(bounds, order, overlap_floor=1)

        return ChunkPlan(sections=sections_of(headings, size), chunks=tuple(work.chunks), fingerprint=self._fingerprint)


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
