"""``GraphRag``: wires the services from one embedding set, layout, model clients and options.

The facade only wires: every service can also be built alone (for tests or custom
setups) from the same parts. ``connect()`` refuses to start when the database's chunk
vector index is missing or has other dimensions than the embedding set, because
ingestion could not write and retrieval could not search.

``ingestion`` and ``store`` are built with the object; ``retriever``, ``maintenance``,
``catalog``, ``answers`` and ``graph`` on first access (their modules imported then),
so a process that only ingests (a worker of ``graphrag-orm ingest``) never imports the
services it does not use: after ``import graphrag_orm.facade`` the only service modules
loaded are ``graphrag_orm.ingestion.service`` and ``graphrag_orm.extraction.service``
(the packages hand their services on lazily, :mod:`graphrag_orm.lazy`). Each is built once and is then an ordinary attribute: every
access returns the same object, and assigning one replaces it. The constructor still
raises every configuration error it would for them (``tests/unit/test_import_cost.py``
and ``tests/unit/test_facade_lazy.py`` hold both).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import neo4j

from graphrag_orm.chat import ChatClient
from graphrag_orm.chunking import Chunker
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.errors import ConfigurationError, TenantError
from graphrag_orm.extraction import Extractor, Verifier
from graphrag_orm.extraction.writer import KnowledgeWriter
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.migrate.compare import check_names_index, check_vector_index
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.retry import RetryPolicy
from graphrag_orm.schema import Schema
from graphrag_orm.store import ConnectionSettings, Store, open_driver
from graphrag_orm.store.neomodel import attach_neomodel, detach_neomodel
from graphrag_orm.tenancy import Tenant, refuse_in_tenanted_graph
from graphrag_orm.tokens import TokenCounter

if TYPE_CHECKING:
    from graphrag_orm.answers import AnswersService
    from graphrag_orm.catalog import CatalogService
    from graphrag_orm.communities import GlobalAnswers
    from graphrag_orm.maintenance import MaintenanceService
    from graphrag_orm.retrieval import Retriever
    from graphrag_orm.retrieval.routes import RetrievalRoute, RetrievalStage
    from graphrag_orm.schema import SchemaDefinition
    from graphrag_orm.sync import SyncGraphRag
    from graphrag_orm.text2cypher import GraphQuestions, TenantDatabases, Text2CypherOptions

__all__ = ["GraphRag"]

#: The service classes this module named at import before the services were built lazily,
#: and their packages: still readable as attributes of the module (PEP 562), imported on
#: first use (``scripts/make_sync.py`` reads the facade's service classes this way).
_SERVICE_CLASSES = {
    "AnswersService": "graphrag_orm.answers",
    "CatalogService": "graphrag_orm.catalog",
    "GlobalAnswers": "graphrag_orm.communities",
    "GraphQuestions": "graphrag_orm.text2cypher",
    "KnowledgeGraphMaintenance": "graphrag_orm.maintenance.knowledge_graph",
    "MaintenanceService": "graphrag_orm.maintenance",
    "Retriever": "graphrag_orm.retrieval",
    "Text2CypherOptions": "graphrag_orm.text2cypher",
}

#: The services built on first access, and the method of ``GraphRag`` that builds each.
_LAZY_SERVICES = {
    "retriever": "_build_retriever",
    "maintenance": "_build_maintenance",
    "catalog": "_build_catalog",
    "answers": "_build_answers",
    "graph": "_build_graph",
    "global_answers": "_build_global_answers",
}

#: The service a tenant's view (``GraphRag.for_tenant``) builds on first access, unlike its facade.
_VIEW_SERVICES = {"ingestion": "_build_ingestion"}


if not TYPE_CHECKING:  # type checkers read the TYPE_CHECKING imports; an unknown name stays an error to them

    def __getattr__(name: str) -> Any:
        package = _SERVICE_CLASSES.get(name)
        if package is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(package), name)


class GraphRag:
    """The toolkit for one graph: ``ingestion``, ``retriever``, ``answers``, ``maintenance``, ``catalog``,
    ``graph`` (Text2Cypher) when ``text2cypher`` options are given, and ``global_answers`` (from
    the community reports) with an ontology."""

    def __init__(
        self,
        *,
        embedding_set: EmbeddingSet,
        embedder: Embedder,
        chat: ChatClient | None = None,
        extraction_chat: ChatClient | None = None,
        layout: Layout = Layout.DEFAULT,
        ontology: Ontology | None = None,
        verifier: Verifier | None = None,
        options: GraphRagOptions | None = None,
        token_counter: TokenCounter | None = None,
        loaders: LoaderRegistry | None = None,
        text2cypher: Text2CypherOptions | None = None,
        routes: Sequence[RetrievalRoute] = (),
        stages: Sequence[RetrievalStage] = (),
        tenant: Tenant | str | None = None,
        graph_databases: TenantDatabases | Mapping[str, ConnectionSettings] | None = None,
    ) -> None:
        self.embedding_set = embedding_set
        #: An application's own retrieval routes and stages (a reranker), named in ``options.retrieval``.
        self.routes = tuple(routes)
        self.stages = tuple(stages)
        self.embedder = embedder
        self.chat = chat
        self.extraction_chat = extraction_chat or chat
        self.layout = layout
        self.ontology = ontology
        self.options = options or GraphRagOptions()
        self.model: LexicalModel = for_layout(layout)
        #: The one way this object's services reach Neo4j; ``connect()`` gives it a driver.
        #: A tenanted layout's store refuses every statement without a tenant (docs/tenancy.md).
        self.tenant = Tenant.of(tenant)
        self.store = Store(tenanted=layout.tenanted, tenant=self.tenant)
        self._driver: neo4j.AsyncDriver | None = None
        self._sync: SyncGraphRag | None = None
        options = self.options
        chunker = Chunker(options.chunking, token_counter)
        # One retry policy for every model call of this object (embeddings, extraction).
        retry = RetryPolicy(options.retry)
        extractor: Extractor | None = None
        knowledge_writer: KnowledgeWriter | None = None
        if ontology is not None:
            ontology.check_layout(layout)
            if self.extraction_chat is None:
                raise ConfigurationError(ErrorCode.INVALID_OPTION, "an ontology needs a chat client for extraction")
            extractor = Extractor(ontology, self.extraction_chat, options.extraction, verifier=verifier, retry=retry)
            knowledge_writer = KnowledgeWriter(self.model, ontology)
        # Kept for the ingestion service of each tenant's view (``for_tenant``).
        self._chunker = chunker
        self._loaders = loaders
        self._retry = retry
        self._token_counter = token_counter
        self._extractor = extractor
        self._knowledge_writer = knowledge_writer
        self.ingestion: IngestionService = self._build_ingestion()
        # Built on first access (see the module's docstring and ``__getattr__``); declared
        # here, in this order, for type checkers and for ``scripts/make_sync.py``.
        self.retriever: Retriever
        self.maintenance: MaintenanceService
        #: Reads only: lists documents and runs, shows chunk spans, resolves document references.
        self.catalog: CatalogService
        # Answers need a chat client; without one (None), retrieval still works.
        self.answers: AnswersService | None
        #: Questions about the graph (Text2Cypher); None unless ``text2cypher`` options were given
        #: (in a tenanted graph: unless the bound tenant has its own database in ``graph_databases``).
        self.graph: GraphQuestions | None
        #: Questions about the whole corpus from the ontology's community reports (map and
        #: reduce by the chat model, or offline by word overlap when the chat client is a
        #: stand-in or None; citations verified now); None without an ontology. In a tenanted
        #: graph, the bound tenant's reports and chunks only (docs/tenancy.md).
        self.global_answers: GlobalAnswers | None
        self._text2cypher = text2cypher
        # Computed now, as maintenance did when it was built here: a layout whose names
        # collide still fails in the constructor (ValueError), not on first use.
        self._expected_schema: list[SchemaDefinition] = Schema.definitions(layout, embedding_set)
        # Text2Cypher runs model-written queries: off unless asked for, and never without a model.
        # In a tenanted graph only on each tenant's own database (docs/tenancy.md).
        if graph_databases is not None:
            from graphrag_orm.text2cypher.tenants import TenantDatabases

            if not isinstance(graph_databases, TenantDatabases):
                graph_databases = TenantDatabases(graph_databases)
        self._graph_databases = graph_databases
        self._owns_graph_databases = True
        if graph_databases is not None and not layout.tenanted:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "graph_databases is for a tenanted layout")
        if text2cypher is not None and graph_databases is None:
            refuse_in_tenanted_graph(layout.tenanted, "Text2Cypher on the shared graph")
        if text2cypher is not None and chat is None:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "text2cypher needs a chat client (GraphRag(chat=...))")

    if not TYPE_CHECKING:  # type checkers read the declarations above; an unknown name stays an error to them

        def __getattr__(self, name: str) -> Any:
            """Build a service of ``_LAZY_SERVICES`` on first access and keep it (other names: AttributeError)."""
            builder = _LAZY_SERVICES.get(name) or _VIEW_SERVICES.get(name)
            if builder is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)
            # setdefault: should two threads build one at once, both get the one kept.
            return self.__dict__.setdefault(name, getattr(self, builder)())

    def _build_ingestion(self) -> IngestionService:
        return IngestionService(
            self.store,
            self.model,
            self.embedding_set,
            self.embedder,
            chunker=self._chunker,
            loaders=self._loaders,
            options=self.options.ingestion,
            retry=self._retry,
            token_counter=self._token_counter,
            extractor=self._extractor,
            knowledge=self._knowledge_writer,
        )

    def for_tenant(self, tenant: Tenant | str) -> GraphRag:
        """This toolkit for one tenant: the same clients, options and driver, every service
        built anew on a store whose statements carry ``tenant`` (docs/tenancy.md).

        Cheap (no statement, no connection), so a server builds one per request; nothing
        of the view is shared with another tenant's. Closing the view leaves the driver,
        which stays this object's to close. ``tenant`` is validated (``invalid-tenant``).
        """
        chosen = Tenant.of(tenant)
        if chosen is None:
            raise TenantError(ErrorCode.TENANT_REQUIRED, "for_tenant needs a tenant")
        bound = copy.copy(self)
        for name in _LAZY_SERVICES:
            bound.__dict__.pop(name, None)
        bound.tenant = chosen
        bound.store = self.store.for_tenant(chosen)
        bound._driver = None  # the driver is this object's: the view never closes it
        bound._owns_graph_databases = False  # nor the tenants' own databases
        bound._sync = None
        # Built on first access: rendering its statements costs milliseconds, and a
        # request's view mostly reads (a view of a view may not have built it yet).
        bound.__dict__.pop("ingestion", None)
        return bound

    def _build_retriever(self) -> Retriever:
        from graphrag_orm.retrieval import Retriever

        return Retriever(
            self.store,
            self.model,
            self.embedding_set,
            self.embedder,
            self.options.retrieval,
            self.ontology,
            routes=self.routes,
            stages=self.stages,
        )

    def _build_maintenance(self) -> MaintenanceService:
        from graphrag_orm.maintenance import MaintenanceService
        from graphrag_orm.maintenance.knowledge_graph import KnowledgeGraphMaintenance

        ontology = self.ontology
        knowledge = KnowledgeGraphMaintenance(self.model, ontology) if ontology is not None else None
        return MaintenanceService(
            self.store,
            self.model,
            self.embedding_set,
            options=self.options.maintenance,
            ingestion=self.ingestion,
            expected_schema=self._expected_schema,
            knowledge=knowledge,
        )

    def _build_catalog(self) -> CatalogService:
        from graphrag_orm.catalog import CatalogService

        return CatalogService(self.store, self.model)

    def _build_answers(self) -> AnswersService | None:
        if self.chat is None:
            return None
        from graphrag_orm.answers import AnswersService

        return AnswersService(self.retriever, self.chat, self.options.answers)

    def _build_graph(self) -> GraphQuestions | None:
        if self._text2cypher is None or self.chat is None:
            return None
        from graphrag_orm.text2cypher import GraphQuestions, TenantGraphQuestions

        if not self.layout.tenanted:
            return GraphQuestions(self.store, self.model, self.chat, self._text2cypher, self.ontology)
        databases = self._graph_databases
        if databases is None or self.tenant is None or self.tenant not in databases:
            return None  # no database of the tenant's own: no graph questions
        own = for_layout(self.layout.replace(tenancy="off"))
        return TenantGraphQuestions(databases, self.tenant, own, self.chat, self._text2cypher, self.ontology)

    def _build_global_answers(self) -> GlobalAnswers | None:
        # In a tenanted graph the tenant's reports only: its statements filter by $tenant.
        if self.ontology is None:
            return None
        from graphrag_orm.communities import GlobalAnswers

        retriever = self.retriever
        return GlobalAnswers(
            self.store,
            self.ontology,
            model=self.model,
            resolver=retriever.resolve_scope,
            scope=retriever.options.scope,
            # A stand-in (ExtractiveChat, ScriptedChat) is no model: the offline path answers.
            chat=None if getattr(self.chat, "is_stand_in", False) else self.chat,
        )

    async def connect(
        self,
        settings: ConnectionSettings | None = None,
        *,
        url: str | None = None,
        check_schema: bool = True,
        neomodel: bool = True,
    ) -> GraphRag:
        """Connect (NEO4J_* environment, ``settings`` or ``url``) and check the vector index.

        Every service of this object then runs its statements on this driver. With
        ``neomodel`` (the default) the typed classes are pointed at it too; neomodel
        holds one connection per process, so with several ``GraphRag`` objects they
        query the last one connected, and read its layout's labels as its layout's
        classes (``self.model``) until it closes.
        """
        settings = settings or ConnectionSettings.from_env()
        if url is not None:
            settings = ConnectionSettings(
                uri=url, user=settings.user, password=settings.password, database=settings.database
            )
        self._driver = await open_driver(settings)
        self.store.bind(self._driver, settings.database)
        if neomodel:
            await attach_neomodel(self._driver, settings.database, self.model)
        if check_schema:
            try:
                await self.check_vector_index()
            except BaseException:
                await self.close()
                raise
        return self

    async def check_vector_index(self) -> None:
        """Refuse a chunk vector index that is missing (``schema-missing``), holds other dimensions
        (``embedding-dimensions``) or has another name than the set's (``equivalent-schema``); in a
        tenanted graph with an ontology, a names index that does not cover ``tenant`` (``schema-missing``)."""
        await check_vector_index(self.store, self.layout, self.embedding_set)
        if self.ontology is not None:
            await check_names_index(self.store, self.layout, self.ontology.names_index_name(self.layout))

    async def close(self) -> None:
        if self._graph_databases is not None and self._owns_graph_databases:
            await self._graph_databases.close()
        driver, self._driver = self._driver, None
        self.store.unbind()
        detach_neomodel(driver, self.model)
        if driver is not None:
            await driver.close()

    async def __aenter__(self) -> GraphRag:
        if self._driver is None:
            await self.connect()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    def sync(self) -> SyncGraphRag:
        """The same calls, blocking and typed, for scripts and notebooks (see :mod:`graphrag_orm.sync`).

        The same twin, on one private event loop, until it is closed: the driver lives on
        the loop it was opened on, so every blocking call must run there.
        """
        from graphrag_orm.sync import SyncGraphRag

        if self._sync is None or self._sync.closed:
            self._sync = SyncGraphRag(self)
        return self._sync
