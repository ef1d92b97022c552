"""Evaluating questions about the whole corpus: global cases run through ``GlobalAnswers``, scored without a model.

A global case is an ordinary evaluation case (:class:`~graphrag_orm.evaluation.cases.EvalCase`,
the same JSONL file): a question, whether the corpus answers it, the phrases an answer must
cite (from several documents) and the documents it must cite. ``GlobalEvaluator(rag).run(cases)``
asks each question once through ``rag.global_answers`` (the chat model's map and reduce when
the application has one, else the offline word overlap), reads every citation's stored bytes
back (:class:`~graphrag_orm.evaluation.stored.StoredChunks`) and scores the case:

- **phrase coverage**: the share of the required phrases held by at least one *valid* cited
  quote (found as :func:`graphrag_orm.evaluation.metrics.holds` finds them). A global answer
  is judged on what it cites, since its sentences are the model's own words. An answerable
  case that was refused covers nothing (0); ``None`` without phrases or for an unanswerable case.
- **document coverage**: the share of the expected documents (id or source URI) that a valid
  citation comes from; the same rules.
- **citation validity**: the share of citations whose quote is the stored bytes at its span.
- **abstention**: the five outcomes of :func:`~graphrag_orm.evaluation.metrics.outcome_of`;
  a refusal abstains when its reason is ``no-relevant-finding`` or ``model-declined``
  (:data:`GLOBAL_ABSTAINING_REASONS`); ``no-reports``, ``citation-not-found``,
  ``unreadable-reply`` and ``no-verified-claim`` are failed refusals.

A case whose answer raises (a failed model call) is reported with outcome ``error`` and its
code, and the run goes on, until ``max_consecutive_failures`` (1 to 1,000, default 5, as the
document cases' runner) errors in a row stop it (``ConsecutiveFailures``; the cases not run are
not in the report). At most ``max_cases`` run (``MaxCases`` past it). Nothing is written.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from pydantic import Field

from graphrag_orm.codes import ErrorCode, GlobalRefusal, LimitName
from graphrag_orm.errors import ConfigurationError, GraphRagError
from graphrag_orm.evaluation.cases import EvalCase
from graphrag_orm.evaluation.metrics import holds, outcome_of
from graphrag_orm.evaluation.runner import (
    DEFAULT_MAX_CASES,
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
    MAX_CASES,
    MAX_CONSECUTIVE_FAILURES,
)
from graphrag_orm.evaluation.stored import StoredChunks, check_citations
from graphrag_orm.evaluation.values import CaseOutcome, CitationCheck, CitationStatus
from graphrag_orm.tracing import SpanName, span
from graphrag_orm.values import Limit, Value

if TYPE_CHECKING:
    from graphrag_orm.communities import GlobalAnswers
    from graphrag_orm.facade import GraphRag

__all__ = [
    "GLOBAL_ABSTAINING_REASONS",
    "GlobalCaseResult",
    "GlobalEvaluationReport",
    "GlobalEvaluator",
    "GlobalTotals",
]

#: The refusals that are the right answer to a question the corpus does not answer.
GLOBAL_ABSTAINING_REASONS: Final = frozenset({GlobalRefusal.NO_RELEVANT_FINDING, GlobalRefusal.MODEL_DECLINED})


class GlobalCaseResult(Value):
    """One global case: its outcome, what its answer cited and covered, and what it cost."""

    id: str
    question: str
    answerable: bool
    outcome: CaseOutcome
    reason: str | None = None
    answer: str | None = None
    phrase_coverage: float | None = None
    phrases_missing: tuple[str, ...] = ()
    document_coverage: float | None = None
    documents_missing: tuple[str, ...] = ()
    citations: tuple[CitationCheck, ...] = ()
    citation_validity: float | None = None
    findings_dropped: int = 0
    findings_invented: int = 0
    chat_calls: int = 0
    limits_reached: tuple[Limit, ...] = ()
    error_code: str | None = None
    error_message: str | None = None
    seconds: float = 0.0


class GlobalTotals(Value):
    """The run's totals: outcomes, abstention, mean coverages (over the cases they apply to), pooled validity."""

    cases: int = 0
    errors: int = 0
    answered: int = 0
    wrongly_refused: int = 0
    abstained: int = 0
    wrongly_answered: int = 0
    failed_refusals: int = 0
    abstention: float | None = None
    phrase_coverage: float | None = None
    document_coverage: float | None = None
    citations: int = 0
    valid_citations: int = 0
    citation_validity: float | None = None
    reasons: dict[str, int] = Field(default_factory=dict)
    chat_calls: int = 0
    seconds: float = 0.0


