"""The lexical model: neomodel async classes for documents, sections, chunks, runs and leases.

Abstract bases (``DocumentNode``, ``ChunkNode``, ...) declare what is stored: typed
snake_case attributes mapped to camelCase properties with ``db_property``, and the
keys (``unique_index``) that the schema turns into uniqueness constraints. A layout
gives them labels and relationship types: :func:`for_layout` builds the concrete
classes, and the module-level ``Document``, ``Chunk``, ... are those of
:data:`Layout.DEFAULT <graphrag_orm.layout.Layout.DEFAULT>`.

Every structural edge points from the child to its parent or successor and carries
the run id that wrote it. neomodel binds one relationship model to each relationship
type for the whole process, so models are shared per type (``edge_model``).
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from neomodel import (
    ArrayProperty,
    AsyncOne,
    AsyncRelationshipTo,
    AsyncStructuredNode,
    AsyncStructuredRel,
    AsyncZeroOrOne,
    DateTimeNeo4jFormatProperty,
    FloatProperty,
    IntegerProperty,
    StringProperty,
)
from neomodel.properties import Property

from graphrag_orm.codes import ErrorCode

# The communities and their reports (graphrag_orm.communities) are declared apart and given
# labels per layout here, as the lexical nodes are.
from graphrag_orm.community_models import (
    HAS_FINDING,
    HAS_REPORT,
    IN_COMMUNITY,
    PARENT_COMMUNITY,
    CommunityNode,
    CommunityReportNode,
    InCommunity,
    ReportFindingNode,
)
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import FIXED_CHUNK_PROPERTIES, Layout

if TYPE_CHECKING:
    from graphrag_orm.store.names import StoredNames

__all__ = [
    "HAS_FINDING",
    "HAS_REPORT",
    "IN_COMMUNITY",
    "PARENT_COMMUNITY",
    "Chunk",
    "ChunkNode",
    "Community",
    "CommunityReport",
    "Document",
    "DocumentNode",
    "EdgeDefinition",
    "InCommunity",
    "InDocument",
    "InSection",
    "IngestionRun",
    "IngestionRunNode",
    "Lease",
    "LeaseNode",
    "LexicalModel",
    "NextChunk",
    "ReportFinding",
    "RunStampedRel",
    "Section",
    "SectionNode",
    "SectionOf",
    "SubsectionOf",
    "edge_model",
    "for_layout",
]

#: Marks classes this module generated, so label collisions can name the other owner.
OWNER_MARK = "_graphrag_orm_layout"


class RunStampedRel(AsyncStructuredRel):
    """A structural edge; it stores only the id of the run that wrote it."""

    run_id = StringProperty(required=True, db_property="runId")


class InDocument(RunStampedRel):
    """``(chunk)-[:IN_DOCUMENT]->(document)``."""


class SectionOf(RunStampedRel):
    """``(section)-[:SECTION_OF]->(document)``."""


class InSection(RunStampedRel):
    """``(chunk)-[:IN_SECTION]->(section)``."""


class NextChunk(RunStampedRel):
    """``(chunk)-[:NEXT_CHUNK]->(next chunk)``."""


class SubsectionOf(RunStampedRel):
    """``(section)-[:SUBSECTION_OF]->(parent section)``."""


_EDGE_MODELS: dict[str, type[RunStampedRel]] = {
    "IN_DOCUMENT": InDocument,
    "SECTION_OF": SectionOf,
    "IN_SECTION": InSection,
    "NEXT_CHUNK": NextChunk,
    "SUBSECTION_OF": SubsectionOf,
}


def edge_model(relationship_type: str) -> type[RunStampedRel]:
    """The one relationship model for ``relationship_type`` in this process."""
    model = _EDGE_MODELS.get(relationship_type)
    if model is None:
        name = "".join(part.capitalize() for part in relationship_type.split("_")) or "Edge"
        model = cast(type[RunStampedRel], type(name, (RunStampedRel,), {"__module__": __name__}))
        _EDGE_MODELS[relationship_type] = model
    return model


class DocumentNode(AsyncStructuredNode):
    """A source document: identity, hash and length; its text lives in its chunks."""

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    source_uri = StringProperty(required=True, db_property="sourceUri")
    title = StringProperty(db_property="title")
    media_type = StringProperty(required=True, db_property="mediaType")
    content_hash = StringProperty(required=True, db_property="contentHash")
    length_bytes = IntegerProperty(required=True, db_property="lengthBytes")
    settings_fingerprint = StringProperty(required=True, db_property="settingsFingerprint")
    page_starts = ArrayProperty(IntegerProperty(), db_property="pageStarts")
    published = StringProperty(db_property="published")
    publisher = StringProperty(db_property="publisher")
    url = StringProperty(db_property="url")
    text_origin = StringProperty(db_property="textOrigin")
    ingested_at = DateTimeNeo4jFormatProperty(required=True, db_property="ingestedAt")
    # Indexed: reset by run finds a run's documents without a scan.
    run_id = StringProperty(required=True, index=True, db_property="runId")


class SectionNode(AsyncStructuredNode):
    """A Markdown section: its heading's title and level and its byte span (subsections included)."""

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    document_id = StringProperty(required=True, index=True, db_property="documentId")
    title = StringProperty(required=True, db_property="title")
    level = IntegerProperty(required=True, db_property="level")
    order = IntegerProperty(required=True, db_property="order")
    start_byte = IntegerProperty(required=True, db_property="startByte")
    end_byte = IntegerProperty(required=True, db_property="endByte")
    run_id = StringProperty(required=True, db_property="runId")

    # Relationships are declared per layout by for_layout(); annotated here for readers.
    document: Any
    parent: Any


