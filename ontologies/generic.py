"""The generic ontology: people, organizations, places, events and concepts in any text.

Kinds: ``Person``, ``Organization``, ``Place``, ``Event``, ``Concept``.

Facts (source kind, type, target kind):

- ``WORKS_FOR``: Person to Organization (``role``: the job title as written);
- ``MEMBER_OF``: Person to Organization, for belonging without employment (a club, a
  party, a board);
- ``PARTICIPATES_IN``: Person or Organization to Event (``role``: their part);
- ``LOCATED_IN``: Person, Organization, Event or Place to Place;
- ``PART_OF``: Organization to Organization, Place to Place (a division of it);
- ``RELATED_TO``: between any two kinds, both ways and including a kind with itself
  (25 pairs), for a link the passage states that no typed fact describes
  (``description``: what the link is).

No quotes. Placeholders: :data:`PLACEHOLDERS` (pronouns and vague references). Things
named only by a placeholder are kept but never merged (``isPlaceholder`` is true).
"""

from __future__ import annotations

from graphrag_orm.ontology import Entity, Ontology

from .things import Concept, Event, Organization, Person, Place

__all__ = [
    "FACTS",
    "INSTRUCTIONS",
    "KINDS",
    "ONTOLOGY",
    "PLACEHOLDERS",
    "Concept",
    "Event",
    "Organization",
    "Person",
    "Place",
]

#: The kinds, in the order the model sees them.
KINDS: tuple[type[Entity], ...] = (Person, Organization, Place, Event, Concept)

#: The typed facts, then RELATED_TO between every ordered pair of kinds.
FACTS: tuple[tuple[type[Entity], str, type[Entity]], ...] = (
    (Person, "WORKS_FOR", Organization),
    (Person, "MEMBER_OF", Organization),
    (Person, "PARTICIPATES_IN", Event),
    (Organization, "PARTICIPATES_IN", Event),
    (Person, "LOCATED_IN", Place),
    (Organization, "LOCATED_IN", Place),
    (Event, "LOCATED_IN", Place),
    (Place, "LOCATED_IN", Place),
    (Organization, "PART_OF", Organization),
    (Place, "PART_OF", Place),
    *((source, "RELATED_TO", target) for source in KINDS for target in KINDS),
)

#: Names that are not names: a thing called only this is a placeholder and never merges.
PLACEHOLDERS: tuple[str, ...] = (
    "he",
    "she",
    "it",
    "they",
    "him",
    "her",
    "them",
    "his",
    "hers",
    "its",
    "their",
    "i",
    "me",
    "we",
    "us",
    "you",
    "this",
    "that",
    "these",
    "those",
    "someone",
    "somebody",
    "something",
    "anyone",
    "everyone",
    "no one",
    "the former",
    "the latter",
    "the man",
    "the woman",
    "the person",
    "the people",
    "the company",
    "the organization",
    "the group",
    "the place",
    "the city",
    "the town",
    "the area",
    "the event",
    "the meeting",
)

INSTRUCTIONS = """\
Choose the most specific relationship type the passage supports:
- WORKS_FOR: the person is employed by or leads the organization; "role" is the job title as the passage words it, else null.
- MEMBER_OF: the person belongs to the organization without being employed by it (a club, party, board or union).
- PARTICIPATES_IN: the person or organization takes part in the event; "role" is their part as written ("speaker", "host"), else null.
- LOCATED_IN: where a person lives or is, where an organization is based, where an event happens, or a place that lies inside another without being a division of it (a building in a city).
- PART_OF: an organization inside another (a department, a subsidiary), or a place that is a division of another (a district of a city, a region of a country).
- RELATED_TO: only for a link the passage states that none of the types above describes; "description" says what the link is, in a few words from the passage.
Keep dates, times and periods exactly as the passage words them, in descriptions; never work out a calendar date."""

ONTOLOGY: Ontology = Ontology.custom(
    name="generic",
    entities=KINDS,
    facts=FACTS,
    placeholders=PLACEHOLDERS,
    instructions=INSTRUCTIONS,
)
