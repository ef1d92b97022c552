"""The shipped Entity classes: one class per label, shared by the shipped ontologies.

``generic``, ``novel`` and ``article`` draw their kinds from here, so a ``Person`` is the
same class (the same label, key and description) in every shipped ontology, and
neomodel maps each label to one class. Import them from the ontology you use
(``from graphrag_orm.ontologies.article import Person``) or from here.

The first paragraph of each docstring is what the extraction model reads about the
kind (:func:`graphrag_orm.ontology.entities.kind_description`), so it describes the kind
for the model; later paragraphs are for Python readers only. Changing a first
paragraph changes every fingerprint that includes the class, and stored documents are
extracted again on their next ingestion.

Subclass a class here to add properties of your own; see ``docs/ontologies.md``.
"""

from __future__ import annotations

from graphrag_orm.ontology import Entity

__all__ = ["Character", "Concept", "Event", "Group", "Organization", "Person", "Place", "Topic"]


class Person(Entity):
    """A person named in the text, by name rather than by a job title alone: "Ines Duarte",
    "Dr. Lena Ortiz".

    Used by the generic and article ontologies. A story's people are ``Character``.
    """


class Organization(Entity):
    """A company, agency, institution, government body, party, team, school or other organised
    body: "Lumen Freight", "the Harbour Council".

    Used by the generic and article ontologies.
    """


class Place(Entity):
    """A named place: a country, region, city, district, street, building, body of water or
    landmark, real or invented.

    Used by all three shipped ontologies.
    """


class Event(Entity):
    """Something that happens or happened, named or clearly described: a meeting, vote, storm,
    launch, trial, battle, journey or party; its date or chapter belongs in the description, as
    the text words it.

    Used by all three shipped ontologies. Dates are never parsed: "on the third night"
    stays "on the third night".
    """


class Concept(Entity):
    """An idea, field, method, technology, product type or other abstract thing the text discusses
    by name: "cold-chain logistics", "tidal power".

    Used by the generic ontology.
    """


class Character(Entity):
    """A character in the story: a person, animal or creature who acts, speaks or is spoken of, by
    the name the text gives them ("Mara", "the White Rabbit").

    Used by the novel ontology.
    """


class Group(Entity):
    """A group of characters in the story acting or known together: a family, crew, guild, army,
    court, household or crowd with a name.

    Used by the novel ontology.
    """


class Topic(Entity):
    """A subject the article covers, or a named work it discusses: an issue, policy, programme or
    field ("flood defence"), or a report, study, law, plan or book ("the Harbour Water Study").

    Used by the article ontology. Named works are topics because they are what an
    article's people and organisations author (``AUTHORED``) and what its events and
    works are about (``ABOUT``).
    """
