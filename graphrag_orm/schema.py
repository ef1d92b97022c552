"""What the toolkit needs in the database, as reviewable definitions and steps.

:meth:`Schema.definitions` derives, reading nothing: a uniqueness constraint for
every key the model classes declare (``unique_index``), a range index for every
``index=True`` property, the vector index on the chunk embedding (the embedding
set's dimensions and similarity) and the full-text index on chunk text. Names
start with the layout's schema prefix. A tenanted layout (docs/tenancy.md) adds a range
index on ``tenant`` for documents, sections, chunks, runs and leases, the uniqueness of
a source URI per tenant, and ``tenant`` as a filter property of the vector index. :meth:`Schema.create_steps` gives the same
as migration steps; each renders idempotent Cypher (``IF NOT EXISTS``).

Every string a definition places in Cypher is checked twice: when the definition is
built (so a revision file naming ``x IF NOT EXISTS FOR ... //`` is refused when it is
read) and again when it renders. Names are schema names (:func:`validate_schema_name`),
labels and relationship types are identifiers that may start with underscores,
properties are plain identifiers (:func:`~graphrag_orm.layout.validate_identifier`);
dimensions are an integer in 1..4,096, similarity and analyzer one of their enum values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, Protocol

from neomodel import AsyncStructuredNode
from pydantic import AfterValidator, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings.sets import MAX_DIMENSIONS, EmbeddingSet, Similarity
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout, validate_identifier
from graphrag_orm.models import for_layout
from graphrag_orm.tenancy import TENANT_PROPERTY
from graphrag_orm.values import Value

#: Filter properties a vector index may declare (``WITH [...]``).
MAX_VECTOR_FILTER_PROPERTIES = 8
#: Characters of a constraint or index name.
MAX_SCHEMA_NAME_CHARS = 255
#: Labels, or properties, one index names (a full-text index over an ontology's labels).
MAX_INDEX_MEMBERS = 256

__all__ = [
    "MAX_INDEX_MEMBERS",
    "MAX_SCHEMA_NAME_CHARS",
    "MAX_VECTOR_FILTER_PROPERTIES",
    "CompositeUniqueConstraint",
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
    "validate_schema_name",
]

_SCHEMA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _shown(value: object) -> str:
    """``value`` for a one-line message: its repr, cut to 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def validate_schema_name(name: str, what: str = "schema name") -> str:
    """Return ``name`` if it can name a constraint or index in query text as it is.

    A letter, then ASCII letters, digits or ``_``, at most :data:`MAX_SCHEMA_NAME_CHARS`;
    anything else is ``ConfigurationError("invalid-layout")``.
    """
    if not isinstance(name, str) or len(name) > MAX_SCHEMA_NAME_CHARS or not _SCHEMA_NAME.fullmatch(name):
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT,
            f"{what} {_shown(name)} is not a plain schema name (a letter, then letters, digits or '_', "
            f"at most {MAX_SCHEMA_NAME_CHARS})",
        )
    return name


def _label(value: str, what: str = "label") -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise ConfigurationError(ErrorCode.INVALID_LAYOUT, f"{what} {_shown(value)} is not a plain Cypher identifier")
    return validate_identifier(value, what, leading_underscores=True)


def _relationship_type(value: str) -> str:
    return _label(value, "relationship type")


def _property(value: str) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise ConfigurationError(ErrorCode.INVALID_LAYOUT, f"property {_shown(value)} is not a plain Cypher identifier")
    return validate_identifier(value, "property")


def _dimensions(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DIMENSIONS:
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT, f"vector dimensions {_shown(value)} are not 1..{MAX_DIMENSIONS}"
        )
    return value


def _member(value: object, allowed: type[StrEnum]) -> str:
    if not isinstance(value, allowed):
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT, f"{allowed.__name__} {_shown(value)} is not one of its values"
        )
    return value.value


#: Strings a definition places in Cypher, checked when it is built (strict: a string, nothing coerced).
SchemaName = Annotated[str, Field(strict=True), AfterValidator(validate_schema_name)]
Label = Annotated[str, Field(strict=True), AfterValidator(_label)]
RelationshipType = Annotated[str, Field(strict=True), AfterValidator(_relationship_type)]
Property = Annotated[str, Field(strict=True), AfterValidator(_property)]


