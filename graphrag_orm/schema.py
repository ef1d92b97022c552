"""What the toolkit needs in the database, as reviewable definitions and steps.

:meth:`Schema.definitions` derives, reading nothing: a uniqueness constraint for
every key the model classes declare (``unique_index``), a range index for every
``index=True`` property, the vector index on the chunk embedding (the embedding
set's dimensions and similarity) and the full-text index on chunk text. Names
start with the layout's schema prefix. :meth:`Schema.create_steps` gives the same
as migration steps; each renders idempotent Cypher (``IF NOT EXISTS``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, Protocol

from neomodel import AsyncStructuredNode
from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import EmbeddingSet, Similarity
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout, validate_identifier
from graphrag_orm.models import for_layout
from graphrag_orm.values import Value

#: Filter properties a vector index may declare (``WITH [...]``).
MAX_VECTOR_FILTER_PROPERTIES = 8

__all__ = [
    "MAX_VECTOR_FILTER_PROPERTIES",
    "CreateStep",
    "DropStep",
    "FullTextAnalyzer",
    "FullTextIndex",
    "RangeIndex",
    "RelationshipUniqueConstraint",
    "Schema",
    "SchemaContributor",
    "UniqueConstraint",
    "VectorIndex",
]


class SchemaContributor(Protocol):
    """Something that adds definitions to the lexical schema (an ontology, for example)."""

    def schema_definitions(self, layout: Layout) -> Sequence[SchemaDefinition]: ...


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class UniqueConstraint(Value):
    """``REQUIRE n.property IS UNIQUE`` on one label."""

    kind: Literal["unique-constraint"] = "unique-constraint"
    name: str
    label: str
    property: str

    def create_cypher(self) -> str:
        return f"CREATE CONSTRAINT {self.name} IF NOT EXISTS FOR (n:{self.label}) REQUIRE n.{self.property} IS UNIQUE"

    def drop_cypher(self) -> str:
        return f"DROP CONSTRAINT {self.name} IF EXISTS"

    is_constraint: ClassVar[bool] = True

    def signature(self) -> tuple[Any, ...]:
        return ("UNIQUENESS", (self.label,), (self.property,))


class RelationshipUniqueConstraint(Value):
    """``REQUIRE r.property IS UNIQUE`` on one relationship type (mention and quote keys)."""

    kind: Literal["relationship-unique-constraint"] = "relationship-unique-constraint"
    name: str
    type: str
    property: str

    def create_cypher(self) -> str:
        return (
            f"CREATE CONSTRAINT {self.name} IF NOT EXISTS FOR ()-[r:{self.type}]-() REQUIRE r.{self.property} IS UNIQUE"
        )

    def drop_cypher(self) -> str:
        return f"DROP CONSTRAINT {self.name} IF EXISTS"

    is_constraint: ClassVar[bool] = True

    def signature(self) -> tuple[Any, ...]:
        return ("RELATIONSHIP_PROPERTY_UNIQUENESS", (self.type,), (self.property,))


class RangeIndex(Value):
    """A range index on one label's properties."""

    kind: Literal["range-index"] = "range-index"
    name: str
    label: str
    properties: tuple[str, ...] = Field(min_length=1)

    def create_cypher(self) -> str:
        props = ", ".join(f"n.{p}" for p in self.properties)
        return f"CREATE INDEX {self.name} IF NOT EXISTS FOR (n:{self.label}) ON ({props})"

    def drop_cypher(self) -> str:
        return f"DROP INDEX {self.name} IF EXISTS"

    is_constraint: ClassVar[bool] = False

    def signature(self) -> tuple[Any, ...]:
        return ("RANGE", (self.label,), self.properties)