class ChunkNode(AsyncStructuredNode):
    """A chunk: exactly the document bytes ``[start_byte, end_byte)`` and its vector.

    ``text == document_utf8[start_byte:end_byte].decode()`` always holds. The id, order,
    text and embedding property names come from the layout.
    """

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    document_id = StringProperty(required=True, index=True, db_property="documentId")
    order = IntegerProperty(required=True, db_property="order")
    text = StringProperty(required=True, db_property="text")
    start_byte = IntegerProperty(required=True, db_property="startByte")
    end_byte = IntegerProperty(required=True, db_property="endByte")
    token_count = IntegerProperty(db_property="tokenCount")
    embedding = ArrayProperty(FloatProperty(), db_property="embedding")
    embedding_set_id = StringProperty(db_property="embeddingSetId")
    run_id = StringProperty(required=True, db_property="runId")

    # Relationships are declared per layout by for_layout(); annotated here for readers.
    document: Any
    section: Any
    next: Any


class IngestionRunNode(AsyncStructuredNode):
    """One ingestion call: Running, then Completed or Failed, with its counts.

    An entity-resolution merge is recorded as a run too: ``settingsFingerprint`` starts with
    ``merge:``, its status is Completed, then Undone once undone (``graphrag_orm.resolution``).
    """

    __abstract_node__ = True

    uid = StringProperty(unique_index=True, required=True, db_property="id")
    started_at = DateTimeNeo4jFormatProperty(required=True, db_property="startedAt")
    completed_at = DateTimeNeo4jFormatProperty(db_property="completedAt")
    status = StringProperty(required=True, choices={s: s for s in ("Running", "Completed", "Failed", "Undone")})
    settings_fingerprint = StringProperty(required=True, db_property="settingsFingerprint")
    documents_ingested = IntegerProperty(default=0, db_property="documentsIngested")
    documents_unchanged = IntegerProperty(default=0, db_property="documentsUnchanged")
    documents_failed = IntegerProperty(default=0, db_property="documentsFailed")
    chunks_written = IntegerProperty(default=0, db_property="chunksWritten")
    #: Renewed while the run works (the ingestion's heartbeat); a Running run whose
    #: progress stopped longer than a lease ago is stale (``maintenance.fail_stale_runs``).
    progress_at = DateTimeNeo4jFormatProperty(db_property="progressAt")
    #: Why a run was marked Failed by maintenance (a stale run), else None.
    failure_reason = StringProperty(db_property="failureReason")