class SchemaContributor(Protocol):
    """Something that adds definitions to the lexical schema (an ontology, for example)."""

    def schema_definitions(self, layout: Layout) -> Sequence[SchemaDefinition]: ...


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class UniqueConstraint(Value):
    """``REQUIRE n.property IS UNIQUE`` on one label."""

    kind: Literal["unique-constraint"] = "unique-constraint"
    name: SchemaName
    label: Label
    property: Property

    def create_cypher(self) -> str:
        name, label, prop = validate_schema_name(self.name), _label(self.label), _property(self.property)
        return f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"

    def drop_cypher(self) -> str:
        return f"DROP CONSTRAINT {validate_schema_name(self.name)} IF EXISTS"

    is_constraint: ClassVar[bool] = True

    def signature(self) -> tuple[Any, ...]:
        return ("UNIQUENESS", (self.label,), (self.property,))


class CompositeUniqueConstraint(Value):
    """``REQUIRE (n.a, n.b) IS UNIQUE`` on one label: the pair is unique, each alone is not.

    A property uniqueness constraint (Neo4j Community has it; node key constraints are
    Enterprise's): a tenanted graph's source URI is unique per tenant.
    """

    kind: Literal["composite-unique-constraint"] = "composite-unique-constraint"
    name: SchemaName
    label: Label
    properties: tuple[Property, ...] = Field(min_length=2, max_length=MAX_INDEX_MEMBERS)

    def create_cypher(self) -> str:
        name, label = validate_schema_name(self.name), _label(self.label)
        props = ", ".join(f"n.{_property(p)}" for p in _members(self.properties))
        return f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE ({props}) IS UNIQUE"

    def drop_cypher(self) -> str:
        return f"DROP CONSTRAINT {validate_schema_name(self.name)} IF EXISTS"

    is_constraint: ClassVar[bool] = True

    def signature(self) -> tuple[Any, ...]:
        return ("UNIQUENESS", (self.label,), self.properties)


class RelationshipUniqueConstraint(Value):
    """``REQUIRE r.property IS UNIQUE`` on one relationship type (mention and quote keys)."""

    kind: Literal["relationship-unique-constraint"] = "relationship-unique-constraint"
    name: SchemaName
    type: RelationshipType
    property: Property

    def create_cypher(self) -> str:
        name, rel, prop = validate_schema_name(self.name), _relationship_type(self.type), _property(self.property)
        return f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR ()-[r:{rel}]-() REQUIRE r.{prop} IS UNIQUE"

    def drop_cypher(self) -> str:
        return f"DROP CONSTRAINT {validate_schema_name(self.name)} IF EXISTS"

    is_constraint: ClassVar[bool] = True

    def signature(self) -> tuple[Any, ...]:
        return ("RELATIONSHIP_PROPERTY_UNIQUENESS", (self.type,), (self.property,))


class RangeIndex(Value):
    """A range index on one label's properties."""

    kind: Literal["range-index"] = "range-index"
    name: SchemaName
    label: Label
    properties: tuple[Property, ...] = Field(min_length=1, max_length=MAX_INDEX_MEMBERS)

    def create_cypher(self) -> str:
        name, label = validate_schema_name(self.name), _label(self.label)
        props = ", ".join(f"n.{_property(p)}" for p in _members(self.properties))
        return f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({props})"

    def drop_cypher(self) -> str:
        return f"DROP INDEX {validate_schema_name(self.name)} IF EXISTS"

    is_constraint: ClassVar[bool] = False

    def signature(self) -> tuple[Any, ...]:
        return ("RANGE", (self.label,), self.properties)


