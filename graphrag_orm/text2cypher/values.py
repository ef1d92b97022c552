"""What a graph question returns: the model's query and its rows, or a refusal, and a receipt.

A :class:`GraphAnswer` is rows a query returned, marked as such: never a text citation
and never prose written over the rows (a reader or an agent phrases them). It is either
answered (``refusal`` is None; ``query``, ``columns`` and ``rows`` hold what the sandbox
read) or refused (``refusal`` holds the reason; ``rows`` is empty, and ``query`` holds
the model's Cypher when there was one, so a reader sees what was refused; a refused
query was not run, and a ``model-declined`` one says so in its ``message``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from graphrag_orm.codes import GraphRefusal
from graphrag_orm.values import Limit, Value

__all__ = ["GraphAnswer", "GraphReceipt"]


class GraphReceipt(Value):
    """What one graph question cost.

    ``chat_calls`` is 1 (one model call per question). ``input_tokens`` and
    ``output_tokens`` are the provider's figures, ``None`` when it reported none.
    ``chat_seconds`` times the model call, ``query_seconds`` the gates and the read
    (0 when no query was sent); wall-clock, rounded to microseconds.
    """

    chat_calls: int = Field(ge=0)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    chat_seconds: float = Field(ge=0.0)
    query_seconds: float = Field(ge=0.0)


class GraphAnswer(Value):
    """A graph question's query and rows, or its refusal; JSON in camelCase.

    ``rows`` are plain JSON data (strings, numbers, booleans, null, lists, maps; dates
    and points as text; nodes and relationships as their properties without embeddings),
    each a map of ``columns``, at most ``max_rows`` of them. ``message`` is one line for a
    reader: how many rows, or why it was refused (a gate's rule, a server status code, or
    the model's own reason for declining), never a value of the query.
    ``limits_reached`` names each bound that cut the rows (``GraphQueryRows``,
    ``GraphQueryListItems``, ``GraphQueryText``) with the value it was held to.
    """

    question: str
    query: str | None = None
    columns: tuple[str, ...] = ()
    rows: tuple[dict[str, Any], ...] = ()
    refusal: GraphRefusal | None = None
    message: str
    limits_reached: tuple[Limit, ...] = ()
    receipt: GraphReceipt

    @property
    def answered(self) -> bool:
        """Whether the query ran and its rows are here (no refusal)."""
        return self.refusal is None
