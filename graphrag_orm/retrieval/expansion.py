"""A Cypher expansion: the application's read-only query, its rows as labelled context.

The query runs once (never retried, so its timeout holds) in a read transaction with
``timeout_seconds``, and at most ``max_rows`` rows are read (more is reported as
``ExpansionRows``). It gets ``$chunkIds`` (the evidence items) and
``$scopeDocumentIds`` (the resolved scope's documents, or null) besides its own
parameters. Each row becomes one context item, JSON with sorted keys:

- a node or relationship is the map of its properties, without any list property of
  more than 32 items (embeddings); a list of more than 32 floats anywhere is replaced
  by ``"(vector left out)"``;
- a list keeps its first 1,000 items and a string its first 10,000 characters; when
  either is cut, ``ExpansionListItems`` or ``ExpansionText`` is reported in
  ``limits_reached``: nothing is cut silently.

A query the server refuses (a write, a syntax error, a timeout) fails the retrieval
with ``retrieval-failed``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neo4j.exceptions import DriverError, Neo4jError
from neo4j.graph import Node, Relationship

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import RetrievalFailed
from graphrag_orm.evidence import ContextItem, EvidenceItem
from graphrag_orm.retrieval.options import CypherExpansion
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.store import Store
from graphrag_orm.values import Limit

__all__ = ["MAX_LIST_ITEMS", "MAX_TEXT_CHARS", "expand"]

MAX_LIST_ITEMS = 1_000
MAX_TEXT_CHARS = 10_000
#: A numeric list longer than this is taken for an embedding and left out.
_VECTOR_ITEMS = 32


async def expand(
    store: Store, expansion: CypherExpansion, items: Sequence[EvidenceItem], scope: ResolvedScope | None
) -> tuple[list[ContextItem], list[Limit]]:
    """The expansion's rows as context items, and the limits they reached."""
    parameters = {
        **expansion.parameters,
        "chunkIds": [item.chunk_id for item in items],
        "scopeDocumentIds": scope.document_ids if scope is not None else None,
    }
    try:
        result = await store.read(
            expansion.cypher,
            parameters,
            name="retrieval.expansion",
            timeout=expansion.timeout_seconds,
            max_rows=expansion.max_rows,
            retry=False,
        )
    except (Neo4jError, DriverError, OSError) as error:
        reason = error.code if isinstance(error, Neo4jError) else type(error).__name__
        raise RetrievalFailed(ErrorCode.RETRIEVAL_FAILED, f"the Cypher expansion failed: {reason}") from error
    plain = _Plain()
    out: list[ContextItem] = []
    for record in result:
        row = {key: plain.value(value) for key, value in record.items()}
        chunk_id = row.get("chunkId")
        out.append(
            ContextItem(
                chunk_id=chunk_id if isinstance(chunk_id, str) else None,
                text=json.dumps(row, ensure_ascii=False, default=str, sort_keys=True),
                reason="cypher-expansion",
            )
        )
    limits: list[Limit] = []
    if result.truncated:
        limits.append(Limit(name=LimitName.EXPANSION_ROWS, value=expansion.max_rows))
    if plain.lists_cut:
        limits.append(Limit(name=LimitName.EXPANSION_LIST_ITEMS, value=MAX_LIST_ITEMS))
    if plain.texts_cut:
        limits.append(Limit(name=LimitName.EXPANSION_TEXT, value=MAX_TEXT_CHARS))
    return out, limits


@dataclass
class _Plain:
    """Turns row values into JSON-able data, remembering what it cut."""

    lists_cut: bool = False
    texts_cut: bool = False

    def value(self, value: Any) -> Any:
        if isinstance(value, list):
            if len(value) > _VECTOR_ITEMS and all(isinstance(v, float) for v in value):
                return "(vector left out)"
            if len(value) > MAX_LIST_ITEMS:
                self.lists_cut = True
            return [self.value(v) for v in value[:MAX_LIST_ITEMS]]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, Node | Relationship):
            properties: dict[str, Any] = dict(value)
            return {
                k: self.value(v) for k, v in properties.items() if not (isinstance(v, list) and len(v) > _VECTOR_ITEMS)
            }
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            self.texts_cut = True
            return value[:MAX_TEXT_CHARS]
        return value