class LeaseNode(AsyncStructuredNode):
    """A document's lease: inserted, never upserted, so a second holder is refused."""

    __abstract_node__ = True

    key = StringProperty(unique_index=True, required=True, db_property="key")
    run_id = StringProperty(required=True, db_property="runId")
    expires_at = DateTimeNeo4jFormatProperty(required=True, db_property="expiresAt")
    # Every claim and renewal writes this first, so the conditional update holds the
    # lease's write lock before it reads the holder and the expiry (lock, then read).
    claims = IntegerProperty(default=0, db_property="claims")


@dataclass(frozen=True)
class EdgeDefinition:
    """A structural relationship: ``(source)-[type]->(target)``, stored in that direction."""

    role: str
    relationship_type: str
    source_label: str
    target_label: str


@dataclass(frozen=True)
class LexicalModel:
    """The concrete classes of one layout."""

    layout: Layout
    document: type[DocumentNode]
    section: type[SectionNode]
    chunk: type[ChunkNode]
    run: type[IngestionRunNode]
    lease: type[LeaseNode]
    community: type[CommunityNode]
    report: type[CommunityReportNode]
    finding: type[ReportFindingNode]

    @functools.cached_property
    def names(self) -> StoredNames:
        """The stored names every statement is rendered from (built once per model)."""
        from graphrag_orm.store.names import StoredNames

        return StoredNames.of(self)

    @property
    def node_classes(self) -> tuple[type[AsyncStructuredNode], ...]:
        return (
            self.document,
            self.section,
            self.chunk,
            self.run,
            self.lease,
            self.community,
            self.report,
            self.finding,
        )

    @property
    def edges(self) -> tuple[EdgeDefinition, ...]:
        """Every structural relationship with its stored direction (child to parent or successor)."""
        layout = self.layout
        return (
            EdgeDefinition("chunk-document", layout.chunk_document_type, layout.chunk_label, layout.document_label),
            EdgeDefinition(
                "section-document", layout.section_document_type, layout.section_label, layout.document_label
            ),
            EdgeDefinition("chunk-section", layout.chunk_section_type, layout.chunk_label, layout.section_label),
            EdgeDefinition("next-chunk", layout.next_chunk_type, layout.chunk_label, layout.chunk_label),
            EdgeDefinition("subsection", layout.subsection_type, layout.section_label, layout.section_label),
        )


_LAYOUT_NAMED = ("uid", "order", "text", "embedding")
# The layout refuses its chunk names that equal these; keep its list what the class declares.
if {
    prop.get_db_property_name(attribute)
    for attribute, prop in ChunkNode.defined_properties(aliases=False, rels=False).items()
    if attribute not in _LAYOUT_NAMED
} != set(FIXED_CHUNK_PROPERTIES):
    raise TypeError("layout.FIXED_CHUNK_PROPERTIES must list the chunk's stored names the layout cannot change")


def _renamed(prop: Property[Any], db_name: str) -> Property[Any]:
    clone = copy.copy(prop)
    clone.db_property = db_name
    return clone


def _add_relationship(cls: type[Any], name: str, definition: Any) -> None:
    # A self-reference needs the class to exist first; neomodel caches the
    # relationship list at class creation, so refresh it after adding one.
    setattr(cls, name, definition)
    cls.__all_relationships__ = tuple(cls.defined_properties(aliases=False, properties=False).items())


def _concrete(base: type[Any], label: str, layout: Layout, namespace: dict[str, Any]) -> type[Any]:
    namespace = {"__label__": label, "__module__": __name__, OWNER_MARK: layout, **namespace}
    return type(base.__name__.removesuffix("Node"), (base,), namespace)


