"""Re-embedding progress across every tenant of a tenanted graph: the check before the cut-over.

A tenant re-embeds its own chunks (a plan on a store bound to it, docs/tenancy.md), but
the cut-over is the graph's: the new vector index serves every tenant, so a tenant whose
backfill is unfinished would lose those chunks from the vector route. This is the one
read that sees across tenants, and so it is administrative: it runs only on a store bound
to no tenant and built without tenancy (the operator's store, as migrations use; never a
facade's, never a surface's), with the tenanted layout, and returns counts only: per tenant
its chunks, those still to do, backfilled, completed and still holding an old vector,
never a text or a chunk id. One statement; the tenants listed are bounded
(``MaxListed`` past ``limit``), the totals are always the graph's.
"""

from __future__ import annotations

from pydantic import Field

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.embeddings import EmbeddingSet
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import DEFAULT_STAGING_PROPERTY, Layout, validate_identifier
from graphrag_orm.models import for_layout
from graphrag_orm.reembedding.statements import chunk_conditions
from graphrag_orm.store import Store
from graphrag_orm.tenancy import TENANT_PROPERTY, require_administrative
from graphrag_orm.values import Limit, Value

__all__ = [
    "DEFAULT_LISTED_TENANTS",
    "MAX_LISTED_TENANTS",
    "TenantProgress",
    "TenantsProgress",
    "progress_by_tenant",
]

#: Tenants listed by default (the totals count every tenant).
DEFAULT_LISTED_TENANTS = 100
#: The most tenants one call lists, whatever is asked.
MAX_LISTED_TENANTS = 10_000


class TenantProgress(Value):
    """One tenant's chunks: all of them, still to do, backfilled, completed, holding an old vector."""

    tenant: str
    chunks: int = Field(ge=0)
    to_do: int = Field(ge=0)
    backfilled: int = Field(ge=0)
    completed: int = Field(ge=0)
    old_vectors: int = Field(ge=0)


class TenantsProgress(Value):
    """The graph's progress towards ``to_set_id``, every tenant counted.

    ``tenants`` with chunks, ``waiting`` of them with chunks still to do, ``to_do`` chunks
    in all, ``untenanted`` chunks that carry no tenant (written before the graph was
    tenanted, or by another tool: no tenant's backfill reaches them), and the first tenants
    by id in ``shown``. ``ready`` says the cut-over leaves no chunk behind.
    """

    to_set_id: str
    tenants: int = Field(ge=0)
    waiting: int = Field(ge=0)
    to_do: int = Field(ge=0)
    untenanted: int = Field(ge=0)
    shown: tuple[TenantProgress, ...]
    limits_reached: tuple[Limit, ...] = ()

    @property
    def ready(self) -> bool:
        return self.to_do == 0 and self.untenanted == 0


def _statement(layout: Layout, staging: str) -> str:
    names = for_layout(layout).names
    from_new, completed, to_do = chunk_conditions(names, staging)
    live = layout.chunk_embedding_property
    return (
        f"MATCH (c:{names.chunk.label}) WITH c.{TENANT_PROPERTY} AS tenant, count(c) AS chunks, "
        f"count(CASE WHEN {to_do} THEN 1 END) AS toDo, count(CASE WHEN {from_new} THEN 1 END) AS backfilled, "
        f"count(CASE WHEN {completed} THEN 1 END) AS completed, count(c.{live}) AS oldVectors "
        "ORDER BY tenant WITH collect({tenant: tenant, chunks: chunks, toDo: toDo, backfilled: backfilled, "
        "completed: completed, oldVectors: oldVectors}) AS rows "
        "WITH [r IN rows WHERE r.tenant IS NOT NULL] AS owned, [r IN rows WHERE r.tenant IS NULL] AS unowned "
        "RETURN size(owned) AS tenants, size([r IN owned WHERE r.toDo > 0]) AS waiting, "
        "reduce(n = 0, r IN owned + unowned | n + r.toDo) AS toDo, "
        "reduce(n = 0, r IN unowned | n + r.chunks) AS untenanted, owned[0..$limit] AS shown"
    )


async def progress_by_tenant(
    store: Store,
    layout: Layout,
    to_set: EmbeddingSet,
    staging_property: str = DEFAULT_STAGING_PROPERTY,
    *,
    limit: int = DEFAULT_LISTED_TENANTS,
) -> TenantsProgress:
    """Every tenant's progress towards ``to_set`` on ``staging_property`` (reads only).

    Refused before anything is read: an untenanted ``layout`` (``invalid-option``: its one
    progress is ``plan(...).preview()``), a store that is tenanted or bound to a tenant
    (``tenant-refused``: a tenant's store never reads across tenants), a ``limit`` outside
    1..:data:`MAX_LISTED_TENANTS` (``invalid-option``), a staging property that is not a
    plain identifier (``invalid-layout``).
    """
    if not layout.tenanted:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION,
            "progress by tenant is of a tenanted layout; an untenanted graph's progress is plan(...).preview()",
        )
    require_administrative(store.tenanted, store.tenant, "progress across tenants")
    if not 1 <= limit <= MAX_LISTED_TENANTS:
        raise ConfigurationError(
            ErrorCode.INVALID_OPTION, f"limit must be 1 to {MAX_LISTED_TENANTS:,} tenants (got {limit})"
        )
    validate_identifier(staging_property, "staging_property")
    result = await store.read(
        _statement(layout, staging_property),
        {"to": to_set.id, "limit": limit},
        name="reembedding.progress_by_tenant",
    )
    row = result.records[0]
    shown = tuple(
        TenantProgress(
            tenant=str(entry["tenant"]),
            chunks=int(entry["chunks"]),
            to_do=int(entry["toDo"]),
            backfilled=int(entry["backfilled"]),
            completed=int(entry["completed"]),
            old_vectors=int(entry["oldVectors"]),
        )
        for entry in row["shown"]
    )
    tenants = int(row["tenants"])
    return TenantsProgress(
        to_set_id=to_set.id,
        tenants=tenants,
        waiting=int(row["waiting"]),
        to_do=int(row["toDo"]),
        untenanted=int(row["untenanted"]),
        shown=shown,
        limits_reached=(Limit(name=LimitName.MAX_LISTED, value=limit),) if tenants > limit else (),
    )
