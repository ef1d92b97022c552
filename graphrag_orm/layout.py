"""Names the toolkit stores under: labels, relationship types, chunk properties, schema prefix.

A layout is a frozen dataclass: change names with ``dataclasses.replace`` or
:meth:`Layout.replace`. Every name is validated once, at construction, as a plain
Cypher identifier, so names can be placed in query text without quoting tricks;
labels must be distinct, and so must relationship types, chunk properties and the two
index names. A configurable chunk property may not take the name of one the chunk
always stores (:data:`FIXED_CHUNK_PROPERTIES`); every refusal is
``ConfigurationError("invalid-layout")``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.tenancy import check_tenancy_mode

__all__ = ["DEFAULT_STAGING_PROPERTY", "FIXED_CHUNK_PROPERTIES", "Layout", "validate_identifier"]

DEFAULT_STAGING_PROPERTY = "embeddingNext"
"""The chunk property a re-embedding stages its new vectors under, unless told another."""

FIXED_CHUNK_PROPERTIES = ("documentId", "startByte", "endByte", "tokenCount", "embeddingSetId", "runId")
"""The chunk's stored names a layout cannot change (``models.ChunkNode`` declares them and checks this list)."""
_CHUNK_PROPERTY_FIELDS = (
    "chunk_id_property",
    "chunk_order_property",
    "chunk_text_property",
    "chunk_embedding_property",
)

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
# neo4j-graphrag's labels (__Entity__) start with underscores; Cypher takes them unquoted.
_UNDERSCORED = re.compile(r"_*[A-Za-z][A-Za-z0-9_]{0,63}")


def validate_identifier(name: str, what: str, *, leading_underscores: bool = False) -> str:
    """Return ``name`` if it is a plain Cypher identifier (ASCII letters, digits, ``_``; 1..64).

    It starts with a letter, or, with ``leading_underscores``, with underscores and then a
    letter. Anything else (a space, a backtick, a quote, a colon, a non-ASCII letter) is
    refused with ``ConfigurationError("invalid-layout")``, so a valid name can be placed in
    query text as it is.
    """
    pattern = _UNDERSCORED if leading_underscores else _IDENTIFIER
    if not isinstance(name, str) or len(name) > 64 or not pattern.fullmatch(name):
        start = "a letter (after any '_')" if leading_underscores else "a letter"
        raise ConfigurationError(
            ErrorCode.INVALID_LAYOUT,
            f"{what} {name!r} is not a plain Cypher identifier ({start}, then letters, digits or '_', at most 64)",
        )
    return name


@dataclass(frozen=True)
class Layout:
    """Labels, relationship types, chunk property names and the schema name prefix.

    Relationships point from the child to its parent or successor:
    ``(chunk)-[chunk_document_type]->(document)``, ``(section)-[section_document_type]->(document)``,
    ``(chunk)-[chunk_section_type]->(section)``, ``(chunk)-[next_chunk_type]->(next chunk)``,
    ``(section)-[subsection_type]->(parent section)``.
    """

    DEFAULT: ClassVar[Layout]
    NEO4J_GRAPHRAG: ClassVar[Layout]

    document_label: str = "Document"
    section_label: str = "Section"
    chunk_label: str = "Chunk"
    run_label: str = "IngestionRun"
    lease_label: str = "GraphRagLease"
    #: Communities of the knowledge graph (graphrag_orm.communities); a second layout in the
    #: same database names its own, as it names its own lease label.
    community_label: str = "Community"
    #: A community's report (graphrag_orm.communities.reports) and the report's cited findings.
    report_label: str = "CommunityReport"
    finding_label: str = "ReportFinding"
    chunk_document_type: str = "IN_DOCUMENT"
    section_document_type: str = "SECTION_OF"
    chunk_section_type: str = "IN_SECTION"
    next_chunk_type: str = "NEXT_CHUNK"
    subsection_type: str = "SUBSECTION_OF"
    chunk_id_property: str = "id"
    chunk_order_property: str = "order"
    chunk_text_property: str = "text"
    chunk_embedding_property: str = "embedding"
    schema_prefix: str = "graphrag"
    # None: derived from the prefix (and, for the vector index, the embedding set).
    vector_index: str | None = field(default=None)
    fulltext_index: str | None = field(default=None)
    #: ``"off"`` (one tenant, the default) or ``"required"``: a tenanted graph, whose store
    #: refuses every statement until bound to a :class:`graphrag_orm.tenancy.Tenant`.
    tenancy: str = "off"

    def __post_init__(self) -> None:
        check_tenancy_mode(self.tenancy)
        for item in fields(self):
            if item.name == "tenancy":
                continue
            value = getattr(self, item.name)
            if value is None and item.name in ("vector_index", "fulltext_index"):
                continue
            validate_identifier(value, item.name)
        _require_distinct("labels", self.labels)
        _require_distinct("relationship types", self.relationship_types)
        _require_distinct("chunk properties", tuple(getattr(self, name) for name in _CHUNK_PROPERTY_FIELDS))
        # A chunk row is a map keyed by stored name: a configurable name equal to a fixed one
        # would silently overwrite it (the chunk's documentId holding its text).
        for name in _CHUNK_PROPERTY_FIELDS:
            value = getattr(self, name)
            if value in FIXED_CHUNK_PROPERTIES:
                raise ConfigurationError(
                    ErrorCode.INVALID_LAYOUT,
                    f"{name} {value!r} collides with the chunk's fixed property {value!r}; choose another name",
                )
        if self.vector_index is not None and self.vector_index == self.fulltext_index:
            raise ConfigurationError(
                ErrorCode.INVALID_LAYOUT,
                f"vector_index and fulltext_index must be distinct; {self.vector_index!r} is repeated",
            )

    @property
    def labels(self) -> tuple[str, ...]:
        return (
            self.document_label,
            self.section_label,
            self.chunk_label,
            self.run_label,
            self.lease_label,
            self.community_label,
            self.report_label,
            self.finding_label,
        )

    @property
    def relationship_types(self) -> tuple[str, ...]:
        return (
            self.chunk_document_type,
            self.section_document_type,
            self.chunk_section_type,
            self.next_chunk_type,
            self.subsection_type,
        )

    @property
    def tenanted(self) -> bool:
        """Whether the graph holds many tenants (``tenancy="required"``)."""
        return self.tenancy == "required"

    def replace(self, **changes: Any) -> Layout:
        """A copy with ``changes`` applied and validated (same as ``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def vector_index_name(self, embedding_set_index_suffix: str) -> str:
        """The chunk vector index's name: the layout's own, or the prefix and the set's suffix."""
        return self.vector_index or f"{self.schema_prefix}_chunk_{embedding_set_index_suffix}"

    def fulltext_index_name(self) -> str:
        """The chunk full-text index's name."""
        return self.fulltext_index or f"{self.schema_prefix}_chunk_text"


def _require_distinct(what: str, names: tuple[str, ...]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigurationError(ErrorCode.INVALID_LAYOUT, f"layout {what} must be distinct; {name!r} is repeated")
        seen.add(name)


Layout.DEFAULT = Layout()
# neo4j-graphrag's names for the document and chunk layer; sections keep the
# default names, which that library ignores.
Layout.NEO4J_GRAPHRAG = Layout(
    chunk_document_type="FROM_DOCUMENT",
    chunk_order_property="index",
)
