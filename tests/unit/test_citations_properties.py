"""Properties of quote location, checked against a plain reference implementation.

The reference below restates the rules character by character, with no index map,
no cache and no regular expression, so it shares no code with the locator.
"""

from __future__ import annotations

import random
from itertools import pairwise

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from graphrag_orm.citations import Citation, CitationRules, locate
from graphrag_orm.evidence import EvidenceItem

SINGLE = CitationRules.SINGLE_QUOTES
DOUBLE = CitationRules.DOUBLE_QUOTES
DASHES = CitationRules.DASHES
MARKS = CitationRules.EMPHASIS_MARKS
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHéÉßж中"
SPACES = [" ", "\n", "\t", "  ", "\n\n", " \t\n", "\u00a0", "\u2003", "\u3000", "\r\n"]
# Prose-like: mostly letters, some spaces, and every kind of forgiven character.
ALPHABET = list(LETTERS) * 3 + [" "] * 12 + ["\n", "\t", "\u00a0", "\u3000"]
ALPHABET += list(SINGLE + DOUBLE + DASHES + MARKS) + list(".,;!?😀𝔘") + ["‹"]

# Drawn as a list so the weights hold (st.text would sample each character once),
# with a few runs that matter: double spaces, paragraph breaks, paired marks.
TOKENS = [*ALPHABET, "  ", "   ", "\n\n", " \n ", " _", "_ ", "**", ".."]
texts = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=60).map("".join)
PROPERTY = settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])


# --- the reference -------------------------------------------------------------------


def reference_normal(value: str) -> str:
    """Marks dropped, classes as their ASCII member, whitespace runs as one space, trimmed."""
    out: list[str] = []
    space = False
    for char in value:
        if char in MARKS:
            continue
        if char.isspace():
            space = True
            continue
        if space and out:
            out.append(" ")
        space = False
        if char in SINGLE:
            out.append("'")
        elif char in DOUBLE:
            out.append('"')
        elif char in DASHES:
            out.append("-")
        else:
            out.append(char)
    return "".join(out)


def reference_fragments(quote: str) -> list[str]:
    """The quote cut at each ``...`` or ``…`` (left to right, after marks are dropped)."""
    quote = "".join(char for char in quote if char not in MARKS)
    fragments: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(quote):
        if quote[index] == "…" or quote.startswith("...", index):
            fragments.append("".join(current))
            current = []
            index += 1 if quote[index] == "…" else 3
        else:
            current.append(quote[index])
            index += 1
    fragments.append("".join(current))
    return [reference_normal(fragment) for fragment in fragments]


def reference_locates(text: str, quote: str) -> bool:
    fragments = reference_fragments(quote)
    if len(fragments) > 3 or not any(fragments):
        return False
    # An elision at the very start or end only marks text left out there.
    if not fragments[0]:
        fragments = fragments[1:]
    if fragments and not fragments[-1]:
        fragments = fragments[:-1]
    if not fragments or not all(fragments):
        return False
    haystack = reference_normal(text)
    position = 0
    for fragment in fragments:
        found = haystack.find(fragment, position)
        if found < 0:
            return False
        position = found + len(fragment)
    return True


def evidence(text: str, start_byte: int) -> EvidenceItem:
    return EvidenceItem(
        chunk_id="c",
        document_id="d",
        source_uri="text:d",
        text=text,
        start_byte=start_byte,
        end_byte=start_byte + len(text.encode()),
        score=0.5,
    )


def assert_stored(item: EvidenceItem, citation: Citation) -> None:
    """The citation's quote is exactly the item's bytes at its span, inside the item."""
    raw = item.text.encode()
    begin = citation.start_byte - item.start_byte
    end = citation.end_byte - item.start_byte
    assert 0 <= begin < end <= len(raw)
    assert raw[begin:end].decode() == citation.quote


# --- the forgiven differences, as a model makes them -----------------------------------


def loosen(fragment: str, rng: random.Random) -> str:
    """Whitespace runs changed, quotes and dashes swapped in class, marks dropped or added."""
    out: list[str] = []
    index = 0
    while index < len(fragment):
        char = fragment[index]
        if char.isspace():
            end = index
            while end < len(fragment) and fragment[end].isspace():
                end += 1
            out.append(rng.choice(SPACES) if rng.random() < 0.6 else fragment[index:end])
            index = end
            continue
        if char in MARKS and rng.random() < 0.6:
            pass
        elif char in SINGLE:
            out.append(rng.choice(SINGLE))
        elif char in DOUBLE:
            out.append(rng.choice(DOUBLE))
        elif char in DASHES:
            out.append(rng.choice(DASHES))
        else:
            out.append(char)
        if rng.random() < 0.05:
            out.append(rng.choice(MARKS))
        index += 1
    return "".join(out)


