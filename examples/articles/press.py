"""The articles sample's extraction replies: WRITTEN BY HAND for the two articles, not by a model.

The articles in ``articles/`` are fiction written for this sample (each says so at its
top). They are read with the shipped article ontology (:mod:`graphrag_orm.ontologies.article`),
and the tables below exercise every kind (``Person``, ``Organization``, ``Place``,
``Event``, ``Topic``), every fact the ontology allows (all fifteen source, type and target
triples of its seven fact types) and its quote type ``QUOTED``, with the exact phrases
of the text. :data:`extraction_reply` answers one chunk's extraction request from them
(:mod:`examples.hand_written`); the toolkit grounds the reply as it would a model's.

Each article's publication date, publisher and address come from the source's metadata
(:data:`METADATA`), never from extraction.
"""

from __future__ import annotations

from examples.hand_written import Fact, Quote, Thing, responder
from graphrag_orm.ontologies import article
from graphrag_orm.sources import SourceMetadata

__all__ = ["FACTS", "METADATA", "ONTOLOGY", "QUOTES", "THINGS", "extraction_reply"]

ONTOLOGY = article.ONTOLOGY

#: Per article file: the metadata a publisher's feed would give.
METADATA: dict[str, SourceMetadata] = {
    "reading-room.md": SourceMetadata(
        title="Library board backs a reading room by the river",
        published="2026-11-16",
        publisher="The Aske Valley Courier (fiction)",
        url="https://courier.example/2026/11/reading-room",
    ),
    "ferry-drill.md": SourceMetadata(
        title="Ferry crews rehearse a winter crossing",
        published="2026-11-21",
        publisher="The Aske Valley Courier (fiction)",
        url="https://courier.example/2026/11/ferry-drill",
    ),
}

THINGS: tuple[Thing, ...] = (
    Thing(
        "Person", "Oona Brack", ("Oona Brack", "Brack"), "Chief librarian of the Fernhollow Public Library.", ("Brack",)
    ),
    Thing("Person", "Ivo Marr", ("Ivo Marr", "Marr"), "Harbour master of the Aske Ferry Company.", ("Marr",)),
    Thing("Organization", "Fernhollow Library Board", ("Fernhollow Library Board",)),
    Thing("Organization", "Aske Valley Council", ("Aske Valley Council",)),
    Thing("Organization", "Fernhollow Public Library", ("Fernhollow Public Library",)),
    Thing("Organization", "Guild of Valley Archivists", ("Guild of Valley Archivists",)),
    Thing("Organization", "Northern Libraries Alliance", ("Northern Libraries Alliance",)),
    Thing("Organization", "Aske Ferry Company", ("Aske Ferry Company",)),
    Thing("Organization", "River Operators Association", ("River Operators Association",)),
    Thing("Place", "Old Granary", ("Old Granary",)),
    Thing("Place", "Millbank", ("Millbank district", "Millbank")),
    Thing("Place", "Fernhollow", ("Fernhollow",)),
    Thing("Place", "River Aske", ("River Aske",)),
    Thing("Place", "Kell Landing", ("Kell Landing",)),
    Thing("Place", "Aske Valley", ("the Aske Valley",)),
    Thing("Event", "reading room vote", ("voted on Monday", "the vote"), "The library board voted on Monday."),
    Thing("Event", "winter crossing drill", ("winter crossing drill", "the drill"), "On Saturday at Kell Landing."),
    Thing("Topic", "Reading Room Plan", ("Reading Room Plan", "the plan")),
    Thing("Topic", "riverside literacy", ("riverside literacy",)),
    Thing("Topic", "River Paths Report", ("River Paths Report",)),
    Thing("Topic", "flood safety", ("flood safety",)),
)

FACTS: tuple[Fact, ...] = (
    # Person WORKS_FOR Organization; Person and Organization MEMBER_OF Organization
    Fact("Oona Brack", "WORKS_FOR", "Fernhollow Public Library", role="chief librarian"),
    Fact("Ivo Marr", "WORKS_FOR", "Aske Ferry Company", role="harbour master"),
    Fact("Oona Brack", "MEMBER_OF", "Guild of Valley Archivists"),
    Fact("Fernhollow Public Library", "MEMBER_OF", "Northern Libraries Alliance"),
    Fact("Aske Ferry Company", "MEMBER_OF", "River Operators Association"),
    # LOCATED_IN from a Person, an Organization, an Event and a Place
    Fact("Oona Brack", "LOCATED_IN", "Fernhollow"),
    Fact("Fernhollow Public Library", "LOCATED_IN", "Fernhollow"),
    Fact("Aske Ferry Company", "LOCATED_IN", "Kell Landing"),
    Fact("reading room vote", "LOCATED_IN", "Old Granary"),
    Fact("winter crossing drill", "LOCATED_IN", "Kell Landing"),
    Fact("Old Granary", "LOCATED_IN", "Millbank"),
    Fact("Kell Landing", "LOCATED_IN", "River Aske"),
    # PART_OF between Organizations and between Places
    Fact("Fernhollow Library Board", "PART_OF", "Aske Valley Council"),
    Fact("Millbank", "PART_OF", "Fernhollow"),
    Fact("Kell Landing", "PART_OF", "Aske Valley"),
    # PARTICIPATES_IN by a Person and an Organization
    Fact("Oona Brack", "PARTICIPATES_IN", "reading room vote", role="presenter"),
    Fact("Fernhollow Library Board", "PARTICIPATES_IN", "reading room vote"),
    Fact("Ivo Marr", "PARTICIPATES_IN", "winter crossing drill", role="leader"),
    Fact("Aske Ferry Company", "PARTICIPATES_IN", "winter crossing drill"),
    # AUTHORED by a Person and an Organization; ABOUT from an Event and a Topic
    Fact("Oona Brack", "AUTHORED", "Reading Room Plan"),
    Fact("Aske Valley Council", "AUTHORED", "River Paths Report"),
    Fact("reading room vote", "ABOUT", "Reading Room Plan"),
    Fact("Reading Room Plan", "ABOUT", "riverside literacy"),
    Fact("River Paths Report", "ABOUT", "flood safety"),
)

QUOTES: tuple[Quote, ...] = (
    Quote("Oona Brack", "A library should meet people where they walk,"),
    Quote("Oona Brack", "Everyone in this town walks by the river."),
    Quote("Ivo Marr", "We practise in daylight,"),
    Quote("Ivo Marr", "so nobody has to learn in the dark."),
)

#: A ``ScriptedChat`` responder: the hand-written reply for the chunk an extraction request carries.
extraction_reply = responder(THINGS, FACTS, QUOTES, "QUOTED")
