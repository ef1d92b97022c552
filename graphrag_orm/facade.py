"""``GraphRag``: wires the services from one embedding set, layout, model clients and options.

The facade only wires: every service can also be built alone (for tests or custom
setups) from the same parts. ``connect()`` refuses to start when the database's chunk
vector index is missing or has other dimensions than the embedding set, because
ingestion could not write and retrieval could not search.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

import neo4j

from graphrag_orm.answers import AnswersService
from graphrag_orm.catalog import CatalogService
from graphrag_orm.chat import ChatClient
from graphrag_orm.chunking import Chunker
from graphrag_orm.codes import ErrorCode
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.extraction import Extractor, Verifier
from graphrag_orm.extraction.writer import KnowledgeWriter
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.maintenance import MaintenanceService
from graphrag_orm.maintenance.knowledge_graph import KnowledgeGraphMaintenance
from graphrag_orm.migrate import check_vector_index
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.retrieval import Retriever
from graphrag_orm.retry import RetryPolicy
from graphrag_orm.store import ConnectionSettings, Store, open_driver
from graphrag_orm.store.neomodel import attach_neomodel, detach_neomodel
from graphrag_orm.text2cypher import GraphQuestions, Text2CypherOptions
from graphrag_orm.tokens import TokenCounter

if TYPE_CHECKING:
    from graphrag_orm.sync import SyncGraphRag

__all__ = ["GraphRag"]


class GraphRag:
    """The toolkit for one graph: ``ingestion``, ``retriever``, ``answers``, ``maintenance``, ``catalog``,
    and ``graph`` (Text2Cypher) when ``text2cypher`` options are given."""

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
    ) -> None:
        self.embedding_set = embedding_set
        self.embedder = embedder
        self.chat = chat
        self.extraction_chat = extraction_chat or chat
        self.layout = layout
        self.ontology = ontology
        self.options = options or GraphRagOptions()
        self.model: LexicalModel = for_layout(layout)
        #: The one way this object's services reach Neo4j; ``connect()`` gives it a driver.
        self.store = Store()
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
        self.ingestion = IngestionService(
            self.store,
            self.model,
            embedding_set,
            embedder,
            chunker=chunker,
            loaders=loaders,
            options=options.ingestion,
            retry=retry,
            token_counter=token_counter,
            extractor=extractor,
            knowledge=knowledge_writer,
        )
        self.retriever = Retriever(self.store, self.model, embedding_set, embedder, options.retrieval, ontology)
        knowledge = KnowledgeGraphMaintenance(self.model, ontology) if ontology is not None else None
        self.maintenance = MaintenanceService(
            self.store,
            self.model,
            embedding_set,
            options=options.maintenance,
            ingestion=self.ingestion,
            knowledge=knowledge,
        )
        #: Reads only: lists documents and runs, shows chunk spans, resolves document references.
        self.catalog = CatalogService(self.store, self.model)
        # Answers need a chat client; without one, retrieval still works.
        self.answers: AnswersService | None = (
            AnswersService(self.retriever, chat, options.answers) if chat is not None else None
        )
        # Text2Cypher runs model-written queries: off unless asked for, and never without a model.
        if text2cypher is not None and chat is None:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "text2cypher needs a chat client (GraphRag(chat=...))")
        #: Questions about the graph (Text2Cypher); None unless ``text2cypher`` options were given.
        self.graph: GraphQuestions | None = (
            GraphQuestions(self.store, self.model, chat, text2cypher, ontology)
            if text2cypher is not None and chat is not None
            else None
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
        query the last one connected.
        """
        settings = settings or ConnectionSettings.from_env()
        if url is not None:
            settings = ConnectionSettings(
                uri=url, user=settings.user, password=settings.password, database=settings.database
            )
        self._driver = await open_driver(settings)
        self.store.bind(self._driver, settings.database)
        if neomodel:
            await attach_neomodel(self._driver, settings.database)
        if check_schema:
            try:
                await self.check_vector_index()
            except BaseException:
                await self.close()
                raise
        return self

    async def check_vector_index(self) -> None:
        """Refuse a chunk vector index that is missing (``schema-missing``), holds other dimensions
        (``embedding-dimensions``) or has another name than the set's (``equivalent-schema``)."""
        await check_vector_index(self.store, self.layout, self.embedding_set)

    async def close(self) -> None:
        driver, self._driver = self._driver, None
        self.store.unbind()
        detach_neomodel(driver)
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
