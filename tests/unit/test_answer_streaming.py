"""The incremental decoder of a reply's ``answer`` string, fed piece by piece down to one byte."""

from __future__ import annotations

import codecs
import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_orm.answers.prompt import parse_reply
from graphrag_orm.answers.streaming import AnswerTextDecoder


def by_character(reply: str) -> list[str]:
    """Feed one character at a time; return what each character completed."""
    decoder = AnswerTextDecoder()
    return [decoder.feed(char) for char in reply]


def by_byte(reply: str) -> tuple[list[str], AnswerTextDecoder]:
    """Feed the reply's UTF-8 one byte at a time through an incremental UTF-8 decoder, as a client would."""
    utf8 = codecs.getincrementaldecoder("utf-8")()
    decoder = AnswerTextDecoder()
    pieces = [decoder.feed(utf8.decode(bytes([byte]))) for byte in reply.encode("utf-8")]
    return pieces, decoder


def decoded(reply: str, cuts: list[int] | None = None) -> str:
    decoder = AnswerTextDecoder()
    if cuts is None:
        return decoder.feed(reply)
    bounds = [0, *sorted(cut for cut in cuts if 0 < cut < len(reply)), len(reply)]
    return "".join(decoder.feed(reply[start:end]) for start, end in itertools.pairwise(bounds))


# --- what comes out -----------------------------------------------------------------


def test_the_answer_string_arrives_character_by_character() -> None:
    pieces = by_character('{"answer": "She ran.", "citations": [], "insufficient": null}')
    assert "".join(pieces) == "She ran."
    assert [piece for piece in pieces if piece] == list("She ran.")


def test_byte_by_byte_utf8_gives_whole_characters_and_the_whole_answer() -> None:
    reply = '{"answer": "Café ✓ 😀 done", "citations": null, "insufficient": null}'
    pieces, decoder = by_byte(reply)
    assert "".join(pieces) == "Café ✓ 😀 done"
    assert "😀" in pieces and "é" in pieces
    assert not decoder.failed


def test_a_unicode_escape_is_returned_only_when_its_fourth_digit_arrives() -> None:
    reply = '{"answer": "Caf\\u00e9!"}'
    pieces = by_character(reply)
    escape_at = reply.index("\\u00e9")
    # Nothing for the backslash, the u and the first three digits; the fourth completes it.
    assert pieces[escape_at : escape_at + 5] == ["", "", "", "", ""]
    assert pieces[escape_at + 5] == "é"
    assert "".join(pieces) == "Café!"


def test_a_surrogate_pair_split_across_pieces_is_one_character() -> None:
    reply = '{"answer": "smile \\ud83d\\ude00 now"}'
    pieces = by_character(reply)
    pair_at = reply.index("\\ud83d")
    assert all(piece == "" for piece in pieces[pair_at : pair_at + 11])
    assert pieces[pair_at + 11] == "😀"
    assert "".join(pieces) == "smile 😀 now"
    for piece in pieces:
        piece.encode("utf-8")  # raises on a lone surrogate: none is ever returned


def test_every_simple_escape_decodes() -> None:
    reply = json.dumps({"answer": 'q" b\\ s/ \b \f \n \r \t end'})
    assert "".join(by_character(reply.replace("/", "\\/"))) == 'q" b\\ s/ \b \f \n \r \t end'


def test_whitespace_and_key_order_do_not_matter() -> None:
    reply = '\n {\n  "citations" : [ {"chunkId": "c", "quote": "q"} ],\n  "insufficient" : null ,\n  "answer" : "late key"\n}\n'
    assert decoded(reply) == "late key"


# --- what gives nothing -------------------------------------------------------------


def test_a_reply_that_starts_with_insufficient_gives_nothing() -> None:
    decoder = AnswerTextDecoder()
    reply = '{"insufficient": "The evidence is silent.", "answer": "But here is a guess", "citations": null}'
    assert "".join(decoder.feed(char) for char in reply) == ""
    assert decoder.declined


def test_a_blank_insufficient_is_read_as_null_as_the_parser_reads_it() -> None:
    reply = '{"insufficient": " ", "answer": "Yes.", "citations": [{"chunkId": "c", "quote": "q"}]}'
    assert decoded(reply) == "Yes."
    assert parse_reply(reply).answer == "Yes."


