"""The reranking stage against the loopback server's /v1/rerank over real HTTP: order, bounds, failures."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_orm.errors import ConfigurationError, ModelCallFailed
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.retrieval import RetrievalOptions
from graphrag_orm.retrieval.rerank import RerankOptions, RerankStage, with_stage
from graphrag_orm.retrieval.routes import RouteRequest
from tests.support.openai_server import OpenAIServer

TEXTS = (
    "The harbour master sets the fees.",
    "Smoke calms the colony.",
    "Boats moor on the east quay; the harbour master sets the fees for who moors there.",
    "The lamp is trimmed at dusk.",
)


def items(texts: tuple[str, ...] = TEXTS) -> tuple[EvidenceItem, ...]:
    return tuple(
        EvidenceItem(
            chunk_id=f"c{n}", document_id="d", source_uri="mem://d", text=t, start_byte=0, end_byte=len(t), score=1.0
        )
        for n, t in enumerate(texts)
    )


def request(question: str = "Who sets the harbour fees?") -> RouteRequest:
    return RouteRequest(question=question, options=RetrievalOptions(stages=("rerank",)), scope=None)


def stage(server: OpenAIServer, **options: Any) -> RerankStage:
    return RerankStage(RerankOptions(base_url=server.url, model="bge-reranker", **options), api_key="sk-secret")


async def test_items_are_ordered_by_the_endpoints_score_and_none_is_added(openai_server: OpenAIServer) -> None:
    result = await stage(openai_server).apply(request(), items())
    assert [item.chunk_id for item in result.items] == ["c2", "c0", "c1", "c3"]
    assert result.limits == ()
    sent = openai_server.requests_to("/v1/rerank")[-1]
    assert sent.body["model"] == "bge-reranker" and sent.body["top_n"] == 4
    assert sent.body["documents"] == list(TEXTS) and sent.headers["authorization"] == "Bearer sk-secret"


async def test_only_candidates_are_sent_the_rest_follow_in_fused_order_and_a_cut_text_is_reported(
    openai_server: OpenAIServer,
) -> None:
    long = (*TEXTS[:3], "who sets the harbour fees " * 40)
    result = await stage(openai_server, candidates=2, max_document_chars=100).apply(request(), items(long))
    assert [item.chunk_id for item in result.items] == ["c0", "c1", "c2", "c3"]
    assert len(openai_server.requests_to("/v1/rerank")[-1].body["documents"]) == 2
    assert result.limits == ()
    cut = await stage(openai_server, max_document_chars=100).apply(request(), items(long))
    assert [item.chunk_id for item in cut.items] == ["c2", "c3", "c0", "c1"]  # ties keep the fused order
    assert [limit.name for limit in cut.limits] == ["RerankDocumentChars"]
    assert len(openai_server.requests_to("/v1/rerank")[-1].body["documents"][3]) == 100


async def test_items_the_endpoint_did_not_score_come_after_those_it_did(openai_server: OpenAIServer) -> None:
    openai_server.rerank_reply = lambda body: {"results": [{"index": 3, "relevance_score": 0.2}]}
    result = await stage(openai_server).apply(request(), items())
    assert [item.chunk_id for item in result.items] == ["c3", "c0", "c1", "c2"]


@pytest.mark.parametrize(
    "reply",
    [
        {"data": []},
        {"results": [{"index": 9, "relevance_score": 1.0}]},
        {"results": [{"index": 0, "relevance_score": 1.0}, {"index": 0, "relevance_score": 0.5}]},
        {"results": [{"index": True, "relevance_score": 1.0}]},
        {"results": [{"index": 1, "relevance_score": "high"}]},
        [],
    ],
)
async def test_a_reply_of_another_shape_is_unreadable_reply(openai_server: OpenAIServer, reply: Any) -> None:
    openai_server.rerank_reply = lambda body: reply
    with pytest.raises(ModelCallFailed) as failed:
        await stage(openai_server).apply(request(), items())
    assert failed.value.code == "unreadable-reply" and "sk-secret" not in failed.value.message


@pytest.mark.parametrize(("status", "code"), [(503, "model-unavailable"), (400, "model-request-rejected")])
async def test_a_failed_call_is_one_coded_line_naming_the_endpoint(
    openai_server: OpenAIServer, status: int, code: str
) -> None:
    openai_server.fail(status)
    with pytest.raises(ModelCallFailed) as failed:
        await stage(openai_server).apply(request(), items())
    assert failed.value.code == code and f"HTTP {status}" in failed.value.message
    assert "/rerank" in failed.value.message and "sk-secret" not in failed.value.message


async def test_an_endpoint_that_is_not_running_is_model_unreachable() -> None:
    unreachable = RerankStage(RerankOptions(base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ModelCallFailed) as failed:
        await unreachable.apply(request(), items())
    assert failed.value.code == "model-unreachable"


def test_off_unless_the_variable_names_an_endpoint_and_bad_settings_are_invalid_option() -> None:
    assert RerankStage.from_env({}) is None
    chosen = RerankStage.from_env({"GRAPHRAG_RERANK_URL": "http://127.0.0.1:1/v1", "GRAPHRAG_RERANK_MODEL": "m"})
    assert chosen is not None and chosen.options.model == "m"
    assert chosen.wants(RetrievalOptions(max_items=8)) == 50 and chosen.wants(RetrievalOptions(max_items=80)) == 80
    with pytest.raises(ConfigurationError, match="http or https"):
        RerankStage.from_env({"GRAPHRAG_RERANK_URL": "file:///etc/passwd"})
    with pytest.raises(ConfigurationError):
        RerankOptions(base_url="http://h/v1", candidates=0)
    # Appended after the stages named: by default the passage stage first.
    assert with_stage(RetrievalOptions()).stages == ("passages", "rerank")
    assert with_stage(with_stage(RetrievalOptions())).stages == ("passages", "rerank")
    assert with_stage(RetrievalOptions(stages=())).stages == ("rerank",)