class GlobalEvaluationReport(Value):
    """A run over global cases: who answered (``writer``), each case, the totals, the limits reached."""

    started_at: datetime
    seconds: float
    writer: str
    cases: tuple[GlobalCaseResult, ...]
    totals: GlobalTotals
    limits_reached: tuple[Limit, ...] = ()


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


class GlobalEvaluator:
    """Runs global cases through a ``GlobalAnswers`` and reads the citations back through ``StoredChunks``."""

    def __init__(
        self,
        rag: GraphRag | None = None,
        *,
        corpus: GlobalAnswers | None = None,
        stored: StoredChunks | None = None,
        max_cases: int = DEFAULT_MAX_CASES,
        max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    ) -> None:
        if rag is not None:
            corpus = corpus or rag.global_answers
            stored = stored or StoredChunks(rag.store, rag.model)
        if corpus is None or stored is None:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, "GlobalEvaluator: give a GraphRag with an ontology, or corpus= and stored="
            )
        if isinstance(max_cases, bool) or not 1 <= max_cases <= MAX_CASES:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"max_cases must be 1 to {MAX_CASES:,}")
        failures = max_consecutive_failures
        if isinstance(failures, bool) or not isinstance(failures, int) or not 1 <= failures <= MAX_CONSECUTIVE_FAILURES:
            raise ConfigurationError(
                ErrorCode.INVALID_OPTION, f"max_consecutive_failures must be 1 to {MAX_CONSECUTIVE_FAILURES:,}"
            )
        self.corpus = corpus
        self.stored = stored
        self.max_cases = max_cases
        self.max_consecutive_failures = failures

    async def run(
        self, cases: Sequence[EvalCase], *, on_case: Callable[[GlobalCaseResult], None] | None = None
    ) -> GlobalEvaluationReport:
        """The cases in order (``on_case`` is called after each, for progress), then the totals."""
        began, started_at = time.monotonic(), datetime.now(UTC)
        selected = list(cases[: self.max_cases])
        limits = [Limit(name=LimitName.MAX_CASES, value=self.max_cases)] if len(cases) > len(selected) else []
        results: list[GlobalCaseResult] = []
        failures = 0
        with span(SpanName.EVALUATE, cases=len(selected)):
            for index, case in enumerate(selected):
                result = await self._case(case, index)
                results.append(result)
                if on_case is not None:
                    on_case(result)
                failures = failures + 1 if result.outcome is CaseOutcome.ERROR else 0
                if failures >= self.max_consecutive_failures and index + 1 < len(selected):
                    limits.append(Limit(name=LimitName.CONSECUTIVE_FAILURES, value=self.max_consecutive_failures))
                    break
        seconds = round(time.monotonic() - began, 6)
        chat = self.corpus.chat
        writer = (
            str(getattr(chat, "model", None) or type(chat).__name__) if chat is not None else "offline-word-overlap"
        )
        return GlobalEvaluationReport(
            started_at=started_at,
            seconds=seconds,
            writer=writer,
            cases=tuple(results),
            totals=_totals(results, seconds),
            limits_reached=tuple(limits),
        )

    async def _case(self, case: EvalCase, index: int) -> GlobalCaseResult:
        began = time.monotonic()
        case_id = case.id or str(index + 1)
        try:
            answer = await self.corpus.answer(case.question)
            checks: tuple[CitationCheck, ...] = ()
            uris: Mapping[str, str] = {}
            if answer.citations:
                stored = await self.stored.chunks([citation.chunk_id for citation in answer.citations])
                checks = check_citations(answer.citations, stored)
                uris = await self.stored.document_uris([citation.document_id for citation in answer.citations])
        except Exception as error:  # any failure is this case's, and the run goes on
            code, message = (
                (error.code, error.message)
                if isinstance(error, GraphRagError)
                else (ErrorCode.CASE_FAILED.value, f"{type(error).__name__} (no code)")
            )
            return GlobalCaseResult(
                id=case_id,
                question=case.question,
                answerable=case.answerable,
                outcome=CaseOutcome.ERROR,
                error_code=code,
                error_message=message,
                seconds=round(time.monotonic() - began, 6),
            )
        valid = [check for check in checks if check.status is CitationStatus.VALID]
        answered = answer.refused is None
        reason = answer.refused.value if answer.refused is not None else None
        if answered or case.answerable:
            outcome = outcome_of(case.answerable, answered)
        elif answer.refused in GLOBAL_ABSTAINING_REASONS:
            outcome = CaseOutcome.ABSTAINED
        else:
            outcome = CaseOutcome.FAILED_REFUSAL
        phrases_missing = tuple(p for p in case.required_phrases if not any(holds(c.quote, p) for c in valid))
        cited = {check.document_id for check in valid} | {uris[c.document_id] for c in valid if c.document_id in uris}
        documents_missing = tuple(d for d in case.expected_documents if d not in cited)
        scored = case.answerable
        return GlobalCaseResult(
            id=case_id,
            question=case.question,
            answerable=case.answerable,
            outcome=outcome,
            reason=reason,
            answer=answer.answer,
            phrase_coverage=(
                1 - len(phrases_missing) / len(case.required_phrases) if scored and case.required_phrases else None
            ),
            phrases_missing=phrases_missing,
            document_coverage=(
                1 - len(documents_missing) / len(case.expected_documents)
                if scored and case.expected_documents
                else None
            ),
            documents_missing=documents_missing,
            citations=checks,
            citation_validity=len(valid) / len(checks) if checks else None,
            findings_dropped=answer.findings_dropped,
            findings_invented=answer.findings_invented,
            chat_calls=answer.calls,
            limits_reached=answer.limits_reached,
            seconds=round(time.monotonic() - began, 6),
        )


