"""Quote location: each forgiven difference, each refused one, spans, pages and provenance."""

from __future__ import annotations

import sys

import pytest

from graphrag_orm.citations import Citation, CitationRules, explain_not_found, locate
from graphrag_orm.evidence import EvidenceItem, Grounding, PageStart


def item(
    text: str,
    *,
    start_byte: int = 0,
    chunk_id: str = "chunk-1",
    pages: tuple[PageStart, ...] | None = None,
    grounding: Grounding = Grounding.SOURCE,
    text_origin: str | None = None,
) -> EvidenceItem:
    return EvidenceItem(
        chunk_id=chunk_id,
        document_id="doc-1",
        source_uri="text:doc-1",
        text=text,
        start_byte=start_byte,
        end_byte=start_byte + len(text.encode()),
        score=1.0,
        pages=pages,
        grounding=grounding,
        text_origin=text_origin,
    )


def found(evidence: EvidenceItem, quote: str) -> Citation:
    citation = locate(evidence, quote)
    assert citation is not None, explain_not_found(evidence, quote)
    stored = evidence.text.encode()[citation.start_byte - evidence.start_byte : citation.end_byte - evidence.start_byte]
    assert citation.quote == stored.decode()
    return citation


# --- exact quotes and spans --------------------------------------------------------


def test_exact_quote_gives_its_document_byte_span() -> None:
    evidence = item("The Caterpillar and Alice looked at each other.", start_byte=1000)
    citation = found(evidence, "Alice looked")
    assert (citation.start_byte, citation.end_byte) == (1020, 1032)
    assert citation.quote == "Alice looked"
    assert (citation.document_id, citation.chunk_id) == ("doc-1", "chunk-1")


def test_the_leftmost_occurrence_is_taken() -> None:
    citation = found(item("one two one two"), "one two")
    assert (citation.start_byte, citation.end_byte) == (0, 7)


def test_the_same_text_at_another_offset_gives_that_offset() -> None:
    # The normalised text is cached per text; the offsets come from the item.
    text = "shared words in two items"
    assert found(item(text, start_byte=0), "two items").start_byte == 16
    assert found(item(text, start_byte=500), "two items").start_byte == 516


def test_multibyte_text_gives_code_point_boundaries() -> None:
    text = "Grüße, naïve café 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 end"
    evidence = item(text, start_byte=7)
    citation = found(evidence, "café 😀 and 𝔘𝔫𝔦")
    prefix = len("Grüße, naïve ".encode())
    assert citation.start_byte == 7 + prefix
    assert citation.end_byte == 7 + prefix + len("café 😀 and 𝔘𝔫𝔦".encode())
    assert citation.quote == "café 😀 and 𝔘𝔫𝔦"


def test_an_emoji_alone_is_four_bytes() -> None:
    citation = found(item("a 😀 b", start_byte=3), "😀")
    assert (citation.start_byte, citation.end_byte) == (5, 9)


# --- whitespace ---------------------------------------------------------------------


def test_whitespace_runs_match_any_other_run() -> None:
    evidence = item("down the\n\n   rabbit\thole")
    citation = found(evidence, "the rabbit  hole")
    assert citation.quote == "the\n\n   rabbit\thole"


def test_runs_of_spaces_alone_match_one_space() -> None:
    evidence = item("It ended.  Then   the next began.")
    assert found(evidence, "ended. Then the next").quote == "ended.  Then   the next"
    assert found(item("It ended. Then"), "ended.    Then").quote == "ended. Then"


def test_the_quote_leading_and_trailing_whitespace_is_ignored() -> None:
    citation = found(item("down the rabbit hole"), "  \n the rabbit \t")
    assert citation.quote == "the rabbit"


@pytest.mark.parametrize("space", [chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace()], ids=ord)
def test_every_unicode_whitespace_character_is_forgiven(space: str) -> None:
    assert found(item(f"alpha{space}beta"), "alpha beta").quote == f"alpha{space}beta"
    # The same with a double space elsewhere in the text, and in the quote.
    assert found(item(f"x  y alpha{space}beta"), "alpha beta").quote == f"alpha{space}beta"
    assert found(item("alpha beta"), f"alpha{space}beta").quote == "alpha beta"


def test_whitespace_is_never_optional() -> None:
    assert locate(item("a rabbit hole"), "arabbit hole") is None
    assert locate(item("arabbit hole"), "a rabbit hole") is None


def test_a_zero_width_space_is_not_whitespace() -> None:
    assert locate(item("rabbit\u200bhole"), "rabbit hole") is None


# --- quotation marks, apostrophes, dashes -------------------------------------------


@pytest.mark.parametrize("mark", CitationRules.SINGLE_QUOTES)
def test_single_quotes_and_apostrophes_form_one_class(mark: str) -> None:
    evidence = item("I can’t explain ‘myself’, I’m afraid")
    assert found(evidence, f"can{mark}t explain {mark}myself{mark}").quote == "can’t explain ‘myself’"


