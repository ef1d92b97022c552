"""Grounded extraction: one call per chunk, checks with reasons, located mentions, resolution."""

from graphrag_orm.errors import Unreadable
from graphrag_orm.extraction.grounding import (
    DocumentKnowledge,
    ExtractionCandidate,
    ExtractionChunk,
    FactDraft,
    Grounder,
    QuoteDraft,
    ThingDraft,
    Verifier,
)
from graphrag_orm.extraction.options import ExtractionOptions
from graphrag_orm.extraction.reply import RawExtraction, parse_reply
from graphrag_orm.extraction.service import SCHEMA_NAME, Extractor
from graphrag_orm.extraction.summary import ExtractionSummary, PrunedItem, PruneReason, QuarantinedReply
from graphrag_orm.extraction.writer import KnowledgeWriter

__all__ = [
    "SCHEMA_NAME",
    "DocumentKnowledge",
    "ExtractionCandidate",
    "ExtractionChunk",
    "ExtractionOptions",
    "ExtractionSummary",
    "Extractor",
    "FactDraft",
    "Grounder",
    "KnowledgeWriter",
    "PruneReason",
    "PrunedItem",
    "QuarantinedReply",
    "QuoteDraft",
    "RawExtraction",
    "ThingDraft",
    "Unreadable",
    "Verifier",
    "parse_reply",
]
