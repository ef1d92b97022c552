"""The text locator: chunks another library made, placed in the stored bytes (no database)."""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphrag_orm.chunking import ChunkerOptions
from graphrag_orm.errors import ChunkNotPlaced, ConfigurationError, DocumentFailure
from graphrag_orm.ingestion import ChunkedDocument, chunkers
from graphrag_orm.ingestion.chunked import innermost_section, plan_placed, sections_of
from graphrag_orm.loaders import LoadedDocument
from graphrag_orm.placement import ChunkText, Placement, PlacementCounts, PlacementMethod, place
from graphrag_orm.sources import Sources

DOC = """# Brake recall

The BC-310 brake caliper is recalled because its piston can seize.

It was supplied by Acme Components.

## Affected bikes

The City 3 and the Trail 5 use the BC-310.
Émile's shop in Zürich has parts 🚲.
"""
UTF8 = DOC.encode()


def texts(placement: Placement, utf8: bytes = UTF8) -> list[str]:
    return [utf8[start:end].decode() for start, end in placement.spans]


def methods(placement: Placement) -> list[str]:
    return [chunk.method.value for chunk in placement.chunks]


def test_chunks_that_are_substrings_place_exactly_at_their_stored_bytes() -> None:
    chunks = ["# Brake recall", "The BC-310 brake caliper is recalled", "Émile's shop in Zürich has parts 🚲."]
    placement = place(UTF8, chunks)
    assert methods(placement) == ["exact"] * 3
    assert texts(placement) == chunks
    assert placement.counts == PlacementCounts(exact=3)


def test_overlapping_chunks_place_at_or_after_the_previous_chunks_start() -> None:
    first = "The BC-310 brake caliper is recalled because its piston can seize."
    second = "its piston can seize.\n\nIt was supplied"
    placement = place(UTF8, [first, second])
    (a_start, a_end), (b_start, b_end) = placement.spans
    assert a_start < b_start < a_end < b_end
    assert texts(placement) == [first, second]


def test_repeated_text_places_each_chunk_at_the_next_occurrence() -> None:
    utf8 = b"Yes.\n\nYes.\n\nYes."
    placement = place(utf8, ["Yes.", "Yes.", "Yes."])
    assert placement.spans == [(0, 4), (6, 10), (12, 16)]


def test_the_heading_path_a_header_splitter_prepended_is_removed() -> None:
    chunk = ChunkText(
        "# Brake recall\n## Affected bikes\nThe City 3 and the Trail 5", context="# Brake recall\n## Affected bikes"
    )
    placement = place(UTF8, [chunk])
    assert methods(placement) == ["prefix-removed"]
    assert texts(placement) == ["The City 3 and the Trail 5"]


def test_heading_lines_without_a_context_are_removed_only_when_they_are_not_in_place() -> None:
    prepended = "# Brake recall\n## Affected bikes\n\nThe City 3 and the Trail 5"
    placement = place(UTF8, [prepended])
    # "# Brake recall" is not at that place in the document; "## Affected bikes" is, and stays.
    assert methods(placement) == ["prefix-removed"]
    assert texts(placement) == ["## Affected bikes\n\nThe City 3 and the Trail 5"]
    path = "# Brake recall > Affected bikes\nThe City 3 and the Trail 5"
    assert texts(place(UTF8, [path])) == ["The City 3 and the Trail 5"]
    in_place = "## Affected bikes\n\nThe City 3 and the Trail 5"
    placement = place(UTF8, [in_place])
    assert methods(placement) == ["exact"] and texts(placement) == [in_place]


def test_a_blank_line_that_became_one_line_break_places_with_whitespace_normalised() -> None:
    chunk = "can seize.\nIt was supplied by Acme Components."
    placement = place(UTF8, [chunk])
    assert methods(placement) == ["normalised"]
    assert texts(placement) == ["can seize.\n\nIt was supplied by Acme Components."]


def test_stripped_trailing_spaces_and_a_changed_line_break_place_normalised() -> None:
    utf8 = "Line one   \r\nline two\u00a0and\tthree.\n".encode()
    placement = place(utf8, ["  Line one\nline two and three.  \n"])
    assert methods(placement) == ["normalised"]
    assert texts(placement, utf8) == ["Line one   \r\nline two\u00a0and\tthree."]