class VectorIndex(Value):
    """A vector index on one label's property, with its dimensions and similarity."""

    kind: Literal["vector-index"] = "vector-index"
    name: SchemaName
    label: Label
    property: Property
    dimensions: int = Field(strict=True, ge=1, le=MAX_DIMENSIONS)
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
        name, label, prop = validate_schema_name(self.name), _label(self.label), _property(self.property)
        dimensions, similarity = _dimensions(self.dimensions), _member(self.similarity, Similarity)
        filters = _filter_properties(tuple(self.filter_properties))
        declared = "WITH [" + ", ".join(f"n.{p}" for p in filters) + "] " if filters else ""
        return (
            f"CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop}) {declared}"
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimensions}, "
            f"`vector.similarity_function`: '{similarity}'}}}}"
        )

    def drop_cypher(self) -> str:
        return f"DROP INDEX {validate_schema_name(self.name)} IF EXISTS"

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
    name: SchemaName
    labels: tuple[Label, ...] = Field(min_length=1, max_length=MAX_INDEX_MEMBERS)
    properties: tuple[Property, ...] = Field(min_length=1, max_length=MAX_INDEX_MEMBERS)
    analyzer: FullTextAnalyzer = FullTextAnalyzer.STANDARD

    def create_cypher(self) -> str:
        name, analyzer = validate_schema_name(self.name), _member(self.analyzer, FullTextAnalyzer)
        labels = "|".join(_label(label) for label in _members(self.labels))
        props = ", ".join(f"n.{_property(p)}" for p in _members(self.properties))
        return (
            f"CREATE FULLTEXT INDEX {name} IF NOT EXISTS FOR (n:{labels}) ON EACH [{props}] "
            f"OPTIONS {{indexConfig: {{`fulltext.analyzer`: '{analyzer}'}}}}"
        )

    def drop_cypher(self) -> str:
        return f"DROP INDEX {validate_schema_name(self.name)} IF EXISTS"

    is_constraint: ClassVar[bool] = False

    def signature(self) -> tuple[Any, ...]:
        return ("FULLTEXT", tuple(sorted(self.labels)), tuple(self.properties))


SchemaDefinition = Annotated[
    UniqueConstraint
    | CompositeUniqueConstraint
    | RelationshipUniqueConstraint
    | RangeIndex
    | VectorIndex
    | FullTextIndex,
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
        ``ConfigurationError("invalid-layout")``. A tenanted layout's vector index declares
        ``tenant`` first, its full-text index covers ``tenant`` after the text, and its tenant
        definitions (:func:`_tenant_definitions`) are added.
        """
        tenant = (TENANT_PROPERTY,) if layout.tenanted else ()
        filters = _filter_properties((*tenant, *vector_filter))
        model = for_layout(layout)
        found: list[SchemaDefinition] = []
        for cls in model.node_classes:
            found.extend(_declared(cls, layout.schema_prefix))
        if layout.tenanted:
            found.extend(_tenant_definitions(layout, model.names.document.stored("source_uri")))
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
                # A tenanted index covers the tenant too: the full-text route filters by it inside (docs/tenancy.md).
                properties=(layout.chunk_text_property, *tenant),
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


def _members(values: Sequence[str]) -> Sequence[str]:
    """The labels or properties of an index, at least one and at most :data:`MAX_INDEX_MEMBERS`."""
    if isinstance(values, str) or not 1 <= len(values) <= MAX_INDEX_MEMBERS:
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT,
            f"an index names 1..{MAX_INDEX_MEMBERS} labels and 1..{MAX_INDEX_MEMBERS} properties",
        )
    return values


def _filter_properties(names: tuple[str, ...]) -> tuple[str, ...]:
    """Filter property names, each a plain identifier (``invalid-layout`` otherwise), without repeats."""
    if len(names) > MAX_VECTOR_FILTER_PROPERTIES:
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT,
            f"a vector index declares at most {MAX_VECTOR_FILTER_PROPERTIES} filter properties",
        )
    return tuple(dict.fromkeys(validate_identifier(n, "vector filter property") for n in names))


def _tenant_definitions(layout: Layout, source_uri: str) -> list[SchemaDefinition]:
    """A tenanted layout's own: ``tenant`` indexed on every lexical label whose nodes carry it,
    and a source URI unique per tenant (the document id is tenant-qualified, so the id's
    own constraint already keeps one tenant's URI from colliding with another's)."""
    prefix, document = layout.schema_prefix, layout.document_label
    labels = (document, layout.section_label, layout.chunk_label, layout.run_label, layout.lease_label)
    found: list[SchemaDefinition] = [
        CompositeUniqueConstraint(
            name=f"{prefix}_{_snake(document)}_tenant_source_uri_unique",
            label=document,
            properties=(TENANT_PROPERTY, source_uri),
        )
    ]
    found.extend(
        RangeIndex(name=f"{prefix}_{_snake(label)}_{TENANT_PROPERTY}_index", label=label, properties=(TENANT_PROPERTY,))
        for label in labels
    )
    return found


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
