"""The evidence budget: items in rank order until ``max_items`` or ``max_utf8_bytes``.

An item costs the UTF-8 bytes of its text and of its title (every item carries its
document's title). An item that does not fit whole is cut at a UTF-8 code-point
boundary, and its ``end_byte`` becomes the cut, so its text is still exactly its span;
a title is never cut, so an item whose title alone does not fit is left out. What was
left out is counted and the limit named; nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag_orm.codes import LimitName
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.values import Limit

__all__ = ["Budgeted", "apply_budget", "cut_at_boundary"]


@dataclass(frozen=True)
class Budgeted:
    items: tuple[EvidenceItem, ...]
    utf8_bytes: int
    omitted: int
    limits: tuple[Limit, ...]


def cut_at_boundary(utf8: bytes, limit: int) -> int:
    """The largest length <= ``limit`` that does not end inside a code point."""
    cut = min(limit, len(utf8))
    while 0 < cut < len(utf8) and utf8[cut] & 0xC0 == 0x80:
        cut -= 1
    return cut


def apply_budget(ranked: Sequence[EvidenceItem], max_items: int, max_utf8_bytes: int) -> Budgeted:
    """Keep items in order within both bounds (text and title bytes); cut the text of the one that crosses."""
    kept: list[EvidenceItem] = []
    used = 0
    limits: list[Limit] = []
    for position, item in enumerate(ranked):
        if len(kept) == max_items:
            limits.append(Limit(name=LimitName.MAX_ITEMS, value=max_items))
            return Budgeted(tuple(kept), used, len(ranked) - position, tuple(limits))
        encoded = item.text.encode("utf-8")
        title = len(item.title.encode("utf-8")) if item.title else 0
        room = max_utf8_bytes - used - title
        if len(encoded) <= room:
            kept.append(item)
            used += title + len(encoded)
            continue
        cut = cut_at_boundary(encoded, max(room, 0))
        if cut > 0:
            kept.append(
                item.model_copy(update={"text": encoded[:cut].decode("utf-8"), "end_byte": item.start_byte + cut})
            )
            used += title + cut
        limits.append(Limit(name=LimitName.MAX_UTF8_BYTES, value=max_utf8_bytes))
        omitted = len(ranked) - position - (1 if cut > 0 else 0)
        return Budgeted(tuple(kept), used, omitted, tuple(limits))
    return Budgeted(tuple(kept), used, 0, ())
