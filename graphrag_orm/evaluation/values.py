"""What an evaluation reports: per case, in total, and what ran.

Every value is frozen and round-trips through JSON (camelCase, enum values):
``EvaluationReport.model_validate_json(report.model_dump_json(by_alias=True)) == report``.
The metrics are defined in :mod:`graphrag_orm.evaluation.metrics`; a metric that does
not apply to a case (a case without phrases has no coverage) is ``None``, never 0.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Final

from pydantic import Field

from graphrag_orm.codes import RefusalReason
from graphrag_orm.values import Limit, Value

__all__ = [
    "ABSTAINING_REASONS",
    "READABLE_FORMATS",
    "REPORT_FORMAT",
    "CaseOutcome",
    "CaseResult",
    "CitationCheck",
    "CitationStatus",
    "ClientLabel",
    "EvaluatedItem",
    "EvaluationReport",
    "EvaluationSettings",
    "RunLabels",
    "Totals",
]

REPORT_FORMAT: Final = "graphrag-orm-evaluation/2"
#: Formats :func:`~graphrag_orm.evaluation.compare.load_report` reads: the first has no answer
#: support, no failed refusals and no error messages (read as ``None`` and 0).
READABLE_FORMATS: Final = ("graphrag-orm-evaluation/1", REPORT_FORMAT)


class CaseOutcome(StrEnum):
    """The five outcomes of abstention, or why a case has none."""

    #: Answerable, and answered with checked citations.
    ANSWERED = "answered"
    #: Answerable, but refused.
    WRONGLY_REFUSED = "wrongly-refused"
    #: Not answerable, and refused for a reason of :data:`ABSTAINING_REASONS`: the right abstention.
    ABSTAINED = "abstained"
    #: Not answerable, and refused, but because an answer failed a check (a citation not
    #: found, no citation, an unreadable reply): not an abstention, so not correct.
    FAILED_REFUSAL = "failed-refusal"
    #: Not answerable, but answered.
    WRONGLY_ANSWERED = "wrongly-answered"
    #: Retrieval only (no answerer): abstention not measured.
    RETRIEVED = "retrieved"
    #: The case raised a coded error (``error_code``); no metric of it counts.
    ERROR = "error"


#: Refusal reasons that are abstentions: the model declined, or retrieval found nothing.
ABSTAINING_REASONS: Final = frozenset({RefusalReason.MODEL_DECLINED.value, RefusalReason.NO_EVIDENCE.value})


class CitationStatus(StrEnum):
    """What the stored-bytes check found for one citation."""

    #: The stored text at the span is the quote, byte for byte.
    VALID = "valid"
    #: No stored chunk has the citation's chunk id.
    CHUNK_MISSING = "chunk-missing"
    #: The span is not inside the stored chunk's span.
    OUTSIDE_CHUNK = "outside-chunk"
    #: The stored bytes at the span differ from the quote (or cut a code point).
    QUOTE_DIFFERS = "quote-differs"


class CitationCheck(Value):
    """One citation of an answer and what the stored bytes at its span say."""

    chunk_id: str
    document_id: str
    start_byte: int = Field(ge=0)
    end_byte: int = Field(ge=0)
    quote: str
    status: CitationStatus


class EvaluatedItem(Value):
    """One retrieved item as the report shows it: rank, where it is, and which phrases it holds."""

    rank: int = Field(ge=1)
    chunk_id: str
    document_id: str
    source_uri: str
    title: str | None = None
    start_byte: int = Field(ge=0)
    end_byte: int = Field(ge=0)
    #: Indexes (0-based) into the case's ``required_phrases`` of the phrases this item holds.
    phrases: tuple[int, ...] = ()


class CaseResult(Value):
    """Every metric of one case, the evidence it stood on, and what it cost."""

    id: str
    question: str
    answerable: bool
    required_phrases: tuple[str, ...] = ()
    expected_documents: tuple[str, ...] = ()
    outcome: CaseOutcome
    error_code: str | None = None
    #: One line on the error: a coded error's message, else the exception's type only.
    error_message: str | None = None
    reason: str | None = None
    answer: str | None = None
    citations: tuple[CitationCheck, ...] = ()
    citation_validity: float | None = Field(default=None, ge=0.0, le=1.0)
    #: An answered case with required phrases: whether a valid cited quote holds one of them.
    supported: bool | None = None
    phrases_found: tuple[bool, ...] = ()
    coverage: float | None = Field(default=None, ge=0.0, le=1.0)
    first_hit: int | None = Field(default=None, ge=1)
    recall_at_k: float | None = Field(default=None, ge=0.0, le=1.0)
    reciprocal_rank: float | None = Field(default=None, ge=0.0, le=1.0)
    documents_found: tuple[bool, ...] = ()
    document_recall: float | None = Field(default=None, ge=0.0, le=1.0)
    items: tuple[EvaluatedItem, ...] = ()
    limits_reached: tuple[Limit, ...] = ()
    #: Indexes of required phrases the byte budget, not the ranking, left out (:mod:`~graphrag_orm.evaluation.budget`).
    budget_dropped: tuple[int, ...] = ()
    chat_calls: int = Field(default=0, ge=0)
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    retrieval_seconds: float = Field(default=0.0, ge=0.0)
    answer_seconds: float = Field(default=0.0, ge=0.0)
    seconds: float = Field(default=0.0, ge=0.0)

    @property
    def abstention_correct(self) -> bool | None:
        """Whether the case was answered or refused as its label says; ``None`` without an outcome."""
        if self.outcome in (CaseOutcome.ANSWERED, CaseOutcome.ABSTAINED):
            return True
        if self.outcome in (CaseOutcome.WRONGLY_ANSWERED, CaseOutcome.WRONGLY_REFUSED, CaseOutcome.FAILED_REFUSAL):
            return False
        return None

    @property
    def failing(self) -> bool:
        """An error, a wrong outcome, an unsupported answer, an invalid citation, a phrase or expected
        document not retrieved, or no phrase in the first k items. A lower reciprocal rank alone is not a failure."""
        return (
            self.outcome is CaseOutcome.ERROR
            or self.abstention_correct is False
            or self.supported is False
            or any(value is not None and value < 1.0 for value in self.failing_metrics)
        )

    @property
    def failing_metrics(self) -> tuple[float | None, ...]:
        return (self.citation_validity, self.coverage, self.recall_at_k, self.document_recall)


class Totals(Value):
    """The run's totals; each rate is ``None`` when no case contributes to it."""

    cases: int = Field(ge=0)
    errors: int = Field(ge=0)
    failing: int = Field(ge=0)
    answered: int = Field(ge=0)
    wrongly_refused: int = Field(ge=0)
    abstained: int = Field(ge=0)
    wrongly_answered: int = Field(ge=0)
    failed_refusals: int = Field(default=0, ge=0)
    abstention: float | None = Field(default=None, ge=0.0, le=1.0)
    citations: int = Field(ge=0)
    valid_citations: int = Field(ge=0)
    citation_validity: float | None = Field(default=None, ge=0.0, le=1.0)
    #: Answered cases with required phrases, and those of them whose cited quotes hold one.
    support_judged: int = Field(default=0, ge=0)
    supported: int = Field(default=0, ge=0)
    answer_support: float | None = Field(default=None, ge=0.0, le=1.0)
    coverage: float | None = Field(default=None, ge=0.0, le=1.0)
    recall_at_k: float | None = Field(default=None, ge=0.0, le=1.0)
    mrr: float | None = Field(default=None, ge=0.0, le=1.0)
    document_recall: float | None = Field(default=None, ge=0.0, le=1.0)
    #: Refusal reasons and how many cases each refused, by reason.
    reasons: dict[str, int] = Field(default_factory=dict)
    chat_calls: int = Field(ge=0)
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    #: Cases that made chat calls whose tokens were not reported (stand-ins report none).
    cases_without_tokens: int = Field(ge=0)
    seconds: float = Field(ge=0.0)


class ClientLabel(Value):
    """How a client is named to a reader, and whether it is a stand-in rather than a model."""

    label: str
    stand_in: bool


class RunLabels(Value):
    """What ran: the retriever, the embedder and the chat client (``None`` when not used)."""

    retriever: ClientLabel
    embedder: ClientLabel | None = None
    chat: ClientLabel | None = None
    embedding_set: str | None = None


class EvaluationSettings(Value):
    """The settings of the run: k, lanes, the case bound and the retrieval's routes and budget."""

    k: int = Field(ge=1)
    concurrency: int = Field(ge=1)
    max_cases: int = Field(ge=1)
    routes: tuple[str, ...] = ()
    max_utf8_bytes: int | None = None


class EvaluationReport(Value):
    """One evaluation run: what ran, when, every case in file order, and the totals."""

    format: str = REPORT_FORMAT
    started_at: datetime
    seconds: float = Field(ge=0.0)
    labels: RunLabels
    settings: EvaluationSettings
    cases: tuple[CaseResult, ...]
    totals: Totals
    limits_reached: tuple[Limit, ...] = ()
