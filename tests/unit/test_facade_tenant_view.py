"""``GraphRag.for_tenant``: a view bound to one tenant that shares the clients and options and
nothing a request could change (docs/tenancy.md)."""

from __future__ import annotations

import pytest

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import TenantError
from graphrag_orm.tenancy import Tenant
from tests.support.tenancy import tenanted_rag


def test_a_view_is_bound_and_leaves_its_facade_as_it_was() -> None:
    rag = tenanted_rag()
    base_retriever = rag.retriever
    acme, globex = rag.for_tenant("acme"), rag.for_tenant(Tenant("globex"))
    assert (rag.tenant, rag.store.tenant) == (None, None)
    assert acme.tenant == acme.store.tenant == Tenant("acme")
    assert globex.store.tenant == Tenant("globex")
    # Every service is the view's own, on the view's store; the clients and options are shared.
    for name in ("ingestion", "retriever", "catalog", "maintenance", "answers"):
        mine, theirs = getattr(acme, name), getattr(globex, name)
        assert mine is not theirs and mine is not getattr(rag, name)
        assert mine is getattr(acme, name)  # built once per view
    assert acme.retriever is not base_retriever and rag.retriever is base_retriever
    assert acme.chat is rag.chat and acme.options is rag.options and acme.layout is rag.layout


def test_a_view_of_a_view_is_bound_to_its_own_tenant() -> None:
    # A surface given a tenant rebinds the facade it is given, which may be a view already
    # (GraphRagTools(view, tenant=...)), whether or not that view has built its ingestion.
    rag = tenanted_rag()
    for touched in (False, True):
        acme = rag.for_tenant("acme")
        if touched:
            assert acme.ingestion.store.tenant == Tenant("acme")
        globex = acme.for_tenant("globex")
        assert globex.tenant == globex.store.tenant == Tenant("globex")
        assert globex.ingestion.store.tenant == globex.retriever.store.tenant == Tenant("globex")
        assert acme.tenant == acme.store.tenant == Tenant("acme")


def test_a_view_needs_a_tenant_id() -> None:
    rag = tenanted_rag()
    with pytest.raises(TenantError) as invalid:
        rag.for_tenant("acme corp")
    assert invalid.value.code == ErrorCode.INVALID_TENANT
    with pytest.raises(TenantError) as missing:
        rag.for_tenant(None)  # type: ignore[arg-type]
    assert missing.value.code == ErrorCode.TENANT_REQUIRED


class _Driver:
    """Stands in for the facade's driver: counts its closings."""

    closed = 0

    async def close(self) -> None:
        self.closed += 1


async def test_closing_a_view_leaves_the_driver_to_its_facade() -> None:
    rag = tenanted_rag()
    driver = _Driver()
    rag._driver = driver  # type: ignore[assignment]  # as connect() leaves it
    rag.store.bind(driver, "neo4j")  # type: ignore[arg-type]
    view = rag.for_tenant("acme")
    assert view.store.driver is driver
    await view.close()
    assert driver.closed == 0 and not view.store.connected and rag.store.driver is driver
    await rag.close()
    assert driver.closed == 1
