"""A document's plan: its sections and chunks as byte spans, and the ids they are stored under."""

from __future__ import annotations

import hashlib

from graphrag_orm.values import Value

__all__ = ["ChunkPlan", "ChunkSpan", "PlanIds", "SectionSpan", "chunk_id", "plan_ids", "section_id"]


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


class PlanIds(Value):
    """The ids a plan's chunks and sections are stored under, in plan order (sections by ``order``)."""

    chunks: tuple[str, ...]
    sections: tuple[str, ...]


def plan_ids(plan: ChunkPlan, document_id: str, content_hash: str) -> PlanIds:
    """Every chunk's and section's id in ``plan`` of the document with ``content_hash``."""
    fingerprint = plan.fingerprint
    return PlanIds(
        chunks=tuple(chunk_id(document_id, content_hash, fingerprint, c.start_byte, c.end_byte) for c in plan.chunks),
        sections=tuple(section_id(document_id, content_hash, fingerprint, s.order) for s in plan.sections),
    )
