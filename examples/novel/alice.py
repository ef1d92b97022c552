"""The novel sample's extraction replies: WRITTEN BY HAND for chapter I of Alice, not by a model.

The chapter (``alice-chapter-1.txt``, public domain) is read with the shipped novel
ontology (:mod:`graphrag_orm.ontologies.novel`: characters, places, groups and events;
facts ``KIN_OF``, ``LOCATED_IN``, ``PARTICIPATES_IN``, ``TAKES_PLACE_IN``, ...; quotes
``SAYS``). Below is what a careful reader of the chapter lists: each thing with the exact
phrases that name it, the facts between them the ontology allows, and the words spoken
aloud (thoughts, "thought Alice", are not quotes) with their speakers, one unbroken
stretch each. The ontology has no kind for objects, so the bottle, the key and the cake
are found as evidence text, not as things.

:func:`extraction_reply` answers an extraction request for one chunk from these tables
(:mod:`examples.hand_written`): the things, facts and quotes the chunk holds. Chunking
decides what each chunk holds, so the replies fit any chunk size. The toolkit checks and
grounds them exactly as it would a model's reply: a phrase it cannot locate is pruned.
"""

from __future__ import annotations

from typing import Any

from examples import hand_written
from examples.hand_written import Fact, Quote, Thing, responder
from graphrag_orm.ontologies import novel

__all__ = ["FACTS", "ONTOLOGY", "QUOTES", "THINGS", "extraction_reply", "reply_for"]

ONTOLOGY = novel.ONTOLOGY


THINGS: tuple[Thing, ...] = (
    Thing("Character", "Alice", ("Alice",)),
    Thing("Character", "Alice's sister", ("her sister",), "Reads a book with no pictures on the bank."),
    Thing(
        "Character",
        "White Rabbit",
        ("White Rabbit", "Rabbit"),
        "A rabbit with pink eyes, a waistcoat and a watch.",
        ("the Rabbit",),
    ),
    Thing("Character", "Dinah", ("Dinah",), "Alice's cat."),
    Thing("Place", "the bank", ("the bank",)),
    Thing("Place", "rabbit-hole", ("rabbit-hole",), "Under the hedge; it goes on like a tunnel, then dips down."),
    Thing("Place", "the well", ("very deep well", "the well"), "Its sides are filled with cupboards and book-shelves."),
    Thing("Place", "the hall", ("long, low hall", "the hall"), "Lit by a row of lamps, with locked doors all round."),
    Thing(
        "Place",
        "the garden",
        ("the loveliest garden", "that lovely garden", "the garden"),
        "Beds of bright flowers and cool fountains.",
    ),
    Thing("Place", "New Zealand", ("New Zealand",)),
    Thing("Place", "Australia", ("Australia",)),
    Thing("Place", "the schoolroom", ("the schoolroom",)),
    Thing(
        "Group",
        "the Antipathies",
        ("The Antipathies",),
        "Alice's word for the people that walk with their heads downward.",
    ),
    Thing("Event", "the fall", ("the fall",), "Alice falls down the rabbit-hole, in chapter I."),
    Thing("Event", "a game of croquet", ("a game of croquet",), "Alice played it against herself."),
)

FACTS: tuple[Fact, ...] = (
    Fact("Alice's sister", "KIN_OF", "Alice", role="sister"),
    Fact("Alice", "LOCATED_IN", "the bank"),
    Fact("Alice's sister", "LOCATED_IN", "the bank"),
    Fact("White Rabbit", "LOCATED_IN", "rabbit-hole"),
    Fact("the well", "LOCATED_IN", "rabbit-hole"),
    Fact("Alice", "LOCATED_IN", "the hall"),
    Fact("Alice", "PARTICIPATES_IN", "the fall"),
    Fact("the fall", "TAKES_PLACE_IN", "the well"),
    Fact("Alice", "PARTICIPATES_IN", "a game of croquet"),
)

QUOTES: tuple[Quote, ...] = (
    Quote("White Rabbit", "Oh dear! Oh dear! I shall be late!"),
    Quote("Alice", "I wonder how many miles I've fallen by this time?"),
    Quote(
        "Alice",
        "I must be getting somewhere near the centre of the earth. Let me see: that would be four thousand miles down, I think--",
    ),
    Quote("Alice", "--yes, that's about the right distance--but then I wonder what Latitude or Longitude I've got to?"),
    Quote(
        "Alice",
        "I wonder if I shall fall right THROUGH the earth! How funny it'll seem to come out among the people that walk with their heads downward! The Antipathies, I think--",
    ),
    Quote(
        "Alice",
        "--but I shall have to ask them what the name of the country is, you know. Please, Ma'am, is this New Zealand or Australia?",
    ),
    Quote("Alice", "Dinah'll miss me very much to-night, I should think!"),
    Quote("Alice", "Now, Dinah, tell me the truth: did you ever eat a bat?", addressee="Dinah"),
    Quote("White Rabbit", "Oh my ears and whiskers, how late it's getting!"),
    Quote("Alice", "which certainly was not here before,"),
    Quote("Alice", "No, I'll look first,"),
    Quote("Alice", 'and see whether it\'s marked "poison" or not'),
    Quote("Alice", "What a curious feeling!"),
    Quote("Alice", "I must be shutting up like a telescope."),
    Quote("Alice", "for it might end, you know,"),
    Quote("Alice", "in my going out altogether, like a candle. I wonder what I should be like then?"),
    Quote("Alice", "Come, there's no use in crying like that!"),
    Quote("Alice", "I advise you to leave off this minute!"),
    Quote("Alice", "Well, I'll eat it,"),
    Quote(
        "Alice",
        "and if it makes me grow larger, I can reach the key; and if it makes me grow smaller, I can creep under the door; so either way I'll get into the garden, and I don't care which happens!",
    ),
    Quote("Alice", "Which way? Which way?"),
)


#: A ``ScriptedChat`` responder: the hand-written reply for the chunk an extraction request carries.
extraction_reply = responder(THINGS, FACTS, QUOTES, "SAYS")


def reply_for(passage: str) -> dict[str, Any]:
    """The hand-written reply for one chunk's text."""
    return hand_written.reply_for(passage, THINGS, FACTS, QUOTES, "SAYS")
