"""Ontologies without a database: the shipped three, the strict reply schema, fingerprints,
label prefixes, neo4j-graphrag's entity shape, refusals and the schema an ontology adds."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neomodel import StringProperty

from graphrag_orm.chat import ScriptedChat
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.extraction import (
    DocumentKnowledge,
    ExtractionChunk,
    ExtractionOptions,
    Extractor,
    Grounder,
    parse_reply,
)
from graphrag_orm.layout import Layout
from graphrag_orm.models import Document
from graphrag_orm.ontologies import article, generic, novel
from graphrag_orm.ontologies.things import Person, Place
from graphrag_orm.ontology import Entity, ModelSchema, Ontology, entity_id
from graphrag_orm.schema import FullTextIndex, RelationshipUniqueConstraint, Schema, UniqueConstraint

REPOSITORY = Path(__file__).resolve().parents[2]
SHIPPED = {"generic": generic.ONTOLOGY, "novel": novel.ONTOLOGY, "article": article.ONTOLOGY}
VARIANTS = {
    **SHIPPED,
    **{f"{name}+Rag": o.with_label_prefix("Rag") for name, o in SHIPPED.items()},
    **{f"{name}+neo4j-graphrag": o.with_neo4j_graphrag_entities() for name, o in SHIPPED.items()},
}
# The fields a reply may leave empty: nullable, and still listed as required.
NULLABLE = {
    ("entities", "description"),
    ("relationships", "role"),
    ("relationships", "kind"),
    ("relationships", "description"),
    ("quotes", "addressee"),
}


def schema_of(ontology: Ontology) -> dict[str, Any]:
    return ModelSchema.from_ontology(ontology).to_json_schema()


def objects(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every object schema, however deep."""
    if schema.get("type") == "object":
        yield schema
        for child in schema["properties"].values():
            yield from objects(child)
    if "items" in schema:
        yield from objects(schema["items"])


def types_of(property_schema: dict[str, Any]) -> set[str]:
    """The types a property allows; a nullable one is written as anyOf, never as a type list."""
    if "anyOf" in property_schema:
        return {kind for branch in property_schema["anyOf"] for kind in types_of(branch)}
    declared = property_schema["type"]
    assert isinstance(declared, str)
    return {declared}


# ----------------------------------------------------------------- the shipped three


def test_the_shipped_ontologies_have_the_kinds_of_their_pages() -> None:
    assert generic.ONTOLOGY.kinds == ("Person", "Organization", "Place", "Event", "Concept")
    assert novel.ONTOLOGY.kinds == ("Character", "Place", "Group", "Event")
    assert article.ONTOLOGY.kinds == ("Person", "Organization", "Place", "Event", "Topic")
    assert [o.name for o in SHIPPED.values()] == list(SHIPPED)


def test_a_label_is_one_class_across_the_shipped_ontologies() -> None:
    assert generic.Person is article.Person and generic.Place is novel.Place is article.Place
    assert generic.Event is novel.Event is article.Event


def test_generic_relates_any_two_kinds_and_types_the_common_facts() -> None:
    ontology = generic.ONTOLOGY
    kinds = ontology.kinds
    assert {(f.source, f.target) for f in ontology.facts if f.type == "RELATED_TO"} == {
        (a, b) for a in kinds for b in kinds
    }
    assert sum(1 for f in ontology.facts if f.type == "RELATED_TO") == 25
    for triple in [
        ("Person", "WORKS_FOR", "Organization"),
        ("Event", "LOCATED_IN", "Place"),
        ("Organization", "PARTICIPATES_IN", "Event"),
        ("Organization", "PART_OF", "Organization"),
        ("Place", "PART_OF", "Place"),
    ]:
        assert ontology.allows(*triple), triple
    assert ontology.quote_types == ()


def test_novel_has_kin_with_a_role_and_characters_who_say_things() -> None:
    ontology = novel.ONTOLOGY
    assert ontology.allows("Character", "KIN_OF", "Character")
    assert ontology.allows("Event", "TAKES_PLACE_IN", "Place")
    assert not ontology.allows("Event", "LOCATED_IN", "Place")  # an event's place is TAKES_PLACE_IN only
    assert ontology.may_speak("SAYS", "Character") and not ontology.may_speak("SAYS", "Group")
    relationship = schema_of(ontology)["properties"]["relationships"]["items"]["properties"]
    assert types_of(relationship["role"]) == {"string", "null"}


