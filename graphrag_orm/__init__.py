"""graphrag-orm: GraphRAG on Neo4j with typed models, reviewed migrations and verified citations.

The public face: the facade and its options, sources, the layout and embedding sets,
the schema, and the value types services return. Implementation modules stay importable
for advanced use, but these names are the stable ones.
"""

from graphrag_orm.answers import Answer, AnswerExport, AnswerReceipt, Completed, Delta, Disposition, Retrieved, Turn
from graphrag_orm.chunking import ChunkerOptions, ChunkPlan
from graphrag_orm.citations import Citation, locate
from graphrag_orm.codes import DocumentErrorCode, HealthFinding, LimitName, RefusalReason
from graphrag_orm.embeddings import EmbeddingSet, Similarity
from graphrag_orm.errors import (
    ConfigurationError,
    DatabaseUnavailable,
    GraphRagError,
    LoadError,
    MigrationError,
    SchemaMismatch,
)
from graphrag_orm.evidence import ContextItem, Evidence, EvidenceItem, Grounding, Provenance, Route
from graphrag_orm.facade import GraphRag
from graphrag_orm.ingestion import (
    DocumentOutcome,
    DocumentStatus,
    IngestionOptions,
    IngestionPreview,
    IngestionReceipt,
)
from graphrag_orm.layout import Layout
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.retrieval import RetrievalOptions, Retrievers
from graphrag_orm.retry import RetryOptions
from graphrag_orm.schema import Schema
from graphrag_orm.sources import Source, SourceMetadata, Sources
from graphrag_orm.store.connection import ConnectionSettings
from graphrag_orm.values import Limit

__all__ = [
    "Answer",
    "AnswerExport",
    "AnswerReceipt",
    "ChunkPlan",
    "ChunkerOptions",
    "Citation",
    "Completed",
    "ConfigurationError",
    "ConnectionSettings",
    "ContextItem",
    "DatabaseUnavailable",
    "Delta",
    "Disposition",
    "DocumentErrorCode",
    "DocumentOutcome",
    "DocumentStatus",
    "EmbeddingSet",
    "Evidence",
    "EvidenceItem",
    "GraphRag",
    "GraphRagError",
    "GraphRagOptions",
    "Grounding",
    "HealthFinding",
    "IngestionOptions",
    "IngestionPreview",
    "IngestionReceipt",
    "Layout",
    "Limit",
    "LimitName",
    "LoadError",
    "MigrationError",
    "Provenance",
    "RefusalReason",
    "RetrievalOptions",
    "Retrieved",
    "Retrievers",
    "RetryOptions",
    "Route",
    "Schema",
    "SchemaMismatch",
    "Similarity",
    "Source",
    "SourceMetadata",
    "Sources",
    "Turn",
    "locate",
]
