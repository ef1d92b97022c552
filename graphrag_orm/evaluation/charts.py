"""One chart per metric, drawn with matplotlib as inline SVG (the ``eval`` extra).

Per-case bars for citation validity, answer support (when any case has it), coverage,
recall@k, reciprocal rank, document recall (when any case expects documents), tokens and
time; one bar per outcome for abstention. With a baseline, each bar has the baseline's beside it (cases matched by
id). A case where a metric does not apply has no bar. The SVG keeps its text as text,
holds no date, and each chart's element ids (and the references to them) are prefixed
with its own name, so several charts live in one page without clashing and a report
renders the same twice.
matplotlib is imported only here, and only when a chart is drawn; without it,
:func:`charts` raises ``EvaluationError("missing-extra")`` naming the pip install.
"""

from __future__ import annotations

import importlib.util
import io
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import EvaluationError
from graphrag_orm.evaluation.values import CaseOutcome, CaseResult, EvaluationReport

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["charts", "require_matplotlib"]

_CURRENT: Final = "#2f6db3"
_BASELINE: Final = "#b0b0b0"
_OUTCOMES: Final = (
    CaseOutcome.ANSWERED,
    CaseOutcome.ABSTAINED,
    CaseOutcome.WRONGLY_REFUSED,
    CaseOutcome.WRONGLY_ANSWERED,
    CaseOutcome.FAILED_REFUSAL,
    CaseOutcome.ERROR,
)
_Reader = Callable[[CaseResult], float | None]


def require_matplotlib() -> None:
    """``EvaluationError("missing-extra")`` naming the install when matplotlib is absent."""
    if importlib.util.find_spec("matplotlib") is None:
        raise EvaluationError(
            ErrorCode.MISSING_EXTRA,
            "the HTML report needs the eval extra (matplotlib not installed): pip install 'graphrag-orm[eval]'",
        )


def _tokens(case: CaseResult) -> float | None:
    return None if case.input_tokens is None else float(case.input_tokens + (case.output_tokens or 0))


def _metrics(report: EvaluationReport) -> list[tuple[str, _Reader, bool]]:
    """Title, reader and whether the value is a rate (0 to 1)."""
    k = report.settings.k
    metrics: list[tuple[str, _Reader, bool]] = [
        ("citation validity", lambda c: c.citation_validity, True),
        ("coverage", lambda c: c.coverage, True),
        (f"recall@{k}", lambda c: c.recall_at_k, True),
        ("reciprocal rank", lambda c: c.reciprocal_rank, True),
    ]
    if any(case.supported is not None for case in report.cases):
        metrics.insert(1, ("answer support", lambda c: None if c.supported is None else float(c.supported), True))
    if any(case.expected_documents for case in report.cases):
        metrics.append(("document recall", lambda c: c.document_recall, True))
    if any(case.input_tokens is not None for case in report.cases):
        metrics.append(("tokens (in + out)", _tokens, False))
    metrics.append(("time (seconds)", lambda c: c.seconds, False))
    return metrics


def _svg(draw: Callable[[Axes], None], salt: str, width: float) -> str:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 10}):
        figure = Figure(figsize=(width, 2.6), layout="constrained")
        draw(figure.add_subplot())
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    text = text[text.index("<svg") :]
    # Ids unique in the page: each chart's own prefix on every id and every reference to one.
    for before in ('id="', "url(#", 'href="#'):
        text = text.replace(before, f"{before}{salt}-")
    return text


def _bars(
    axes: Axes, ids: Sequence[str], current: Sequence[float], baseline: Sequence[float] | None, rate: bool
) -> None:
    positions = range(len(ids))
    width = 0.4 if baseline is not None else 0.7
    if baseline is not None:
        axes.bar([p - width / 2 for p in positions], baseline, width, color=_BASELINE, label="baseline")
        axes.bar([p + width / 2 for p in positions], current, width, color=_CURRENT, label="current")
        axes.legend(loc="upper right", fontsize=7, frameon=False)
    else:
        axes.bar(list(positions), current, width, color=_CURRENT)
    axes.set_xticks(list(positions), list(ids) if len(ids) <= 40 else [""] * len(ids), rotation=90)
    if rate:
        axes.set_ylim(0, 1.05)
    axes.spines[["top", "right"]].set_visible(False)


def _value(case: CaseResult | None, read: _Reader) -> float:
    value = read(case) if case is not None else None
    return math.nan if value is None else value


def charts(report: EvaluationReport, baseline: EvaluationReport | None = None) -> list[tuple[str, str]]:
    """``(title, svg)`` for each chart of the module, in order."""
    require_matplotlib()
    ids = [case.id for case in report.cases]
    before = {case.id: case for case in baseline.cases} if baseline is not None else {}
    width = max(4.5, min(12.0, 2.5 + 0.2 * len(ids)))
    drawn: list[tuple[str, str]] = []
    for number, (title, read, is_rate) in enumerate(_metrics(report)):
        current = [_value(case, read) for case in report.cases]
        old = [_value(before.get(case.id), read) for case in report.cases] if baseline is not None else None

        def draw(
            axes: Axes, current: list[float] = current, old: list[float] | None = old, rate: bool = is_rate
        ) -> None:
            _bars(axes, ids, current, old, rate)

        drawn.append((title, _svg(draw, f"chart-{number}", width)))
    labels = [outcome.value.replace("-", "\n") for outcome in _OUTCOMES]
    counts = [float(sum(case.outcome is outcome for case in report.cases)) for outcome in _OUTCOMES]
    old_counts = (
        [float(sum(case.outcome is outcome for case in baseline.cases)) for outcome in _OUTCOMES] if baseline else None
    )

    def outcomes(axes: Axes) -> None:
        _bars(axes, labels, counts, old_counts, False)
        axes.tick_params(axis="x", rotation=0)

    drawn.insert(0, ("abstention (cases per outcome)", _svg(outcomes, "chart-outcomes", 5.5)))
    return drawn
