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
from graphrag_orm.chat import ChatClient
from graphrag_orm.chunking import Chunker
from graphrag_orm.connection import ConnectionSettings, connect, disconnect
from graphrag_orm.embeddings import Embedder, EmbeddingSet
from graphrag_orm.errors import ConfigurationError, SchemaMismatch
from graphrag_orm.extraction import Extractor, Verifier
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.loaders import LoaderRegistry
from graphrag_orm.maintenance import MaintenanceService
from graphrag_orm.maintenance.knowledge_graph import KnowledgeGraphMaintenance
from graphrag_orm.migrate import read_live_schema
from graphrag_orm.models import LexicalModel, for_layout
from graphrag_orm.ontology import Ontology
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.retrieval import Retriever
from graphrag_orm.schema import Schema
from graphrag_orm.tokens import TokenCounter

if TYPE_CHECKING:
    from graphrag_orm.sync import SyncGraphRag


class GraphRag:
    """The toolkit for one graph: ``ingestion``, ``retriever``, ``answers``, ``maintenance``."""

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
    ) -> None:
        self.embedding_set = embedding_set
        self.embedder = embedder
        self.chat = chat
        self.extraction_chat = extraction_chat or chat
        self.layout = layout
        self.ontology = ontology
        self.options = options or GraphRagOptions()
        self.model: LexicalModel = for_layout(layout)
        self._driver: neo4j.AsyncDriver | None = None
        chunker = Chunker(self.options.chunking, token_counter)
        extractor: Extractor | None = None
        if ontology is not None:
            ontology.check_layout(layout)
            if self.extraction_chat is None:
                raise ConfigurationError("invalid-option", "an ontology needs a chat client for extraction")
            extractor = Extractor(ontology, self.extraction_chat, self.options.extraction, verifier=verifier)
        self.ingestion = IngestionService(
            self.model,
            embedding_set,
            embedder,
            chunker=chunker,
            loaders=loaders,
            options=self.options.ingestion,
            retry=self.options.retry,
            token_counter=token_counter,
            extractor=extractor,
        )
        self.retriever = Retriever(self.model, embedding_set, embedder, self.options.retrieval, ontology)
        knowledge = KnowledgeGraphMaintenance(self.model, ontology) if ontology is not None else None
        self.maintenance = MaintenanceService(self.model, embedding_set, ingestion=self.ingestion, knowledge=knowledge)
        # Answers need a chat client; without one, retrieval still works.
        self.answers: AnswersService | None = AnswersService(self.retriever, chat) if chat is not None else None

    async def connect(
        self, settings: ConnectionSettings | None = None, *, url: str | None = None, check_schema: bool = True
    ) -> GraphRag:
        """Connect (NEO4J_* environment, ``settings`` or ``url``) and check the vector index."""
        if url is not None:
            base = settings or ConnectionSettings.from_env()
            settings = ConnectionSettings(uri=url, user=base.user, password=base.password, database=base.database)
        self._driver = await connect(settings)
        if check_schema:
            try:
                await self.check_vector_index()
            except BaseException:
                await self.close()
                raise
        return self

    async def check_vector_index(self) -> None:
        """Refuse when the chunk vector index is missing or its dimensions differ from the set's."""
        expected = Schema.vector_index(self.layout, self.embedding_set)
        live = await read_live_schema()
        for name, definition in live.items():
            kind, labels, properties = definition.signature
            if kind == "VECTOR" and labels == (expected.label,) and properties == (expected.property,):
                dimensions = definition.detail.get("dimensions")
                if dimensions != expected.dimensions:
                    raise SchemaMismatch(
                        "embedding-dimensions",
                        f"the vector index {name} holds {dimensions}-dimensional vectors but the embedding set "
                        f"{self.embedding_set.id} has {expected.dimensions}; re-embed through a reviewed migration "
                        "(graphrag-orm migrations revision) or use the set the graph was built with",
                    )
                return
        raise SchemaMismatch(
            "schema-missing",
            f"no vector index on :{expected.label}({expected.property}); apply the migrations first "
            "(graphrag-orm migrations apply)",
        )

    async def close(self) -> None:
        await disconnect(self._driver)
        self._driver = None

    async def __aenter__(self) -> GraphRag:
        if self._driver is None:
            await self.connect()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    def sync(self) -> SyncGraphRag:
        """The same calls, blocking, for scripts and notebooks (one private event loop)."""
        from graphrag_orm.sync import SyncGraphRag

        return SyncGraphRag(self)
