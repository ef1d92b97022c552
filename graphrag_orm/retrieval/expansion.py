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

In a scoped retrieval the query could still read the whole graph (``$scopeDocumentIds``
is a parameter it may ignore, and a row's text cannot be traced to the node it came
from), so an expansion runs there only when the application marks it ``trusted``;
untrusted, the retrieval fails with ``expansion-not-trusted`` before anything is sent.
A trusted expansion's rows are still checked: every string in a row (at any depth, up
to :data:`MAX_NAMED_VALUES` distinct ones of at most :data:`MAX_NAME_CHARS` characters)
is looked up as the key of a document, section or chunk in one read, and a row that names
one outside the scope (a document not in it, a section or chunk outside its ranges) is
dropped; the count is reported as ``ExpansionOutOfScope``. A row whose strings were not
all looked up (past the bound) is dropped the same way: nothing unchecked is kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import QueryRefused, RetrievalFailed
from graphrag_orm.evidence import ContextItem, EvidenceItem
from graphrag_orm.retrieval.options import CypherExpansion
from graphrag_orm.retrieval.scope import ResolvedScope
from graphrag_orm.store import Store
from graphrag_orm.store.fence import TenantFence
from graphrag_orm.store.sandbox import CypherSandbox, SandboxLimits
from graphrag_orm.values import Limit, strings_in

__all__ = ["MAX_LIST_ITEMS", "MAX_NAMED_VALUES", "MAX_NAME_CHARS", "MAX_TEXT_CHARS", "expand", "untrusted_expansion"]

MAX_LIST_ITEMS = 1_000
MAX_TEXT_CHARS = 10_000
#: Distinct strings of a scoped expansion's rows looked up as keys; rows with strings past it are dropped.
MAX_NAMED_VALUES = 20_000
#: A longer string is no key (keys are ids and URIs), so it is not looked up.
MAX_NAME_CHARS = 2_048


def untrusted_expansion() -> RetrievalFailed:
    """The refusal of an expansion in a scoped retrieval that the application has not marked trusted."""
    return RetrievalFailed(
        ErrorCode.EXPANSION_NOT_TRUSTED,
        "a Cypher expansion in a scoped retrieval must be marked trusted (it can read the whole graph)",
    )


async def _outside(store: Store, named: str, rows: Sequence[dict[str, Any]], scope: ResolvedScope) -> list[bool]:
    """For each row, whether it names a document, section or chunk outside ``scope`` (or could not be checked)."""
    candidates: dict[str, None] = {}
    per_row = [{s for s in strings_in(row) if len(s) <= MAX_NAME_CHARS} for row in rows]
    for strings in per_row:
        for value in sorted(strings):
            if len(candidates) >= MAX_NAMED_VALUES:
                break
            candidates.setdefault(value)
    outside: set[str] = set()
    if candidates:
        result = await store.read(named, {"values": list(candidates)}, name="retrieval.expansion.named")
        for record in result:
            document_id, start, end = record["documentId"], record["startByte"], record["endByte"]
            inside = (
                document_id in scope.ranges
                if start is None or end is None
                else scope.contains(str(document_id), int(start), int(end))
            )
            if not inside:
                outside.add(record["value"])
    return [bool(strings & outside) or not strings.issubset(candidates) for strings in per_row]


async def expand(
    store: Store,
    expansion: CypherExpansion,
    items: Sequence[EvidenceItem],
    scope: ResolvedScope | None,
    sandbox: CypherSandbox | None = None,
    *,
    named: str | None = None,
    fence: TenantFence | None = None,
) -> tuple[list[ContextItem], list[Limit]]:
    """The expansion's rows as context items, and the limits they reached.

    ``named`` is the statement that looks strings up as keys
    (:attr:`~graphrag_orm.retrieval.statements.RetrievalStatements.named`); a scoped
    retrieval needs it. ``fence`` is the application's vouch in a tenanted graph
    (:mod:`graphrag_orm.store.fence`); rows it drops are reported as ``ExpansionOutsideTenant``.
    """
    if scope is not None and not expansion.trusted:
        raise untrusted_expansion()
    if scope is not None and named is None:
        raise TypeError("a scoped expansion needs the statement that looks up keys")
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
            store, expansion.cypher, parameters, limits=limits, name="retrieval.expansion", fence=fence
        )
    except QueryRefused as refused:
        raise RetrievalFailed(refused.code, f"the Cypher expansion was refused: {refused.message}") from refused
    rows = list(result)
    dropped = 0
    if scope is not None and named is not None and rows:
        outside = await _outside(store, named, rows, scope)
        dropped = sum(outside)
        rows = [row for row, out in zip(rows, outside, strict=True) if not out]
    out: list[ContextItem] = []
    for row in rows:
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
    if dropped:
        reached.append(Limit(name=LimitName.EXPANSION_OUT_OF_SCOPE, value=dropped))
    if result.outside_tenant:
        reached.append(Limit(name=LimitName.EXPANSION_OUTSIDE_TENANT, value=result.outside_tenant))
    return out, reached
