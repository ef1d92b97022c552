"""Bounds of answering."""

from __future__ import annotations

from typing import Final

from pydantic import Field

from graphrag_orm.values import Options

__all__ = ["MAX_OUTPUT_TOKENS", "AnswersOptions"]

MAX_OUTPUT_TOKENS: Final = 32_768


class AnswersOptions(Options):
    """Bounds of the answer call; a value outside them is ``ConfigurationError("invalid-option")``."""

    # strict: a bool or a numeric string is refused, never read as 1 or as a number.
    max_output_tokens: int = Field(
        2_048,
        ge=1,
        le=MAX_OUTPUT_TOKENS,
        strict=True,
        description="most tokens of the answer call's reply (1 to 32,768); a reply cut off is unreadable-response",
    )
    repair_citations: bool = Field(
        True,
        strict=True,
        description="when a reply's citations do not verify, tell the model which quote was not found "
        "in which item and ask once more (one more chat call); the second reply is judged alike",
    )
