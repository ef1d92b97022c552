"""A route and a stage added from outside the retrieval package, through its two protocols.

The toy route searches documents' titles through a full-text index this test creates and
ranks each matching document's chunks; it is one class here, nothing in
``graphrag_orm/retrieval`` knows it. The toy stage keeps only items whose text holds a
word, and reverses them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.errors import ConfigurationError, QuestionRefused, RetrievalFailed
from graphrag_orm.evidence import EvidenceItem, Route
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import RetrievalOptions, Retriever, to_query
from graphrag_orm.retrieval.fusion import Candidate
from graphrag_orm.retrieval.passages import PassageOptions, PassageStage
from graphrag_orm.retrieval.rerank import RerankOptions, RerankStage
from graphrag_orm.retrieval.routes import RouteRead, RouteRequest, RouteSearch, StageResult
from graphrag_orm.sources import Source, Sources
from graphrag_orm.store import Store
from graphrag_orm.values import Limit
from tests.support.openai_server import OpenAIServer

MODEL = for_layout(Layout.DEFAULT)
TITLE_INDEX = "test_document_titles"

DOCS = {
    "Lighthouse keeping": "# Lighthouse keeping\n\nThe lamp is trimmed at dusk.\n\nOil is carried up the stairs.\n",
    "Bee keeping": "# Bee keeping\n\nHives are opened on warm days.\n\nSmoke calms the colony.\n",
    "Harbour rules": "# Harbour rules\n\nBoats moor on the east quay.\n\nThe harbour master sets the fees.\n",
}


class TitleRoute:
    """Documents whose title matches the question's words; each one's chunks, by the title's score."""

    name = "Title"
    follows = False
    indexes = (TITLE_INDEX,)

    async def plan(self, request: RouteRequest) -> RouteSearch:
        query = to_query(request.question)
        k = request.options.route_candidates
        if not query:
            return RouteSearch(self.name, "title", None, k=k)
        subquery = (
            "CALL () { CALL db.index.fulltext.queryNodes($titleIndex, $titleQuery, {limit: $titleFetch}) "
            "YIELD node AS d, score MATCH (c:Chunk {documentId: d.id}) "
            "WITH c.id AS id, score ORDER BY score DESC, id LIMIT $titleFetch "
            "RETURN collect({id: id, score: score}) AS title } "
        )
        parameters = {"titleIndex": TITLE_INDEX, "titleQuery": query, "titleFetch": k}
        return RouteSearch(self.name, "title", subquery, parameters, k=k)


@dataclass
class PinnedRoute:
    """A route that reads for itself: the chunks it was told, as if it had found them."""

    chunk_ids: tuple[str, ...]
    name: str = "Pinned"
    follows: bool = False
    indexes: tuple[str, ...] = ()

    async def plan(self, request: RouteRequest) -> RouteRead:
        candidates = tuple(Candidate(chunk_id, 1.0) for chunk_id in self.chunk_ids)
        return RouteRead(self.name, candidates, reserved=self.chunk_ids[:1])


@dataclass
class KeepWord:
    """Keeps the items whose text holds ``word`` and reverses their order; reports what it left out."""

    word: str
    name: str = "KeepWord"
    extra: int = 10

    def wants(self, options: RetrievalOptions) -> int:
        return options.max_items + self.extra

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult:
        kept = tuple(reversed([item for item in items if self.word in item.text]))
        return StageResult(
            kept, (Limit(name="MaxItems", value=len(items) - len(kept)),) if len(kept) < len(items) else ()
        )


class AddsAnItem:
    name = "AddsAnItem"

    def wants(self, options: RetrievalOptions) -> int:
        return options.max_items

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult:
        forged = items[0].model_copy(update={"chunk_id": "forged"})
        return StageResult((*items, forged))


@pytest.fixture
async def corpus(graph: None, store: Store) -> AsyncIterator[list[Source]]:
    items = [Sources.text(title, text, media_type="text/markdown") for title, text in DOCS.items()]
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    assert (await ingestion.ingest(items)).failed == 0
    await store.execute(f"CREATE FULLTEXT INDEX {TITLE_INDEX} IF NOT EXISTS FOR (d:Document) ON EACH [d.title]")
    await store.execute("CALL db.awaitIndexes(60)")
    yield items
    await store.execute(f"DROP INDEX {TITLE_INDEX} IF EXISTS")