def test_a_chunk_goes_to_its_leftmost_place_not_to_a_far_byte_exact_copy() -> None:
    filler = "Filler line.\n" * 6_000  # past the 64 KiB where an exact match is taken at once
    utf8 = f"Intro.\n\nPads wear out.\n\nThe brakes.\n\n{filler}Pads wear out.\nThe brakes.\n".encode()
    placement = place(utf8, ["Intro.", "Pads wear out.\nThe brakes.", "Filler line."])
    assert methods(placement) == ["exact", "normalised", "exact"]
    assert texts(placement, utf8)[1] == "Pads wear out.\n\nThe brakes."


def test_near_the_previous_chunk_a_byte_exact_occurrence_wins_over_whitespace_variants() -> None:
    utf8 = b"A b.\n\nA  b.\n\nA\nb."
    placement = place(utf8, ["A\nb."])
    assert methods(placement) == ["exact"] and placement.spans == [(13, 17)]


def test_whitespace_is_never_optional_and_nothing_else_is_forgiven() -> None:
    for chunk in ("TheBC-310 brake", "the bc-310 brake", "The BC‐310 brake"):
        with pytest.raises(ChunkNotPlaced):
            place(UTF8, [chunk])


def test_normalised_placement_can_be_left_out_for_callers_that_keep_the_producers_text() -> None:
    with pytest.raises(ChunkNotPlaced):
        place(UTF8, ["can seize.\nIt was supplied"], normalised=False)
    assert methods(place(UTF8, ["can seize.\n\nIt was supplied"], normalised=False)) == ["exact"]


def test_spans_around_multi_byte_characters_never_split_a_code_point() -> None:
    utf8 = "é 🚲\n\nZürich  🚲 ü".encode()
    placement = place(utf8, ["é 🚲", "🚲\nZürich 🚲", "ü"])
    assert methods(placement) == ["exact", "normalised", "exact"]
    assert texts(placement, utf8) == ["é 🚲", "🚲\n\nZürich  🚲", "ü"]
    for start, end in placement.spans:
        assert utf8[start:end].decode() and (end == len(utf8) or utf8[end] & 0xC0 != 0x80)


def test_a_chunk_that_is_not_in_the_document_is_not_placed_and_the_error_names_only_its_index() -> None:
    with pytest.raises(ChunkNotPlaced) as refused:
        place(UTF8, ["# Brake recall", "A secret sentence the document does not hold."])
    assert refused.value.code == "position-not-recovered"
    assert refused.value.index == 1
    assert "chunk 1" in refused.value.message and "secret" not in str(refused.value)


def test_a_chunk_longer_than_the_document_is_not_placed() -> None:
    with pytest.raises(ChunkNotPlaced) as refused:
        place(b"short", ["short and then some"])
    assert "longer than the document" in refused.value.message


def test_an_out_of_order_chunk_is_not_placed() -> None:
    with pytest.raises(ChunkNotPlaced) as refused:
        place(UTF8, ["It was supplied", "The BC-310 brake caliper"])
    assert refused.value.index == 1 and "out of order" in refused.value.message


def test_the_same_chunk_twice_is_not_placed_twice_on_one_span() -> None:
    with pytest.raises(ChunkNotPlaced):
        place(UTF8, ["It was supplied", "It was supplied"])


def test_empty_and_blank_chunks_are_skipped_without_a_span() -> None:
    placement = place(UTF8, ["", "# Brake recall", " \n\t", "It was supplied"])
    assert methods(placement) == ["skipped", "exact", "skipped", "exact"]
    assert placement.chunks[0].start_byte is None and placement.counts.skipped == 2
    assert len(placement.spans) == 2


def test_given_spans_are_used_only_when_they_hold_exactly_the_chunks_bytes() -> None:
    start = UTF8.index(b"It was")
    true = ChunkText("It was supplied", start_byte=start, end_byte=start + 15)
    assert methods(place(UTF8, [true])) == ["given"]
    lying = [
        ChunkText("It was supplied", start_byte=0, end_byte=15),  # other bytes
        ChunkText("It was supplied", start_byte=start, end_byte=start + 14),  # one byte short
        ChunkText("It was supplied", start_byte=start, end_byte=len(UTF8) + 5),  # past the end
        ChunkText("It was supplied", start_byte=start),  # half a span
    ]
    for chunk in lying:
        placement = place(UTF8, [chunk])
        assert methods(placement) == ["exact"] and placement.spans == [(start, start + 15)]


