"""Locating a model's quote in the evidence item it names, byte-exact.

:func:`locate` finds a quote in one evidence item's ``text`` and returns a
:class:`Citation` holding the *stored* text at the span it found, with the span's
document byte offsets, or ``None``. Only these differences between the quote and
the stored text are forgiven (see :class:`CitationRules` for the exact characters):

- **Whitespace runs.** Any run of Unicode whitespace (``str.isspace``) matches any
  other non-empty run; whitespace at either end of the quote (or of a fragment) is
  ignored. Whitespace is never optional: ``ab`` does not match ``a b``.
- **Quotation marks and apostrophes**, in two classes. Single: ``'`` ``‘`` ``’``
  ``‚`` ``‛`` ``′``. Double: ``"`` ``“`` ``”`` ``„`` ``‟`` ``″`` ``«`` ``»``. Each
  class is compared as its ASCII member (``'`` and ``"``), which is what a model
  typing straight quotes produces. The classes stay apart: ``’`` is both the
  typographic apostrophe and the closing single quote, and a model that turns
  ``can’t`` into ``can"t`` has changed a character, not its typography. Primes are
  in the classes because OCR and typesetting use them for apostrophes and quotes;
  the single guillemets ``‹`` ``›`` are not, so they are never forgiven.
- **Hyphens and dashes** as one class: ``-`` ``‐`` ``‑`` ``‒`` ``–`` ``—`` ``―`` ``−``.
- **Emphasis marks** ``_`` and ``*`` are skipped in both the quote and the text, so
  the text's ``_I_ am`` matches the quote ``I am`` (and ``*I* am`` matches ``I am``).
  Marks are skipped before anything else, so ``a _ b`` reads as ``a b``.
- **At most two elisions**, ``...`` or ``…``, which split the quote into up to three
  fragments. Each fragment must be non-empty once trimmed, and each is found after
  the last character of the one before it (no overlap; nothing need lie between).
  A quote with three or more elisions is not located. An elision at the very start
  or end of the quote (``...and then``) marks text left out there and counts toward
  the two; an empty fragment between two elisions is refused. Elisions are read left
  to right, without overlap, after emphasis marks are skipped.

Nothing else is ever forgiven: no case folding, no Unicode normalisation (a
composed ``é`` never matches ``e`` plus a combining accent), no fuzzy matching, no
other character swapped, and no match across chunks, because only ``item.text`` is
searched. An empty quote, or one of only whitespace, marks and elisions, is never
located. Like ``str.find``, a fragment may start or end inside a word.

The span runs from the first matched character of the first fragment to the last
matched character of the last fragment, then is widened over emphasis marks as
:func:`locate` states. With several occurrences the leftmost wins, and an elided
quote takes the earliest consistent placement (each fragment at its leftmost
occurrence after the previous one, which finds a placement whenever one exists).

Matching works on a normalised copy of the text with a map back to the stored
characters, built once per distinct text (an LRU cache of the last 256 texts, keyed
by the text itself, so an item's offsets never leak into another's), then
``str.find`` per fragment: linear in the chunk's length per fragment. The only
regular expression applied to the model's input is a split on the two literal
elision forms, which has no quantifier and cannot backtrack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from graphrag_orm.evidence import EvidenceItem, Grounding, leave_out_unset
from graphrag_orm.values import Value
from graphrag_orm.whitespace import Normalised, collapse_whitespace, normalise_runs

__all__ = ["Citation", "CitationRules", "explain_not_found", "locate"]


class CitationRules:
    """The characters quote location forgives, and its one bound; nothing else is forgiven."""

    MAX_ELISIONS: Final = 2
    ELISIONS: Final = ("...", "…")
    EMPHASIS_MARKS: Final = "_*"
    SINGLE_QUOTES: Final = "'‘’‚‛′"
    DOUBLE_QUOTES: Final = '"“”„‟″«»'
    DASHES: Final = "-‐‑‒–—―−"


class Citation(Value):
    """A quote located in stored bytes.

    ``quote`` is the stored text at ``[start_byte, end_byte)`` (document byte offsets,
    end exclusive, never inside a code point), emphasis marks included, never the
    model's copy. ``page`` and ``end_page`` are the pages of the span's first and
    last byte, ``None`` for documents without pages. ``grounding`` says whether the
    offsets are into the source document or only into the stored chunk's own text;
    ``text_origin`` names derived text (OCR, transcripts), ``None`` for a source's own.
    """

    document_id: str
    chunk_id: str
    start_byte: int = Field(ge=0)
    end_byte: int = Field(ge=0)
    quote: str
    page: int | None = None
    end_page: int | None = None
    grounding: Grounding = Grounding.SOURCE
    text_origin: str | None = None

    @model_serializer(mode="wrap")
    def _json_leaves_out_unset(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        # JSON names pages only for paged documents and an origin only for derived text.
        return leave_out_unset(handler(self), info, ("page", "end_page", "text_origin"))


def locate(item: EvidenceItem, quote: str) -> Citation | None:
    """Find ``quote`` in ``item.text`` under the module's rules; ``None`` when it is not there.

    The returned citation's ``quote`` equals
    ``item.text.encode()[start_byte - item.start_byte : end_byte - item.start_byte].decode()``
    exactly. Its span covers the match and is then widened over emphasis marks by
    this rule: let ``L`` be the run of ``_``/``*`` characters directly before the
    match and ``R`` the run directly after it; take the ``i`` marks of ``L`` nearest
    the match and the ``j`` marks of ``R`` nearest the match such that the widened
    span holds an even number of ``_`` and an even number of ``*``, choosing the
    largest ``i + j`` and, among those, the largest ``i``. When no choice makes both
    counts even, the span is the match alone. So ``_I_`` gives ``_I_`` for ``I``,
    ``**bold** text`` gives all of it for ``bold text``, and ``_I am here_`` gives
    ``I am`` for ``I am``, because its opening mark closes outside the quote.

    Never raises for any quote; never searches outside ``item.text``.
    """
    plan = _plan(quote)
    if plan.problem is not None:
        return None
    normalised = _normalise_text(item.text)
    placement = _place(normalised.text, plan.fragments)
    if placement.failed is not None:
        return None
    first = normalised.original(placement.start)
    last = normalised.original(placement.end - 1)
    start, end = _widen_over_marks(item.text, first, last + 1)
    return _citation(item, item.text.isascii(), start, end)


def explain_not_found(item: EvidenceItem, quote: str) -> str:
    """A short reason why :func:`locate` finds nothing, for logs and tests; ``"located"`` otherwise.

    Reasons: ``"empty quote"``, ``"too many elisions (n, at most 2)"``,
    ``"fragment k is empty"``, ``"quote not found"`` (no elision),
    ``"fragment 1 not found"`` and ``"fragment k not found after fragment k-1"``.
    It follows the same steps as :func:`locate` and is never used for matching.
    """
    plan = _plan(quote)
    if plan.problem is not None:
        return plan.problem
    placement = _place(_normalise_text(item.text).text, plan.fragments)
    if placement.failed is None:
        return "located"
    if len(plan.fragments) == 1:
        return "quote not found"
    if placement.failed == 0:
        return "fragment 1 not found"
    return f"fragment {placement.failed + 1} not found after fragment {placement.failed}"


_MARKS: Final = frozenset(CitationRules.EMPHASIS_MARKS)

# Each forgiven class compared as its ASCII member; identities are left out.
_CLASSES: Final[dict[str, str]] = {
    char: canonical
    for members, canonical in (
        (CitationRules.SINGLE_QUOTES, "'"),
        (CitationRules.DOUBLE_QUOTES, '"'),
        (CitationRules.DASHES, "-"),
    )
    for char in members
    if char != canonical
}


def _map_classes(text: str) -> str:
    # Chained replaces skip absent characters at C speed; str.translate looks up
    # every character of a non-ASCII text in a dict, about fifty times slower.
    for char, canonical in _CLASSES.items():
        if char in text:
            text = text.replace(char, canonical)
    return text


# Two literal alternatives: no quantifier, so no backtracking on the model's input.
_ELISION: Final = re.compile("|".join(re.escape(form) for form in CitationRules.ELISIONS))


@dataclass(frozen=True, slots=True)
class _Plan:
    fragments: tuple[str, ...]
    problem: str | None = None


def _plan(quote: str) -> _Plan:
    """The quote's normalised fragments, or why it can never be located."""
    for mark in CitationRules.EMPHASIS_MARKS:
        quote = quote.replace(mark, "")
    parts = _ELISION.split(_map_classes(quote))
    fragments = tuple(collapse_whitespace(part) for part in parts)
    if not any(fragments):
        return _Plan((), "empty quote")
    elisions = len(fragments) - 1
    if elisions > CitationRules.MAX_ELISIONS:
        return _Plan((), f"too many elisions ({elisions}, at most {CitationRules.MAX_ELISIONS})")
    # A leading or trailing elision only says text was left out at that end.
    start = 1 if not fragments[0] else 0
    end = len(fragments) - 1 if not fragments[-1] else len(fragments)
    inner = fragments[start:end]
    for index, fragment in enumerate(inner):
        if not fragment:
            return _Plan((), f"fragment {start + index + 1} is empty")
    return _Plan(inner)


