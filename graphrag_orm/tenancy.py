"""Tenants: one graph, many customers; the tenant value and the one enforcement point (docs/tenancy.md).

A :class:`Tenant` is a validated value, never a free string: it reaches Cypher only as
the ``$tenant`` parameter, which the store binds itself (:meth:`Store.for_tenant`). A
layout with ``tenancy="required"`` marks a tenanted graph; a store of a tenanted graph
refuses every statement until it is bound to a tenant (``tenant-required``), and refuses
a statement that brings a ``tenant`` parameter of its own (``tenant-mismatch``), before
anything goes out. Surfaces a tenanted graph cannot fence yet (Text2Cypher, caller
Cypher, expansions) are refused with :func:`refuse_in_tenanted_graph` (``tenant-refused``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError, TenantError

__all__ = [
    "MAX_TENANT_LENGTH",
    "TENANCY_ENV",
    "TENANCY_MODES",
    "TENANT_ENV",
    "TENANT_PARAMETER",
    "TENANT_PROPERTY",
    "Tenant",
    "VouchedTenant",
    "check_fenced",
    "refuse_in_tenanted_graph",
    "require_administrative",
    "require_tenant",
    "statement_parameters",
    "tenancy_from_env",
    "tenant_from_env",
]

MAX_TENANT_LENGTH = 128
"""Characters of a tenant value; a longer one is ``invalid-tenant``."""

TENANCY_MODES = ("off", "required")
"""A layout's ``tenancy``: ``off`` (the default, one tenant) or ``required``."""

TENANT_PROPERTY = "tenant"
"""The property documents, sections, chunks, runs and leases of a tenanted graph carry."""

TENANT_PARAMETER = "tenant"
"""The statement parameter the store binds to its tenant's value."""

TENANT_ENV = "GRAPHRAG_TENANT"
"""The environment variable the CLI reads when ``--tenant`` is not given (the MCP server too)."""

TENANCY_ENV = "GRAPHRAG_TENANCY"
"""The environment variable that makes the layout of what is built from the environment tenanted
(``required``); unset or ``off`` leaves the layout's own (``graphrag_from_env``, the CLI)."""

# Letters, digits and ``._:@-``, starting with a letter or digit: what an application's
# customer ids look like; no spaces, quotes, backticks or control characters.
_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]*")


@dataclass(frozen=True, slots=True)
class Tenant:
    """One tenant: ``Tenant("acme")``; anything else than a plain id is ``invalid-tenant``."""

    value: str

    def __post_init__(self) -> None:
        value = self.value
        if not isinstance(value, str) or not 0 < len(value) <= MAX_TENANT_LENGTH or not _VALUE.fullmatch(value):
            shown = value[:40] if isinstance(value, str) else type(value).__name__
            raise TenantError(
                ErrorCode.INVALID_TENANT,
                f"tenant {shown!r} is not a tenant id (1..{MAX_TENANT_LENGTH} letters, digits or '._:@-')",
            )

    @classmethod
    def of(cls, value: Tenant | str | None) -> Tenant | None:
        """``value`` as a tenant: a :class:`Tenant` as it is, a string validated, ``None`` kept."""
        if value is None or isinstance(value, Tenant):
            return value
        return cls(value)

    def __str__(self) -> str:
        return self.value


def _vouched(value: Any) -> str | None:
    tenant = Tenant.of(value)
    return None if tenant is None else tenant.value


VouchedTenant = Annotated[str | None, BeforeValidator(_vouched)]
"""An option's tenant the application vouches a Cypher query for (a scope, an expansion):
a tenant id or ``None``; anything else is ``invalid-tenant`` (:mod:`graphrag_orm.store.fence`)."""


def check_tenancy_mode(mode: Any) -> str:
    """``mode`` if it is one of :data:`TENANCY_MODES`; otherwise ``invalid-layout``."""
    if mode not in TENANCY_MODES:
        raise ConfigurationError(ErrorCode.INVALID_LAYOUT, f"tenancy {mode!r} is not one of {', '.join(TENANCY_MODES)}")
    return str(mode)