class VectorIndex(Value):
    """A vector index on one label's property, with its dimensions and similarity."""

    kind: Literal["vector-index"] = "vector-index"
    name: str
    label: str
    property: str
    dimensions: int = Field(ge=1, le=4096)
    similarity: Similarity
    #: Properties declared for filtering inside the index (``SEARCH ... WHERE``); Neo4j 2026.
    filter_properties: tuple[str, ...] = Field(default=(), max_length=MAX_VECTOR_FILTER_PROPERTIES)

    @field_validator("filter_properties")
    @classmethod
    def _identifiers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _filter_properties(value)

    @model_serializer(mode="wrap")
    def _without_no_filter(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Without filter properties the dump is what it was before they existed, so the
        # checksums of revisions written then still match.
        data = handler(self)
        if isinstance(data, dict) and not self.filter_properties:
            data.pop("filterProperties", None)
            data.pop("filter_properties", None)
        return data

    def create_cypher(self) -> str:
        declared = ""
        if self.filter_properties:
            declared = "WITH [" + ", ".join(f"n.{p}" for p in self.filter_properties) + "] "
        return (
            f"CREATE VECTOR INDEX {self.name} IF NOT EXISTS FOR (n:{self.label}) ON (n.{self.property}) {declared}"
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {self.dimensions}, "
            f"`vector.similarity_function`: '{self.similarity.value}'}}}}"
        )

    def drop_cypher(self) -> str:
        return f"DROP INDEX {self.name} IF EXISTS"

    is_constraint: ClassVar[bool] = False

    def signature(self) -> tuple[Any, ...]:
        # SHOW INDEXES lists the embedding property, then the filter properties.
        return ("VECTOR", (self.label,), (self.property, *self.filter_properties))


class FullTextAnalyzer(StrEnum):
    STANDARD = "standard-no-stop-words"
    ENGLISH = "english"


class FullTextIndex(Value):
    """A full-text index over labels and properties, with its analyzer."""

    kind: Literal["fulltext-index"] = "fulltext-index"
    name: str
    labels: tuple[str, ...] = Field(min_length=1)
    properties: tuple[str, ...] = Field(min_length=1)
    analyzer: FullTextAnalyzer = FullTextAnalyzer.STANDARD

    def create_cypher(self) -> str:
        labels = "|".join(self.labels)
        props = ", ".join(f"n.{p}" for p in self.properties)
        return (
            f"CREATE FULLTEXT INDEX {self.name} IF NOT EXISTS FOR (n:{labels}) ON EACH [{props}] "
            f"OPTIONS {{indexConfig: {{`fulltext.analyzer`: '{self.analyzer.value}'}}}}"
        )

    def drop_cypher(self) -> str:
        return f"DROP INDEX {self.name} IF EXISTS"

    is_constraint: ClassVar[bool] = False

    def signature(self) -> tuple[Any, ...]:
        return ("FULLTEXT", tuple(sorted(self.labels)), tuple(self.properties))


SchemaDefinition = Annotated[
    UniqueConstraint | RelationshipUniqueConstraint | RangeIndex | VectorIndex | FullTextIndex,
    Field(discriminator="kind"),
]


class CreateStep(Value):
    """Create a definition (idempotent where the server allows: ``IF NOT EXISTS``)."""

    action: Literal["create"] = "create"
    definition: SchemaDefinition

    def cypher(self) -> str:
        return self.definition.create_cypher()

    def inverse(self) -> DropStep:
        return DropStep(definition=self.definition)


class DropStep(Value):
    """Drop a definition; it keeps the whole definition so a downgrade can recreate it."""

    action: Literal["drop"] = "drop"
    definition: SchemaDefinition

    def cypher(self) -> str:
        return self.definition.drop_cypher()

    def inverse(self) -> CreateStep:
        return CreateStep(definition=self.definition)


MigrationStep = Annotated[CreateStep | DropStep, Field(discriminator="action")]


class Schema:
    """The definitions and creation steps the toolkit needs; deterministic, reads nothing."""

    @staticmethod
    def definitions(
        layout: Layout,
        embedding_set: EmbeddingSet,
        ontology: SchemaContributor | None = None,
        *,
        vector_filter: Sequence[str] = (),
    ) -> list[SchemaDefinition]:
        """Constraints on every key, range indexes, the chunk vector and full-text indexes.

        ``vector_filter`` names chunk properties (stored names, e.g. ``documentId``) the vector
        index declares for filtering inside it; a name that is not a plain identifier raises
        ``ConfigurationError("invalid-layout")``.
        """
        filters = _filter_properties(tuple(vector_filter))
        model = for_layout(layout)
        found: list[SchemaDefinition] = []
        for cls in model.node_classes:
            found.extend(_declared(cls, layout.schema_prefix))
        found.append(
            VectorIndex(
                name=layout.vector_index_name(embedding_set.vector_index_name),
                label=layout.chunk_label,
                property=layout.chunk_embedding_property,
                dimensions=embedding_set.dimensions,
                similarity=embedding_set.similarity,
                filter_properties=filters,
            )
        )
        found.append(
            FullTextIndex(
                name=layout.fulltext_index_name(),
                labels=(layout.chunk_label,),
                properties=(layout.chunk_text_property,),
            )
        )
        if ontology is not None:
            found.extend(ontology.schema_definitions(layout))
        names = [d.name for d in found]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"schema names must be unique: {sorted(duplicates)}")
        return found

    @staticmethod
    def create_steps(
        layout: Layout,
        embedding_set: EmbeddingSet,
        ontology: SchemaContributor | None = None,
        *,
        vector_filter: Sequence[str] = (),
    ) -> list[MigrationStep]:
        """The definitions as creation steps, constraints first, for a migration revision."""
        definitions = Schema.definitions(layout, embedding_set, ontology, vector_filter=vector_filter)
        ordered = sorted(definitions, key=lambda d: not d.is_constraint)
        return [CreateStep(definition=d) for d in ordered]

    @staticmethod
    def vector_index(layout: Layout, embedding_set: EmbeddingSet) -> VectorIndex:
        """The chunk vector index definition alone."""
        for definition in Schema.definitions(layout, embedding_set):
            if isinstance(definition, VectorIndex):
                return definition
        raise AssertionError("the lexical schema always has a vector index")


def _filter_properties(names: tuple[str, ...]) -> tuple[str, ...]:
    """Filter property names, each a plain identifier (``invalid-layout`` otherwise), without repeats."""
    if len(names) > MAX_VECTOR_FILTER_PROPERTIES:
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT,
            f"a vector index declares at most {MAX_VECTOR_FILTER_PROPERTIES} filter properties",
        )
    return tuple(dict.fromkeys(validate_identifier(n, "vector filter property") for n in names))


def _declared(cls: type[AsyncStructuredNode], prefix: str) -> list[SchemaDefinition]:
    """Keys and indexes as neomodel's install_labels reads them: unique_index and index."""
    label: str = cls.__label__
    out: list[SchemaDefinition] = []
    for attribute, prop in cls.defined_properties(aliases=False, rels=False).items():
        db_name = validate_identifier(prop.get_db_property_name(attribute), "property")
        base = f"{prefix}_{_snake(label)}_{_snake(db_name)}"
        if prop.unique_index:
            out.append(UniqueConstraint(name=f"{base}_unique", label=label, property=db_name))
        elif prop.index:
            out.append(RangeIndex(name=f"{base}_index", label=label, properties=(db_name,)))
    return out
