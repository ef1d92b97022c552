"""Re-embedding plans without a database: names checked, steps rendered, bounds, stages, receipts."""

from __future__ import annotations

import json

import pytest

from graphrag_orm.codes import LimitName
from graphrag_orm.embeddings import EmbeddingSet
from graphrag_orm.errors import ConfigurationError, ReembeddingError
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance.health_statements import HealthStatements
from graphrag_orm.models import for_layout
from graphrag_orm.reembedding import (
    STAGED_SET_PROPERTY,
    BackfillOptions,
    BackfillReceipt,
    PageOptions,
    Reembedding,
    ReembeddingPlan,
    ReembeddingStage,
)
from graphrag_orm.reembedding.plan import _stage
from graphrag_orm.schema import CreateStep, DropStep, Schema
from graphrag_orm.store import Store
from graphrag_orm.values import Limit

OLD = EmbeddingSet(model="old-model", dimensions=256)
NEW = EmbeddingSet(model="new-model", dimensions=1024)


def plan(
    layout: Layout = Layout.DEFAULT, staging: str = "embeddingNext", vector_index: str | None = None
) -> ReembeddingPlan:
    return Reembedding(Store()).plan(layout, OLD, NEW, staging, vector_index=vector_index)


def test_planning_reads_nothing_and_needs_no_connection() -> None:
    made = plan()
    assert (made.from_set, made.to_set, made.live_property, made.staging_property) == (
        OLD,
        NEW,
        "embedding",
        "embeddingNext",
    )
    assert not made.store.connected


def test_the_new_layout_reads_the_staging_property_under_the_new_sets_index() -> None:
    made = plan()
    assert made.new_layout == Layout.DEFAULT.replace(chunk_embedding_property="embeddingNext")
    assert made.old_index == Schema.vector_index(Layout.DEFAULT, OLD)
    assert made.new_index == Schema.vector_index(made.new_layout, NEW)
    assert (made.new_index.property, made.new_index.dimensions) == ("embeddingNext", 1024)
    assert made.new_index.name == f"graphrag_chunk_{NEW.vector_index_name}" != made.old_index.name


def test_prepare_creates_the_new_index_and_cleanup_drops_the_old_one() -> None:
    made = plan()
    (prepare,) = made.prepare_steps()
    (drop,) = made.cleanup_steps()
    assert isinstance(prepare, CreateStep) and isinstance(drop, DropStep)
    assert prepare.cypher() == (
        f"CREATE VECTOR INDEX {made.new_index.name} IF NOT EXISTS FOR (n:Chunk) ON (n.embeddingNext) "
        "OPTIONS {indexConfig: {`vector.dimensions`: 1024, `vector.similarity_function`: 'cosine'}}"
    )
    assert drop.cypher() == f"DROP INDEX {made.old_index.name} IF EXISTS"
    assert drop.inverse().definition == made.old_index  # a downgrade recreates the old index


def test_the_next_reembedding_swaps_the_properties_back() -> None:
    first = plan()
    back = Reembedding(Store()).plan(first.new_layout, NEW, OLD, staging_property="embedding")
    assert back.new_layout == Layout.DEFAULT
    assert back.new_index == first.old_index and back.old_index == first.new_index


def test_a_layout_of_neo4j_graphrag_keeps_its_names() -> None:
    made = plan(Layout.NEO4J_GRAPHRAG)
    assert made.new_layout == Layout.NEO4J_GRAPHRAG.replace(chunk_embedding_property="embeddingNext")
    assert "FROM_DOCUMENT" not in made.statements.page  # chunks are read by label and key only


def test_a_layout_that_names_its_index_gets_the_name_given_for_the_new_one() -> None:
    named = Layout.DEFAULT.replace(vector_index="chunk_vectors")
    made = plan(named, vector_index="chunk_vectors_next")
    assert (made.old_index.name, made.new_index.name) == ("chunk_vectors", "chunk_vectors_next")
    assert plan(named).new_index.name == f"graphrag_chunk_{NEW.vector_index_name}"


def test_the_same_set_twice_is_refused() -> None:
    with pytest.raises(ReembeddingError) as refused:
        Reembedding(Store()).plan(Layout.DEFAULT, OLD, OLD.model_copy())
    assert refused.value.code == "same-embedding-set"


@pytest.mark.parametrize(
    "staging", ["embedding", "text", "id", "order", "embeddingSetId", "documentId", "runId", STAGED_SET_PROPERTY]
)
def test_a_staging_property_the_chunk_already_stores_is_refused(staging: str) -> None:
    with pytest.raises(ReembeddingError) as refused:
        plan(staging=staging)
    assert refused.value.code == "staging-property-in-use"
    assert "the staging property" in refused.value.message