def retriever(store: Store, **extra: object) -> Retriever:
    return Retriever(
        store,
        MODEL,
        OFFLINE_EMBEDDING_SET,
        HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions),
        **extra,  # type: ignore[arg-type]
    )


async def test_a_route_from_outside_the_package_is_searched_and_fused_in_the_one_statement(
    corpus: list[Source], store: Store
) -> None:
    rag = retriever(store, routes=[TitleRoute()])
    statements: list[str] = []
    remove = store.add_hook(lambda event: statements.append(event.name))
    try:
        alone = await rag.retrieve("lighthouse", RetrievalOptions(routes=frozenset({"Title"})))
        fused = await rag.retrieve("lighthouse", RetrievalOptions(routes=frozenset({"Title", Route.FULL_TEXT})))
    finally:
        remove()
    lighthouse = corpus[0].document_id
    # The title route alone finds only the lighthouse document's chunks, ranked by it.
    assert alone.items and {item.document_id for item in alone.items} == {lighthouse}
    assert all([rank.route for rank in item.routes] == ["Title"] for item in alone.items)
    assert alone.provenance is not None and alone.provenance.indexes == (TITLE_INDEX,)
    # Fused with full text: one statement each, both routes' ranks on the items both found.
    assert statements.count("retrieval.evidence") == 2 and "retrieval.search" not in statements
    both = [item for item in fused.items if {r.route for r in item.routes} == {"Title", "FullText"}]
    assert both and both[0] is fused.items[0]
    scores = [(-item.score, item.chunk_id) for item in fused.items]
    assert scores == sorted(scores)


async def test_a_route_that_reads_for_itself_joins_the_fusion_with_its_reserved_place(
    corpus: list[Source], store: Store
) -> None:
    rows = await store.read(
        "MATCH (c:Chunk {documentId: $doc}) RETURN c.id AS id ORDER BY c.startByte", {"doc": corpus[2].document_id}
    )
    pinned = tuple(row["id"] for row in rows)
    rag = retriever(store, routes=[PinnedRoute(pinned)])
    options = RetrievalOptions(routes=frozenset({"Pinned", Route.FULL_TEXT, Route.VECTOR}), max_items=2)
    evidence = await rag.retrieve("Which bees are calmed by smoke?", options)
    ids = [item.chunk_id for item in evidence.items]
    assert pinned[0] in ids, "the reserved chunk keeps a place among two"
    assert any(rank.route == "Pinned" for item in evidence.items for rank in item.routes)


async def test_a_stage_reorders_and_leaves_out_items_and_reports_it(corpus: list[Source], store: Store) -> None:
    rag = retriever(store, stages=[KeepWord("The")])
    question = "lamp boats harbour hives oil smoke"
    # Without the stage, the 14 fused winners the stage will be handed (max_items + 10).
    wide = await rag.retrieve(question, RetrievalOptions(max_items=14, stages=()))
    staged = await rag.retrieve(question, RetrievalOptions(max_items=4, stages=("KeepWord",)))
    expected = list(reversed([item.chunk_id for item in wide.items if "The" in item.text]))[:4]
    assert len(expected) >= 2 and [item.chunk_id for item in staged.items] == expected
    assert "MaxItems" in {limit.name for limit in staged.limits_reached}


async def test_unknown_names_a_taken_name_and_a_stage_that_adds_an_item_are_refused(
    corpus: list[Source], store: Store
) -> None:
    rag = retriever(store, routes=[TitleRoute()], stages=[AddsAnItem()])
    with pytest.raises(QuestionRefused) as unknown:
        await rag.retrieve("lamp", RetrievalOptions(routes=frozenset({"Nowhere"})))
    assert unknown.value.code == "route-not-available"
    with pytest.raises(QuestionRefused) as no_stage:
        await rag.retrieve("lamp", RetrievalOptions(stages=("Rerank",)))
    assert no_stage.value.code == "route-not-available"
    with pytest.raises(RetrievalFailed) as forged:
        await rag.retrieve("lamp", RetrievalOptions(stages=("AddsAnItem",)))
    assert forged.value.code == "retrieval-failed"
    with pytest.raises(ConfigurationError) as taken:
        retriever(store, routes=[PinnedRoute((), name="Vector")])
    assert taken.value.code == "invalid-option"
    with pytest.raises(ConfigurationError):
        retriever(store, routes=[PinnedRoute((), name="no spaces allowed")])


