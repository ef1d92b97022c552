"""The knowledge-graph model: things (entities), facts between them, mentions and quotes.

Things are neomodel async node classes: subclass :class:`Entity` (label = class name).
Facts are relationships whose types are the ontology's names; each type has one
relationship model for the whole process (neomodel binds a model to a type), carrying
the sorted ids of the documents that state the fact. A mention links a thing to the
chunk that names it, with the located byte span; a quote links a speaker to the chunk
holding the spoken words. Mentions share one relationship type (``MENTIONED_IN``).
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any, cast

from neomodel import (
    ArrayProperty,
    AsyncRelationshipTo,
    AsyncStructuredNode,
    AsyncStructuredRel,
    BooleanProperty,
    IntegerProperty,
    StringProperty,
)

__all__ = [
    "MENTION_TYPE",
    "Entity",
    "Fact",
    "Mention",
    "Quote",
    "Quoted",
    "Says",
    "entity_id",
    "fact_model",
    "join_aliases",
    "kind_description",
    "mention_key",
    "normalize_name",
    "placeholder_id",
    "quote_key",
    "quote_model",
    "split_aliases",
    "tenant_thing_id",
]

#: The shared mention type (neo4j-graphrag's shape uses FROM_CHUNK instead).
MENTION_TYPE = "MENTIONED_IN"


class Mention(AsyncStructuredRel):
    """``(thing)-[:MENTIONED_IN]->(chunk)``: the located bytes that name the thing.

    ``key`` hashes the chunk id, the start byte and the thing id, so re-extracting a chunk
    yields the same keys and one thing named twice in a chunk keeps two mentions.
    """

    key = StringProperty(unique_index=True, required=True, db_property="key")
    document_id = StringProperty(required=True, db_property="documentId")
    start_byte = IntegerProperty(required=True, db_property="startByte")
    end_byte = IntegerProperty(required=True, db_property="endByte")
    quote = StringProperty(required=True, db_property="quote")
    run_id = StringProperty(required=True, db_property="runId")
    extractor_version = StringProperty(required=True, db_property="extractorVersion")


class Quote(AsyncStructuredRel):
    """``(speaker)-[:SAYS|QUOTED]->(chunk)``: the spoken words' located bytes (and addressee)."""

    key = StringProperty(unique_index=True, required=True, db_property="key")
    document_id = StringProperty(required=True, db_property="documentId")
    start_byte = IntegerProperty(required=True, db_property="startByte")
    end_byte = IntegerProperty(required=True, db_property="endByte")
    quote = StringProperty(required=True, db_property="quote")
    addressee = StringProperty(db_property="addressee")
    run_id = StringProperty(required=True, db_property="runId")
    extractor_version = StringProperty(required=True, db_property="extractorVersion")


class Fact(AsyncStructuredRel):
    """A fact between two things; ``document_ids`` lists (sorted) the documents that state it."""

    document_ids = ArrayProperty(StringProperty(), required=True, db_property="documentIds")
    role = StringProperty(db_property="role")
    kind = StringProperty(db_property="kind")
    description = StringProperty(db_property="description")
    run_id = StringProperty(required=True, db_property="runId")
    extractor_version = StringProperty(required=True, db_property="extractorVersion")


class Says(Quote):
    """``SAYS`` (the novel ontology): a character's spoken words."""


class Quoted(Quote):
    """``QUOTED`` (the article ontology): a person's quoted words."""


_FACT_MODELS: dict[str, type[Fact]] = {}
_QUOTE_MODELS: dict[str, type[Quote]] = {"SAYS": Says, "QUOTED": Quoted}


def fact_model(fact_type: str) -> type[Fact]:
    """The one relationship model for facts of ``fact_type`` in this process."""
    model = _FACT_MODELS.get(fact_type)
    if model is None:
        name = "".join(part.capitalize() for part in fact_type.split("_")) + "Fact"
        model = cast(type[Fact], type(name, (Fact,), {"__module__": __name__}))
        _FACT_MODELS[fact_type] = model
    return model


def quote_model(quote_type: str) -> type[Quote]:
    model = _QUOTE_MODELS.get(quote_type)
    if model is None:
        name = "".join(part.capitalize() for part in quote_type.split("_")) + "Quote"
        model = cast(type[Quote], type(name, (Quote,), {"__module__": __name__}))
        _QUOTE_MODELS[quote_type] = model
    return model


class Entity(AsyncStructuredNode):
    """A thing the ontology names. Subclass it; the class name is the label and the kind.

    ``uid`` (stored ``id``) is computed from the kind and the resolved name
    (:func:`entity_id`), or, for a placeholder ("she", "the man"), from its chunk and
    span (:func:`placeholder_id`), so placeholders never merge. ``aliases`` is one string,
    the aliases sorted and separated by line breaks.
    """

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    name = StringProperty(required=True, db_property="name")
    aliases = StringProperty(db_property="aliases")
    description = StringProperty(db_property="description")
    is_placeholder = BooleanProperty(default=False, db_property="isPlaceholder")
    run_id = StringProperty(required=True, db_property="runId")
    extractor_version = StringProperty(required=True, db_property="extractorVersion")

    # One shared relationship model for every class's mentions (default layout's Chunk).
    mentioned_in = AsyncRelationshipTo("graphrag_orm.models.Chunk", MENTION_TYPE, model=Mention)


def normalize_name(name: str) -> str:
    """Unicode NFC, case-folded, whitespace runs collapsed: the resolution key of a name."""
    return " ".join(unicodedata.normalize("NFC", name).casefold().split())


def _digest(*parts: str) -> str:
    body = "\x1f".join(f"{len(part)}:{part}" for part in parts)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def entity_id(kind: str, name: str) -> str:
    """The id of the thing of ``kind`` named ``name`` (after normalisation)."""
    return _digest("entity", kind, normalize_name(name))


def placeholder_id(kind: str, chunk_id: str, start_byte: int) -> str:
    """A placeholder's id: its chunk and span, so it never merges with another."""
    return _digest("placeholder", kind, chunk_id, str(start_byte))


def tenant_thing_id(thing_id: str, tenant: str) -> str:
    """A thing's id in a tenanted graph: its id qualified by the tenant, so two tenants naming
    the same thing hold two things (docs/tenancy.md); untenanted, a thing's id is its own."""
    return _digest("tenant-thing", tenant, thing_id)


def mention_key(chunk_id: str, start_byte: int, thing_id: str) -> str:
    return _digest("mention", chunk_id, str(start_byte), thing_id)


def quote_key(chunk_id: str, start_byte: int, speaker_id: str) -> str:
    return _digest("quote", chunk_id, str(start_byte), speaker_id)


def join_aliases(aliases: set[str] | list[str] | tuple[str, ...]) -> str | None:
    """Aliases as stored: sorted, unique, one per line (None when there are none)."""
    kept = sorted({alias.strip() for alias in aliases if alias.strip() and "\n" not in alias})
    return "\n".join(kept) if kept else None


def split_aliases(stored: str | None) -> list[str]:
    return [line for line in (stored or "").split("\n") if line]


def kind_description(cls: type[Any]) -> str:
    """The first paragraph of a class's docstring, for the model's instructions."""
    doc = (cls.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split()) if doc else ""