@pytest.mark.parametrize("mark", CitationRules.DOUBLE_QUOTES)
def test_double_quotes_form_one_class(mark: str) -> None:
    evidence = item("She said “Off with her head!” loudly")
    assert found(evidence, f"{mark}Off with her head!{mark}").quote == "“Off with her head!”"


def test_guillemets_are_double_quotes() -> None:
    assert found(item("il dit « bonjour »"), '" bonjour "').quote == "« bonjour »"


def test_single_and_double_quotes_never_match_each_other() -> None:
    assert locate(item("I can’t explain"), 'can"t') is None
    assert locate(item("said “no” twice"), "'no'") is None


def test_single_guillemets_are_not_forgiven() -> None:
    assert locate(item("il dit ‹ oui ›"), "' oui '") is None


@pytest.mark.parametrize("dash", CitationRules.DASHES)
def test_hyphens_and_dashes_form_one_class(dash: str) -> None:
    evidence = item("the well—very deep—or she fell slowly; a well-known fact")
    assert found(evidence, f"well{dash}very deep{dash}or").quote == "well—very deep—or"
    assert found(evidence, f"a well{dash}known").quote == "a well-known"


# --- emphasis marks -----------------------------------------------------------------


def test_emphasis_marks_in_the_text_are_skipped_and_kept_in_the_stored_quote() -> None:
    citation = found(item("“_I_ can’t help it,” said Alice"), '"I can\'t help it,"')
    assert citation.quote == "“_I_ can’t help it,”"


def test_marks_around_the_whole_match_are_included() -> None:
    evidence = item("Gutenberg writes _I_ am here")
    citation = found(evidence, "I")
    assert citation.quote == "_I_"
    assert (citation.start_byte, citation.end_byte) == (17, 20)


def test_the_closing_mark_after_the_match_is_included() -> None:
    assert found(item("He said _no_."), "said no").quote == "said _no_"


def test_bold_marks_before_the_match_are_included() -> None:
    assert found(item("so **bold** text"), "bold text").quote == "**bold** text"


def test_a_mark_that_closes_outside_the_quote_is_left_out() -> None:
    assert found(item("_I am here_ now"), "I am").quote == "I am"


def test_a_run_of_marks_after_a_word_is_taken_when_balanced() -> None:
    assert found(item("Name: ______ Date"), "Name:").quote == "Name:"
    assert found(item("word____ end"), "word").quote == "word____"


def test_an_unbalanced_mark_inside_the_match_stays_as_stored() -> None:
    assert found(item("I _am here_"), "I am").quote == "I _am"


def test_marks_in_the_quote_are_skipped_too() -> None:
    assert found(item("I am here"), "*I* am").quote == "I am"
    assert found(item("snake_case name"), "snakecase").quote == "snake_case"


def test_marks_between_spaces_leave_one_whitespace_run() -> None:
    assert found(item("a _ b"), "a b").quote == "a _ b"


# --- elisions -----------------------------------------------------------------------


TEXT = "Alice was beginning to get very tired of sitting by her sister on the bank."


def test_one_elision_spans_from_the_first_fragment_to_the_last() -> None:
    citation = found(item(TEXT), "Alice was beginning ... sitting by her sister")
    assert citation.quote == "Alice was beginning to get very tired of sitting by her sister"


def test_two_elisions_in_either_form() -> None:
    citation = found(item(TEXT), "Alice…very tired ... the bank")
    assert citation.quote == TEXT[:-1]


def test_three_elisions_are_refused() -> None:
    evidence = item(TEXT)
    quote = "Alice ... beginning ... tired ... bank"
    assert locate(evidence, quote) is None
    assert explain_not_found(evidence, quote) == "too many elisions (3, at most 2)"


def test_fragments_out_of_order_are_refused() -> None:
    evidence = item(TEXT)
    quote = "her sister ... Alice was"
    assert locate(evidence, quote) is None
    assert explain_not_found(evidence, quote) == "fragment 2 not found after fragment 1"


def test_fragments_may_not_overlap() -> None:
    assert locate(item("abcdef"), "abcd ... cdef") is None
    assert found(item("abcdef"), "abc...def").quote == "abcdef"


def test_an_elided_quote_takes_the_earliest_placement() -> None:
    citation = found(item("x one y one z two"), "one ... two")
    assert citation.quote == "one y one z two"


def test_a_later_fragment_is_searched_after_the_earlier_one() -> None:
    # "end" occurs first before "start"; only the later one counts.
    assert found(item("end start middle end"), "start ... end").quote == "start middle end"


def test_an_empty_fragment_between_elisions_is_refused() -> None:
    evidence = item(TEXT)
    assert locate(evidence, "Alice ... ... bank") is None
    assert explain_not_found(evidence, "Alice ... ... bank") == "fragment 2 is empty"