def tenant_from_env(environ: Mapping[str, str] | None = None) -> Tenant | None:
    """The tenant :data:`TENANT_ENV` names (``os.environ`` by default), validated; None when unset or blank."""
    environ = os.environ if environ is None else environ
    value = (environ.get(TENANT_ENV) or "").strip()
    return Tenant(value) if value else None


def tenancy_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """:data:`TENANCY_ENV`'s mode (``off`` or ``required``; else ``invalid-layout``); None when unset."""
    environ = os.environ if environ is None else environ
    value = (environ.get(TENANCY_ENV) or "").strip().lower()
    return check_tenancy_mode(value) if value else None


def refuse_in_tenanted_graph(tenanted: bool, what: str) -> None:
    """Raise ``tenant-refused`` when ``tenanted``: ``what`` cannot be fenced to one tenant yet."""
    if tenanted:
        raise TenantError(
            ErrorCode.TENANT_REFUSED,
            f"{what} is refused in a tenanted graph; a tenant that needs it needs its own database",
        )


def check_fenced(layout_tenanted: bool, store_tenanted: bool, what: str) -> None:
    """Refuse a service whose statements (rendered from its layout) and store (which sends them)
    disagree on whether the graph is tenanted, before anything is sent.

    A tenanted store with an untenanted layout would send statements that filter by no tenant
    (``tenant-refused``: never silently global); a tenanted layout through an untenanted store
    would send statements without their ``$tenant`` (``tenant-required``).
    """
    if store_tenanted and not layout_tenanted:
        raise TenantError(
            ErrorCode.TENANT_REFUSED,
            f"{what} of a tenanted graph needs its tenanted layout (tenancy='required'): "
            "its statements would not filter by tenant",
        )
    if layout_tenanted and not store_tenanted:
        raise TenantError(
            ErrorCode.TENANT_REQUIRED,
            f"{what} of a tenanted layout needs a tenanted store bound to a tenant (Store.for_tenant, GraphRag(tenant=...))",
        )


def require_tenant(tenanted: bool, tenant: Tenant | None, what: str) -> None:
    """Raise ``tenant-required`` when ``tenanted`` and no ``tenant``: ``what`` is built bound to one or not at all."""
    if tenanted and tenant is None:
        raise TenantError(
            ErrorCode.TENANT_REQUIRED,
            f"{what} of a tenanted graph needs a tenant (tenant=..., or a GraphRag bound to one)",
        )


def require_administrative(tenanted: bool, tenant: Tenant | None, what: str) -> None:
    """Raise ``tenant-refused`` unless the store is an operator's: built without tenancy and bound
    to no tenant. A read across tenants (``what``) never runs on a tenant's store or a surface's."""
    if tenanted or tenant is not None:
        raise TenantError(
            ErrorCode.TENANT_REFUSED,
            f"{what} is an administrative read across tenants: run it on a store built without tenancy, "
            "never on a tenant's",
        )


def statement_parameters(tenanted: bool, tenant: Tenant | None, parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    """A statement's parameters as the store sends them; the one enforcement point.

    Untenanted: ``parameters`` as they are. Tenanted: refused without a tenant
    (``tenant-required``) or with a ``tenant`` parameter naming another one
    (``tenant-mismatch``); otherwise ``$tenant`` is the store's tenant's value.
    """
    sent = dict(parameters or {})
    if not tenanted:
        return sent
    if tenant is None:
        raise TenantError(
            ErrorCode.TENANT_REQUIRED,
            "this graph is tenanted: bind the store or service to a tenant (Store.for_tenant, --tenant)",
        )
    given = sent.get(TENANT_PARAMETER, tenant.value)
    if given != tenant.value:
        raise TenantError(ErrorCode.TENANT_MISMATCH, "a statement named another tenant than its store's; not sent")
    sent[TENANT_PARAMETER] = tenant.value
    return sent