@functools.cache
def for_layout(layout: Layout) -> LexicalModel:
    """The concrete neomodel classes for ``layout`` (built once per layout, then cached).

    Raises ``ConfigurationError("layout-collision")`` when an application class outside
    this toolkit already maps one of the layout's labels.
    """
    check_label_collisions(layout.labels)
    document = _concrete(DocumentNode, layout.document_label, layout, {})
    section = _concrete(
        SectionNode,
        layout.section_label,
        layout,
        {
            "document": AsyncRelationshipTo(
                document,
                layout.section_document_type,
                cardinality=AsyncOne,
                model=edge_model(layout.section_document_type),
            ),
        },
    )
    _add_relationship(
        section,
        "parent",
        AsyncRelationshipTo(
            section,
            layout.subsection_type,
            cardinality=AsyncZeroOrOne,
            model=edge_model(layout.subsection_type),
        ),
    )
    chunk = _concrete(
        ChunkNode,
        layout.chunk_label,
        layout,
        {
            "uid": _renamed(ChunkNode.uid, layout.chunk_id_property),
            "order": _renamed(ChunkNode.order, layout.chunk_order_property),
            "text": _renamed(ChunkNode.text, layout.chunk_text_property),
            "embedding": _renamed(ChunkNode.embedding, layout.chunk_embedding_property),
            "document": AsyncRelationshipTo(
                document,
                layout.chunk_document_type,
                cardinality=AsyncOne,
                model=edge_model(layout.chunk_document_type),
            ),
            "section": AsyncRelationshipTo(
                section,
                layout.chunk_section_type,
                cardinality=AsyncZeroOrOne,
                model=edge_model(layout.chunk_section_type),
            ),
        },
    )
    _add_relationship(
        chunk,
        "next",
        AsyncRelationshipTo(
            chunk,
            layout.next_chunk_type,
            cardinality=AsyncZeroOrOne,
            model=edge_model(layout.next_chunk_type),
        ),
    )
    run = _concrete(IngestionRunNode, layout.run_label, layout, {})
    lease = _concrete(LeaseNode, layout.lease_label, layout, {})
    community = _concrete(CommunityNode, layout.community_label, layout, {})
    _add_relationship(community, "parent", AsyncRelationshipTo(community, PARENT_COMMUNITY, cardinality=AsyncZeroOrOne))
    finding = _concrete(ReportFindingNode, layout.finding_label, layout, {})
    report = _concrete(
        CommunityReportNode,
        layout.report_label,
        layout,
        {"findings": AsyncRelationshipTo(finding, HAS_FINDING)},
    )
    _add_relationship(community, "reports", AsyncRelationshipTo(report, HAS_REPORT, cardinality=AsyncZeroOrOne))
    return LexicalModel(layout, document, section, chunk, run, lease, community, report, finding)


def check_label_collisions(
    labels: tuple[str, ...], *, allowed_owners: tuple[type[Any], ...] = (), hint: str | None = None
) -> None:
    """Refuse labels that an application class (not one of ours, nor an allowed owner) already maps."""
    wanted = set(labels)
    for cls in _concrete_node_classes():
        label = getattr(cls, "__label__", None)
        if label in wanted and not hasattr(cls, OWNER_MARK) and cls not in allowed_owners:
            advice = (
                hint or f"choose a layout with other labels, e.g. Layout.DEFAULT.replace(document_label='Rag{label}')"
            )
            raise ConfigurationError(
                ErrorCode.LAYOUT_COLLISION,
                f"label {label!r} is already mapped by {cls.__module__}.{cls.__qualname__}; {advice}",
            )


def _concrete_node_classes() -> list[type[Any]]:
    found: list[type[Any]] = []
    pending: list[type[Any]] = list(AsyncStructuredNode.__subclasses__())
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


_DEFAULT = for_layout(Layout.DEFAULT)
Document: type[DocumentNode] = _DEFAULT.document
Section: type[SectionNode] = _DEFAULT.section
Chunk: type[ChunkNode] = _DEFAULT.chunk
IngestionRun: type[IngestionRunNode] = _DEFAULT.run
Lease: type[LeaseNode] = _DEFAULT.lease
Community: type[CommunityNode] = _DEFAULT.community
CommunityReport: type[CommunityReportNode] = _DEFAULT.report
ReportFinding: type[ReportFindingNode] = _DEFAULT.finding
