"""Caller Cypher in a tenanted graph: the application's vouch, and the rows kept inside the tenant.

A query a caller or the application supplies (a Cypher scope, a Cypher expansion) can read
the whole graph, whatever tenant its store is bound to: Neo4j Community has no per-user
privileges to stop it. In a tenanted graph the sandbox therefore runs one only with a
:class:`TenantFence`, which the application builds by vouching for the query *per tenant*
(``vouched_tenant`` on the scope or expansion: the query filters by ``$tenant``, which the
store binds). A vouch for another tenant than the store's is ``tenant-mismatch``; no vouch is
``tenant-refused`` (:mod:`graphrag_orm.store.sandbox`). Text2Cypher is never vouched for: a
model's query is no application's promise.

The vouch is checked, row by row, in the query's own read transaction, after its rows are
read and before any is returned. A row is dropped, and counted (the caller reports it as a
limit), when:

- it holds a node (at any depth: in a list, a map or a path) that does not carry the
  tenant's ``tenant`` property: another tenant's, or one without a tenant (written before
  the graph was tenanted, or an application's own node without one);
- it holds a relationship whose two end nodes the row does not itself hold, each the
  tenant's (the server sends a bare relationship's ends without their properties, so
  they cannot be checked: return the nodes with it, or a path);
- one of its strings (at any depth, map keys and node properties included; at most
  :data:`MAX_FENCE_CHARS` characters each) is the key of a document, section, chunk, ingestion run
  or lease that is not the tenant's (one read of at most :data:`MAX_FENCE_VALUES` distinct strings; a row
  whose strings were not all looked up is dropped too: nothing unchecked is kept).

What the check cannot see is a value derived from another tenant's node and returned
alone (``RETURN c.text`` of a chunk the query did not filter, a count, a substring): no
key or node comes with it. That is what the vouch promises; the check is the net under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from neo4j.graph import Node, Path, Relationship

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import TenantError
from graphrag_orm.store.names import StoredNames
from graphrag_orm.store.store import Result, StoreTransaction
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY, Tenant

__all__ = ["MAX_FENCE_CHARS", "MAX_FENCE_VALUES", "TenantFence", "fence_for", "foreign_keys"]

#: Distinct strings of a fenced query's rows looked up as keys; rows with strings past it are dropped.
MAX_FENCE_VALUES = 20_000
#: A longer string is no key (keys are ids and URIs), so it is not looked up.
MAX_FENCE_CHARS = 2_048


@dataclass(frozen=True)
class TenantFence:
    """The tenant a query is vouched for, and the statement that finds keys of nodes outside it.

    ``foreign_keys`` takes ``$values`` (strings) and ``$tenant`` and returns the ``value`` of
    each that is the key of a document, section, chunk, run or lease not carrying the tenant
    (:func:`foreign_keys`).
    """

    tenant: Tenant
    foreign_keys: str

    def check(self, store_tenant: Tenant | None, what: str) -> None:
        """``tenant-mismatch`` unless the vouch is for the store's own tenant."""
        if store_tenant is None:
            raise TenantError(ErrorCode.TENANT_REQUIRED, f"{what} needs a store bound to a tenant")
        if self.tenant != store_tenant:
            raise TenantError(ErrorCode.TENANT_MISMATCH, f"{what} is vouched for another tenant than the store's")

    async def keep(self, tx: StoreTransaction, result: Result, *, name: str) -> tuple[Result, int]:
        """The rows of ``result`` inside the tenant, and how many were dropped (one read in ``tx``)."""
        seen = [_Seen.of(record) for record in result]
        candidates: dict[str, None] = {}
        for row in seen:
            for value in sorted(row.strings):
                if len(candidates) >= MAX_FENCE_VALUES:
                    break
                candidates.setdefault(value)
        foreign: set[str] = set()
        if candidates:
            found = await tx.run(self.foreign_keys, {"values": list(candidates)}, name=f"{name}.fence")
            foreign = {str(value) for value in found.column("value")}
        kept = [
            record
            for record, row in zip(result.records, seen, strict=True)
            if not row.outside(self.tenant.value) and not (row.strings & foreign) and row.strings.issubset(candidates)
        ]
        dropped = len(result.records) - len(kept)
        return replace(result, records=kept), dropped


def foreign_keys(names: StoredNames) -> str:
    """``<name>.fence``: which of ``$values`` are the key of a document, section, chunk,
    ingestion run or lease that is not ``$tenant``'s (another's, or none's): a vouched query's
    rows naming one are dropped. A tenanted layout's only."""
    if not names.tenanted:
        raise TypeError("only a tenanted layout fences caller Cypher")
    outside = f"WHERE n.{TENANT_PROPERTY} IS NULL OR n.{TENANT_PROPERTY} <> ${TENANT_PARAMETER} RETURN 1 AS hit"
    matches = " UNION ALL ".join(
        f"MATCH (n:{node.label} {{{node.key}: value}}) {outside}"
        for node in (names.document, names.section, names.chunk, names.run, names.lease)
    )
    return f"UNWIND $values AS value CALL (value) {{ {matches} }} RETURN DISTINCT value"


def fence_for(names: StoredNames, vouched: str | None) -> TenantFence | None:
    """The fence of a caller's query vouched for ``vouched``: none untenanted, or unvouched
    (the sandbox then refuses it in a tenanted graph)."""
    if vouched is None or not names.tenanted:
        return None
    return TenantFence(Tenant(vouched), foreign_keys(names))


class _Seen:
    """The nodes, relationships and strings of one record."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.relationships: list[Relationship] = []
        self.strings: set[str] = set()

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> _Seen:
        seen = cls()
        for key, value in record.items():
            seen.strings.add(str(key))
            seen.walk(value)
        seen.strings = {text for text in seen.strings if len(text) <= MAX_FENCE_CHARS}
        return seen

    def walk(self, value: Any) -> None:
        if isinstance(value, str):
            self.strings.add(value)
        elif isinstance(value, Node):
            self.nodes[value.element_id] = value
            self._properties(value)
        elif isinstance(value, Relationship):
            self.relationships.append(value)
            self._properties(value)
        elif isinstance(value, Path):
            for node in value.nodes:
                self.walk(node)
            for relationship in value.relationships:
                self.walk(relationship)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                self.strings.add(str(key))
                self.walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                self.walk(item)

    def _properties(self, entity: Node | Relationship) -> None:
        for key, item in entity.items():
            self.strings.add(str(key))
            self.walk(item)

    def outside(self, tenant: str) -> bool:
        if any(node.get(TENANT_PROPERTY) != tenant for node in self.nodes.values()):
            return True
        return any(not self._inside(relationship) for relationship in self.relationships)

    def _inside(self, relationship: Relationship) -> bool:
        ends = (relationship.start_node, relationship.end_node)
        return all(end is not None and end.element_id in self.nodes for end in ends)
