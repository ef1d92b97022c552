"""The facade builds ``retriever``, ``maintenance``, ``catalog``, ``answers`` and ``graph`` on first access.

Each is built once (the same object on every access), can be replaced by assignment, and
the constructor still refuses what it refused when it built them all. No database: nothing
here connects. Which modules a process loads is held by ``test_import_cost.py``.
"""

from __future__ import annotations

import pytest

import graphrag_orm.facade
from graphrag_orm.answers import AnswersService
from graphrag_orm.catalog import CatalogService
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.facade import GraphRag
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance import MaintenanceService
from graphrag_orm.ontologies import generic
from graphrag_orm.options import GraphRagOptions
from graphrag_orm.retrieval import RetrievalOptions, Retriever
from graphrag_orm.schema import Schema
from graphrag_orm.text2cypher import GraphQuestions, Text2CypherOptions

LAZY = ("retriever", "maintenance", "catalog", "answers", "graph")


def rag(**parts: object) -> GraphRag:
    embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
    return GraphRag(embedding_set=OFFLINE_EMBEDDING_SET, embedder=embedder, **parts)  # type: ignore[arg-type]


def chat() -> ScriptedChat:
    return ScriptedChat(lambda request: "{}")


def test_no_lazy_service_is_built_by_the_constructor() -> None:
    built = rag(chat=chat(), text2cypher=Text2CypherOptions())
    assert not set(LAZY) & set(vars(built))
    assert built.ingestion is vars(built)["ingestion"] and built.store is vars(built)["store"]


def test_each_service_is_built_on_first_access_and_is_the_same_object_after() -> None:
    built = rag(chat=chat(), text2cypher=Text2CypherOptions(), ontology=generic.ONTOLOGY)
    first = {name: getattr(built, name) for name in LAZY}
    assert isinstance(first["retriever"], Retriever)
    assert isinstance(first["maintenance"], MaintenanceService)
    assert isinstance(first["catalog"], CatalogService)
    assert isinstance(first["answers"], AnswersService)
    assert isinstance(first["graph"], GraphQuestions)
    for name in LAZY:
        assert getattr(built, name) is first[name], name
        assert vars(built)[name] is first[name], name  # kept: an ordinary attribute from now on


def test_the_services_are_wired_as_the_constructor_wired_them() -> None:
    options = GraphRagOptions(retrieval=RetrievalOptions(max_items=5))
    client = chat()
    built = rag(chat=client, options=options, ontology=generic.ONTOLOGY, text2cypher=Text2CypherOptions(max_rows=7))
    retriever = built.retriever
    assert retriever.store is built.store and retriever.model is built.model and retriever.embedder is built.embedder
    assert retriever.options.max_items == 5 and retriever.graph is not None  # the ontology's graph route
    answers = built.answers
    assert answers is not None and answers.retriever is retriever and answers.chat is client
    assert answers.options == options.answers
    maintenance = built.maintenance
    assert maintenance.store is built.store and maintenance.ingestion is built.ingestion
    assert maintenance.knowledge is not None  # the ontology's things, facts and mentions
    assert maintenance.options == options.maintenance
    assert maintenance.expected_schema == Schema.definitions(built.layout, built.embedding_set)
    assert built.catalog.store is built.store and built.catalog.model is built.model
    graph = built.graph
    assert graph is not None and graph.store is built.store and graph.chat is client and graph.options.max_rows == 7


def test_answers_are_none_without_a_chat_client_and_graph_none_without_text2cypher() -> None:
    plain = rag()
    assert plain.answers is None and plain.graph is None
    assert plain.maintenance.knowledge is None and plain.retriever.graph is None
    assert "answers" in vars(plain) and "graph" in vars(plain)  # None is kept too, not rebuilt
    assert rag(chat=chat()).graph is None


def test_a_service_can_be_replaced_by_assignment() -> None:
    built = rag(chat=chat())
    replacement = Retriever(built.store, built.model, built.embedding_set, built.embedder)
    built.retriever = replacement
    assert built.retriever is replacement
    built.answers = None
    assert built.answers is None
    built.catalog = built.catalog
    assert isinstance(built.catalog, CatalogService)


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    built = rag()
    with pytest.raises(AttributeError, match="'GraphRag' object has no attribute 'retreiver'"):
        built.retreiver  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(built, "nothing_here")
    assert getattr(built, "nothing_here", None) is None


def test_the_constructor_still_refuses_what_it_refused() -> None:
    with pytest.raises(ConfigurationError) as no_chat:
        rag(ontology=generic.ONTOLOGY)
    assert no_chat.value.code == "invalid-option" and "ontology needs a chat client" in no_chat.value.message
    with pytest.raises(ConfigurationError) as no_model:
        rag(text2cypher=Text2CypherOptions())
    assert no_model.value.code == "invalid-option" and "text2cypher" in no_model.value.message
    # A vector index named like one of the lexical constraints: maintenance's expected
    # schema has a name twice, refused when the facade is built, as before.
    taken = Schema.definitions(Layout.DEFAULT, OFFLINE_EMBEDDING_SET)[0].name
    with pytest.raises(ValueError, match="schema names must be unique"):
        rag(layout=Layout.DEFAULT.replace(vector_index=taken))


def test_the_facade_module_still_names_the_service_classes() -> None:
    # scripts/make_sync.py reads them there (``make lint`` checks the generated twins).
    assert graphrag_orm.facade.Retriever is Retriever
    assert graphrag_orm.facade.AnswersService is AnswersService
    assert graphrag_orm.facade.MaintenanceService is MaintenanceService
    assert graphrag_orm.facade.CatalogService is CatalogService
    assert graphrag_orm.facade.GraphQuestions is GraphQuestions
    assert graphrag_orm.facade.Text2CypherOptions is Text2CypherOptions
    with pytest.raises(AttributeError):
        graphrag_orm.facade.NotAService  # type: ignore[attr-defined]  # noqa: B018


def test_the_sync_twin_reaches_the_lazy_services() -> None:
    built = rag(chat=chat())
    twin = built.sync()
    try:
        assert twin.retriever._service is built.retriever
        assert twin.answers._service is built.answers
        assert twin.catalog._service is built.catalog
    finally:
        twin.close()
