"""Retrieval: vector, full-text and graph routes fused by rank, a bounded budget, context and scope."""

from typing import TYPE_CHECKING

from graphrag_orm.errors import QuestionRefused, RetrievalFailed, ScopeError
from graphrag_orm.lazy import lazy_exports
from graphrag_orm.retrieval.fusion import RRF_K
from graphrag_orm.retrieval.lucene import to_query
from graphrag_orm.retrieval.options import CypherExpansion, GraphOptions, RetrievalOptions, Retrievers
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.retrieval.scope import (
    CypherScope,
    DocumentFilter,
    DocumentsScope,
    MetadataScope,
    ResolvedScope,
    Scope,
    SectionsScope,
)

if TYPE_CHECKING:
    from graphrag_orm.retrieval.service import Retriever

__all__ = [
    "RRF_K",
    "CypherExpansion",
    "CypherScope",
    "DocumentFilter",
    "DocumentsScope",
    "GraphOptions",
    "MetadataScope",
    "QuestionRefused",
    "ResolvedScope",
    "RetrievalFailed",
    "RetrievalOptions",
    "Retriever",
    "Retrievers",
    "Scope",
    "ScopeError",
    "SectionsScope",
    "check_question",
    "to_query",
]

__getattr__, __dir__ = lazy_exports(__name__, {"Retriever": "graphrag_orm.retrieval.service"}, __all__)