async def test_the_rerank_stage_reorders_the_fused_items_by_the_endpoints_scores(
    corpus: list[Source], store: Store, openai_server: OpenAIServer
) -> None:
    question = "Who trims the lamp, keeps the bees and sets the harbour fees?"
    # The endpoint scores the last document it is sent highest: the fused order, reversed.
    openai_server.rerank_reply = lambda body: {
        "results": [{"index": i, "relevance_score": float(i)} for i in range(len(body["documents"]))]
    }
    rag = retriever(store, stages=[RerankStage(RerankOptions(base_url=openai_server.url))])
    plain = await rag.retrieve(question, RetrievalOptions(max_items=3, stages=()))
    reranked = await rag.retrieve(question, RetrievalOptions(max_items=3, stages=("rerank",)))
    sent = openai_server.requests_to("/v1/rerank")[-1].body
    assert sent["query"] == question and sent["documents"] == [item.text for item in plain.items]
    assert len(plain.items) == 3
    assert [item.chunk_id for item in reranked.items] == [item.chunk_id for item in reversed(plain.items)]


async def test_every_retriever_has_the_passage_stage_on_until_the_options_leave_it_out(
    corpus: list[Source], store: Store
) -> None:
    gap = " ".join(f"word{n}" for n in range(100))  # about 700 characters: wider than the window
    texts = {
        # The question's words, never two within the window, in the shortest text: full text ranks it first.
        "Scattered": f"ferry {gap} warden {gap} tolls",
        "Together": f"{gap} the ferry warden doubled the tolls last spring {gap}",
        "Tolls only": f"{gap} tolls {gap}",
    }  # each under 1.5 KB: one chunk
    ingestion = IngestionService(store, MODEL, OFFLINE_EMBEDDING_SET, HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions))
    assert (await ingestion.ingest([Sources.text(title, text) for title, text in texts.items()])).failed == 0
    rag = retriever(store)
    assert isinstance(rag.stages["passages"], PassageStage)
    question = "ferry warden tolls"
    plain = await rag.retrieve(question, RetrievalOptions(max_items=3, routes=frozenset({Route.FULL_TEXT}), stages=()))
    full_text = RetrievalOptions(max_items=3, routes=frozenset({Route.FULL_TEXT}))
    assert full_text.stages == ("passages",)
    staged = await rag.retrieve(question, full_text)
    name = {text: title for title, text in texts.items()}
    assert [name[item.text] for item in plain.items] == ["Scattered", "Together", "Tolls only"]
    assert [name[item.text] for item in staged.items] == ["Together", "Scattered", "Tolls only"]
    # A stage of the application's under the name replaces it: here, one that weighs passages at 0.
    own = retriever(store, stages=[PassageStage(PassageOptions(weight=0.0))])
    assert [name[item.text] for item in (await own.retrieve(question, full_text)).items] == [
        "Scattered",
        "Together",
        "Tolls only",
    ]
    with pytest.raises(ConfigurationError) as twice:
        retriever(store, stages=[KeepWord("The", name="passages"), KeepWord("A", name="passages")])
    assert twice.value.code == "invalid-option"


def test_graphrag_from_env_turns_the_reranker_on_only_when_its_variable_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graphrag_orm.environment import graphrag_from_env

    monkeypatch.delenv("GRAPHRAG_RERANK_URL", raising=False)
    rag, _ = graphrag_from_env()
    assert rag.stages == () and rag.options.retrieval.stages == ("passages",)
    monkeypatch.setenv("GRAPHRAG_RERANK_URL", "http://127.0.0.1:9/v1")
    rag, _ = graphrag_from_env()
    assert [stage.name for stage in rag.stages] == ["rerank"]
    assert rag.options.retrieval.stages == ("passages", "rerank")
    assert "rerank" in rag.retriever.stages
