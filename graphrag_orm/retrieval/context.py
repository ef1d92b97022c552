"""Context around the evidence: neighbour chunks, kept inside the scope, and the context budget.

Context helps a model read and is never cited. Neighbours are the kept items' chunks
along ``NEXT_CHUNK`` (read with the items, in the same statement), never an item
themselves, each checked against the scope; they come in document and chunk order.
All context together is bounded by ``max_context_utf8_bytes``; the first entry that
does not fit, and everything after it, is left out and ``ContextUtf8Bytes`` reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import ContextItem, EvidenceItem
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.values import Limit

__all__ = ["bounded", "neighbours"]


def neighbours(
    items: Sequence[EvidenceItem], found: Mapping[str, Sequence[Mapping[str, Any]]], scope: ResolvedScope | None
) -> list[ContextItem]:
    """The neighbours of ``items`` (``found``: projected chunks by item id), none an item, inside ``scope``."""
    cited = {item.chunk_id for item in items}
    chunks: dict[str, Mapping[str, Any]] = {}
    for item in items:
        for chunk in found.get(item.chunk_id, ()):
            chunks.setdefault(chunk["id"], chunk)
    out: list[ContextItem] = []
    for chunk in sorted(chunks.values(), key=lambda c: (c["documentId"], c["order"])):
        if chunk["id"] in cited:
            continue
        if scope is not None and not scope.contains(
            chunk["documentId"], int(chunk["startByte"]), int(chunk["endByte"])
        ):
            continue
        out.append(ContextItem(chunk_id=chunk["id"], text=chunk["text"], reason="neighbour"))
    return out


def bounded(context: Iterable[ContextItem], max_utf8_bytes: int) -> tuple[list[ContextItem], list[Limit]]:
    """The context entries that fit in ``max_utf8_bytes``, in order, and the limit when one did not."""
    kept: list[ContextItem] = []
    used = 0
    for entry in context:
        size = len(entry.text.encode("utf-8"))
        if used + size > max_utf8_bytes:
            return kept, [Limit(name=LimitName.CONTEXT_UTF8_BYTES, value=max_utf8_bytes)]
        kept.append(entry)
        used += size
    return kept, []