def _totals(results: Sequence[GlobalCaseResult], seconds: float) -> GlobalTotals:
    scored = [result for result in results if result.outcome is not CaseOutcome.ERROR]
    outcomes = Counter(result.outcome for result in results)
    citations = sum(len(result.citations) for result in scored)
    valid = sum(check.status is CitationStatus.VALID for result in scored for check in result.citations)
    correct = {CaseOutcome.ANSWERED, CaseOutcome.ABSTAINED}
    return GlobalTotals(
        cases=len(results),
        errors=outcomes[CaseOutcome.ERROR],
        answered=outcomes[CaseOutcome.ANSWERED],
        wrongly_refused=outcomes[CaseOutcome.WRONGLY_REFUSED],
        abstained=outcomes[CaseOutcome.ABSTAINED],
        wrongly_answered=outcomes[CaseOutcome.WRONGLY_ANSWERED],
        failed_refusals=outcomes[CaseOutcome.FAILED_REFUSAL],
        abstention=_share([result.outcome in correct for result in scored]),
        phrase_coverage=_mean([result.phrase_coverage for result in scored]),
        document_coverage=_mean([result.document_coverage for result in scored]),
        citations=citations,
        valid_citations=valid,
        citation_validity=valid / citations if citations else None,
        reasons=dict(sorted(Counter(result.reason for result in scored if result.reason).items())),
        chat_calls=sum(result.chat_calls for result in scored),
        seconds=seconds,
    )
