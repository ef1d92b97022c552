"""graphrag-orm: GraphRAG on Neo4j with typed models, reviewed migrations and verified citations.

The public face: the facade and its options, sources, the layout and embedding sets,
the schema, and the value types services return. Implementation modules stay importable
for advanced use, but these names are the stable ones.

Importing the package is cheap: each name is imported from its module on first use
(PEP 562 ``__getattr__``), so ``import graphrag_orm`` (and the command line) never pays
for what it does not use; optional heavy packages (``openai``, ``pypdf``,
``onnxruntime``, ``fastapi``, ``opentelemetry-sdk``) are imported only by the code that
calls them (``tests/unit/test_import_cost.py`` holds that).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        ChunkedDocument,
        ChunkText,
        DocumentOutcome,
        DocumentStatus,
        IngestionOptions,
        IngestionPreview,
        IngestionReceipt,
        PlacementCounts,
    )
    from graphrag_orm.layout import Layout
    from graphrag_orm.options import GraphRagOptions
    from graphrag_orm.retrieval import RetrievalOptions, Retrievers
    from graphrag_orm.retry import RetryOptions
    from graphrag_orm.schema import Schema
    from graphrag_orm.sources import Source, SourceMetadata, Sources
    from graphrag_orm.store.connection import ConnectionSettings
    from graphrag_orm.text2cypher import GraphAnswer, Text2CypherOptions
    from graphrag_orm.values import Limit

__all__ = [
    "Answer",
    "AnswerExport",
    "AnswerReceipt",
    "ChunkPlan",
    "ChunkText",
    "ChunkedDocument",
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
    "GraphAnswer",
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
    "PlacementCounts",
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
    "Text2CypherOptions",
    "Turn",
    "locate",
]

# Where each public name is defined (kept in step with the imports above: a unit test compares them).
_EXPORTS: dict[str, str] = {
    "Answer": "graphrag_orm.answers",
    "AnswerExport": "graphrag_orm.answers",
    "AnswerReceipt": "graphrag_orm.answers",
    "ChunkPlan": "graphrag_orm.chunking",
    "ChunkText": "graphrag_orm.ingestion",
    "ChunkedDocument": "graphrag_orm.ingestion",
    "ChunkerOptions": "graphrag_orm.chunking",
    "Citation": "graphrag_orm.citations",
    "Completed": "graphrag_orm.answers",
    "ConfigurationError": "graphrag_orm.errors",
    "ConnectionSettings": "graphrag_orm.store.connection",
    "ContextItem": "graphrag_orm.evidence",
    "DatabaseUnavailable": "graphrag_orm.errors",
    "Delta": "graphrag_orm.answers",
    "Disposition": "graphrag_orm.answers",
    "DocumentErrorCode": "graphrag_orm.codes",
    "DocumentOutcome": "graphrag_orm.ingestion",
    "DocumentStatus": "graphrag_orm.ingestion",
    "EmbeddingSet": "graphrag_orm.embeddings",
    "Evidence": "graphrag_orm.evidence",
    "EvidenceItem": "graphrag_orm.evidence",
    "GraphAnswer": "graphrag_orm.text2cypher",
    "GraphRag": "graphrag_orm.facade",
    "GraphRagError": "graphrag_orm.errors",
    "GraphRagOptions": "graphrag_orm.options",
    "Grounding": "graphrag_orm.evidence",
    "HealthFinding": "graphrag_orm.codes",
    "IngestionOptions": "graphrag_orm.ingestion",
    "IngestionPreview": "graphrag_orm.ingestion",
    "IngestionReceipt": "graphrag_orm.ingestion",
    "Layout": "graphrag_orm.layout",
    "Limit": "graphrag_orm.values",
    "LimitName": "graphrag_orm.codes",
    "LoadError": "graphrag_orm.errors",
    "MigrationError": "graphrag_orm.errors",
    "PlacementCounts": "graphrag_orm.ingestion",
    "Provenance": "graphrag_orm.evidence",
    "RefusalReason": "graphrag_orm.codes",
    "RetrievalOptions": "graphrag_orm.retrieval",
    "Retrieved": "graphrag_orm.answers",
    "Retrievers": "graphrag_orm.retrieval",
    "RetryOptions": "graphrag_orm.retry",
    "Route": "graphrag_orm.evidence",
    "Schema": "graphrag_orm.schema",
    "SchemaMismatch": "graphrag_orm.errors",
    "Similarity": "graphrag_orm.embeddings",
    "Source": "graphrag_orm.sources",
    "SourceMetadata": "graphrag_orm.sources",
    "Sources": "graphrag_orm.sources",
    "Text2CypherOptions": "graphrag_orm.text2cypher",
    "Turn": "graphrag_orm.answers",
    "locate": "graphrag_orm.citations",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use, then keep it on the package.

    A submodule's name (``graphrag_orm.answers``) imports that submodule, as an eager
    package that had imported it would have offered it.
    """
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
