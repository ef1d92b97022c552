"""Bounds of a graph question: the question, the model's reply and query, and the rows kept."""

from __future__ import annotations

from typing import Final

from pydantic import Field

from graphrag_orm.store.gate import DEFAULT_MAX_CHARS, MAX_CHARS
from graphrag_orm.store.sandbox import SandboxLimits
from graphrag_orm.values import DEFAULT_QUESTION_CHARS, Options

__all__ = ["MAX_GRAPH_ROWS", "MAX_QUESTION_CHARS", "Text2CypherOptions"]

#: The most rows one graph answer may keep (``max_rows``' upper bound).
MAX_GRAPH_ROWS: Final = 1_000
#: The upper bound of ``max_question_chars``.
MAX_QUESTION_CHARS: Final = 20_000


class Text2CypherOptions(Options):
    """Bounds of ``rag.graph``; a value outside them is ``ConfigurationError("invalid-option")``.

    Each cut is reported in the answer's ``limits_reached``: ``GraphQueryRows`` (more rows
    than ``max_rows``), ``GraphQueryListItems`` and ``GraphQueryText``. Passing this to
    ``GraphRag(text2cypher=...)`` is what enables ``rag.graph``.
    """

    timeout_seconds: float = Field(
        10.0, ge=0.1, le=120.0, description="the query's transaction timeout, seconds (0.1 to 120)"
    )
    max_rows: int = Field(50, ge=1, le=MAX_GRAPH_ROWS, description="rows read and kept (1 to 1,000)")
    max_list_items: int = Field(1_000, ge=1, le=100_000, description="items a list keeps (1 to 100,000)")
    max_text_chars: int = Field(10_000, ge=1, le=1_000_000, description="characters a string keeps (1 to 1,000,000)")
    max_query_chars: int = Field(
        DEFAULT_MAX_CHARS, ge=1, le=MAX_CHARS, description="characters the model's query may have (the gate's bound)"
    )
    max_question_chars: int = Field(
        DEFAULT_QUESTION_CHARS,
        ge=1,
        le=MAX_QUESTION_CHARS,
        description="characters a question may have (1 to 20,000; 4,000 as on every surface)",
    )
    # strict: a bool or a numeric string is refused, never read as 1 or as a number.
    max_output_tokens: int = Field(
        2_048,
        ge=1,
        le=32_768,
        strict=True,
        description="most tokens of the model's reply (1 to 32,768); a reply cut off is unreadable-response",
    )

    def sandbox_limits(self) -> SandboxLimits:
        """The sandbox's bounds for the model's query."""
        return SandboxLimits(
            timeout_seconds=self.timeout_seconds,
            max_rows=self.max_rows,
            max_list_items=self.max_list_items,
            max_text_chars=self.max_text_chars,
        )
