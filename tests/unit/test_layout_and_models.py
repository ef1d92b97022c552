"""Layouts and the lexical model classes: names, validation and stored directions."""

from __future__ import annotations

import dataclasses

import pytest
from neomodel import AsyncStructuredNode, StringProperty
from neomodel.async_.relationship_manager import RelationshipDirection

from graphrag_orm.embeddings.sets import EmbeddingSet
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.schema import Schema, UniqueConstraint, VectorIndex

EXPECTED_DIRECTIONS = {
    # role: (source class attribute on LexicalModel, relationship attribute, target attribute)
    "chunk-document": ("chunk", "document", "document"),
    "section-document": ("section", "document", "document"),
    "chunk-section": ("chunk", "section", "section"),
    "next-chunk": ("chunk", "next", "chunk"),
    "subsection": ("section", "parent", "section"),
}


@pytest.mark.parametrize("layout", [Layout.DEFAULT, Layout.NEO4J_GRAPHRAG], ids=["default", "neo4j-graphrag"])
def test_every_relationship_is_stored_from_child_to_parent_or_successor(layout: Layout) -> None:
    model = for_layout(layout)
    for edge in model.edges:
        source_attr, relationship_attr, target_attr = EXPECTED_DIRECTIONS[edge.role]
        source = getattr(model, source_attr)
        target = getattr(model, target_attr)
        definition = getattr(source, relationship_attr).definition
        assert definition["direction"] == RelationshipDirection.OUTGOING
        assert definition["relation_type"] == edge.relationship_type
        assert source.__label__ == edge.source_label
        assert target.__label__ == edge.target_label
        assert definition["model"].run_id.db_property == "runId"


def test_neo4j_graphrag_layout_uses_that_librarys_names() -> None:
    model = for_layout(Layout.NEO4J_GRAPHRAG)
    assert model.chunk.document.definition["relation_type"] == "FROM_DOCUMENT"
    assert model.chunk.next.definition["relation_type"] == "NEXT_CHUNK"
    stored = {
        name: prop.get_db_property_name(name) for name, prop in model.chunk.defined_properties(rels=False).items()
    }
    assert {stored["uid"], stored["order"], stored["text"], stored["embedding"]} == {"id", "index", "text", "embedding"}
    assert model.chunk.__label__ == "Chunk" and model.document.__label__ == "Document"


def test_stored_property_names_are_camel_case() -> None:
    model = for_layout(Layout.DEFAULT)
    stored = {prop.get_db_property_name(n) for n, prop in model.chunk.defined_properties(rels=False).items()}
    assert stored == {
        "id",
        "documentId",
        "order",
        "text",
        "startByte",
        "endByte",
        "tokenCount",
        "embedding",
        "embeddingSetId",
        "runId",
    }


