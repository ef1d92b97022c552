"""Tenants as values and tenanted layouts: validated once, never a free string in Cypher."""

from __future__ import annotations

import pytest

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError, TenantError
from graphrag_orm.layout import Layout
from graphrag_orm.tenancy import MAX_TENANT_LENGTH, Tenant, statement_parameters


@pytest.mark.parametrize("value", ["acme", "customer-42", "org:acme.eu", "a" * MAX_TENANT_LENGTH, "u@example"])
def test_a_plain_id_is_a_tenant(value: str) -> None:
    assert Tenant(value).value == value
    assert Tenant.of(value) == Tenant(value)
    assert str(Tenant(value)) == value


@pytest.mark.parametrize(
    "value", ["", " acme", "acme corp", "a`b", "a'b", 'a"b', "a\nb", "-acme", "a" * (MAX_TENANT_LENGTH + 1), "é", 42]
)
def test_anything_else_is_invalid_tenant(value: object) -> None:
    with pytest.raises(TenantError) as refused:
        Tenant(value)  # type: ignore[arg-type]
    assert refused.value.code == ErrorCode.INVALID_TENANT
    assert "\n" not in refused.value.message


def test_a_layout_is_untenanted_unless_it_asks() -> None:
    assert Layout.DEFAULT.tenancy == "off" and not Layout.DEFAULT.tenanted
    assert Layout.DEFAULT.replace(tenancy="required").tenanted
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(tenancy="optional")
    assert refused.value.code == ErrorCode.INVALID_LAYOUT


def test_statement_parameters_bind_the_tenant_and_refuse_without_one() -> None:
    assert statement_parameters(False, None, {"a": 1}) == {"a": 1}
    assert statement_parameters(True, Tenant("acme"), {"a": 1}) == {"a": 1, "tenant": "acme"}
    with pytest.raises(TenantError) as required:
        statement_parameters(True, None, {"a": 1})
    assert required.value.code == ErrorCode.TENANT_REQUIRED
    with pytest.raises(TenantError) as mismatch:
        statement_parameters(True, Tenant("acme"), {"tenant": "globex"})
    assert mismatch.value.code == ErrorCode.TENANT_MISMATCH
