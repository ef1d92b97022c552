"""The schema text a model writes Cypher against, generated from the model classes and the ontology.

Deterministic and read from declarations only (nothing is read from the database, so no
tenant's data and no APOC call reaches the prompt): the same model and ontology always
give the same text, so recorded model calls replay. It lists, in this order:

- the lexical labels (document, section, chunk) with their stored properties and types,
  never the chunk's embedding or its embedding set id;
- the layout's structural relationship types, each with its ends and properties;
- each ontology class's label (prefixed as stored), its properties and its description
  (the class docstring's first paragraph), and any extra labels every thing carries;
- each fact type with its ends and properties;
- the mention type and each quote type, with their ends and properties;
- the ontology's instructions, as notes (they say what its kinds and facts mean).

Every name here is a validated identifier (the layout's and the ontology's), so the
text holds no user or document text at all.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any, cast

from neomodel import (
    ArrayProperty,
    BooleanProperty,
    DateProperty,
    DateTimeNeo4jFormatProperty,
    DateTimeProperty,
    FloatProperty,
    IntegerProperty,
)
from neomodel.properties import Property

from graphrag_orm.models import LexicalModel, edge_model
from graphrag_orm.ontology import Mention, Ontology, fact_model, quote_model
from graphrag_orm.ontology.entities import kind_description

__all__ = ["schema_names", "schema_text"]

#: The chunk's attributes the schema never shows: vectors are not for queries to read.
_HIDDEN_CHUNK_ATTRIBUTES = frozenset({"embedding", "embedding_set_id"})
#: The payload every fact class declares; an ontology may store another (``fact_payload``).
_DEFAULT_FACT_PAYLOAD = cast(
    tuple[str, ...], next(f.default for f in dataclasses.fields(Ontology) if f.name == "fact_payload")
)

_HEADER = """\
Node labels with their properties (name: type), then relationship types with their ends
and properties. Only these labels, relationship types and properties exist; a property
may be missing (null) on some nodes."""


def _type_name(prop: Property[Any]) -> str:
    """The Cypher type a property is stored as."""
    if isinstance(prop, ArrayProperty):
        base = prop.base_property
        return f"LIST<{_type_name(base) if base is not None else 'ANY'}>"
    if isinstance(prop, BooleanProperty):
        return "BOOLEAN"
    if isinstance(prop, IntegerProperty):
        return "INTEGER"
    if isinstance(prop, FloatProperty | DateTimeProperty):  # DateTimeProperty stores epoch seconds
        return "FLOAT"
    if isinstance(prop, DateTimeNeo4jFormatProperty):
        return "DATETIME"
    if isinstance(prop, DateProperty):
        return "STRING"  # neomodel stores a DateProperty as ISO text
    return "STRING"


def _properties(cls: type[Any], hidden: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    return [
        (prop.get_db_property_name(attribute), _type_name(prop))
        for attribute, prop in cls.defined_properties(aliases=False, rels=False).items()
        if attribute not in hidden
    ]


def _map(properties: Iterable[tuple[str, str]]) -> str:
    shown = ", ".join(f"{name}: {kind}" for name, kind in properties)
    return f" {{{shown}}}" if shown else ""


def _node(label: str, properties: Iterable[tuple[str, str]]) -> str:
    return f"(:{label}{_map(properties)})"


def _edge(source: str, type_: str, target: str, properties: Iterable[tuple[str, str]]) -> str:
    return f"(:{source})-[:{type_}{_map(properties)}]->(:{target})"


def _lexical(model: LexicalModel) -> list[str]:
    lines = ["Documents and their passages:"]
    lines.append(_node(model.document.__label__, _properties(model.document)))
    lines.append(_node(model.section.__label__, _properties(model.section)))
    lines.append(_node(model.chunk.__label__, _properties(model.chunk, _HIDDEN_CHUNK_ATTRIBUTES)))
    for edge in model.edges:
        properties = _properties(edge_model(edge.relationship_type))
        lines.append(_edge(edge.source_label, edge.relationship_type, edge.target_label, properties))
    layout = model.layout
    lines.append(
        f"A {model.chunk.__label__}'s {layout.chunk_text_property} is a passage of its document's text; "
        f"{layout.chunk_order_property} is its position in the document."
    )
    return lines


def _fact_properties(ontology: Ontology, fact_type: str) -> list[tuple[str, str]]:
    declared = _properties(fact_model(fact_type))
    stored = [(name, kind) for name, kind in declared if name not in _DEFAULT_FACT_PAYLOAD]
    payload = dict(declared)
    return [*stored, *((name, payload.get(name, "STRING")) for name in ontology.fact_payload)]


def _knowledge(model: LexicalModel, ontology: Ontology, *, notes: bool = True) -> list[str]:
    chunk = model.chunk.__label__
    lines = ["", f"Things (ontology {ontology.name}), each with its own label:"]
    for kind in ontology.kinds:
        cls = ontology.class_of(kind)
        assert cls is not None
        description = kind_description(cls)
        lines.append(_node(ontology.label_of(kind), _properties(cls)) + (f"  // {description}" if description else ""))
    lines.append("A thing's aliases are its other names, one per line, in one string.")
    if ontology.extra_labels:
        lines.append(f"Every thing also has the labels {', '.join(ontology.extra_labels)}.")
    lines.extend(["", "Facts between things:"])
    for fact in ontology.facts:
        properties = _fact_properties(ontology, fact.type)
        lines.append(_edge(ontology.label_of(fact.source), fact.type, ontology.label_of(fact.target), properties))
    lines.append("A fact's documentIds lists the ids of the documents that state it.")
    things = "|".join(ontology.labels)
    lines.extend(["", "Mentions (a thing named in a passage, with the bytes that name it):"])
    lines.append(_edge(things, ontology.mention_type, chunk, _properties(Mention)))
    if ontology.quotes:
        lines.extend(["", "Quotes (words a speaker says in a passage):"])
        for quote in ontology.quotes:
            speakers = "|".join(ontology.label_of(kind) for kind in quote.speakers)
            lines.append(_edge(speakers, quote.type, chunk, _properties(quote_model(quote.type))))
    if ontology.instructions and notes:
        lines.extend(["", "Notes from the ontology (written for extraction):", ontology.instructions])
    return lines


def schema_text(model: LexicalModel, ontology: Ontology | None = None) -> str:
    """The schema text for ``model`` and ``ontology`` (see the module's docstring); ends with a newline."""
    lines = [_HEADER, "", *_lexical(model)]
    if ontology is not None:
        lines.extend(_knowledge(model, ontology))
    return "\n".join(lines) + "\n"


#: A node ``(:A|B {x: T, ...})`` or a relationship ``[:R {x: T, ...}]`` of the schema text.
_DECLARED = re.compile(r"\(:([\w|]+)(?: \{([^}]*)\})?\)|\[:(\w+)(?: \{([^}]*)\})?\]")


def schema_names(model: LexicalModel, ontology: Ontology | None = None) -> frozenset[str]:
    """Every label, relationship type and property name :func:`schema_text` shows.

    What a query may name on a graph that does not hold it yet (an empty graph, a kind
    nothing was extracted as): the sandbox refuses any other name the database has never
    held (``unknown-name``).
    """
    lines = [*_lexical(model), *(_knowledge(model, ontology, notes=False) if ontology is not None else ())]
    names: set[str] = set(ontology.extra_labels) if ontology is not None else set()
    for line in lines:
        for labels, node_properties, type_, edge_properties in _DECLARED.findall(line):
            names.update(label for label in labels.split("|") if label)
            if type_:
                names.add(type_)
            for item in f"{node_properties}, {edge_properties}".split(", "):
                if ":" in item:
                    names.add(item.split(":", 1)[0].strip())
    return frozenset(names)
