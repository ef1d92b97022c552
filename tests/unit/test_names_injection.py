"""Every name a layout or an ontology places in Cypher text is refused unless it is a plain identifier.

Labels, relationship types, property names, index names, the schema prefix, label prefixes,
extra labels, mention, fact and quote types and fact payload names are put into statements
as text (values are always parameters), so each one is walked here with injection payloads.
Each refusal happens when the layout or ontology is built, so no statement is ever rendered
from it, let alone sent to a database.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from neomodel import StringProperty

from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout
from graphrag_orm.ontologies import generic
from graphrag_orm.ontologies.things import Person, Place
from graphrag_orm.ontology import Entity, Ontology

PAYLOADS = {
    "set-clause": "X, e.pwned = true //",
    "backtick": "X`Y",
    "space": "X Y",
    "quote": "X'Y",
    "double-quote": 'X"Y',
    "newline": "X\nY",
    "pattern": "X})-[:PWNED]->(y",
    "colon": "X:Y",
    "non-ascii": "Café",
    "empty": "",
    "too-long": "X" * 65,
}

# ----------------------------------------------------------------- layouts: every field is a name


LAYOUT_FIELDS = [item.name for item in dataclasses.fields(Layout)]


@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
@pytest.mark.parametrize("name", LAYOUT_FIELDS)
def test_every_layout_name_refuses_an_injection_payload(name: str, payload: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(**{name: payload})
    assert refused.value.code == "invalid-layout"
    assert name in refused.value.message and "\n" not in refused.value.message


# ----------------------------------------------------------------- ontologies: each field that reaches Cypher


def _named_class(payload: str) -> Ontology:
    thing = type(payload, (Entity,), {"__module__": __name__, "__doc__": "A thing."})
    return Ontology.custom("x", [thing], [])


def _own_label(payload: str) -> Ontology:
    thing = type("Labelled", (Entity,), {"__module__": __name__, "__label__": payload, "__doc__": "A thing."})
    return Ontology.custom("x", [thing], [])


def _ancestor_label(payload: str) -> Ontology:
    ancestor = type("Ancestor", (Entity,), {"__module__": __name__, "__label__": payload, "__doc__": "A thing."})
    child = type("Child", (ancestor,), {"__module__": __name__, "__doc__": "A thing."})
    return Ontology.custom("x", [child], [])


def _fact_type(payload: str) -> Ontology:
    return Ontology.custom("x", [Person, Place], [(Person, payload, Place)])


def _quote_type(payload: str) -> Ontology:
    return Ontology.custom("x", [Person], [], quotes=[(payload, [Person])])


def _replaced(field: str, value: Callable[[str], Any]) -> Callable[[str], Ontology]:
    return lambda payload: dataclasses.replace(generic.ONTOLOGY, **{field: value(payload)})


# Each field of Ontology that can carry a name into Cypher, with the ways it can.
ONTOLOGY_NAMES: dict[str, list[Callable[[str], Ontology]]] = {
    "classes": [_named_class, _own_label, _ancestor_label],
    "facts": [_fact_type],
    "quotes": [_quote_type],
    # An empty prefix is no prefix, so the empty payload is replaced by another bad one.
    "label_prefix": [_replaced("label_prefix", lambda payload: payload or "-")],
    "extra_labels": [
        _replaced("extra_labels", lambda payload: (payload,)),
        _replaced("extra_labels", lambda payload: ("__Entity__", payload)),
    ],
    "mention_type": [_replaced("mention_type", lambda payload: payload)],
    "fact_payload": [_replaced("fact_payload", lambda payload: ("role", payload))],
}
# Fields that never reach Cypher text: the name and instructions go to the model, placeholders
# are compared in Python, and _kinds is derived from the classes.
NOT_IN_CYPHER = {"name", "instructions", "placeholders", "_kinds"}
ONTOLOGY_CASES = [
    pytest.param(build, id=f"{field}-{number}")
    for field, builds in ONTOLOGY_NAMES.items()
    for number, build in enumerate(builds)
]


def test_every_ontology_field_is_walked_or_known_not_to_reach_cypher() -> None:
    fields = {item.name for item in dataclasses.fields(Ontology)}
    assert fields == set(ONTOLOGY_NAMES) | NOT_IN_CYPHER


@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
@pytest.mark.parametrize("build", ONTOLOGY_CASES)
def test_every_ontology_name_refuses_an_injection_payload(build: Callable[[str], Ontology], payload: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        build(payload)
    assert refused.value.code == "invalid-ontology"
    assert "\n" not in refused.value.message


def test_the_extra_label_injection_of_the_issue_is_refused_naming_the_label() -> None:
    with pytest.raises(ConfigurationError) as refused:
        dataclasses.replace(generic.ONTOLOGY, extra_labels=("X, e.pwned = true //",))
    assert refused.value.code == "invalid-ontology"
    assert "extra label" in refused.value.message and "X, e.pwned = true //" in refused.value.message


def test_neo4j_graphrags_underscored_labels_stay_valid() -> None:
    shaped = generic.ONTOLOGY.with_neo4j_graphrag_entities()
    assert shaped.labels_of("Person") == ("Person", "__Entity__", "__KGBuilder__")


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [(("__Entity__", "__Entity__"), "repeated"), (("Person",), "kind"), (("_",), "not a plain Cypher identifier")],
)
def test_extra_labels_are_distinct_and_never_a_kind(extra: tuple[str, ...], fragment: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        dataclasses.replace(generic.ONTOLOGY, extra_labels=extra)
    assert refused.value.code == "invalid-ontology" and fragment in refused.value.message


@pytest.mark.parametrize("name", ["documentIds", "runId", "extractorVersion", "type", "source", "target"])
def test_a_fact_payload_name_may_not_be_a_stored_or_reply_name(name: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        dataclasses.replace(generic.ONTOLOGY, fact_payload=("role", name))
    assert refused.value.code == "invalid-ontology" and name in refused.value.message


def test_a_class_storing_two_attributes_under_one_name_is_refused_naming_both() -> None:
    class Nicknamed(Entity):
        """A thing whose nickname would overwrite its name."""

        nickname = StringProperty(db_property="name")

    with pytest.raises(ConfigurationError) as refused:
        Ontology.custom("x", [Nicknamed], [])
    assert refused.value.code == "invalid-ontology"
    assert "nickname" in refused.value.message and "'name'" in refused.value.message
