"""The batch rules, offline: bounds, halving over the fact-update limit, scopes, options and reports."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphrag_orm.codes import HealthFinding
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, GraphRefused
from graphrag_orm.layout import Layout
from graphrag_orm.maintenance import (
    HealthFindingItem,
    HealthReport,
    MaintenanceOptions,
    MaintenanceService,
    ResetScope,
)
from graphrag_orm.maintenance.ownership import Ownership
from graphrag_orm.maintenance.removal import (
    BatchResult,
    FactUpdatesExceeded,
    RemovalTotals,
    plan_batches,
    run_batches,
)
from graphrag_orm.maintenance.scope import DocumentSize
from graphrag_orm.models import for_layout
from graphrag_orm.store import Store

MODEL = for_layout(Layout.DEFAULT)


def docs(*sizes: int) -> list[DocumentSize]:
    return [DocumentSize(f"d{i}", size) for i, size in enumerate(sizes)]


def ids(batches: list[tuple[DocumentSize, ...]]) -> list[list[str]]:
    return [[d.document_id for d in batch] for batch in batches]


# --------------------------------------------------------------------------- planning


def test_batches_hold_at_most_the_document_bound() -> None:
    assert ids(plan_batches(docs(*[1] * 5), max_documents=2, max_bytes=100)) == [
        ["d0", "d1"],
        ["d2", "d3"],
        ["d4"],
    ]


def test_batches_hold_at_most_the_byte_bound_and_a_larger_document_goes_alone() -> None:
    planned = plan_batches(docs(40, 50, 20, 500, 10, 90), max_documents=100, max_bytes=100)
    assert ids(planned) == [["d0", "d1"], ["d2"], ["d3"], ["d4", "d5"]]


def test_no_documents_make_no_batches() -> None:
    assert plan_batches([], max_documents=100, max_bytes=100) == []


@given(
    sizes=st.lists(st.integers(min_value=0, max_value=300), max_size=60),
    max_documents=st.integers(min_value=1, max_value=7),
    max_bytes=st.integers(min_value=1, max_value=400),
)
def test_every_document_is_in_exactly_one_batch_in_order_within_the_bounds(
    sizes: list[int], max_documents: int, max_bytes: int
) -> None:
    documents = docs(*sizes)
    planned = plan_batches(documents, max_documents=max_documents, max_bytes=max_bytes)
    assert [d for batch in planned for d in batch] == documents
    for position, batch in enumerate(planned):
        assert 1 <= len(batch) <= max_documents
        if len(batch) > 1:
            assert sum(d.utf8_bytes for d in batch) <= max_bytes
        if position + 1 < len(planned):  # greedy: the next batch's first document did not fit here
            following = planned[position + 1][0]
            assert len(batch) == max_documents or sum(d.utf8_bytes for d in batch) + following.utf8_bytes > max_bytes


# --------------------------------------------------------------------------- halving


class FakeFacts:
    """An attempt that 'removes' a batch unless its fake fact updates exceed the limit."""

    def __init__(self, updates: dict[str, int], limit: int, fail_on: str | None = None) -> None:
        self.updates = updates
        self.limit = limit
        self.fail_on = fail_on
        self.tried: list[list[str]] = []
        self.committed: list[list[str]] = []

    async def __call__(self, batch: tuple[DocumentSize, ...]) -> BatchResult:
        names = [d.document_id for d in batch]
        self.tried.append(names)
        if self.fail_on in names:
            raise RuntimeError("write failed")
        count = sum(self.updates.get(name, 0) for name in names)
        if count > self.limit:
            raise FactUpdatesExceeded(count, self.limit)
        self.committed.append(names)
        return BatchResult(documents=len(batch), chunks=2 * len(batch))


async def test_a_batch_over_the_fact_limit_is_halved_until_only_a_single_large_document_is_refused() -> None:
    documents = docs(*[10] * 6)
    attempt = FakeFacts({"d0": 3, "d1": 3, "d2": 11, "d3": 3, "d4": 3, "d5": 3}, limit=10)
    totals = RemovalTotals()

    await run_batches(plan_batches(documents, max_documents=100, max_bytes=1000), attempt, totals)

    assert attempt.tried == [
        ["d0", "d1", "d2", "d3", "d4", "d5"],
        ["d0", "d1", "d2"],
        ["d0", "d1"],
        ["d2"],
        ["d3", "d4", "d5"],
    ]
    assert attempt.committed == [["d0", "d1"], ["d3", "d4", "d5"]]
    assert (totals.documents, totals.chunks, totals.batches, totals.refused) == (5, 10, 2, ["d2"])


async def test_batches_under_the_limit_are_never_split() -> None:
    attempt = FakeFacts(dict.fromkeys(("d0", "d1", "d2", "d3"), 5), limit=10)
    totals = RemovalTotals()
    await run_batches(plan_batches(docs(1, 1, 1, 1), max_documents=2, max_bytes=100), attempt, totals)
    assert attempt.tried == [["d0", "d1"], ["d2", "d3"]] and totals.refused == []


async def test_every_document_over_the_limit_alone_is_refused_and_the_rest_removed() -> None:
    attempt = FakeFacts({"d1": 50, "d3": 50}, limit=10)
    totals = RemovalTotals()
    await run_batches(plan_batches(docs(1, 1, 1, 1, 1), max_documents=5, max_bytes=100), attempt, totals)
    assert totals.refused == ["d1", "d3"]
    assert sorted(name for batch in attempt.committed for name in batch) == ["d0", "d2", "d4"]


async def test_another_failure_stops_the_call_and_keeps_what_earlier_batches_removed() -> None:
    attempt = FakeFacts({}, limit=10, fail_on="d2")
    totals = RemovalTotals()
    with pytest.raises(RuntimeError, match="write failed"):
        await run_batches(plan_batches(docs(1, 1, 1, 1, 1), max_documents=2, max_bytes=100), attempt, totals)
    assert attempt.committed == [["d0", "d1"]]
    assert (totals.documents, totals.batches) == (2, 1)
    assert totals.before() == "2 documents in 1 earlier batch were removed, each whole"


# --------------------------------------------------------------------------- scope, options, reports


def test_a_scope_with_neither_runs_nor_ids_is_everything() -> None:
    assert ResetScope().is_everything
    assert not ResetScope(run_ids=["r"]).is_everything
    assert ResetScope(document_ids=["a", "b"]).document_ids == ("a", "b")


@pytest.mark.parametrize("scope", [{"run_ids": ()}, {"document_ids": []}, {"document_ids": ("a", "")}])
def test_an_empty_selection_is_refused_rather_than_read_as_everything(scope: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        ResetScope(**scope)
    assert refused.value.code == "invalid-option"


@pytest.mark.parametrize(
    "options",
    [
        {"batch_documents": 0},
        {"batch_documents": 1001},
        {"batch_bytes": 1023},
        {"batch_bytes": (256 << 20) + 1},
        {"page_size": 0},
        {"page_size": 100_001},
        {"max_fact_updates": 0},
    ],
)
def test_out_of_bounds_options_are_refused(options: dict[str, int]) -> None:
    with pytest.raises(ConfigurationError) as refused:
        MaintenanceOptions(**options)
    assert refused.value.code == "invalid-option"


def test_the_bounds_themselves_are_accepted_and_the_schema_defaults_to_the_layouts() -> None:
    options = MaintenanceOptions(batch_documents=1000, batch_bytes=1024, page_size=100_000)
    service = MaintenanceService(Store(), MODEL, OFFLINE_EMBEDDING_SET, options=options)
    assert service.options.batch_documents == 1000
    assert {d.name for d in service.expected_schema} >= {"graphrag_chunk_text", "graphrag_document_id_unique"}


def test_a_health_report_without_findings_is_healthy_and_codes_are_stable_in_json() -> None:
    assert HealthReport().healthy
    report = HealthReport(findings=(HealthFindingItem(code=HealthFinding.ORPHANS, count=3, detail="d1"),))
    assert not report.healthy and report.count(HealthFinding.ORPHANS) == 3
    assert report.count(HealthFinding.STALE_FACTS) == 0
    assert json.loads(report.to_json()) == {"findings": [{"code": "orphans", "count": 3, "detail": "d1"}]}


async def test_elements_without_a_run_id_are_refused_with_counts_and_no_text() -> None:
    ownership = Ownership(MODEL.names)
    # A store without a driver: any lookup of run nodes would raise StoreNotConnected.
    offline = Store().reader
    with pytest.raises(GraphRefused) as refused:
        await ownership.require_owned(offline, {"documents": {None: 3}, "links": {None: 2}}, what="every document")
    assert refused.value.code == "foreign-graph"
    assert "3 documents and 2 links carry no run id. " in refused.value.message
    assert refused.value.message.endswith("Nothing was changed.")
    await ownership.require_owned(offline, {"documents": {}}, what="nothing")  # nothing stamped: nothing to refuse