def test_a_null_answer_gives_nothing() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": null, "citations": null, "insufficient": null}') == ""
    assert not decoder.failed


def test_keys_named_answer_inside_nested_values_give_nothing() -> None:
    reply = '{"citations": [{"answer": "nested", "quote": "{\\"answer\\": \\"in a string\\"}"}], "answer": "top"}'
    assert decoded(reply) == "top"


def test_only_the_first_answer_key_is_streamed() -> None:
    assert decoded('{"answer": "first", "answer": "second"}') == "first"


def test_a_string_value_under_another_key_gives_nothing() -> None:
    assert decoded('{"answers": "not it", "ANSWER": "nor this"}') == ""


# --- broken replies stop the stream -------------------------------------------------


def test_a_raw_line_break_inside_the_string_stops_it() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "one') == "one"
    assert decoder.feed("\ntwo") == ""
    assert decoder.failed
    assert decoder.feed(' three"}') == ""


def test_an_unknown_escape_stops_it() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "a\\xb"}') == "a"
    assert decoder.failed


def test_a_lone_high_surrogate_stops_it_without_returning_half_a_character() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "a\\ud83dbc"}') == "a"
    assert decoder.failed


def test_a_high_surrogate_followed_by_another_escape_stops_it() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "a\\ud83d\\n"}') == "a"
    assert decoder.failed


def test_a_lone_low_surrogate_stops_it() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "a\\ude00b"}') == "a"
    assert decoder.failed


def test_a_bad_hex_digit_stops_it() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "a\\u00g9"}') == "a"
    assert decoder.failed


def test_a_reply_that_is_not_an_object_gives_nothing() -> None:
    for reply in ('["answer", "x"]', 'Here you go: {"answer": "x"}', '```json\n{"answer": "x"}\n```'):
        decoder = AnswerTextDecoder()
        assert decoder.feed(reply) == ""
        assert decoder.failed


def test_text_after_the_object_fails_the_decoder() -> None:
    decoder = AnswerTextDecoder()
    assert decoder.feed('{"answer": "x"} trailing') == "x"
    assert decoder.failed


def test_a_trailing_comma_fails_the_decoder() -> None:
    decoder = AnswerTextDecoder()
    decoder.feed('{"answer": "x",}')
    assert decoder.failed


# --- properties ---------------------------------------------------------------------

_replies = st.fixed_dictionaries(
    {
        "answer": st.text(max_size=60),
        "citations": st.lists(
            st.fixed_dictionaries({"chunkId": st.text(max_size=8), "quote": st.text(max_size=20)}), max_size=2
        ),
        "insufficient": st.none(),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    reply=_replies,
    ascii_only=st.booleans(),
    reverse=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_any_cut_of_any_reply_joins_to_the_answer_and_is_always_a_prefix(
    reply: dict[str, object], ascii_only: bool, reverse: bool, cuts: list[int]
) -> None:
    ordered = dict(reversed(list(reply.items()))) if reverse else reply
    text = json.dumps(ordered, ensure_ascii=ascii_only)
    decoder = AnswerTextDecoder()
    bounds = [0, *sorted(cut for cut in cuts if 0 < cut < len(text)), len(text)]
    so_far = ""
    for start, end in itertools.pairwise(bounds):
        piece = decoder.feed(text[start:end])
        piece.encode("utf-8")  # never half a surrogate pair
        so_far += piece
        assert reply["answer"].startswith(so_far)  # type: ignore[attr-defined]
    assert so_far == reply["answer"]
    assert not decoder.failed


@settings(max_examples=200, deadline=None)
@given(answer=st.text(max_size=30) | st.none(), insufficient=st.text(max_size=20) | st.none(), first=st.booleans())
def test_the_decoder_declines_exactly_when_the_parser_does(
    answer: str | None, insufficient: str | None, first: bool
) -> None:
    fields = [("insufficient", insufficient), ("answer", answer)]
    reply = json.dumps(dict(fields if first else fields[::-1]))
    decoder = AnswerTextDecoder()
    streamed = "".join(decoder.feed(char) for char in reply)
    assert decoder.declined == (parse_reply(reply).declined is not None)
    if not decoder.declined:
        assert streamed == (answer or "")
    elif first:
        assert streamed == ""
