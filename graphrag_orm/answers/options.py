"""Bounds of answering."""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["MAX_OUTPUT_TOKENS", "AnswersOptions"]

MAX_OUTPUT_TOKENS = 32_768


class AnswersOptions(Options):
    """Bounds of the answer call; a value outside them is ``ConfigurationError("invalid-option")``."""

    max_output_tokens: int = Field(
        2_048,
        ge=1,
        le=MAX_OUTPUT_TOKENS,
        description="most tokens of the answer call's reply; a reply cut off is unreadable-response",
    )
