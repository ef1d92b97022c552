"""ExtractiveChat, the offline stand-in: it quotes one evidence sentence verbatim, or says insufficient."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from graphrag_orm.answers.prompt import answer_request, parse_reply
from graphrag_orm.answers.service import verify
from graphrag_orm.chat import ChatMessage, ChatRequest, ExtractiveChat
from graphrag_orm.chat.evidence_block import render_block, render_question
from graphrag_orm.chat.extractive import NO_MODEL_NOTE, STOP_WORDS, StandInUnsupported, content_words, sentences
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.evidence import ContextItem, Evidence, EvidenceItem


def item(chunk_id: str, text: str) -> EvidenceItem:
    return EvidenceItem(
        chunk_id=chunk_id,
        document_id="doc",
        source_uri="text:doc",
        text=text,
        start_byte=0,
        end_byte=len(text.encode()),
        score=1.0,
    )


async def ask(question: str, *items: EvidenceItem, context: tuple[ContextItem, ...] = ()) -> dict[str, Any]:
    evidence = Evidence(question=question, items=items, context=context)
    reply = await ExtractiveChat().complete(answer_request(evidence, 256))
    value: dict[str, Any] = json.loads(reply.text)
    return value


BIKES = item(
    "c1",
    "The BC-310 caliper is made in Leeds. Northwind Components supplies the BC-310 caliper!\n\n"
    "Each caliper is tested at 40 bar.",
)


# --- answering ------------------------------------------------------------------------


async def test_it_quotes_the_sentence_sharing_most_content_words_verbatim() -> None:
    reply = await ask("Who supplies the BC-310 caliper?", BIKES)
    assert reply == {
        "answer": f"Northwind Components supplies the BC-310 caliper!\n\n{NO_MODEL_NOTE}",
        "citations": [{"chunkId": "c1", "quote": "Northwind Components supplies the BC-310 caliper!"}],
        "insufficient": None,
    }


async def test_its_answer_passes_the_citation_checks() -> None:
    evidence = Evidence(question="How hard is each caliper tested?", items=(BIKES,))
    reply = await ExtractiveChat().complete(answer_request(evidence, 256))
    text, citations, reason = verify(parse_reply(reply.text), evidence)
    assert reason is None and text == f"Each caliper is tested at 40 bar.\n\n{NO_MODEL_NOTE}"
    assert citations[0].quote == "Each caliper is tested at 40 bar."


async def test_ties_go_to_the_earlier_item() -> None:
    first, second = item("a", "Brakes need pads."), item("b", "Brakes need pads.")
    reply = await ask("What do brakes need?", first, second)
    assert reply["citations"] == [{"chunkId": "a", "quote": "Brakes need pads."}]


async def test_context_is_never_quoted() -> None:
    context = (ContextItem(chunk_id="n1", text="Tyres are supplied by Southwind Rubber.", reason="neighbour"),)
    reply = await ask("Who supplies the tyres?", item("c1", "Pads are replaced yearly."), context=context)
    assert reply["answer"] is None and reply["insufficient"]


async def test_one_shared_content_word_is_not_enough_for_a_longer_question() -> None:
    reply = await ask("Who supplies the tyres?", item("c1", "Northwind supplies brakes."))
    assert reply["answer"] is None and reply["citations"] is None
    assert "shares 2 content words" in reply["insufficient"]


async def test_one_shared_word_answers_a_one_word_question() -> None:
    reply = await ask("Tyres?", item("c1", "Brakes wear. Tyres are from Southwind."))
    assert reply["answer"] == f"Tyres are from Southwind.\n\n{NO_MODEL_NOTE}"


async def test_a_question_of_stop_words_only_is_insufficient() -> None:
    reply = await ask("Who is it?", item("c1", "Who is it? It is me."))
    assert reply["answer"] is None


async def test_no_items_is_insufficient() -> None:
    assert (await ask("Who supplies the caliper?"))["insufficient"]


async def test_a_sentence_with_three_elisions_is_never_chosen() -> None:
    reply = await ask(
        "caliper supplier", item("c1", "Caliper... supplier... list... here. The caliper supplier is Northwind.")
    )
    assert reply["answer"] == f"The caliper supplier is Northwind.\n\n{NO_MODEL_NOTE}"


# --- the other requests ---------------------------------------------------------------


async def test_a_rewrite_request_gets_the_question_back_unchanged() -> None:
    user = f"{render_block('conversation', [{'question': 'Who?', 'answer': 'Reid.'}])}\n\n{render_question('And he?')}"
    request = ChatRequest(
        messages=(ChatMessage(role="user", content=user),),
        response_schema={"type": "object"},
        schema_name="rewrite",
    )
    assert json.loads((await ExtractiveChat().complete(request)).text) == {"question": "And he?"}


EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {"$ref": "#/$defs/Entity"}},
        "relationships": {"type": "array", "items": {"type": "object"}},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "done": {"type": "boolean"},
        "summary": {"type": "string"},
        "meta": {"$ref": "#/$defs/Meta"},
    },
    "required": ["entities", "relationships", "note", "done", "summary", "meta"],
    "additionalProperties": False,
    "$defs": {
        "Entity": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        "Meta": {"type": "object", "properties": {"tags": {"type": "array"}}, "required": ["tags"]},
    },
}


async def test_another_schema_gets_its_emptiest_valid_reply() -> None:
    request = ChatRequest(
        messages=(ChatMessage(role="user", content="Extract."),),
        response_schema=EXTRACTION_SCHEMA,
        schema_name="extraction",
    )
    assert json.loads((await ExtractiveChat().complete(request)).text) == {
        "entities": [],
        "relationships": [],
        "note": None,
        "done": False,
        "summary": "",
        "meta": {"tags": []},
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
        {"type": "object", "properties": {"kind": {"enum": ["a", "b"]}}, "required": ["kind"]},
        {"type": "object", "properties": {"xs": {"type": "array", "minItems": 1}}, "required": ["xs"]},
        {"type": "object", "properties": {"id": {"type": "string", "pattern": "^x"}}, "required": ["id"]},
        {"type": "object", "properties": {"x": {"$ref": "https://example.org/s"}}, "required": ["x"]},
    ],
)
async def test_a_schema_that_needs_a_real_value_is_refused_clearly(schema: dict[str, Any]) -> None:
    request = ChatRequest(messages=(ChatMessage(role="user", content="?"),), response_schema=schema, schema_name="x")
    with pytest.raises(StandInUnsupported) as raised:
        await ExtractiveChat().complete(request)
    assert raised.value.code == "stand-in-unsupported"


async def test_a_request_without_schema_is_refused() -> None:
    with pytest.raises(StandInUnsupported):
        await ExtractiveChat().complete(ChatRequest(messages=(ChatMessage(role="user", content="Hi"),)))


async def test_an_answer_request_without_an_evidence_block_is_refused() -> None:
    request = ChatRequest(
        messages=(ChatMessage(role="user", content=render_question("Who?")),),
        response_schema={"type": "object"},
        schema_name="answer",
    )
    with pytest.raises(StandInUnsupported, match="evidence"):
        await ExtractiveChat().complete(request)


# --- streaming and labels -------------------------------------------------------------


async def test_stream_yields_pieces_then_the_whole_reply() -> None:
    chat = ExtractiveChat()
    request = answer_request(Evidence(question="Who supplies the BC-310 caliper?", items=(BIKES,)), 256)
    chunks = [chunk async for chunk in chat.stream(request)]
    whole = await chat.complete(request)
    assert len(chunks) > 3 and all(len(c.delta) <= 7 for c in chunks)
    assert "".join(c.delta for c in chunks[:-1]) == whole.text
    assert chunks[-1].reply == whole
    assert whole.model == "extractive-stand-in" and whole.usage is None
    assert len(chat.calls) == 2


def test_it_is_labelled_a_stand_in() -> None:
    chat = ExtractiveChat()
    assert chat.is_stand_in is True
    assert chat.label == "ExtractiveChat (offline stand-in: quotes evidence, no model)"


# --- the tokeniser --------------------------------------------------------------------


def test_content_words_drop_stop_words_single_letters_and_fold_plurals() -> None:
    assert content_words("What are the pictures of Alice's BC-310 bikes, a b 7?") == {
        "picture",
        "alice",
        "bc",
        "310",
        "bike",
        "7",
    }
    assert content_words("glass") == {"glass"} and content_words("bus") == {"bus"}
    assert {"the", "who", "what"} <= STOP_WORDS


def test_sentences_are_verbatim_trimmed_substrings() -> None:
    text = " First one. “Second?” she asked\nquietly.  Third…  \n\n Heading\n\nLast"
    found = sentences(text)
    assert found == ["First one.", "“Second?”", "she asked\nquietly.", "Third…", "Heading", "Last"]
    assert all(sentence in text for sentence in found)


# --- with an embedder: words and meaning, a floor, and the note on every answer --------


class Meanings:
    """A loopback-free embedder over a few fixed meanings: the same vector for texts sharing a marker word."""

    MARKERS = ("width", "colour", "weather")

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0 if marker in text.lower() else 0.0 for marker in self.MARKERS] + [0.1] for text in texts]


async def scored(question: str, *items: EvidenceItem, floor: float = 0.45) -> dict[str, Any]:
    evidence = Evidence(question=question, items=items)
    chat = ExtractiveChat(embedder=Meanings(), floor=floor)
    value: dict[str, Any] = json.loads((await chat.complete(answer_request(evidence, 256))).text)
    return value


GUIDE = item(
    "g1",
    "# Line width\n\nThe default is 88. It can be raised in the settings file.\n\n"
    "# Colour\n\nThe default colour of the settings file editor is blue.",
)


async def test_with_an_embedder_a_short_sentence_under_its_heading_wins_over_one_sharing_more_words() -> None:
    reply = await scored("What is the default line width of the settings?", GUIDE)
    assert reply["citations"] == [{"chunkId": "g1", "quote": "The default is 88."}]
    assert reply["answer"] == f"The default is 88.\n\n{NO_MODEL_NOTE}"
    words_only = await ask("What is the default line width of the settings?", GUIDE)
    assert words_only["citations"][0]["quote"] != "The default is 88.", "the words alone pick another sentence"


async def test_with_an_embedder_it_refuses_below_the_floor() -> None:
    reply = await scored("Will the weather be sunny tomorrow?", GUIDE)
    assert reply["answer"] is None and reply["citations"] is None
    assert "scores 0.45" in reply["insufficient"] and "offline stand-in" in reply["insufficient"]
    assert (await scored("Will the weather be sunny tomorrow?", GUIDE, floor=0.0))["answer"] is not None


def test_the_floor_is_checked() -> None:
    with pytest.raises(ConfigurationError) as refused:
        ExtractiveChat(floor=1.5)
    assert refused.value.code == "invalid-option"
