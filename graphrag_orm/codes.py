"""Stable codes: the exact strings of the reference design.

Receipts, reports and refusals carry these strings, never messages or text, so
scripts and dashboards can rely on them across releases.
"""

from __future__ import annotations

from enum import StrEnum


class DocumentErrorCode(StrEnum):
    """Why one document failed; recorded on its outcome."""

    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type"
    READ_FAILED = "read-failed"
    INVALID_UTF8 = "invalid-utf8"
    DOCUMENT_TOO_LARGE = "document-too-large"
    PDF_NO_TEXT = "pdf-no-text"
    PDF_UNREADABLE = "pdf-unreadable"
    LEASE_HELD = "lease-held"
    LEASE_LOST = "lease-lost"
    EMBEDDING_FAILED = "embedding-failed"
    EMBEDDING_COUNT = "embedding-count"
    EMBEDDING_DIMENSIONS = "embedding-dimensions"
    INVALID_EMBEDDING = "invalid-embedding"
    RATE_LIMITED = "rate-limited"
    EXTRACTION_FAILED = "extraction-failed"
    WRITE_FAILED = "write-failed"
    POSITION_NOT_RECOVERED = "position-not-recovered"


class RefusalReason(StrEnum):
    """Why an answer was refused (InsufficientEvidence)."""

    NO_EVIDENCE = "no-evidence"
    MODEL_DECLINED = "model-declined"
    UNREADABLE_RESPONSE = "unreadable-response"
    NO_CITATIONS = "no-citations"
    CITATION_NOT_FOUND = "citation-not-found"


class HealthFinding(StrEnum):
    """Findings of the health report; none means healthy."""

    SCHEMA_MISSING = "schema-missing"
    INDEX_NOT_ONLINE = "index-not-online"
    MISSING_EMBEDDING = "missing-embedding"
    MIXED_EMBEDDING_SETS = "mixed-embedding-sets"
    ORPHANS = "orphans"
    ORPHAN_ENTITIES = "orphan-entities"
    STALE_FACTS = "stale-facts"
    READBACK_MISMATCH = "readback-mismatch"
    EXPIRED_LEASES = "expired-leases"


class LimitName(StrEnum):
    """Names of bounds that were reached; reported, never silent."""

    MAX_ITEMS = "MaxItems"
    MAX_UTF8_BYTES = "MaxUtf8Bytes"
    MAX_DOCUMENTS = "MaxDocuments"
    HISTORY_TURNS = "HistoryTurns"
    SCOPE_DOCUMENTS = "ScopeDocuments"
    VECTOR_SCOPE_OVER_FETCH = "VectorScopeOverFetch"
    FULL_TEXT_SCOPE_OVER_FETCH = "FullTextScopeOverFetch"
    EXPANSION_ROWS = "ExpansionRows"
    MAX_HOPS = "MaxHops"
    MAX_DEGREE = "MaxDegree"
    MAX_FACTS = "MaxFacts"
    INDEX_WAIT = "IndexWait"
    CONTEXT_UTF8_BYTES = "ContextUtf8Bytes"
    MAX_FACT_UPDATES = "MaxFactUpdates"