def test_article_authors_works_and_quotes_people() -> None:
    ontology = article.ONTOLOGY
    authored = {(f.source, f.target) for f in ontology.facts if f.type == "AUTHORED"}
    assert authored == {("Person", "Topic"), ("Organization", "Topic")}
    assert {(f.source, f.target) for f in ontology.facts if f.type == "ABOUT"} == {
        ("Event", "Topic"),
        ("Topic", "Topic"),
    }
    assert ontology.may_speak("QUOTED", "Person") and not ontology.may_speak("QUOTED", "Organization")


def test_the_article_reply_schema_has_no_place_for_document_metadata() -> None:
    text = json.dumps(schema_of(article.ONTOLOGY))
    for field in ("published", "publisher", "url", "document"):
        assert f'"{field}"' not in text


@pytest.mark.parametrize("name", list(SHIPPED))
def test_each_ontology_lists_its_placeholders_folded_and_sorted(name: str) -> None:
    ontology = SHIPPED[name]
    assert {"he", "she", "it", "they", "someone"} <= set(ontology.placeholders)
    assert list(ontology.placeholders) == sorted({p.casefold().strip() for p in ontology.placeholders})
    assert ontology.is_placeholder("  She ") and not ontology.is_placeholder("Shelby")


def test_novel_placeholders_include_vague_references() -> None:
    assert {"the man", "the woman", "someone", "a voice"} <= set(novel.ONTOLOGY.placeholders)
    assert {"a spokesperson", "officials"} <= set(article.ONTOLOGY.placeholders)


@pytest.mark.parametrize("name", list(SHIPPED))
def test_the_prompt_describes_every_kind_and_carries_the_instructions(name: str) -> None:
    ontology = SHIPPED[name]
    prompt = ModelSchema.from_ontology(ontology).to_prompt_text()
    for kind in ontology.kinds:
        line = next(line for line in prompt.splitlines() if line.startswith(f"- {kind}: "))
        assert len(line) > len(kind) + 30, line
    assert ontology.instructions and ontology.instructions in prompt
    for fact in ontology.facts:
        assert f"- ({fact.source})-[{fact.type}]->({fact.target})" in prompt


def test_quote_instructions_ask_for_one_unbroken_stretch_per_part() -> None:
    for ontology in (novel.ONTOLOGY, article.ONTOLOGY):
        assert "one unbroken stretch" in ontology.instructions
        assert "give two quotes" in ontology.instructions
    assert "never turn it into a date" in novel.ONTOLOGY.instructions


# ----------------------------------------------------------------- the strict reply schema


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_object_is_closed_and_lists_every_property_as_required(name: str) -> None:
    schema = schema_of(VARIANTS[name])
    found = list(objects(schema))
    assert len(found) == (4 if VARIANTS[name].quote_types else 3)
    for obj in found:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])


@pytest.mark.parametrize("name", list(VARIANTS))
def test_only_optional_fields_are_nullable(name: str) -> None:
    schema = schema_of(VARIANTS[name])
    assert set(schema["properties"]) == (
        {"entities", "relationships", "quotes"} - (set() if VARIANTS[name].quote_types else {"quotes"})
    )
    for section, array in schema["properties"].items():
        assert types_of(array) == {"array"}
        for field, spec in array["items"]["properties"].items():
            assert ("null" in types_of(spec)) == ((section, field) in NULLABLE), (section, field)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_kinds_fact_types_and_quote_types_are_enums(name: str) -> None:
    ontology = VARIANTS[name]
    properties = schema_of(ontology)["properties"]
    assert properties["entities"]["items"]["properties"]["kind"]["enum"] == list(ontology.kinds)
    assert properties["relationships"]["items"]["properties"]["type"]["enum"] == sorted(
        {f.type for f in ontology.facts}
    )
    if ontology.quote_types:
        assert properties["quotes"]["items"]["properties"]["type"]["enum"] == list(ontology.quote_types)


