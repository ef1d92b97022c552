"""The article ontology: the people, organizations, places, events and topics of news articles.

Kinds: ``Person``, ``Organization``, ``Place``, ``Event``, ``Topic``.

Facts (source kind, type, target kind):

- ``WORKS_FOR``: Person to Organization (``role``: the title as written);
- ``MEMBER_OF``: Person or Organization to Organization (a party, board, association,
  alliance: belonging without employment);
- ``LOCATED_IN``: Person, Organization, Event or Place to Place;
- ``PART_OF``: Organization to Organization, Place to Place (a division of it);
- ``PARTICIPATES_IN``: Person or Organization to Event (``role``: their part);
- ``AUTHORED``: Person or Organization to Topic: who wrote, issued or published a work;
- ``ABOUT``: Event or Topic to Topic: what a hearing, a vote or a report concerns.

Why ``AUTHORED`` ends at a Topic. What people and organizations author in an article is a
work: a report, a study, a bill, a plan, a statement. Articles treat those works as
subjects in their own right ("the Harbour Water Study found ..."), so ``Topic`` is
defined as a subject *or a named work*, and ``AUTHORED`` goes from the author to the
work, while ``ABOUT`` ties a work or an event to the subject it concerns. A separate
``Work`` kind would say the same with one more kind for the model to choose between.
The article's own byline is not a fact: the lexical ``Document`` is not a kind of the
ontology, and a fact joins two things grounded in the same chunk.

Quotes: ``QUOTED``, spoken by a Person: words the article puts in quotation marks and
attributes to someone, one unbroken stretch each.

The document's ``published``, ``publisher`` and ``url`` come from the source's metadata
(:class:`~graphrag_orm.sources.SourceMetadata`) and are stored on the lexical
``Document`` node by the ingestion write, never by extraction: nothing a model returns
is written to a Document, and the reply schema has no field for them.

Placeholders: :data:`PLACEHOLDERS` (pronouns, "a spokesperson", "officials", ...).
"""

from __future__ import annotations

from graphrag_orm.ontology import Entity, Ontology

from .things import Event, Organization, Person, Place, Topic

__all__ = [
    "FACTS",
    "INSTRUCTIONS",
    "KINDS",
    "ONTOLOGY",
    "PLACEHOLDERS",
    "QUOTES",
    "Event",
    "Organization",
    "Person",
    "Place",
    "Topic",
]

#: The kinds, in the order the model sees them.
KINDS: tuple[type[Entity], ...] = (Person, Organization, Place, Event, Topic)

FACTS: tuple[tuple[type[Entity], str, type[Entity]], ...] = (
    (Person, "WORKS_FOR", Organization),
    (Person, "MEMBER_OF", Organization),
    (Organization, "MEMBER_OF", Organization),
    (Person, "LOCATED_IN", Place),
    (Organization, "LOCATED_IN", Place),
    (Event, "LOCATED_IN", Place),
    (Place, "LOCATED_IN", Place),
    (Organization, "PART_OF", Organization),
    (Place, "PART_OF", Place),
    (Person, "PARTICIPATES_IN", Event),
    (Organization, "PARTICIPATES_IN", Event),
    (Person, "AUTHORED", Topic),
    (Organization, "AUTHORED", Topic),
    (Event, "ABOUT", Topic),
    (Topic, "ABOUT", Topic),
)

#: The quote type and the kinds that may speak it.
QUOTES: tuple[tuple[str, tuple[type[Entity], ...]], ...] = (("QUOTED", (Person,)),)

#: Names that are not names: a thing called only this is a placeholder and never merges.
PLACEHOLDERS: tuple[str, ...] = (
    "he",
    "she",
    "it",
    "they",
    "him",
    "her",
    "them",
    "we",
    "us",
    "i",
    "you",
    "someone",
    "a spokesperson",
    "a spokeswoman",
    "a spokesman",
    "an official",
    "officials",
    "a source",
    "sources",
    "a resident",
    "residents",
    "a witness",
    "witnesses",
    "critics",
    "experts",
    "the company",
    "the agency",
    "the council",
    "the group",
    "the organization",
    "the city",
    "the area",
    "the region",
    "the event",
    "the report",
    "the study",
    "the plan",
)

INSTRUCTIONS = """\
The article's publication date, publisher and web address are taken from its source, not from you: extract only what the passage states.
- WORKS_FOR: a person is employed by or leads an organization; "role" is the title as written ("council chair"), else null.
- MEMBER_OF: a person or organization belongs to an organization without being employed by it (a party, board, association or alliance).
- LOCATED_IN: where a person lives or works, where an organization is based, where an event happens, or a place inside another without being a division of it.
- PART_OF: an organization inside another (a department, a subsidiary), or a place that is a division of another.
- PARTICIPATES_IN: a person or organization takes part in an event; "role" is their part as written ("witness", "organiser"), else null.
- AUTHORED: a person or organization wrote, issued or published a work, listed as a Topic (a report, study, law, plan or statement). The article's own author is not an AUTHORED fact.
- ABOUT: an event or a work concerns a subject.
Topics are subjects and works the passage names; do not make up labels for them.
Quotes (QUOTED): only words the passage puts in quotation marks and attributes to a person, without the marks; reported speech without quotation marks is not a quote. Each quote is one unbroken stretch of the passage: when an attribution interrupts it, as in “We cannot wait,” Lind said, “not another winter.”, give two quotes with the same speaker. Words attributed only to "a spokesperson" or "an official" keep that phrase as the speaker's name.
Keep dates as the passage words them ("on Tuesday", "last spring") in descriptions; never work out a calendar date from the publication date."""

ONTOLOGY: Ontology = Ontology.custom(
    name="article",
    entities=KINDS,
    facts=FACTS,
    quotes=QUOTES,
    placeholders=PLACEHOLDERS,
    instructions=INSTRUCTIONS,
)
