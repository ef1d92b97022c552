"""GRAPHRAG_TENANCY and GRAPHRAG_TENANT: what ``graphrag_from_env`` (the CLI, the MCP server) builds from them."""

from __future__ import annotations

import pytest

from graphrag_orm.codes import ErrorCode
from graphrag_orm.environment import graphrag_from_env
from graphrag_orm.errors import ConfigurationError, TenantError
from graphrag_orm.tenancy import TENANCY_ENV, TENANT_ENV, Tenant, tenancy_from_env, tenant_from_env


def test_unset_or_blank_variables_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert tenant_from_env({}) is None and tenancy_from_env({}) is None
    assert tenant_from_env({TENANT_ENV: "  "}) is None
    monkeypatch.delenv(TENANT_ENV, raising=False)
    monkeypatch.delenv(TENANCY_ENV, raising=False)
    rag = graphrag_from_env()[0]
    assert not rag.layout.tenanted and rag.tenant is None and not rag.store.tenanted


def test_the_variables_make_a_tenanted_graph_bound_to_a_tenant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TENANCY_ENV, "Required")
    monkeypatch.setenv(TENANT_ENV, "acme")
    rag = graphrag_from_env()[0]
    assert rag.layout.tenanted and rag.store.tenanted
    assert rag.tenant == rag.store.tenant == Tenant("acme")


def test_bad_values_are_refused_with_their_codes() -> None:
    with pytest.raises(TenantError) as tenant:
        tenant_from_env({TENANT_ENV: "acme corp"})
    assert tenant.value.code == ErrorCode.INVALID_TENANT
    with pytest.raises(ConfigurationError) as tenancy:
        tenancy_from_env({TENANCY_ENV: "sometimes"})
    assert tenancy.value.code == ErrorCode.INVALID_LAYOUT
