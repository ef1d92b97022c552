"""The difference between two evaluation runs, per metric and per case.

``compare_reports(current, baseline)`` matches cases by id (cases only in one run are
listed apart) and gives, for each total and each case metric, both values and
``delta = current - baseline`` (``None`` when either is ``None``). ``better`` says
whether the change is an improvement: up for the rates, down for failures, errors,
tokens and time; ``None`` when nothing changed. A case ``changed`` when its outcome or
any of its quality metrics (validity, coverage, recall@k, reciprocal rank, document
recall) differs; tokens and time alone do not make a change. Runs with different k
compare, and ``Comparison.k`` shows both.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import EvaluationError
from graphrag_orm.evaluation.values import (
    READABLE_FORMATS,
    REPORT_FORMAT,
    CaseOutcome,
    CaseResult,
    EvaluationReport,
    Totals,
)
from graphrag_orm.values import Value

__all__ = [
    "CASE_METRICS",
    "QUALITY_METRICS",
    "TOTAL_METRICS",
    "CaseDelta",
    "Comparison",
    "MetricDelta",
    "compare_reports",
    "load_report",
]

_Number = float | int | None

#: Totals compared: name, how to read it, and whether higher is better.
TOTAL_METRICS: Final[tuple[tuple[str, Callable[[Totals], _Number], bool], ...]] = (
    ("citation validity", lambda t: t.citation_validity, True),
    ("answer support", lambda t: t.answer_support, True),
    ("abstention", lambda t: t.abstention, True),
    ("coverage", lambda t: t.coverage, True),
    ("recall@k", lambda t: t.recall_at_k, True),
    ("MRR", lambda t: t.mrr, True),
    ("document recall", lambda t: t.document_recall, True),
    ("failing cases", lambda t: t.failing, False),
    ("wrongly answered", lambda t: t.wrongly_answered, False),
    ("wrongly refused", lambda t: t.wrongly_refused, False),
    ("failed refusals", lambda t: t.failed_refusals, False),
    ("errors", lambda t: t.errors, False),
    ("input tokens", lambda t: t.input_tokens, False),
    ("output tokens", lambda t: t.output_tokens, False),
    ("seconds", lambda t: t.seconds, False),
)

#: Case metrics compared; the first six are the quality metrics that make a case ``changed``.
CASE_METRICS: Final[tuple[tuple[str, Callable[[CaseResult], _Number], bool], ...]] = (
    ("citation validity", lambda c: c.citation_validity, True),
    ("answer support", lambda c: None if c.supported is None else float(c.supported), True),
    ("coverage", lambda c: c.coverage, True),
    ("recall@k", lambda c: c.recall_at_k, True),
    ("reciprocal rank", lambda c: c.reciprocal_rank, True),
    ("document recall", lambda c: c.document_recall, True),
    ("tokens", lambda c: None if c.input_tokens is None else c.input_tokens + (c.output_tokens or 0), False),
    ("seconds", lambda c: c.seconds, False),
)
QUALITY_METRICS: Final = 6
"""How many of :data:`CASE_METRICS`, the first, make a case ``changed``."""


class MetricDelta(Value):
    """One metric in both runs, the change, and whether it is for the better."""

    name: str
    #: Rates and seconds are floats, counts ints.
    baseline: int | float | None = None
    current: int | float | None = None
    delta: int | float | None = None
    better: bool | None = None


class CaseDelta(Value):
    """One case (by id) in both runs."""

    id: str
    baseline_outcome: CaseOutcome
    current_outcome: CaseOutcome
    metrics: tuple[MetricDelta, ...]
    changed: bool


class Comparison(Value):
    """Two runs side by side: totals, the cases of both, and the cases of only one."""

    k: tuple[int, int]
    metrics: tuple[MetricDelta, ...]
    cases: tuple[CaseDelta, ...]
    only_in_baseline: tuple[str, ...] = ()
    only_in_current: tuple[str, ...] = ()

    @property
    def changed_cases(self) -> tuple[CaseDelta, ...]:
        return tuple(case for case in self.cases if case.changed)


def _delta(name: str, baseline: _Number, current: _Number, higher_is_better: bool) -> MetricDelta:
    if baseline is None or current is None:
        return MetricDelta(name=name, baseline=baseline, current=current)
    delta = (
        current - baseline if isinstance(current, int) and isinstance(baseline, int) else round(current - baseline, 9)
    )
    better = None if delta == 0 else (delta > 0) == higher_is_better
    return MetricDelta(name=name, baseline=baseline, current=current, delta=delta, better=better)


def compare_reports(current: EvaluationReport, baseline: EvaluationReport) -> Comparison:
    """``current`` against ``baseline`` under the module's rules."""
    before = {case.id: case for case in baseline.cases}
    now = {case.id: case for case in current.cases}
    cases: list[CaseDelta] = []
    for case in current.cases:
        old = before.get(case.id)
        if old is None:
            continue
        metrics = tuple(_delta(name, read(old), read(case), up) for name, read, up in CASE_METRICS)
        changed = old.outcome != case.outcome or any(m.baseline != m.current for m in metrics[:QUALITY_METRICS])
        cases.append(
            CaseDelta(
                id=case.id,
                baseline_outcome=old.outcome,
                current_outcome=case.outcome,
                metrics=metrics,
                changed=changed,
            )
        )
    return Comparison(
        k=(baseline.settings.k, current.settings.k),
        metrics=tuple(
            _delta(name, read(baseline.totals), read(current.totals), up) for name, read, up in TOTAL_METRICS
        ),
        cases=tuple(cases),
        only_in_baseline=tuple(case.id for case in baseline.cases if case.id not in now),
        only_in_current=tuple(case.id for case in current.cases if case.id not in before),
    )


def load_report(path: Path | str) -> EvaluationReport:
    """An evaluation report read from JSON (``--json`` output); ``invalid-report`` when it is not one.

    A report of an older readable format (:data:`READABLE_FORMATS`) reads with what it lacks
    as ``None`` or 0: no answer support, no failed refusals (its ``abstained`` cases are as
    that format counted them).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvaluationError(ErrorCode.INVALID_REPORT, f"cannot read the report: {type(error).__name__}") from None
    try:
        report = EvaluationReport.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])[:80] or "the file"
        raise EvaluationError(ErrorCode.INVALID_REPORT, f"not an evaluation report ({where}: {first['msg']})") from None
    if report.format not in READABLE_FORMATS:
        raise EvaluationError(ErrorCode.INVALID_REPORT, f"a report of another format, not {REPORT_FORMAT}")
    return report