# ----------------------------------------------------------------- determinism and fingerprints


def _fingerprints() -> dict[str, list[str]]:
    out = {}
    for name, ontology in VARIANTS.items():
        model = ModelSchema.from_ontology(ontology)
        out[name] = [
            ontology.fingerprint,
            model.fingerprint,
            json.dumps(model.to_json_schema()),
            model.to_prompt_text(),
        ]
    return out


def test_schema_prompt_and_fingerprints_are_the_same_on_every_build() -> None:
    assert _fingerprints() == _fingerprints()


def test_schema_prompt_and_fingerprints_do_not_depend_on_the_process() -> None:
    script = "import json\nfrom tests.unit.test_ontology import _fingerprints\nprint(json.dumps(_fingerprints()))\n"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPOSITORY, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == _fingerprints()


def test_fingerprints_differ_between_ontologies() -> None:
    assert len({o.fingerprint for o in VARIANTS.values()}) == len(VARIANTS)
    assert len({ModelSchema.from_ontology(o).fingerprint for o in SHIPPED.values()}) == 3


def test_fingerprints_change_with_the_instructions() -> None:
    changed = dataclasses.replace(generic.ONTOLOGY, instructions=generic.INSTRUCTIONS + "\nPrefer Concept to Event.")
    assert changed.fingerprint != generic.ONTOLOGY.fingerprint
    assert ModelSchema.from_ontology(changed).fingerprint != ModelSchema.from_ontology(generic.ONTOLOGY).fingerprint
    chat = ScriptedChat(lambda _request: "{}")
    assert Extractor(changed, chat).fingerprint != Extractor(generic.ONTOLOGY, chat).fingerprint


# ----------------------------------------------------------------- label prefix


def test_a_label_prefix_changes_labels_only() -> None:
    plain = generic.ONTOLOGY
    prefixed = plain.with_label_prefix("Rag")
    assert prefixed.labels_of("Person") == ("RagPerson",)
    assert prefixed.labels == ("RagPerson", "RagOrganization", "RagPlace", "RagEvent", "RagConcept")
    assert prefixed.kinds == plain.kinds and prefixed.facts == plain.facts
    assert prefixed.fact_types == plain.fact_types and prefixed.mention_type == plain.mention_type
    # What the model sees is the same; what is stored is not, so the ontology's fingerprint moves.
    assert schema_of(prefixed) == schema_of(plain)
    assert ModelSchema.from_ontology(prefixed).fingerprint == ModelSchema.from_ontology(plain).fingerprint
    assert prefixed.fingerprint != plain.fingerprint


def test_a_label_prefix_keeps_the_ids_extraction_computes() -> None:
    text = "Ines Duarte works for Lumen Freight in Porto."
    reply = json.dumps(
        {
            "entities": [
                {
                    "kind": "Person",
                    "name": "Ines Duarte",
                    "aliases": [],
                    "description": None,
                    "mentions": ["Ines Duarte"],
                },
                {"kind": "Organization", "name": "Lumen Freight", "aliases": [], "description": None, "mentions": []},
            ],
            "relationships": [
                {
                    "type": "WORKS_FOR",
                    "source": "Ines Duarte",
                    "target": "Lumen Freight",
                    "role": None,
                    "kind": None,
                    "description": None,
                }
            ],
        }
    )

    async def ground(ontology: Ontology) -> DocumentKnowledge:
        knowledge = DocumentKnowledge()
        raw = parse_reply(reply, max_bytes=1 << 20, max_depth=12, payload=ontology.fact_payload)
        await Grounder(ontology, ExtractionOptions()).add_chunk(knowledge, ExtractionChunk("c", "d", text, 0), raw)
        return knowledge

    plain, prefixed = (
        asyncio.run(ground(generic.ONTOLOGY)),
        asyncio.run(ground(generic.ONTOLOGY.with_label_prefix("Rag"))),
    )
    assert (
        set(plain.things)
        == set(prefixed.things)
        == {entity_id("Person", "Ines Duarte"), entity_id("Organization", "Lumen Freight")}
    )
    assert list(plain.facts) == list(prefixed.facts) and [f.type for f in prefixed.facts.values()] == ["WORKS_FOR"]


