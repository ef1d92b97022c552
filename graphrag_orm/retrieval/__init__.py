"""Retrieval: vector and full-text routes fused by rank, a bounded budget, context and scope."""

from graphrag_orm.retrieval.fusion import RRF_K, Candidate, fuse
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.options import CypherExpansion, RetrievalOptions, Retrievers, Turn
from graphrag_orm.retrieval.scope import (
    CypherScope,
    DocumentFilter,
    DocumentsScope,
    MetadataScope,
    ResolvedScope,
    Scope,
    SectionsScope,
)
from graphrag_orm.retrieval.service import QuestionRefused, RetrievalFailed, Retriever

__all__ = [
    "RRF_K",
    "Candidate",
    "CypherExpansion",
    "CypherScope",
    "DocumentFilter",
    "DocumentsScope",
    "MetadataScope",
    "QuestionRefused",
    "ResolvedScope",
    "RetrievalFailed",
    "RetrievalOptions",
    "Retriever",
    "Retrievers",
    "Scope",
    "SectionsScope",
    "Turn",
    "fuse",
    "to_query",
]