def test_a_leading_or_trailing_elision_marks_text_left_out_and_counts() -> None:
    evidence = item(TEXT)
    assert found(evidence, "Alice was ...").quote == "Alice was"
    assert found(evidence, "… the bank").quote == "the bank"
    # Edge elisions count toward the two: three in all is refused.
    assert locate(evidence, "... Alice ... bank ...") is None
    assert locate(evidence, "... Alice ... was ... bank") is None


def test_an_ellipsis_in_the_text_is_matched_by_an_elision() -> None:
    assert found(item("Wait... what?"), "Wait... what?").quote == "Wait... what?"


# --- what is never forgiven ---------------------------------------------------------


def test_case_is_not_forgiven() -> None:
    assert locate(item(TEXT), "alice was beginning") is None


def test_one_changed_letter_is_not_forgiven() -> None:
    evidence = item(TEXT)
    assert locate(evidence, "Alice was begimning") is None
    assert explain_not_found(evidence, "Alice was begimning") == "quote not found"


def test_unicode_normalisation_is_not_forgiven() -> None:
    assert locate(item("un café noir"), "cafe\u0301") is None
    assert locate(item("un cafe\u0301 noir"), "café") is None


def test_a_quote_spanning_two_chunks_is_not_found_in_either() -> None:
    first = item("the end of the first chunk.", chunk_id="chunk-1")
    second = item("The second chunk starts here.", start_byte=27, chunk_id="chunk-2")
    quote = "first chunk. The second chunk"
    assert locate(first, quote) is None
    assert locate(second, quote) is None


@pytest.mark.parametrize("quote", ["", "   ", "\n\t", "_*_", "...", "… ...", " _ … * "])
def test_an_empty_quote_is_refused(quote: str) -> None:
    evidence = item(TEXT)
    assert locate(evidence, quote) is None
    assert explain_not_found(evidence, quote) == "empty quote"


def test_other_punctuation_is_not_forgiven() -> None:
    assert locate(item("Alice, said the Queen"), "Alice; said") is None
    assert locate(item("Alice said"), "Alice, said") is None


def test_explain_not_found_names_the_missing_fragment() -> None:
    evidence = item(TEXT)
    assert explain_not_found(evidence, "Bob ... bank") == "fragment 1 not found"
    assert explain_not_found(evidence, "Alice ... tired ... river") == "fragment 3 not found after fragment 2"
    assert explain_not_found(evidence, "Alice ... bank") == "located"


# --- pages and provenance -----------------------------------------------------------


PAGED = "first page ends here. second page starts here."


def paged(start_byte: int = 100) -> EvidenceItem:
    # Page 2 starts at "second", document offset start_byte + 22.
    return item(
        PAGED,
        start_byte=start_byte,
        pages=(PageStart(page=1, start_byte=0), PageStart(page=2, start_byte=start_byte + 22)),
    )


def test_a_citation_crossing_a_page_start_names_both_pages() -> None:
    citation = found(paged(), "ends here. second page")
    assert (citation.page, citation.end_page) == (1, 2)


def test_a_citation_within_one_page_names_it_twice() -> None:
    assert (found(paged(), "second page").page, found(paged(), "second page").end_page) == (2, 2)
    assert (found(paged(), "first page").page, found(paged(), "first page").end_page) == (1, 1)


def test_the_end_page_is_the_page_of_the_last_byte() -> None:
    # The span ends exactly where page 2 starts: its last byte is on page 1.
    citation = found(paged(), "ends here. ")
    assert citation.end_byte == 100 + 21
    assert (citation.page, citation.end_page) == (1, 1)


def test_a_document_without_pages_has_none() -> None:
    citation = found(item(TEXT), "Alice")
    assert (citation.page, citation.end_page) == (None, None)


def test_grounding_and_text_origin_are_carried_over() -> None:
    evidence = item(TEXT, grounding=Grounding.CHUNK, text_origin="ocr: Tesseract 5.3")
    citation = found(evidence, "sitting by")
    assert citation.grounding is Grounding.CHUNK
    assert citation.text_origin == "ocr: Tesseract 5.3"
    source = found(item(TEXT), "sitting by")
    assert (source.grounding, source.text_origin) == (Grounding.SOURCE, None)


def test_citation_json_uses_camel_case() -> None:
    json = found(paged().model_copy(update={"text_origin": "ocr: Tesseract 5.3"}), "second page").to_json()
    for key in ('"documentId"', '"chunkId"', '"startByte"', '"endByte"', '"endPage"', '"textOrigin"'):
        assert key in json
    assert '"grounding":"Source"' in json


def test_a_citation_is_frozen() -> None:
    citation = found(item(TEXT), "Alice")
    with pytest.raises(ValueError):
        citation.quote = "changed"  # type: ignore[misc]
