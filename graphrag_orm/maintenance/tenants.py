"""The tenants of a tenanted graph, counted: the operator's one read across tenants.

Every service of a tenanted graph is one tenant's (docs/tenancy.md): none lists the tenants,
and none sees a lexical node that carries no tenant (written before the graph was tenanted,
or by another tool), which no tenant's maintenance reaches. This read does both, so it is
administrative: it runs only on a store built without tenancy and bound to no tenant (the
operator's, as migrations use; never a facade's or a surface's), with the tenanted layout.
It returns counts only, never a text, a title or a node id: per tenant its documents,
sections, chunks, ingestion runs and leases, and the same counts of the nodes without a
tenant. One statement; the tenants listed are the first ``limit`` by id (``MaxListed`` past
it), the totals count every tenant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance.reports import TenantCounts
from graphrag_orm.models import for_layout
from graphrag_orm.reembedding.tenants import DEFAULT_LISTED_TENANTS, MAX_LISTED_TENANTS
from graphrag_orm.store import Store
from graphrag_orm.tenancy import TENANT_PROPERTY, require_administrative
from graphrag_orm.values import Limit, Value

__all__ = ["ListedTenant", "TenantsOverview", "tenants_overview"]

_KINDS = ("documents", "sections", "chunks", "runs", "leases")


class ListedTenant(TenantCounts):
    """One tenant's lexical nodes, counted; ``tenant`` ``None``: the nodes that carry no tenant."""

    tenant: str | None = None


class TenantsOverview(Value):
    """``tenants`` holding any lexical node, the first of them by id in ``shown``, and
    ``untenanted``: the nodes no tenant owns (all zero in a graph written by the toolkit
    since it was tenanted). ``clean`` says there are none."""

    tenants: int = Field(ge=0)
    shown: tuple[ListedTenant, ...]
    untenanted: ListedTenant
    limits_reached: tuple[Limit, ...] = ()

    @property
    def clean(self) -> bool:
        return self.untenanted.empty


def _statement(layout: Layout) -> str:
    names = for_layout(layout).names
    labels = (names.document, names.section, names.chunk, names.run, names.lease)
    counted = " UNION ALL ".join(
        f"MATCH (n:{node.label}) RETURN n.{TENANT_PROPERTY} AS tenant, "
        + ", ".join(f"{'count(n)' if kind == mine else '0'} AS {kind}" for kind in _KINDS)
        for node, mine in zip(labels, _KINDS, strict=True)
    )
    sums = ", ".join(f"sum({kind}) AS {kind}" for kind in _KINDS)
    fields = ", ".join(f"{kind}: {kind}" for kind in _KINDS)
    return (
        f"CALL () {{ {counted} }} WITH tenant, {sums} ORDER BY tenant "
        f"WITH collect({{tenant: tenant, {fields}}}) AS rows "
        "WITH [r IN rows WHERE r.tenant IS NOT NULL] AS owned, [r IN rows WHERE r.tenant IS NULL] AS unowned "
        "RETURN size(owned) AS tenants, owned[0..$limit] AS shown, unowned"
    )


def _counts(entry: Mapping[str, Any] | None, tenant: str | None) -> ListedTenant:
    got = entry or {}
    return ListedTenant(
        tenant=tenant,
        documents=int(got.get("documents") or 0),
        sections=int(got.get("sections") or 0),
        chunks=int(got.get("chunks") or 0),
        runs=int(got.get("runs") or 0),
        leases=int(got.get("leases") or 0),
    )


async def tenants_overview(store: Store, layout: Layout, *, limit: int = DEFAULT_LISTED_TENANTS) -> TenantsOverview:
    """Every tenant of the graph counted, and the nodes of none (reads only).

    Refused before anything is read: an untenanted ``layout`` (``invalid-option``), a store
    that is tenanted or bound to a tenant (``tenant-refused``), a ``limit`` outside
    1..:data:`~graphrag_orm.reembedding.tenants.MAX_LISTED_TENANTS` (``invalid-option``).
    """
    if not layout.tenanted:
        raise ConfigurationError(ErrorCode.INVALID_OPTION, "the tenants overview is of a tenanted layout")
    require_administrative(store.tenanted, store.tenant, "the tenants overview")
    if not 1 <= limit <= MAX_LISTED_TENANTS:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, f"limit must be 1 to {MAX_LISTED_TENANTS:,} tenants (got {limit})"
        )
    result = await store.read(_statement(layout), {"limit": limit}, name="maintenance.tenants_overview")
    row = result.records[0]
    tenants = int(row["tenants"])
    unowned = row["unowned"]
    return TenantsOverview(
        tenants=tenants,
        shown=tuple(_counts(entry, str(entry["tenant"])) for entry in row["shown"]),
        untenanted=_counts(unowned[0] if unowned else None, None),
        limits_reached=(Limit(name=LimitName.MAX_LISTED, value=limit),) if tenants > limit else (),
    )
