"""The report in the terminal: one row per case, the totals, what ran, and a comparison's changes.

Cell text that comes from the cases (ids, reasons) is escaped, so rich markup in a
case file prints as typed. ``-`` marks a metric that does not apply to the case (or
tokens a stand-in did not report); ``x`` before an id marks a failing case.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from graphrag_orm.evaluation.compare import Comparison, MetricDelta
from graphrag_orm.evaluation.values import CaseOutcome, CaseResult, ClientLabel, EvaluationReport, Totals

__all__ = ["outcome_style", "rate", "render_comparison", "render_table", "signed"]

_STYLES = {
    CaseOutcome.ANSWERED: "green",
    CaseOutcome.ABSTAINED: "green",
    CaseOutcome.RETRIEVED: "cyan",
    CaseOutcome.WRONGLY_ANSWERED: "red",
    CaseOutcome.WRONGLY_REFUSED: "yellow",
    CaseOutcome.ERROR: "red",
}


def outcome_style(outcome: CaseOutcome) -> str:
    return _STYLES[outcome]


def rate(value: float | None) -> str:
    """A rate with two decimals, ``-`` when it does not apply."""
    return "-" if value is None else f"{value:.2f}"


def _fraction(flags: tuple[bool, ...]) -> str:
    return f"{sum(flags)}/{len(flags)}" if flags else "-"


def _validity(case: CaseResult) -> str:
    if not case.citations:
        return "-"
    valid = sum(check.status.value == "valid" for check in case.citations)
    style = "green" if valid == len(case.citations) else "red"
    return f"[{style}]{valid}/{len(case.citations)}[/]"


def _tokens(case: CaseResult) -> str:
    return "-" if case.input_tokens is None else f"{case.input_tokens}/{case.output_tokens or 0}"


def _case_row(case: CaseResult) -> list[str]:
    mark = "[red]x[/] " if case.failing else ""
    return [
        mark + escape(case.id),
        f"[{outcome_style(case.outcome)}]{case.outcome.value}[/]",
        _validity(case),
        _fraction(case.phrases_found),
        rate(case.recall_at_k),
        rate(case.reciprocal_rank),
        escape(case.error_code or case.reason or ""),
        _tokens(case),
        f"{case.seconds:.2f} s",
    ]


def _named(label: ClientLabel | None) -> str:
    if label is None:
        return "none"
    return escape(label.label) + (" [yellow](stand-in)[/]" if label.stand_in else "")


def _totals_table(totals: Totals, k: int) -> Table:
    table = Table("metric", "value", title="totals")
    table.add_row("cases", f"{totals.cases} ({totals.failing} failing, {totals.errors} errors)")
    table.add_row(
        "citation validity", f"{rate(totals.citation_validity)} ({totals.valid_citations}/{totals.citations})"
    )
    table.add_row(
        "abstention",
        f"{rate(totals.abstention)} (answered {totals.answered}, abstained {totals.abstained}, "
        f"wrongly refused {totals.wrongly_refused}, wrongly answered {totals.wrongly_answered})",
    )
    table.add_row("coverage", rate(totals.coverage))
    table.add_row(f"recall@{k}", rate(totals.recall_at_k))
    table.add_row(f"MRR@{k}", rate(totals.mrr))
    table.add_row("document recall", rate(totals.document_recall))
    reasons = ", ".join(f"{escape(reason)} {count}" for reason, count in totals.reasons.items()) or "none"
    table.add_row("refusal reasons", reasons)
    unknown = f", {totals.cases_without_tokens} case(s) reported none" if totals.cases_without_tokens else ""
    table.add_row(
        "tokens", f"{totals.input_tokens} in / {totals.output_tokens} out, {totals.chat_calls} chat calls{unknown}"
    )
    table.add_row("time", f"{totals.seconds:.2f} s")
    return table


def render_table(report: EvaluationReport, console: Console, comparison: Comparison | None = None) -> None:
    """Print the cases, the totals and what ran; with ``comparison``, its changes after them."""
    k = report.settings.k
    table = Table(title="cases")
    for name in ("case", "outcome", "validity", "coverage", f"recall@{k}", "RR", "reason", "tokens", "time"):
        table.add_column(name, overflow="fold")
    for case in report.cases:
        table.add_row(*_case_row(case))
    console.print(table)
    console.print(_totals_table(report.totals, k))
    labels = report.labels
    console.print(
        f"[dim]retriever {_named(labels.retriever)}; embedder {_named(labels.embedder)}; "
        f"chat {_named(labels.chat)}; k={k}, {report.settings.concurrency} lane(s); "
        f"started {report.started_at:%Y-%m-%d %H:%M:%S} UTC[/]"
    )
    for limit in report.limits_reached:
        console.print(f"[yellow]limit reached: {limit.name.value} ({limit.value})[/]")
    if comparison is not None:
        render_comparison(comparison, console)


def signed(value: int | float) -> str:
    """A change with its sign: ``+2`` for a count, ``-0.25`` for a rate or seconds."""
    return f"{value:+d}" if isinstance(value, int) else f"{value:+.2f}"


def _signed(delta: MetricDelta) -> str:
    if delta.delta is None:
        return "-"
    if delta.better is None:
        return "0"
    style = "green" if delta.better else "red"
    return f"[{style}]{signed(delta.delta)}[/]"


def _value(value: int | float | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.2f}"


def render_comparison(comparison: Comparison, console: Console) -> None:
    """Print the totals of both runs with their change, then each changed case."""
    baseline_k, current_k = comparison.k
    title = "compared with the baseline" + (f" (k {baseline_k} then {current_k})" if baseline_k != current_k else "")
    table = Table("metric", "baseline", "current", "change", title=title)
    for metric in comparison.metrics:
        table.add_row(metric.name, _value(metric.baseline), _value(metric.current), _signed(metric))
    console.print(table)
    changed = comparison.changed_cases
    if changed:
        cases = Table("case", "outcome", *(m.name for m in changed[0].metrics[:5]), title="changed cases")
        for case in changed:
            outcome = case.current_outcome.value
            if case.baseline_outcome != case.current_outcome:
                outcome = f"{case.baseline_outcome.value} -> {outcome}"
            cases.add_row(escape(case.id), outcome, *(_signed(m) for m in case.metrics[:5]))
        console.print(cases)
    else:
        console.print("[dim]no case changed[/]")
    for side, ids in (("baseline", comparison.only_in_baseline), ("current run", comparison.only_in_current)):
        if ids:
            console.print(f"[dim]only in the {side}: {escape(', '.join(ids))}[/]")
