"""The recall question plain top-k cannot answer, answered completely through the graph route.

The sample wiki (examples/recall) is fiction written for this project. The affected
products are City 3 (BC-310 calipers) and Trail 5 (brake kit BK-7, which holds BC-310s);
Cargo 2, Urban 2, Kids 1 and Tour 4 are distractors. Extraction and the answer are
scripted (written by hand), so the test checks what retrieval puts in the evidence and
that every cited link is located in the stored bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from examples.recall.bikes import AFFECTED, BIKES, RECALL_QUESTION, answer_reply, extraction_reply
from graphrag_orm.answers import AnswersService, Disposition
from graphrag_orm.chat import ScriptedChat
from graphrag_orm.embeddings import HashingEmbedder
from graphrag_orm.embeddings.sets import OFFLINE_EMBEDDING_SET
from graphrag_orm.evidence import Route
from graphrag_orm.extraction import Extractor
from graphrag_orm.ingestion import IngestionService
from graphrag_orm.layout import Layout
from graphrag_orm.models import for_layout
from graphrag_orm.retrieval import Retriever, Retrievers
from graphrag_orm.sources import Sources
from graphrag_orm.store import Store
from tests.integration.knowledge_support import ontology_schema

WIKI = Path(__file__).resolve().parents[2] / "examples" / "recall" / "wiki"
MODEL = for_layout(Layout.DEFAULT)
DISTRACTORS = ("Cargo 2", "Urban 2", "Kids 1", "Tour 4")


@pytest.fixture
async def recall_graph(graph: None, store: Store) -> Any:
    async with ontology_schema(store, BIKES):
        embedder = HashingEmbedder(OFFLINE_EMBEDDING_SET.dimensions)
        ingestion = IngestionService(
            store, MODEL, OFFLINE_EMBEDDING_SET, embedder, extractor=Extractor(BIKES, ScriptedChat(extraction_reply))
        )
        receipt = await ingestion.ingest(Sources.folder(WIKI, base_uri="https://example.org/recall/"))
        assert receipt.failed == 0 and receipt.extraction is not None
        assert receipt.extraction.pruned == ()
        yield Retriever(store, MODEL, OFFLINE_EMBEDDING_SET, embedder, ontology=BIKES)


def page_texts(evidence: Any) -> str:
    return "\n".join(item.text for item in evidence.items)


async def test_plain_hybrid_retrieval_misses_an_affected_product(recall_graph: Retriever) -> None:
    answers = AnswersService(recall_graph, ScriptedChat(answer_reply))
    # The same budget as the graph preset: 24 items.
    answer = await answers.answer(RECALL_QUESTION, retrieval=Retrievers.hybrid().model_copy(update={"max_items": 24}))
    evidence = page_texts(answer.evidence)
    missing = [
        bike
        for bike, page in (("City 3", "BC-310 hydraulic calipers"), ("Trail 5", "brake kit BK-7"))
        if page not in evidence
    ]
    assert missing, "plain top-k found every link"
    assert answer.disposition == Disposition.INSUFFICIENT_EVIDENCE
    assert answer.reason == "citation-not-found"


async def test_the_graph_route_answers_completely_with_every_link_cited(recall_graph: Retriever) -> None:
    answers = AnswersService(recall_graph, ScriptedChat(answer_reply))
    answer = await answers.answer(RECALL_QUESTION, retrieval=Retrievers.hybrid_graph())
    assert answer.disposition == Disposition.ANSWERED, answer.reason
    assert len(answer.citations) == 4
    for citation in answer.citations:
        item = answer.evidence.item(citation.chunk_id)
        assert item is not None
        offset = citation.start_byte - item.start_byte
        assert item.text.encode()[offset : offset + len(citation.quote.encode())].decode() == citation.quote
    assert all(bike in (answer.text or "") for bike in AFFECTED)
    assert not any(bike in (answer.text or "") for bike in DISTRACTORS)
    graph_items = [item for item in answer.evidence.items if any(r.route == Route.GRAPH for r in item.routes)]
    assert graph_items, "the graph route contributed evidence"
    facts = [c.text for c in answer.evidence.context if c.reason.startswith("graph-fact")]
    assert "(Trail 5) -[HAS_PART]-> (BK-7)" in facts
    assert "(BK-7) -[HAS_PART]-> (BC-310)" in facts