# The whitespace runs are normalised by the text locator's own code
# (:func:`graphrag_orm.whitespace.normalise_runs`), with the emphasis marks as marks,
# after the forgiven classes are mapped (one character for one, so offsets do not move).
@lru_cache(maxsize=256)
def _normalise_text(text: str) -> Normalised:
    return normalise_runs(_map_classes(text), CitationRules.EMPHASIS_MARKS)


@dataclass(frozen=True, slots=True)
class _Placement:
    start: int = 0
    end: int = 0
    failed: int | None = None


def _place(text: str, fragments: tuple[str, ...]) -> _Placement:
    """Each fragment at its leftmost occurrence after the previous one (normalised offsets)."""
    start = text.find(fragments[0])
    if start < 0:
        return _Placement(failed=0)
    end = start + len(fragments[0])
    for index in range(1, len(fragments)):
        found = text.find(fragments[index], end)
        if found < 0:
            return _Placement(failed=index)
        end = found + len(fragments[index])
    return _Placement(start, end)


def _widen_over_marks(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` over adjacent marks by the rule :func:`locate` states."""
    left = start
    while left > 0 and text[left - 1] in _MARKS:
        left -= 1
    right = end
    while right < len(text) and text[right] in _MARKS:
        right += 1
    if left == start and right == end:
        return start, end
    core = text[start:end]
    need_underscore = core.count("_") & 1
    need_star = core.count("*") & 1
    # The longest prefix of the right run for each parity of (_, *) it adds.
    longest_right: dict[tuple[int, int], int] = {(0, 0): 0}
    underscore = star = 0
    for taken in range(1, right - end + 1):
        if text[end + taken - 1] == "_":
            underscore ^= 1
        else:
            star ^= 1
        longest_right[underscore, star] = taken
    best: tuple[int, int] | None = None
    underscore = star = 0
    for taken_left in range(start - left + 1):
        if taken_left:
            if text[start - taken_left] == "_":
                underscore ^= 1
            else:
                star ^= 1
        taken_right = longest_right.get((need_underscore ^ underscore, need_star ^ star))
        if taken_right is not None and (best is None or (taken_left + taken_right, taken_left) > (sum(best), best[0])):
            best = (taken_left, taken_right)
    if best is None:
        return start, end
    return start - best[0], end + best[1]


def _citation(item: EvidenceItem, ascii_text: bool, start: int, end: int) -> Citation:
    stored = item.text[start:end]
    if ascii_text:
        offset, size = start, end - start
    else:
        offset, size = len(item.text[:start].encode()), len(stored.encode())
    start_byte = item.start_byte + offset
    end_byte = start_byte + size
    return Citation(
        document_id=item.document_id,
        chunk_id=item.chunk_id,
        start_byte=start_byte,
        end_byte=end_byte,
        quote=stored,
        page=item.page_of(start_byte),
        end_page=item.page_of(end_byte - 1),
        grounding=item.grounding,
        text_origin=item.text_origin,
    )
