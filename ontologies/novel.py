"""The novel ontology: characters, places, groups and events of a story, and what characters say.

Kinds: ``Character``, ``Place``, ``Group``, ``Event``.

Facts (source kind, type, target kind):

- ``KIN_OF``: Character to Character; ``role`` is what the source is to the target, as
  the text words it ("sister", "father");
- ``MEMBER_OF``: Character to Group;
- ``LOCATED_IN``: Character, Group or Place to Place;
- ``PARTICIPATES_IN``: Character or Group to Event;
- ``TAKES_PLACE_IN``: Event to Place.

An event's place is ``TAKES_PLACE_IN`` only, not also ``LOCATED_IN``: one type per
meaning, so the model does not split one fact over two types and a query need not union
them.

Quotes: ``SAYS``, spoken by a Character, stored from the speaker to the chunk with the
spoken words' exact bytes and the addressee's name when the text gives one. A quote is
one unbroken stretch of the text: speech interrupted by narration is one quote per part.

Placeholders: :data:`PLACEHOLDERS` ("she", "he", "the man", "someone", ...). Event dates
and chapters stay as the text gives them, in the event's description.
"""

from __future__ import annotations

from graphrag_orm.ontology import Entity, Ontology

from .things import Character, Event, Group, Place

__all__ = [
    "FACTS",
    "INSTRUCTIONS",
    "KINDS",
    "ONTOLOGY",
    "PLACEHOLDERS",
    "QUOTES",
    "Character",
    "Event",
    "Group",
    "Place",
]

#: The kinds, in the order the model sees them.
KINDS: tuple[type[Entity], ...] = (Character, Place, Group, Event)

FACTS: tuple[tuple[type[Entity], str, type[Entity]], ...] = (
    (Character, "KIN_OF", Character),
    (Character, "MEMBER_OF", Group),
    (Character, "LOCATED_IN", Place),
    (Group, "LOCATED_IN", Place),
    (Place, "LOCATED_IN", Place),
    (Character, "PARTICIPATES_IN", Event),
    (Group, "PARTICIPATES_IN", Event),
    (Event, "TAKES_PLACE_IN", Place),
)

#: The quote type and the kinds that may speak it.
QUOTES: tuple[tuple[str, tuple[type[Entity], ...]], ...] = (("SAYS", (Character,)),)

#: Names that are not names: a character called only this is a placeholder and never merges.
PLACEHOLDERS: tuple[str, ...] = (
    "he",
    "she",
    "it",
    "they",
    "him",
    "her",
    "them",
    "i",
    "me",
    "we",
    "us",
    "you",
    "someone",
    "somebody",
    "something",
    "anyone",
    "everyone",
    "nobody",
    "a voice",
    "the voice",
    "the man",
    "the woman",
    "the boy",
    "the girl",
    "the child",
    "the old man",
    "the old woman",
    "the stranger",
    "the other",
    "the others",
    "the crowd",
    "the place",
    "the room",
    "the house",
)

INSTRUCTIONS = """\
Characters include animals and creatures that act or speak. "name" is the fullest name the passage gives a character; its other names are aliases. "the girl" or "she" is not a name: use such a phrase only for a character the passage never names.
- KIN_OF: a family tie; "role" is what the source is to the target, as the passage words it ("sister", "father", "wife").
- MEMBER_OF: a character belongs to a group.
- LOCATED_IN: where a character or group is or lives, or a place inside another.
- PARTICIPATES_IN: a character or group takes part in an event.
- TAKES_PLACE_IN: where an event happens.
Events: say when an event happens in its description, in the passage's own words ("on the third night", "in chapter II"); never turn it into a date or add a year.
Quotes (SAYS): only words a character speaks aloud, without the quotation marks. Each quote is one unbroken stretch of the passage. When narration interrupts speech, as in “I can’t,” said Mara, “not tonight.”, give two quotes, "I can’t," and "not tonight.", each with the same speaker; never join the parts. "addressee" is the character spoken to when the passage says so, else null."""

ONTOLOGY: Ontology = Ontology.custom(
    name="novel",
    entities=KINDS,
    facts=FACTS,
    quotes=QUOTES,
    placeholders=PLACEHOLDERS,
    instructions=INSTRUCTIONS,
)