def has_content(value: str) -> bool:
    return bool(reference_normal(value))


def no_elision(value: str) -> bool:
    dropped = "".join(char for char in value if char not in MARKS)
    return "..." not in dropped and "…" not in dropped


@st.composite
def forgiven_quotes(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    """A text, a quote made from one of its substrings, and the substring's kept parts."""
    text = draw(texts)
    begin = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(begin + 1, len(text)))
    part = text[begin:end]
    assume(has_content(part) and no_elision(part))
    rng = draw(st.randoms(use_true_random=False))
    elisions = draw(st.integers(0, CitationRules.MAX_ELISIONS))
    # One character with content anchors each kept piece; an elided stretch lies
    # somewhere between two anchors.
    content = [index for index, char in enumerate(part) if has_content(char)]
    assume(len(content) > elisions)
    count = elisions + 1
    anchors = sorted(draw(st.lists(st.sampled_from(content), min_size=count, max_size=count, unique=True)))
    bounds = [0]
    for left, right in pairwise(anchors):
        cut = draw(st.integers(left + 1, right))
        bounds += [cut, draw(st.integers(cut, right))]
    bounds.append(len(part))
    kept = [part[bounds[k] : bounds[k + 1]] for k in range(0, len(bounds), 2)]
    joins = [rng.choice([" ... ", " … ", "\n…\n", " ...", "… "]) for _ in kept[1:]]
    quote = loosen(kept[0], rng)
    for join, piece in zip(joins, kept[1:], strict=True):
        quote += join + loosen(piece, rng)
    return text, quote, kept


@given(case=forgiven_quotes(), start_byte=st.integers(0, 10_000))
@PROPERTY
def test_a_substring_with_forgiven_differences_is_located(case: tuple[str, str, list[str]], start_byte: int) -> None:
    text, quote, kept = case
    event(f"{len(kept) - 1} elisions")
    item = evidence(text, start_byte)
    citation = locate(item, quote)
    assert citation is not None
    assert_stored(item, citation)
    stored = reference_normal(citation.quote)
    if len(kept) == 1:
        assert stored == reference_normal(kept[0])
    else:
        assert stored.startswith(reference_normal(kept[0]))
        assert stored.endswith(reference_normal(kept[-1]))


# --- arbitrary quotes ------------------------------------------------------------------


@st.composite
def any_quotes(draw: st.DrawFn) -> tuple[str, str]:
    """A text and a quote: unrelated, or a slice of the text, changed or not, with an insertion."""
    text = draw(texts)
    if draw(st.booleans()):
        pieces = draw(st.lists(st.sampled_from([*ALPHABET, "…", "..."]), max_size=30))
        return text, "".join(pieces)
    begin = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(begin + 1, len(text)))
    part = text[begin:end]
    loose = loosen(part, draw(st.randoms(use_true_random=False)))
    quote = draw(st.sampled_from([part, loose, loose, part.upper(), part[::-1]]))
    at = draw(st.integers(0, len(quote)))
    insert = draw(st.sampled_from(["", "", "", "", "...", "…", " ", "_", "x", "’", "—"]))
    return text, quote[:at] + insert + quote[at:]


@given(case=any_quotes(), start_byte=st.integers(0, 10_000))
@PROPERTY
def test_a_located_quote_is_always_the_stored_bytes(case: tuple[str, str], start_byte: int) -> None:
    text, quote = case
    item = evidence(text, start_byte)
    citation = locate(item, quote)
    assert (citation is not None) == reference_locates(text, quote)
    event("located" if citation is not None else "not located")
    if citation is None:
        return
    assert_stored(item, citation)
    fragments = reference_fragments(quote)
    stored = reference_normal(citation.quote)
    assert stored.startswith(fragments[0])
    assert stored.endswith(fragments[-1])
    if len(fragments) == 1:
        assert stored == fragments[0]


# --- one changed letter ----------------------------------------------------------------


@st.composite
def changed_letters(draw: st.DrawFn) -> tuple[str, str]:
    text = draw(texts)
    begin = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(begin + 1, len(text)))
    part = text[begin:end]
    letters = [index for index, char in enumerate(part) if char.isalpha()]
    assume(letters and no_elision(part))
    at = draw(st.sampled_from(letters))
    replacement = draw(st.sampled_from(LETTERS).filter(lambda char: char != part[at]))
    changed = part[:at] + replacement + part[at + 1 :]
    # The changed quote must not occur anywhere in the text under the rules.
    assume(reference_normal(changed) not in reference_normal(text))
    return text, loosen(changed, draw(st.randoms(use_true_random=False)))


@given(case=changed_letters())
@PROPERTY
def test_a_quote_with_one_letter_changed_is_never_located(case: tuple[str, str]) -> None:
    text, quote = case
    assert locate(evidence(text, 0), quote) is None