def test_a_bad_label_prefix_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        generic.ONTOLOGY.with_label_prefix("Rag-")


# ----------------------------------------------------------------- neo4j-graphrag's entity shape


def test_neo4j_graphrag_shape_adds_two_labels_and_mentions_from_chunk() -> None:
    plain = article.ONTOLOGY
    shaped = plain.with_neo4j_graphrag_entities()
    assert shaped.labels_of("Person") == ("Person", "__Entity__", "__KGBuilder__")
    assert shaped.mention_type == "FROM_CHUNK"
    assert shaped.kinds == plain.kinds and shaped.facts == plain.facts and shaped.quotes == plain.quotes
    assert schema_of(shaped) == schema_of(plain)
    assert shaped.fingerprint != plain.fingerprint
    added = shaped.schema_definitions(Layout.DEFAULT)
    keys = {(d.type, d.property) for d in added if isinstance(d, RelationshipUniqueConstraint)}
    assert keys == {("FROM_CHUNK", "key"), ("QUOTED", "key")}
    (names,) = [d for d in added if isinstance(d, FullTextIndex)]
    assert names.labels == plain.labels and names.properties == ("name", "aliases")


def test_neo4j_graphrag_shape_composes_with_a_label_prefix() -> None:
    shaped = novel.ONTOLOGY.with_label_prefix("Rag").with_neo4j_graphrag_entities()
    assert shaped.labels_of("Character") == ("RagCharacter", "__Entity__", "__KGBuilder__")


def test_a_fact_type_named_from_chunk_is_refused_in_neo4j_graphrag_shape() -> None:
    ontology = Ontology.custom("chunks", [Person, Place], [(Person, "FROM_CHUNK", Place)])
    with pytest.raises(ConfigurationError) as refused:
        ontology.with_neo4j_graphrag_entities()
    assert refused.value.code == "invalid-ontology"


# ----------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("build", "code"),
    [
        (lambda: Ontology.custom("x", [Person], [(Person, "LOCATED_IN", Place)]), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person, Document], []), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person, str], []), "invalid-ontology"),  # type: ignore[list-item]
        (lambda: Ontology.custom("x", [Person, Place, Person], []), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person, Place], [(Person, "LIVES IN", Place)]), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person, Place], [(Person, "MENTIONED_IN", Place)]), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person, Place], [(Person, "SAYS", Place)]), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person, Place], [], quotes=[("SHOUTS", [Person])]), "invalid-ontology"),
        (lambda: Ontology.custom("x", [Person], [], quotes=[("SAYS", [Place])]), "invalid-ontology"),
    ],
    ids=[
        "unknown-kind-in-a-fact",
        "a-lexical-class",
        "not-a-class-of-entity",
        "duplicate-kinds",
        "fact-type-not-an-identifier",
        "fact-type-named-like-mentions",
        "fact-type-named-like-a-quote",
        "unknown-quote-type",
        "unknown-speaker-kind",
    ],
)
def test_bad_ontologies_are_refused(build: Any, code: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        build()
    assert refused.value.code == code


def test_a_class_name_that_is_not_a_plain_identifier_is_refused() -> None:
    class Café(Entity):
        """A place serving coffee (not ASCII, so not a plain Cypher identifier)."""

    with pytest.raises(ConfigurationError):
        Ontology.custom("x", [Café], [])


# ----------------------------------------------------------------- what an ontology adds to the schema


@pytest.mark.parametrize("name", list(SHIPPED))
def test_schema_definitions_add_keys_mentions_quotes_and_one_names_index(name: str) -> None:
    ontology = SHIPPED[name]
    lexical = Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET)
    full = Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET, ontology)
    assert full[: len(lexical)] == lexical
    added = full[len(lexical) :]
    assert {(d.label, d.property) for d in added if isinstance(d, UniqueConstraint)} == {
        (kind, "id") for kind in ontology.kinds
    }
    assert {(d.type, d.property) for d in added if isinstance(d, RelationshipUniqueConstraint)} == {
        ("MENTIONED_IN", "key"),
        *((quote, "key") for quote in ontology.quote_types),
    }
    (names,) = [d for d in added if isinstance(d, FullTextIndex)]
    assert names.name == "graphrag_entity_names"
    assert names.labels == ontology.kinds and names.properties == ("name", "aliases")
    assert len(added) == len(ontology.kinds) + 1 + len(ontology.quote_types) + 1
    assert all(d.name.startswith("graphrag_") for d in added)


