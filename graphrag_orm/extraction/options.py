"""Extraction settings: per-chunk bounds, strict schemas, the one repair ask."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["ExtractionOptions"]


class ExtractionOptions(Options):
    """Bounds of extraction; a value outside them is ``ConfigurationError("invalid-option")``."""

    strict_schema: bool = True
    retry_unreadable_replies: bool = True
    max_entities_per_chunk: int = Field(50, ge=1, le=1_000)
    max_relationships_per_chunk: int = Field(100, ge=1, le=2_000)
    max_quotes_per_chunk: int = Field(50, ge=1, le=1_000)
    max_mentions_per_entity: int = Field(20, ge=1, le=200)
    max_output_tokens: int = Field(4_096, ge=256, le=65_536)
    max_reply_bytes: int = Field(1 << 20, ge=1 << 10, le=16 << 20, description="a longer reply is unreadable")
    max_json_depth: int = Field(12, ge=4, le=64, description="deeper JSON is unreadable")
    quarantine_text_chars: int = Field(2_000, ge=0, le=20_000, description="kept of a quarantined reply")
    max_name_chars: int = Field(300, ge=10, le=2_000)