def test_a_given_span_inside_a_code_point_is_ignored() -> None:
    utf8 = "aé".encode()
    placement = place(utf8, [ChunkText("é", start_byte=2, end_byte=3)])
    assert methods(placement) == ["exact"] and placement.spans == [(1, 3)]


def test_a_lone_surrogate_is_not_placed() -> None:
    with pytest.raises(ChunkNotPlaced) as refused:
        place(UTF8, ["\ud800 brake"])
    assert "not valid Unicode" in refused.value.message


def test_more_chunks_than_the_bound_are_refused_as_too_large() -> None:
    with pytest.raises(DocumentFailure) as refused:
        place(UTF8, ["a", "b", "c"], max_chunks=2)
    assert refused.value.code == "document-too-large"


def test_chunk_text_takes_its_text_positionally_and_refuses_bad_values_with_a_code() -> None:
    assert ChunkText("x", "# H", 0, 1) == ChunkText(text="x", context="# H", start_byte=0, end_byte=1)
    with pytest.raises(ConfigurationError) as negative:
        ChunkText("x", start_byte=-1, end_byte=1)
    assert negative.value.code == "invalid-source"
    with pytest.raises(ConfigurationError):
        ChunkText(3)  # type: ignore[arg-type]


def test_a_chunked_document_takes_texts_and_chunk_texts_and_refuses_anything_else() -> None:
    source = Sources.text("guide", DOC, media_type="text/markdown")
    document = ChunkedDocument.create(source, ["a", ChunkText("b", context="# H")])
    assert document.chunks == (ChunkText("a"), ChunkText("b", context="# H"))
    assert ChunkedDocument.model_validate_json(document.to_json()) == document
    with pytest.raises(ConfigurationError) as refused:
        ChunkedDocument.create(source, ["a", {"text": "b"}])  # type: ignore[list-item]
    assert refused.value.code == "invalid-source" and "chunk 1 is a dict" in refused.value.message
    with pytest.raises(ConfigurationError):
        ChunkedDocument.create(source, "one text")
    with pytest.raises(ConfigurationError):
        ChunkedDocument.create("guide", ["a"])  # type: ignore[arg-type]


def test_placed_chunks_keep_the_markdown_sections_and_link_to_the_innermost_that_holds_them() -> None:
    loaded = LoadedDocument(source_uri="text:guide", media_type="text/markdown", utf8=UTF8)
    chunks = [
        ChunkText("# Brake recall\nThe BC-310 brake caliper", context="# Brake recall"),
        "It was supplied by Acme Components.\n\n## Affected bikes",  # crosses a heading
        "The City 3 and the Trail 5",
    ]
    plan, counts = plan_placed(loaded, chunks, "fingerprint", max_chunks=10)
    assert [s.title for s in plan.sections] == ["Brake recall", "Affected bikes"]
    assert [c.section_order for c in plan.chunks] == [0, 0, 1]
    assert plan.fingerprint == "fingerprint" and counts == PlacementCounts(exact=2, prefix_removed=1)
    assert plan.chunk_text(UTF8, plan.chunks[0]) == "The BC-310 brake caliper"
    plain = LoadedDocument(source_uri="text:guide", media_type="text/plain", utf8=UTF8)
    assert sections_of(plain) == ()
    sections = plan.sections
    starts = [s.start_byte for s in sections]
    assert innermost_section(sections, starts, 0, len(UTF8)) == 0
    assert innermost_section(sections, starts, sections[1].start_byte, len(UTF8)) == 1
    assert innermost_section((), [], 0, 1) is None