def test_schema_names_are_readable_snake_case() -> None:
    names = {d.name for d in novel.ONTOLOGY.with_label_prefix("Rag").schema_definitions(Layout.DEFAULT)}
    assert {"graphrag_rag_character_id_unique", "graphrag_mentioned_in_key_unique", "graphrag_says_key_unique"} <= names
    shaped = {d.name for d in generic.ONTOLOGY.with_neo4j_graphrag_entities().schema_definitions(Layout.DEFAULT)}
    assert {"graphrag_person_id_unique", "graphrag_from_chunk_key_unique", "graphrag_entity_names"} <= shaped


def test_create_steps_put_the_ontologys_constraints_before_any_index() -> None:
    steps = Schema.create_steps(Layout.DEFAULT, OFFLINE_EMBEDDING_SET, novel.ONTOLOGY)
    constraint = [step.definition.is_constraint for step in steps]
    assert constraint == sorted(constraint, reverse=True)
    assert sum(constraint) == len(Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET, novel.ONTOLOGY)) - sum(
        1 for s in steps if not s.definition.is_constraint
    )


def test_schema_names_follow_the_layouts_prefix() -> None:
    layout = Layout.DEFAULT.replace(schema_prefix="wiki")
    added = article.ONTOLOGY.with_label_prefix("Rag").schema_definitions(layout)
    assert all(d.name.startswith("wiki_") for d in added)
    assert {d.label for d in added if isinstance(d, UniqueConstraint)} == set(
        article.ONTOLOGY.with_label_prefix("Rag").labels
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda: Ontology.custom("x", [Person, Place], [(Person, "NEXT_CHUNK", Place)]),
        lambda: dataclasses.replace(generic.ONTOLOGY, mention_type="IN_DOCUMENT"),
        lambda: Ontology.custom("x", [Person, Place], [(Person, "KNOWS", Place)]),
    ],
    ids=["a-fact-type", "the-mention-type", "a-fact-type-of-another-layout"],
)
def test_a_relationship_type_of_the_layout_is_refused_for_things_naming_it(build: Any) -> None:
    layout = Layout.DEFAULT.replace(subsection_type="KNOWS")
    with pytest.raises(ConfigurationError) as refused:
        build().check_layout(layout)
    assert refused.value.code == "layout-collision"
    assert any(name in refused.value.message for name in ("NEXT_CHUNK", "IN_DOCUMENT", "KNOWS"))


# ----------------------------------------------------------------- applications subclass the shipped classes


class Researcher(article.Person):
    """A person who leads or carries out research: a scientist, scholar or analyst named in the text.

    The application sets ``orcid``; extraction never fills it.
    """

    orcid = StringProperty(db_property="orcid")


def test_an_application_subclass_is_its_own_kind_in_a_custom_ontology() -> None:
    science = Ontology.custom(
        name="science-news",
        entities=[Researcher, article.Organization, article.Topic],
        facts=[(Researcher, "WORKS_FOR", article.Organization), (Researcher, "AUTHORED", article.Topic)],
        quotes=[("QUOTED", [Researcher])],
        placeholders=article.PLACEHOLDERS,
        instructions="A study's lead author AUTHORED it.",
    )
    assert science.kinds == ("Researcher", "Organization", "Topic")
    assert science.class_of("Researcher") is Researcher and issubclass(Researcher, article.Person)
    prompt = ModelSchema.from_ontology(science).to_prompt_text()
    assert "- Researcher: A person who leads or carries out research" in prompt
    assert "orcid" not in prompt  # the first paragraph only: later ones are for Python readers
    added = science.schema_definitions(Layout.DEFAULT)
    assert ("Researcher", "id") in {(d.label, d.property) for d in added if isinstance(d, UniqueConstraint)}
    assert science.fingerprint != article.ONTOLOGY.fingerprint
