"""The evaluator: run each case through retrieval and answers, check its citations, score it.

``Evaluator(rag, k=10).run(cases)`` asks each case's question once through
``rag.answers`` (retrieval then the answer, so the answer sees exactly the evidence
that is scored), reads each citation's stored bytes back through
:class:`~graphrag_orm.evaluation.stored.StoredChunks`, and scores the case
(:mod:`graphrag_orm.evaluation.metrics`). Without answers (a facade without a chat
client, or ``answerer=None``) only retrieval is measured: outcome ``retrieved``.

What a caller may rely on:

- ``k`` (1 to 128, default 10) is the retrieval's ``max_items`` for every case, and the
  k of recall@k and MRR; the rest of the retrieval options are the retriever's own
  (or ``retrieval=``). A byte budget that keeps fewer items is reported per case.
- A required phrase the byte budget cut (ranked among the first ``k`` but left out) is
  reported in the case's ``budget_dropped``, told apart from the ranking's misses
  (:mod:`~graphrag_orm.evaluation.budget`).
- At most ``max_cases`` (1 to 10,000, default 1,000) cases run, the first ones; more is
  reported as ``MaxCases`` in ``limits_reached``. Cases run in ``concurrency`` lanes
  (1 to 8, default 1); the report keeps the file's order.
- A case whose retrieval or answer raises any exception (a question too long, a failed
  read, a model timeout) is reported with outcome ``error``, its code (``case-failed``
  for an exception without one) and a one-line message (a coded error's message, else
  the exception's type only, never its text), and the run goes on: finished cases are
  always kept. After ``max_consecutive_failures`` (1 to 1,000, default 5) errors in a
  row (in the order cases finish), no new case starts and ``ConsecutiveFailures`` is in
  ``limits_reached``; cases already running finish. Cancellation still ends the run.
- Nothing is written to the database. One span, ``GraphRag.Evaluate``, carries the
  number of cases only; the services' own spans nest under it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

from pydantic import Field

from graphrag_orm.answers import Answer
from graphrag_orm.codes import ErrorCode, LimitName
from graphrag_orm.errors import ConfigurationError, GraphRagError
from graphrag_orm.evaluation.budget import EvidenceRetriever, budget_dropped
from graphrag_orm.evaluation.cases import EvalCase
from graphrag_orm.evaluation.metrics import score_case, totals
from graphrag_orm.evaluation.stored import StoredChunks, StoredText, check_citations
from graphrag_orm.evaluation.values import (
    CaseOutcome,
    CaseResult,
    CitationCheck,
    ClientLabel,
    EvaluationReport,
    EvaluationSettings,
    RunLabels,
)
from graphrag_orm.retrieval.options import RetrievalOptions
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit, Options

if TYPE_CHECKING:
    from graphrag_orm.facade import GraphRag

__all__ = [
    "DEFAULT_MAX_CASES",
    "DEFAULT_MAX_CONSECUTIVE_FAILURES",
    "MAX_CASES",
    "MAX_CONSECUTIVE_FAILURES",
    "Answerer",
    "EvaluationOptions",
    "Evaluator",
    "EvidenceRetriever",
]

DEFAULT_MAX_CASES: Final = 1_000
MAX_CASES: Final = 10_000
DEFAULT_MAX_CONSECUTIVE_FAILURES: Final = 5
MAX_CONSECUTIVE_FAILURES: Final = 1_000


class Answerer(Protocol):
    """What the evaluator answers through (``AnswersService``): retrieval and the answer in one call."""

    async def answer(self, question: str, *, retrieval: RetrievalOptions | None = None) -> Answer: ...


class EvaluationOptions(Options):
    """The evaluator's bounds; a value outside them is ``ConfigurationError("invalid-option")``."""

    k: int = Field(10, ge=1, le=128, strict=True, description="items retrieved per case, the k of recall@k and MRR")
    concurrency: int = Field(1, ge=1, le=8, strict=True, description="cases answered at once")
    max_cases: int = Field(DEFAULT_MAX_CASES, ge=1, le=MAX_CASES, strict=True, description="the most cases run")
    max_consecutive_failures: int = Field(
        DEFAULT_MAX_CONSECUTIVE_FAILURES,
        ge=1,
        le=MAX_CONSECUTIVE_FAILURES,
        strict=True,
        description="errors in a row after which no new case starts",
    )


def label_of(client: Any) -> ClientLabel:
    """A client's ``label`` (or its class and ``model``), and its ``is_stand_in`` flag."""
    label = getattr(client, "label", None)
    if not isinstance(label, str):
        model = getattr(client, "model", None)
        label = f"{type(client).__name__} ({model})" if isinstance(model, str) else type(client).__name__
    return ClientLabel(label=label, stand_in=bool(getattr(client, "is_stand_in", False)))