def test_a_layout_is_frozen_and_replaceable() -> None:
    custom = Layout.DEFAULT.replace(chunk_label="Passage", schema_prefix="app")
    assert dataclasses.replace(Layout.DEFAULT, chunk_label="Passage") == custom.replace(schema_prefix="graphrag")
    with pytest.raises(dataclasses.FrozenInstanceError):
        custom.chunk_label = "Other"  # type: ignore[misc]
    model = for_layout(custom)
    assert model.chunk.__label__ == "Passage"
    assert for_layout(custom) is model


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"chunk_label": "Chunk Label"}, "not a plain Cypher identifier"),
        ({"chunk_label": "Chunk`) DETACH DELETE (x"}, "not a plain Cypher identifier"),
        ({"next_chunk_type": ""}, "not a plain Cypher identifier"),
        ({"chunk_label": "Document"}, "labels must be distinct"),
        ({"next_chunk_type": "IN_DOCUMENT"}, "relationship types must be distinct"),
        ({"chunk_order_property": "text"}, "chunk properties must be distinct"),
        ({"schema_prefix": "9prefix"}, "not a plain Cypher identifier"),
    ],
)
def test_bad_layout_names_are_refused(change: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(**change)
    assert refused.value.code == "invalid-layout"
    assert fragment in refused.value.message


def test_a_label_an_application_already_maps_is_refused_naming_its_class() -> None:
    class Passage(AsyncStructuredNode):  # the application's own class
        name = StringProperty()

    with pytest.raises(ConfigurationError) as refused:
        for_layout(Layout.DEFAULT.replace(chunk_label="Passage"))
    assert refused.value.code == "layout-collision"
    assert "Passage" in refused.value.message and __name__ in refused.value.message


@pytest.mark.parametrize("dimensions", [0, -1, 4097])
def test_embedding_dimensions_outside_1_to_4096_are_refused(dimensions: int) -> None:
    with pytest.raises(ConfigurationError) as refused:
        EmbeddingSet(model="m", dimensions=dimensions)
    assert refused.value.code == "invalid-option"


def test_embedding_set_ids_stay_consistent_across_copies() -> None:
    base = EmbeddingSet(model="text-embedding-3-small", dimensions=1536)
    copy = base.model_copy(update={"dimensions": 512})
    assert copy.id == "text-embedding-3-small:512:cosine"
    assert copy.vector_index_name != base.vector_index_name
    assert EmbeddingSet(model="text-embedding-3-small", dimensions=512).vector_index_name == copy.vector_index_name


def test_schema_is_derived_from_model_declarations_and_reads_nothing() -> None:
    embedding_set = EmbeddingSet(model="m", dimensions=8)
    definitions = Schema.definitions(Layout.DEFAULT, embedding_set)
    assert definitions == Schema.definitions(Layout.DEFAULT, embedding_set)
    keys = {(d.label, d.property) for d in definitions if isinstance(d, UniqueConstraint)}
    assert keys == {
        ("Document", "id"),
        ("Section", "id"),
        ("Chunk", "id"),
        ("IngestionRun", "id"),
        ("GraphRagLease", "key"),
        ("Community", "id"),
        ("CommunityReport", "id"),
        ("ReportFinding", "id"),
    }
    (vector,) = [d for d in definitions if isinstance(d, VectorIndex)]
    assert (vector.dimensions, vector.property) == (8, "embedding")
    assert all(d.name.startswith("graphrag_") for d in definitions)
    prefixed = Schema.definitions(Layout.DEFAULT.replace(schema_prefix="app"), embedding_set)
    assert all(d.name.startswith("app_") for d in prefixed)


# --- A configurable property name never takes another stored name of its label ---------------

CONFIGURABLE = ("chunk_id_property", "chunk_order_property", "chunk_text_property", "chunk_embedding_property")
FIXED_CHUNK = ("documentId", "startByte", "endByte", "tokenCount", "embeddingSetId", "runId")


@pytest.mark.parametrize(
    ("field", "name"),
    [
        ("chunk_text_property", "documentId"),
        ("chunk_embedding_property", "runId"),
        ("chunk_order_property", "startByte"),
        ("chunk_id_property", "documentId"),
    ],
)
def test_the_issues_colliding_chunk_property_names_are_refused_naming_both(field: str, name: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(**{field: name})
    assert refused.value.code == "invalid-layout"
    assert field in refused.value.message and repr(name) in refused.value.message
    assert "the chunk's" in refused.value.message


@pytest.mark.parametrize("name", FIXED_CHUNK)
@pytest.mark.parametrize("field", CONFIGURABLE)
def test_no_configurable_chunk_property_may_take_a_fixed_chunk_name(field: str, name: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(**{field: name})
    assert refused.value.code == "invalid-layout" and field in refused.value.message


def test_the_fixed_chunk_names_are_exactly_what_the_chunk_class_declares() -> None:
    model = for_layout(Layout.DEFAULT)
    stored = {prop.get_db_property_name(n) for n, prop in model.chunk.defined_properties(rels=False).items()}
    layout = Layout.DEFAULT
    configurable = {getattr(layout, field) for field in CONFIGURABLE}
    assert stored - configurable == set(FIXED_CHUNK)


@pytest.mark.parametrize(
    "layout",
    [
        Layout.DEFAULT,
        Layout.NEO4J_GRAPHRAG,
        # Names the defaults use are free once the layout moves them.
        Layout.DEFAULT.replace(chunk_id_property="uid", chunk_order_property="id", chunk_text_property="order"),
    ],
    ids=["default", "neo4j-graphrag", "shuffled"],
)
def test_every_class_of_a_layout_stores_each_property_under_its_own_name(layout: Layout) -> None:
    model = for_layout(layout)
    for cls in model.node_classes:  # documents, sections, chunks, runs and leases
        names = [prop.get_db_property_name(n) for n, prop in cls.defined_properties(rels=False).items()]
        assert len(names) == len(set(names)), cls.__name__


def test_the_two_index_names_are_distinct() -> None:
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(vector_index="chunks", fulltext_index="chunks")
    assert refused.value.code == "invalid-layout" and "'chunks'" in refused.value.message


def test_a_layout_names_its_own_community_label_and_its_schema_follows() -> None:
    layout = Layout.DEFAULT.replace(
        community_label="AppCommunity",
        report_label="AppReport",
        finding_label="AppFinding",
        lease_label="AppLease",
        schema_prefix="app",
    )
    model = for_layout(layout)
    assert model.community.__label__ == "AppCommunity" and model.names.community.label == "AppCommunity"
    assert (model.names.report.label, model.names.finding.label) == ("AppReport", "AppFinding")
    definitions = Schema.definitions(layout, EmbeddingSet(model="m", dimensions=8))
    keys = {(d.label, d.property) for d in definitions if isinstance(d, UniqueConstraint)}
    assert {("AppCommunity", "id"), ("AppReport", "id"), ("AppFinding", "id")} <= keys
    assert not {("Community", "id"), ("CommunityReport", "id"), ("ReportFinding", "id")} & keys
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(community_label="Chunk")
    assert refused.value.code == "invalid-layout"
    with pytest.raises(ConfigurationError) as refused:
        Layout.DEFAULT.replace(report_label="Community")
    assert refused.value.code == "invalid-layout"