def test_a_splitters_fingerprint_follows_its_type_and_settings() -> None:
    class Splitter:
        def __init__(self, size: int, separators: list[str], measure: object = len) -> None:
            self._chunk_size = size
            self._separators = separators
            self._measure = measure

    base = chunkers.fingerprint_of(Splitter(500, ["\n\n", "\n"]))
    assert base == chunkers.fingerprint_of(Splitter(500, ["\n\n", "\n"]))
    assert len(base) == 64 and int(base, 16) >= 0
    changed = {
        chunkers.fingerprint_of(Splitter(400, ["\n\n", "\n"])),
        chunkers.fingerprint_of(Splitter(500, ["\n"])),
        chunkers.fingerprint_of(Splitter(500, ["\n\n", "\n"], measure=str.split)),
        chunkers.fingerprint_of(Splitter(500, ["\n\n", "\n"], measure=functools.partial(len))),
        chunkers.fingerprint_of(Splitter(500, ["\n\n", "\n"]), "adapter/2"),
        chunkers.fingerprint_of(ChunkerOptions()),
    }
    assert base not in changed and len(changed) == 6


def test_a_langchain_splitters_chunks_all_place_and_its_fingerprint_reads_its_settings() -> None:
    splitters = pytest.importorskip("langchain_text_splitters")
    text = (DOC + "\n") * 6
    recursive = splitters.RecursiveCharacterTextSplitter(chunk_size=120, chunk_overlap=40)
    placement = place(text.encode(), recursive.split_text(text))
    assert placement.counts.placed == len(placement.chunks) and placement.counts.exact == len(placement.chunks)
    headers = splitters.MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")])
    pieces = [document.page_content for document in headers.split_text(text)]
    placement = place(text.encode(), pieces)
    assert placement.counts.placed == len(pieces) and placement.counts.normalised > 0
    smaller = splitters.RecursiveCharacterTextSplitter(chunk_size=100, chunk_overlap=40)
    assert chunkers.fingerprint_of(recursive) != chunkers.fingerprint_of(smaller)


# --- properties ----------------------------------------------------------------------

ALPHABET = st.sampled_from(list("ab é🚲\n\n\t#"))


@st.composite
def split(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A text and the chunks a splitter would cut from it: in order, overlapping, each a substring."""
    text = draw(st.text(ALPHABET, min_size=1, max_size=80))
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), min_size=2, max_size=12)))
    overlap = draw(st.integers(0, 3))
    return text, [text[max(0, start - overlap) : end] for start, end in itertools.pairwise(cuts)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split())
def test_chunks_a_splitter_cut_in_order_always_place_on_their_own_bytes(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    utf8 = text.encode()
    placement = place(utf8, chunks)
    previous = (-1, -1)
    for chunk, placed in zip(chunks, placement.chunks, strict=True):
        if placed.method is PlacementMethod.SKIPPED:
            assert not chunk.strip()
            continue
        assert placed.method is PlacementMethod.EXACT and placed.start_byte is not None
        assert placed.end_byte is not None
        assert utf8[placed.start_byte : placed.end_byte].decode() == chunk
        assert (placed.start_byte, placed.end_byte) > previous
        previous = (placed.start_byte, placed.end_byte)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split(), st.data())
def test_placed_spans_hold_stored_bytes_increase_and_never_split_a_code_point(
    case: tuple[str, list[str]], data: st.DataObject
) -> None:
    text, cut = case
    # A splitter's whitespace: a blank line closed up, ends stripped.
    squeeze = data.draw(st.lists(st.booleans(), min_size=len(cut), max_size=len(cut)))
    chunks = [c.replace("\n\n", "\n").strip() if flag else c for c, flag in zip(cut, squeeze, strict=True)]
    utf8 = text.encode()
    try:
        placement = place(utf8, chunks)
    except ChunkNotPlaced:
        # Changed whitespace can make a chunk the same as another, or match exactly further on
        # and push the next one out of order: then it is refused, never misplaced.
        assert chunks != cut
        return
    previous = (-1, -1)
    for chunk, placed in zip(chunks, placement.chunks, strict=True):
        if placed.method is PlacementMethod.SKIPPED:
            continue
        assert placed.start_byte is not None and placed.end_byte is not None
        span = (placed.start_byte, placed.end_byte)
        stored = utf8[span[0] : span[1]].decode()  # raises if a code point were split
        assert span > previous
        if placed.method is PlacementMethod.EXACT:
            assert stored == chunk
        elif placed.method is PlacementMethod.PREFIX_REMOVED:  # heading lines left out
            assert chunk.endswith(stored)
        else:  # whitespace normalised, heading lines perhaps left out
            assert " ".join(chunk.split()).endswith(" ".join(stored.split()))
        previous = span
