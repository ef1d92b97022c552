"""A Cypher expansion: the application's read-only query, its rows as labelled context.

The query runs in the sandbox (:mod:`graphrag_orm.store.sandbox`): the text gate, the
server's plan, then once (never retried, so its timeout holds) in a read transaction
with ``timeout_seconds``, and at most ``max_rows`` rows are read (more is reported as
``ExpansionRows``). It gets ``$chunkIds`` (the evidence items) and
``$scopeDocumentIds`` (the resolved scope's documents, or null) besides its own
parameters. Each row becomes one context item, JSON with sorted keys:

- values are made plain by the sandbox (:mod:`graphrag_orm.store.sandbox`): a node or
  relationship is the map of its properties without the embedding and without any numeric
  list property of more than 32 items; a list of more than 32 numbers with a fractional
  one is replaced by ``"(vector left out)"`` anywhere; dates, times and durations are ISO text;
- a list keeps its first 1,000 items and a string its first 10,000 characters; when
  either is cut, ``ExpansionListItems`` or ``ExpansionText`` is reported in
  ``limits_reached``: nothing is cut silently.

A query the sandbox refuses (a write, LOAD CSV, a procedure call, a syntax error, a
timeout) fails the retrieval with :class:`~graphrag_orm.errors.RetrievalFailed` carrying
the sandbox's code (``not-allowed``, ``invalid-query``, ``not-read-only``,
``query-failed``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from graphrag_orm.codes import LimitName
from graphrag_orm.errors import QueryRefused, RetrievalFailed
from graphrag_orm.evidence import ContextItem, EvidenceItem
from graphrag_orm.retrieval.options import CypherExpansion
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.store import Store
from graphrag_orm.store.sandbox import CypherSandbox, SandboxLimits
from graphrag_orm.values import Limit

__all__ = ["MAX_LIST_ITEMS", "MAX_TEXT_CHARS", "expand"]

MAX_LIST_ITEMS = 1_000
MAX_TEXT_CHARS = 10_000


async def expand(
    store: Store,
    expansion: CypherExpansion,
    items: Sequence[EvidenceItem],
    scope: ResolvedScope | None,
    sandbox: CypherSandbox | None = None,
) -> tuple[list[ContextItem], list[Limit]]:
    """The expansion's rows as context items, and the limits they reached."""
    parameters = {
        **expansion.parameters,
        "chunkIds": [item.chunk_id for item in items],
        "scopeDocumentIds": scope.document_ids if scope is not None else None,
    }
    limits = SandboxLimits(
        timeout_seconds=expansion.timeout_seconds,
        max_rows=expansion.max_rows,
        max_list_items=MAX_LIST_ITEMS,
        max_text_chars=MAX_TEXT_CHARS,
    )
    try:
        result = await (sandbox or CypherSandbox()).run(
            store, expansion.cypher, parameters, limits=limits, name="retrieval.expansion"
        )
    except QueryRefused as refused:
        raise RetrievalFailed(refused.code, f"the Cypher expansion was refused: {refused.message}") from refused
    out: list[ContextItem] = []
    for row in result:
        chunk_id = row.get("chunkId")
        out.append(
            ContextItem(
                chunk_id=chunk_id if isinstance(chunk_id, str) else None,
                text=json.dumps(row, ensure_ascii=False, default=str, sort_keys=True),
                reason="cypher-expansion",
            )
        )
    reached: list[Limit] = []
    if result.truncated:
        reached.append(Limit(name=LimitName.EXPANSION_ROWS, value=expansion.max_rows))
    if result.lists_cut:
        reached.append(Limit(name=LimitName.EXPANSION_LIST_ITEMS, value=MAX_LIST_ITEMS))
    if result.texts_cut:
        reached.append(Limit(name=LimitName.EXPANSION_TEXT, value=MAX_TEXT_CHARS))
    return out, reached
