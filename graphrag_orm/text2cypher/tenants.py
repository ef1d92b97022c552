"""Text2Cypher in a tenanted graph: each tenant's graph questions run on that tenant's own database.

A model's query cannot be fenced to one tenant (nothing but the query decides what it reads),
so in a graph several tenants share it is refused. A tenant that needs graph questions has a
database of its own, holding its documents and nothing of anyone else's: the application
names it in :class:`TenantDatabases`, and ``GraphRag(..., text2cypher=...,
graph_databases=TenantDatabases({...}))`` then gives that tenant's view (``rag.for_tenant(t)``,
``GraphRag(tenant=t)``) a ``graph`` service whose queries run there, never on the shared graph.
A tenant without a database has no ``graph`` (``None``), as a facade without ``text2cypher``.

The tenant's database is an untenanted graph of the same layout (the whole database is the
tenant's, so its nodes need no tenant property). Its driver is opened at the tenant's first
question (``open_driver``: a coded error when unreachable) and kept, shared by every view of
that tenant, until the facade that was given the databases is closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from graphrag_orm.chat.base import ChatClient
from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.models import LexicalModel
from graphrag_orm.ontology import Ontology
from graphrag_orm.retrieval.question import check_question
from graphrag_orm.store import Store
from graphrag_orm.store.connection import ConnectionSettings, open_driver
from graphrag_orm.tenancy import Tenant
from graphrag_orm.text2cypher.options import Text2CypherOptions
from graphrag_orm.text2cypher.service import GraphQuestions
from graphrag_orm.text2cypher.values import GraphAnswer

__all__ = ["MAX_TENANT_DATABASES", "TenantDatabases", "TenantGraphQuestions"]

#: Tenants one :class:`TenantDatabases` may name (each may hold a driver and its pool once asked).
MAX_TENANT_DATABASES = 1_000


class TenantDatabases:
    """Each tenant's own database for its graph questions: ``{tenant id: ConnectionSettings}``.

    Tenant ids are validated (``invalid-tenant``); more than :data:`MAX_TENANT_DATABASES` is
    ``invalid-option``. Nothing connects until a tenant's first question.
    """

    def __init__(self, databases: Mapping[str, ConnectionSettings] | Mapping[Tenant, ConnectionSettings]) -> None:
        if len(databases) > MAX_TENANT_DATABASES:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION,
                f"graph_databases names {len(databases):,} tenants; at most {MAX_TENANT_DATABASES:,}",
            )
        self._settings: dict[Tenant, ConnectionSettings] = {}
        for tenant, settings in databases.items():
            chosen = Tenant.of(tenant)
            if chosen is None or not isinstance(settings, ConnectionSettings):
                raise ConfigurationError(
                    ErrorCode.INVALID_OPTION, "graph_databases maps tenant ids to ConnectionSettings"
                )
            self._settings[chosen] = settings
        self._stores: dict[Tenant, Store] = {}
        self._lock = asyncio.Lock()

    def __contains__(self, tenant: object) -> bool:
        return tenant in self._settings

    @property
    def tenants(self) -> frozenset[Tenant]:
        return frozenset(self._settings)

    def store(self, tenant: Tenant) -> Store:
        """The tenant's store (untenanted: the database is the tenant's alone); connected by :meth:`open`."""
        if tenant not in self._settings:
            raise KeyError(tenant.value)
        return self._stores.setdefault(tenant, Store())

    async def open(self, tenant: Tenant) -> Store:
        """The tenant's store, its driver opened on the first call (``DatabaseUnavailable`` when it cannot be)."""
        store = self.store(tenant)
        if store.connected:
            return store
        async with self._lock:
            if not store.connected:
                settings = self._settings[tenant]
                store.bind(await open_driver(settings), settings.database)
        return store

    async def close(self) -> None:
        """Close every driver opened; a later question opens its tenant's again, on the same store
        (the one each tenant's ``TenantGraphQuestions`` holds)."""
        for store in list(self._stores.values()):
            if store.connected:
                driver = store.driver
                store.unbind()
                await driver.close()


class TenantGraphQuestions(GraphQuestions):
    """``rag.graph`` of one tenant of a tenanted graph: its questions run on the tenant's own database."""

    def __init__(
        self,
        databases: TenantDatabases,
        tenant: Tenant,
        model: LexicalModel,
        chat: ChatClient,
        options: Text2CypherOptions | None = None,
        ontology: Ontology | None = None,
    ) -> None:
        if model.layout.tenanted:
            raise TypeError("a tenant's own database is an untenanted graph: give the untenanted layout's model")
        super().__init__(databases.store(tenant), model, chat, options, ontology)
        self._databases = databases
        self._tenant = tenant

    async def ask(self, question: str) -> GraphAnswer:
        """As :meth:`GraphQuestions.ask`, on the tenant's own database (opened at its first question)."""
        check_question(question, self.options.max_question_chars)  # refused before it connects
        await self._databases.open(self._tenant)
        return await super().ask(question)
