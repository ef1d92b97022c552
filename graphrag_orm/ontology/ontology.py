"""An ontology: the kinds of things, the allowed facts between them, quotes and placeholders.

Build one with :meth:`Ontology.custom` from :class:`Entity` subclasses and
``(Source, "TYPE", Target)`` triples, or use a shipped one (``graphrag_orm.ontologies``).
Every name an ontology places in query text (kinds and the neomodel labels of their
classes, the label prefix, extra labels, mention, fact and quote types, fact payload
names) is validated once, when the ontology is built, as a plain Cypher identifier, so
it can be placed in query text; what a model writes (names, aliases, quotes) is only
ever a parameter.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout, validate_identifier
from graphrag_orm.models import check_label_collisions
from graphrag_orm.ontology.entities import MENTION_TYPE, Entity, Fact, kind_description, normalize_name
from graphrag_orm.schema import (
    FullTextIndex,
    RangeIndex,
    RelationshipUniqueConstraint,
    SchemaDefinition,
    UniqueConstraint,
)
from graphrag_orm.tenancy import TENANT_PROPERTY

__all__ = ["NEO4J_GRAPHRAG_LABELS", "QUOTE_TYPES", "FactType", "Ontology", "QuoteType"]

NEO4J_GRAPHRAG_LABELS = ("__Entity__", "__KGBuilder__")
QUOTE_TYPES = ("SAYS", "QUOTED")
_PAYLOAD_DEFAULT = ("role", "kind", "description")
# What a fact stores besides its payload, and the reply's own relationship fields.
_FACT_STORED = tuple(
    prop.get_db_property_name(attribute)
    for attribute, prop in Fact.defined_properties(aliases=False, rels=False).items()
    if prop.get_db_property_name(attribute) not in _PAYLOAD_DEFAULT
)
_REPLY_FIELDS = ("type", "source", "target")


@dataclass(frozen=True)
class FactType:
    """An allowed fact: ``(source kind)-[type]->(target kind)``."""

    source: str
    type: str
    target: str


@dataclass(frozen=True)
class QuoteType:
    """An allowed quote type (``SAYS``, ``QUOTED``) and the kinds that may speak."""

    type: str
    speakers: tuple[str, ...]


@dataclass(frozen=True)
class Ontology:
    """The kinds, facts, quotes and placeholders extraction may produce, and how they are stored."""

    name: str
    classes: tuple[type[Entity], ...]
    facts: tuple[FactType, ...]
    quotes: tuple[QuoteType, ...] = ()
    placeholders: tuple[str, ...] = ()
    instructions: str = ""
    label_prefix: str = ""
    extra_labels: tuple[str, ...] = ()
    mention_type: str = MENTION_TYPE
    fact_payload: tuple[str, ...] = _PAYLOAD_DEFAULT
    _kinds: dict[str, type[Entity]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            self._validate()
        except ConfigurationError as error:
            if error.code == ErrorCode.INVALID_LAYOUT:  # a bad name in an ontology is the ontology's fault
                raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, error.message) from None
            raise

    def _validate(self) -> None:
        kinds: dict[str, type[Entity]] = {}
        for cls in self.classes:
            if not (isinstance(cls, type) and issubclass(cls, Entity)):
                raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, f"{cls!r} is not an Entity subclass")
            kind = validate_identifier(cls.__name__, "entity kind")
            if kind in kinds:
                raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, f"two classes are named {kind}")
            _check_stored_properties(cls)
            kinds[kind] = cls
        object.__setattr__(self, "_kinds", kinds)
        normalized = tuple(sorted({normalize_name(p) for p in self.placeholders if p.strip()}))
        object.__setattr__(self, "placeholders", normalized)
        if self.label_prefix:
            validate_identifier(self.label_prefix, "label prefix")
        self._validate_labels()
        validate_identifier(self.mention_type, "mention type")
        for fact in self.facts:
            validate_identifier(fact.type, "fact type")
            for end in (fact.source, fact.target):
                if end not in kinds:
                    raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, f"fact {fact.type} names unknown kind {end}")
        for quote in self.quotes:
            if quote.type not in QUOTE_TYPES:
                raise ConfigurationError(
                    ErrorCode.INVALID_ONTOLOGY, f"quote types are {QUOTE_TYPES}, not {quote.type!r}"
                )
            for speaker in quote.speakers:
                if speaker not in kinds:
                    raise ConfigurationError(
                        ErrorCode.INVALID_ONTOLOGY, f"quote {quote.type} names unknown kind {speaker}"
                    )
        reserved = {self.mention_type, *QUOTE_TYPES}
        for fact in self.facts:
            if fact.type in reserved:
                raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, f"a fact type may not be named {fact.type}")
        self._validate_fact_payload()

    def _validate_labels(self) -> None:
        """Every label a thing is written with is an identifier; extra labels are distinct and no kind's."""
        seen: set[str] = set()
        for label in self.extra_labels:
            validate_identifier(label, "extra label", leading_underscores=True)
            if label in seen:
                raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, f"extra label {label!r} is repeated")
            seen.add(label)
        for kind, cls in self._kinds.items():
            # An Entity ancestor's (or the class's own) neomodel __label__ is written too.
            for label in cls.inherited_labels():
                validate_identifier(label, f"label of {kind} (a neomodel __label__)")
            clashes = sorted(set(self._own_labels(kind)) & seen)
            if clashes:
                raise ConfigurationError(
                    ErrorCode.INVALID_ONTOLOGY,
                    f"extra label {clashes[0]!r} is a label of kind {kind}; extra labels are added to every kind",
                )

    def _validate_fact_payload(self) -> None:
        """Payload names are identifiers, distinct, and neither a fact's stored name nor a reply field."""
        taken = {name: f"a fact's stored {name!r}" for name in _FACT_STORED} | {
            name: f"the reply's relationship field {name!r}" for name in _REPLY_FIELDS
        }
        seen: set[str] = set()
        for name in self.fact_payload:
            validate_identifier(name, "fact payload name")
            if name in taken:
                raise ConfigurationError(
                    ErrorCode.INVALID_ONTOLOGY, f"fact payload name {name!r} would overwrite {taken[name]}"
                )
            if name in seen:
                raise ConfigurationError(ErrorCode.INVALID_ONTOLOGY, f"fact payload name {name!r} is repeated")
            seen.add(name)

    @classmethod
    def custom(
        cls,
        name: str,
        entities: Sequence[type[Entity]],
        facts: Iterable[tuple[type[Entity], str, type[Entity]]],
        quotes: Iterable[tuple[str, Sequence[type[Entity]]]] = (),
        placeholders: Iterable[str] = (),
        instructions: str = "",
    ) -> Ontology:
        """An ontology of the application's own classes and triples."""
        return cls(
            name=name,
            classes=tuple(entities),
            facts=tuple(FactType(source.__name__, fact_type, target.__name__) for source, fact_type, target in facts),
            quotes=tuple(QuoteType(quote_type, tuple(s.__name__ for s in speakers)) for quote_type, speakers in quotes),
            placeholders=tuple(placeholders),
            instructions=instructions.strip(),
        )

    def with_label_prefix(self, prefix: str) -> Ontology:
        """The same ontology stored under prefixed labels (``RagPerson``); kinds, ids and types stay."""
        return replace(self, label_prefix=prefix)

    def with_neo4j_graphrag_entities(self) -> Ontology:
        """Stored in neo4j-graphrag's shape: extra labels ``__Entity__`` and ``__KGBuilder__``,
        mentions as ``FROM_CHUNK`` (one shared type), names under ``name``."""
        for fact in self.facts:
            if fact.type == "FROM_CHUNK":
                raise ConfigurationError(
                    ErrorCode.INVALID_ONTOLOGY, "a fact type named FROM_CHUNK collides with the mention type"
                )
        return replace(self, extra_labels=NEO4J_GRAPHRAG_LABELS, mention_type="FROM_CHUNK")

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def class_of(self, kind: str) -> type[Entity] | None:
        return self._kinds.get(kind)

    def label_of(self, kind: str) -> str:
        return f"{self.label_prefix}{kind}"

    def labels_of(self, kind: str) -> tuple[str, ...]:
        """Every label a thing of ``kind`` is written with: its own first, then its Entity
        ancestors' (so neomodel resolves the class), each prefixed, then the extra labels."""
        return (*self._own_labels(kind), *self.extra_labels)

    def _own_labels(self, kind: str) -> tuple[str, ...]:
        cls = self._kinds[kind]
        inherited = [label for label in cls.inherited_labels() if label != cls.__name__]
        return (self.label_of(kind), *(f"{self.label_prefix}{label}" for label in inherited))

    @property
    def owners(self) -> tuple[type[Entity], ...]:
        """The ontology's classes and their Entity ancestors (the classes its labels belong to)."""
        found: list[type[Entity]] = []
        for cls in self.classes:
            for base in cls.__mro__:
                if isinstance(base, type) and issubclass(base, Entity) and base is not Entity and base not in found:
                    found.append(base)
        return tuple(found)

    def check_layout(self, layout: Layout) -> None:
        """Refuse things stored under one of the layout's labels (a thing named Document), and facts,
        mentions or quotes stored under one of its structural relationship types (a fact NEXT_CHUNK)."""
        taken = set(layout.labels) & {label for kind in self._kinds for label in self.labels_of(kind)}
        if taken:
            raise ConfigurationError(
                ErrorCode.LAYOUT_COLLISION,
                f"the ontology would store things under the layout's labels {sorted(taken)}; "
                "rename the class or use ontology.with_label_prefix('Rag')",
            )
        types = set(layout.relationship_types) & {self.mention_type, *self.quote_types, *self.fact_types}
        if types:
            raise ConfigurationError(
                ErrorCode.LAYOUT_COLLISION,
                f"the ontology would store facts, mentions or quotes as the layout's relationship types "
                f"{sorted(types)}; rename the fact type or choose other layout types",
            )

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.label_of(kind) for kind in self._kinds)

    @property
    def fact_types(self) -> tuple[str, ...]:
        return tuple(sorted({fact.type for fact in self.facts}))

    @property
    def quote_types(self) -> tuple[str, ...]:
        return tuple(quote.type for quote in self.quotes)

    def allows(self, source: str, fact_type: str, target: str) -> bool:
        return FactType(source, fact_type, target) in self.facts

    def may_speak(self, quote_type: str, kind: str) -> bool:
        return any(q.type == quote_type and kind in q.speakers for q in self.quotes)

    def is_placeholder(self, name: str) -> bool:
        return normalize_name(name) in self.placeholders

    def describe(self) -> dict[str, Any]:
        """Everything that changes what extraction asks for or how it is stored (for the fingerprint)."""
        return {
            "name": self.name,
            "kinds": {kind: kind_description(cls) for kind, cls in self._kinds.items()},
            "facts": [[f.source, f.type, f.target] for f in self.facts],
            "quotes": [[q.type, list(q.speakers)] for q in self.quotes],
            "placeholders": list(self.placeholders),
            "instructions": self.instructions,
            "labelPrefix": self.label_prefix,
            "extraLabels": list(self.extra_labels),
            "mentionType": self.mention_type,
        }

    @property
    def fingerprint(self) -> str:
        body = json.dumps(self.describe(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def names_index_name(self, layout: Layout) -> str:
        return f"{layout.schema_prefix}_entity_names"

    def schema_definitions(self, layout: Layout) -> list[SchemaDefinition]:
        """A uniqueness constraint per class id, per mention and quote key, and one names index.

        A tenanted layout's names index covers ``tenant`` beside the names (the graph route
        filters by it inside the index, as the chunk full-text route does), and each kind's
        label has a range index on ``tenant`` (docs/tenancy.md)."""
        self.check_layout(layout)
        check_label_collisions(
            self.labels, allowed_owners=self.owners, hint="use ontology.with_label_prefix('Rag') or your own classes"
        )
        prefix = layout.schema_prefix
        found: list[SchemaDefinition] = []
        for kind in self._kinds:
            label = self.label_of(kind)
            found.append(UniqueConstraint(name=f"{prefix}_{_snake(label)}_id_unique", label=label, property="id"))
            if layout.tenanted:
                found.append(
                    RangeIndex(
                        name=f"{prefix}_{_snake(label)}_{TENANT_PROPERTY}_index",
                        label=label,
                        properties=(TENANT_PROPERTY,),
                    )
                )
        found.append(
            RelationshipUniqueConstraint(
                name=f"{prefix}_{_snake(self.mention_type)}_key_unique", type=self.mention_type, property="key"
            )
        )
        for quote in self.quote_types:
            found.append(
                RelationshipUniqueConstraint(name=f"{prefix}_{_snake(quote)}_key_unique", type=quote, property="key")
            )
        tenant = (TENANT_PROPERTY,) if layout.tenanted else ()
        found.append(
            FullTextIndex(
                name=self.names_index_name(layout), labels=self.labels, properties=("name", "aliases", *tenant)
            )
        )
        return found


def _check_stored_properties(cls: type[Entity]) -> None:
    """Refuse a class that stores two of its attributes under one property name (one would overwrite the other)."""
    owners: dict[str, str] = {}
    for attribute, prop in cls.defined_properties(aliases=False, rels=False).items():
        stored = prop.get_db_property_name(attribute)
        if stored in owners:
            raise ConfigurationError(
                ErrorCode.INVALID_ONTOLOGY,
                f"{cls.__name__} stores both {owners[stored]!r} and {attribute!r} as {stored!r}; rename one db_property",
            )
        owners[stored] = attribute


def _snake(name: str) -> str:
    """``RagPerson`` -> ``rag_person``; an upper-case type (``MENTIONED_IN``) just lower-cases."""
    if name.upper() == name:
        return name.lower().strip("_")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("__", "_").strip("_")
