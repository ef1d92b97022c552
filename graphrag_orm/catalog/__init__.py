"""Reading what the graph holds: documents, runs, one document's chunk spans, and references.

``CatalogService`` only reads. It lists documents and ingestion runs (bounded, with the
total, so a cut list says how many more there are), shows one document's metadata and
chunk spans (never its text), and resolves what a person types for a document (a full
id, a unique id prefix of at least six hex digits, a source URI, or the path a file was
ingested from) to its id.
"""

from graphrag_orm.catalog.service import (
    DEFAULT_CHUNK_LIMIT,
    DEFAULT_LIST_LIMIT,
    MAX_CHUNK_LIMIT,
    MAX_LIST_LIMIT,
    MIN_PREFIX,
    CatalogService,
)
from graphrag_orm.catalog.values import CatalogChunk, DocumentDetail, DocumentList, DocumentSummary, RunList, RunSummary

__all__ = [
    "DEFAULT_CHUNK_LIMIT",
    "DEFAULT_LIST_LIMIT",
    "MAX_CHUNK_LIMIT",
    "MAX_LIST_LIMIT",
    "MIN_PREFIX",
    "CatalogChunk",
    "CatalogService",
    "DocumentDetail",
    "DocumentList",
    "DocumentSummary",
    "RunList",
    "RunSummary",
]