@pytest.mark.parametrize("name", ["embedding next", "1vectors", "vec`tors", "vectors:x", "", "é"])
def test_names_that_are_not_plain_identifiers_are_refused(name: str) -> None:
    with pytest.raises(ConfigurationError) as staging:
        plan(staging=name)
    with pytest.raises(ConfigurationError) as index:
        plan(vector_index=name)
    assert staging.value.code == index.value.code == "invalid-layout"


def test_a_new_index_with_a_name_in_use_is_refused() -> None:
    named = Layout.DEFAULT.replace(vector_index="chunk_vectors")
    for taken in ("chunk_vectors", named.fulltext_index_name()):
        with pytest.raises(ReembeddingError) as refused:
            plan(named, vector_index=taken)
        assert refused.value.code == "vector-index-in-use"


def test_statements_take_values_as_parameters_and_never_return_a_vector() -> None:
    statements = plan().statements
    for cypher in vars(statements).values():
        assert NEW.id not in cypher and OLD.id not in cypher
    returned = statements.page.split(" RETURN ", 1)[1]
    assert returned == "c.id AS id, c.text AS text ORDER BY id LIMIT $page"
    assert f"c.{STAGED_SET_PROPERTY} = $to" in statements.stage
    assert "REMOVE c.embedding " in statements.cleanup and "REMOVE c.embeddingNext" not in statements.cleanup


def test_the_health_reads_count_staged_vectors_as_mixed_sets() -> None:
    rendered = HealthStatements.render(for_layout(Layout.DEFAULT).names).mixed_sets
    assert f"c.{STAGED_SET_PROPERTY} IS NOT NULL" in rendered and "' (staged)'" in rendered


@pytest.mark.parametrize(
    "options",
    [
        {"page_size": 0},
        {"page_size": 1_001},
        {"embedding_batch_size": 257},
        {"lanes": 9},
        {"max_pages": 0},
        {"max_pages": 1_000_001},
        {"write_attempts": 11},
    ],
)
def test_backfill_bounds_are_refused_with_invalid_option(options: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        BackfillOptions(**options)
    assert refused.value.code == "invalid-option"


def test_page_bounds_and_defaults() -> None:
    assert (BackfillOptions().page_size, BackfillOptions().max_pages) == (100, 10_000)
    assert (PageOptions().page_size, PageOptions(page_size=10_000).page_size) == (1_000, 10_000)
    with pytest.raises(ConfigurationError):
        PageOptions(page_size=10_001)


@pytest.mark.parametrize(
    ("counts", "to_do", "new_index", "old_index", "stage"),
    [
        ((10, 0, 0, 10), 10, False, True, ReembeddingStage.PLANNED),
        ((10, 0, 0, 10), 10, True, True, ReembeddingStage.PREPARED),
        ((10, 4, 0, 10), 6, True, True, ReembeddingStage.BACKFILLING),
        ((10, 10, 0, 10), 0, True, True, ReembeddingStage.BACKFILLED),
        ((10, 10, 3, 10), 0, True, True, ReembeddingStage.COMPLETING),
        ((10, 10, 10, 10), 0, True, True, ReembeddingStage.COMPLETED),
        ((10, 10, 10, 0), 0, True, True, ReembeddingStage.COMPLETED),
        ((10, 10, 10, 0), 0, True, False, ReembeddingStage.CLEANED_UP),
        ((0, 0, 0, 0), 0, True, True, ReembeddingStage.PREPARED),
    ],
)
def test_the_stage_is_read_from_the_counts_and_the_indexes(
    counts: tuple[int, int, int, int], to_do: int, new_index: bool, old_index: bool, stage: ReembeddingStage
) -> None:
    named = dict(zip(("chunks", "backfilled", "completed", "old_vectors"), counts, strict=True))
    assert _stage(named, to_do, new_index, old_index) is stage


def test_a_receipt_is_camel_case_json_with_its_limits() -> None:
    receipt = BackfillReceipt(
        from_set_id=OLD.id,
        to_set_id=NEW.id,
        chunks_embedded=6,
        pages=3,
        embedding_calls=3,
        seconds=0.5,
        chunks_left=4,
        limits_reached=(Limit(name=LimitName.MAX_PAGES, value=3),),
    )
    body = json.loads(receipt.to_json())
    assert body["chunksEmbedded"] == 6 and body["chunksLeft"] == 4 and body["retries"]["retries"] == 0
    assert body["limitsReached"] == [{"name": "MaxPages", "value": 3}]
