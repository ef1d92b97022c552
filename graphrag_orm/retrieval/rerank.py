"""A reranking stage: a rerank endpoint reorders the fused items by how well each answers the question.

Off by default. A retriever given a :class:`RerankStage` (``Retriever(..., stages=[stage])``
or ``GraphRag(..., stages=[stage])``) applies it when the options name it
(``RetrievalOptions(stages=("rerank",))``); ``GRAPHRAG_RERANK_URL`` (with
``GRAPHRAG_RERANK_MODEL`` and optionally ``GRAPHRAG_RERANK_API_KEY``) does both for
:func:`~graphrag_orm.environment.graphrag_from_env` and the CLI.

The endpoint speaks the rerank API that Cohere, Jina, vLLM, Infinity, TEI's OpenAI-style
routes and llama.cpp's server share: ``POST {base}/rerank`` with ``{"model", "query",
"documents": [text, ...], "top_n"}``, answered with ``{"results": [{"index",
"relevance_score"}, ...]}``. The stage sends the best ``candidates`` fused items (each
text cut at ``max_document_chars``, reported as ``RerankDocumentChars``), orders them by
the endpoint's score (ties: the fused order), keeps the items the endpoint did not score
after those it did, in fused order, and never adds one. A failed call is one coded
error (``model-timeout``, ``model-unavailable``, ``model-request-rejected``,
``model-unreachable``, or ``unreadable-reply`` for a reply of another shape), never a
traceback; the message names the endpoint without key or query. Spans carry counts only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import Field

from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError, ModelCallFailed
from graphrag_orm.evidence import EvidenceItem
from graphrag_orm.model_failures import is_transient_status
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.retrieval.routes import MAX_STAGE_ITEMS, RouteRequest, StageResult
from graphrag_orm.values import Limit, Options

__all__ = ["MAX_RERANK_DOCUMENT_CHARS", "RERANK_STAGE", "RerankOptions", "RerankStage", "with_stage"]

#: The name a reranking stage is registered and named under in ``RetrievalOptions.stages``.
RERANK_STAGE: Final = "rerank"
#: The most characters of one item's text sent to the endpoint.
MAX_RERANK_DOCUMENT_CHARS: Final = 32_000


class RerankOptions(Options):
    """Where the rerank endpoint is and how much is sent to it."""

    base_url: str = Field(min_length=1, max_length=2_000, description="the endpoint's base, e.g. http://host/v1")
    model: str = Field("rerank", min_length=1, max_length=200, description="the model name sent")
    candidates: int = Field(
        50, ge=1, le=MAX_STAGE_ITEMS, description="fused items sent to be reranked (at least max_items are read)"
    )
    max_document_chars: int = Field(
        4_000, ge=100, le=MAX_RERANK_DOCUMENT_CHARS, description="characters of an item's text sent"
    )
    timeout_seconds: float = Field(30.0, ge=0.1, le=600.0, description="one call's timeout")


class RerankStage:
    """The reranking stage described in the module docstring (name ``rerank``)."""

    name = RERANK_STAGE
    owner = "RerankStage"

    def __init__(self, options: RerankOptions, *, api_key: str | None = None) -> None:
        self.options = options
        parts = urlsplit(options.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "the rerank endpoint must be an http or https address")
        self._url = options.base_url.rstrip("/") + "/rerank"
        port = f":{parts.port}" if parts.port else ""
        #: The endpoint as messages show it: no user information, no query.
        self.endpoint = f"{parts.scheme}://{parts.hostname}{port}{parts.path.rstrip('/')}/rerank"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RerankStage | None:
        """The stage ``GRAPHRAG_RERANK_URL`` names (its model ``GRAPHRAG_RERANK_MODEL``, key
        ``GRAPHRAG_RERANK_API_KEY``), or ``None`` when the variable is unset: off by default."""
        environ = os.environ if environ is None else environ
        url = (environ.get("GRAPHRAG_RERANK_URL") or "").strip()
        if not url:
            return None
        model = (environ.get("GRAPHRAG_RERANK_MODEL") or "").strip() or "rerank"
        return cls(RerankOptions(base_url=url, model=model), api_key=environ.get("GRAPHRAG_RERANK_API_KEY") or None)

    def wants(self, options: RetrievalOptions) -> int:
        return max(options.max_items, self.options.candidates)

    async def apply(self, request: RouteRequest, items: tuple[EvidenceItem, ...]) -> StageResult:
        sent = items[: self.options.candidates]
        if len(sent) < 2:
            return StageResult(items)
        cap = self.options.max_document_chars
        documents = [item.text[:cap] for item in sent]
        limits = (
            (Limit(name=LimitName.RERANK_DOCUMENT_CHARS, value=cap),) if any(len(i.text) > cap for i in sent) else ()
        )
        body = {"model": self.options.model, "query": request.question, "documents": documents, "top_n": len(sent)}
        scores = self._scores(await self._post(body), len(sent))
        order = sorted(range(len(sent)), key=lambda i: (-scores[i], i) if i in scores else (math.inf, i))
        return StageResult((*(sent[i] for i in order), *items[len(sent) :]), limits)

    async def _post(self, body: dict[str, Any]) -> Any:
        import httpx  # only when a reranker is called: a process that never reranks never loads it

        try:
            async with httpx.AsyncClient(timeout=self.options.timeout_seconds) as client:
                response = await client.post(self._url, json=body, headers=self._headers)
        except httpx.ConnectError:
            raise self._failure(ErrorCode.MODEL_UNREACHABLE, "could not be reached (is it running?)") from None
        except httpx.TimeoutException:
            raise self._failure(
                ErrorCode.MODEL_TIMEOUT, f"did not answer within {self.options.timeout_seconds:g} s"
            ) from None
        except httpx.TransportError:
            raise self._failure(ErrorCode.MODEL_UNAVAILABLE, "broke the connection before a whole reply") from None
        status = response.status_code
        if status >= 400:
            transient = is_transient_status(status, response.text[:2_000])
            code = ErrorCode.MODEL_UNAVAILABLE if transient else ErrorCode.MODEL_REQUEST_REJECTED
            what = "is busy or down" if transient else "refused the request"
            raise self._failure(code, f"{what} (HTTP {status})", status=status)
        try:
            return response.json()
        except ValueError:
            raise self._failure(ErrorCode.UNREADABLE_REPLY, "answered with something other than JSON") from None

    def _scores(self, reply: Any, count: int) -> dict[int, float]:
        """Score by index; a reply of another shape, an index out of range or twice, is unreadable-reply."""
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list):
            raise self._failure(ErrorCode.UNREADABLE_REPLY, "answered without a results list")
        scores: dict[int, float] = {}
        for result in results:
            index = result.get("index") if isinstance(result, dict) else None
            score = result.get("relevance_score") if isinstance(result, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count or index in scores:
                raise self._failure(ErrorCode.UNREADABLE_REPLY, "answered with a result that is not one of those sent")
            if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
                raise self._failure(ErrorCode.UNREADABLE_REPLY, "answered with a score that is not a number")
            scores[index] = float(score)
        return scores

    def _failure(self, code: ErrorCode, what: str, *, status: int | None = None) -> ModelCallFailed:
        return ModelCallFailed(
            code, f"{self.owner}: the rerank endpoint at {self.endpoint} {what}", attempts=1, status=status
        )


def with_stage(options: RetrievalOptions, name: str = RERANK_STAGE) -> RetrievalOptions:
    """``options`` with the stage ``name`` applied last (unchanged when they name it already)."""
    if name in options.stages:
        return options
    return options.model_copy(update={"stages": (*options.stages, name)})