class Evaluator:
    """Runs evaluation cases on a connected ``GraphRag``, or on a retriever, an answerer and a stored-text reader."""

    def __init__(
        self,
        rag: GraphRag | None = None,
        *,
        retriever: EvidenceRetriever | None = None,
        answerer: Answerer | None = None,
        stored: StoredText | None = None,
        retrieval: RetrievalOptions | None = None,
        labels: RunLabels | None = None,
        k: int = 10,
        concurrency: int = 1,
        max_cases: int = DEFAULT_MAX_CASES,
        max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    ) -> None:
        self.options = EvaluationOptions(
            k=k, concurrency=concurrency, max_cases=max_cases, max_consecutive_failures=max_consecutive_failures
        )
        if rag is not None:
            if retriever is not None or answerer is not None or stored is not None:
                raise ConfigurationError(ErrorCode.INVALID_OPTION, "Evaluator: give a GraphRag or its parts, not both")
            retriever, answerer = rag.retriever, rag.answers
            stored = StoredChunks(rag.store, rag.model)
            labels = labels or RunLabels(
                retriever=ClientLabel(label="Retriever (Neo4j indexes)", stand_in=False),
                embedder=label_of(rag.embedder),
                chat=label_of(rag.chat) if rag.answers is not None else None,
                embedding_set=rag.embedding_set.id,
            )
        if retriever is None:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "Evaluator: give a GraphRag or a retriever")
        if stored is None and isinstance(retriever, StoredText):
            stored = retriever
        if answerer is not None and stored is None:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, "Evaluator: answers need a stored-text reader (stored=)")
        self.retriever = retriever
        self.answerer = answerer
        self.stored = stored
        self.retrieval = (retrieval or retriever.options).model_copy(update={"max_items": self.options.k})
        self.labels = labels or RunLabels(
            retriever=label_of(retriever),
            embedder=label_of(getattr(retriever, "embedder")) if hasattr(retriever, "embedder") else None,  # noqa: B009
            chat=label_of(getattr(answerer, "chat", answerer)) if answerer is not None else None,
        )

    async def run(
        self, cases: Sequence[EvalCase], *, on_case: Callable[[CaseResult], None] | None = None
    ) -> EvaluationReport:
        """Every case's metrics and the totals; ``on_case`` is called as each case finishes (any order)."""
        began, started_at = time.monotonic(), datetime.now(UTC)
        selected = list(cases[: self.options.max_cases])
        cut = [Limit(name=LimitName.MAX_CASES, value=self.options.max_cases)] if len(cases) > len(selected) else []
        results: list[CaseResult | None] = [None] * len(selected)
        pending = iter(enumerate(selected))
        failures, stopped = 0, False

        async def lane() -> None:
            nonlocal failures, stopped
            for index, case in pending:
                result = results[index] = await self._case(case, index)
                failures = failures + 1 if result.outcome is CaseOutcome.ERROR else 0
                stopped = stopped or failures >= self.options.max_consecutive_failures
                if on_case is not None:
                    on_case(result)
                if stopped:
                    return

        with span(SpanName.EVALUATE, cases=len(selected)):
            try:
                async with asyncio.TaskGroup() as lanes:
                    for _ in range(min(self.options.concurrency, max(len(selected), 1))):
                        lanes.create_task(lane())
            except BaseExceptionGroup as group:  # the lane's own exception, not a group of one
                raise group.exceptions[0] from None
        done = [result for result in results if result is not None]
        if len(done) < len(selected):
            cut.append(Limit(name=LimitName.CONSECUTIVE_FAILURES, value=self.options.max_consecutive_failures))
        seconds = time.monotonic() - began
        return EvaluationReport(
            started_at=started_at,
            seconds=round(seconds, 6),
            labels=self.labels,
            settings=self._settings(),
            cases=tuple(done),
            totals=totals(done, seconds),
            limits_reached=tuple(cut),
        )

    def _settings(self) -> EvaluationSettings:
        return EvaluationSettings(
            k=self.options.k,
            concurrency=self.options.concurrency,
            max_cases=self.options.max_cases,
            routes=tuple(sorted(str(route) for route in self.retrieval.routes)),
            max_utf8_bytes=self.retrieval.utf8_budget,
        )

    async def _case(self, case: EvalCase, index: int) -> CaseResult:
        began = time.monotonic()
        try:
            answer: Answer | None = None
            checks: tuple[CitationCheck, ...] = ()
            if self.answerer is not None:
                answer = await self.answerer.answer(case.question, retrieval=self.retrieval)
                evidence = answer.evidence
                if answer.citations:
                    assert self.stored is not None  # __init__ refuses answers without a reader
                    stored = await self.stored.chunks([citation.chunk_id for citation in answer.citations])
                    checks = check_citations(answer.citations, stored)
            else:
                evidence = await self.retriever.retrieve(case.question, self.retrieval)
        except Exception as error:  # any failure is this case's, and the run goes on
            if isinstance(error, GraphRagError):
                code, message = error.code, error.message
            else:
                code, message = ErrorCode.CASE_FAILED.value, f"{type(error).__name__} (no code)"
            return CaseResult(
                id=case.id or str(index + 1),
                question=case.question,
                answerable=case.answerable,
                required_phrases=case.required_phrases,
                expected_documents=case.expected_documents,
                outcome=CaseOutcome.ERROR,
                error_code=code,
                error_message=message,
                seconds=round(time.monotonic() - began, 6),
            )
        result = score_case(case, evidence, answer, checks, k=self.options.k, seconds=time.monotonic() - began)
        dropped = await budget_dropped(self.retriever, case.question, evidence, case.required_phrases, self.retrieval)
        return result.model_copy(update={"id": case.id or str(index + 1), "budget_dropped": dropped})
