"""The report in the terminal: one row per case, the totals, what ran, and a comparison's changes.

Cell text that comes from the cases (ids, reasons) is escaped, so rich markup in a
case file prints as typed. ``-`` marks a metric that does not apply to the case (or
tokens a stand-in did not report); ``x`` before an id marks a failing case. Cases that
failed with an error are listed after the table with their message and code.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from graphrag_orm.evaluation.compare import QUALITY_METRICS, Comparison, MetricDelta
from graphrag_orm.evaluation.values import CaseOutcome, CaseResult, ClientLabel, EvaluationReport, Totals

__all__ = ["outcome_style", "rate", "render_comparison", "render_table", "signed", "totals_rows"]

_STYLES = {
    CaseOutcome.ANSWERED: "green",
    CaseOutcome.ABSTAINED: "green",
    CaseOutcome.RETRIEVED: "cyan",
    CaseOutcome.WRONGLY_ANSWERED: "red",
    CaseOutcome.WRONGLY_REFUSED: "yellow",
    CaseOutcome.FAILED_REFUSAL: "red",
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
        {None: "-", True: "[green]yes[/]", False: "[red]no[/]"}[case.supported],
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


def totals_rows(totals: Totals, k: int) -> list[tuple[str, str]]:
    """The totals as (metric, value) lines of plain text, for the table and the HTML page alike."""
    t = totals
    unknown = f", {t.cases_without_tokens} case(s) reported none" if t.cases_without_tokens else ""
    return [
        ("cases", f"{t.cases} ({t.failing} failing, {t.errors} errors)"),
        ("citation validity", f"{rate(t.citation_validity)} ({t.valid_citations}/{t.citations} citations)"),
        ("answer support", f"{rate(t.answer_support)} ({t.supported}/{t.support_judged} answers)"),
        (
            "abstention",
            f"{rate(t.abstention)} (answered {t.answered}, abstained {t.abstained}, "
            f"wrongly refused {t.wrongly_refused}, wrongly answered {t.wrongly_answered}, "
            f"failed refusals {t.failed_refusals})",
        ),
        ("coverage", rate(t.coverage)),
        (f"recall@{k}", rate(t.recall_at_k)),
        (f"MRR@{k}", rate(t.mrr)),
        ("document recall", rate(t.document_recall)),
        ("refusal reasons", ", ".join(f"{reason} {count}" for reason, count in t.reasons.items()) or "none"),
        ("tokens", f"{t.input_tokens} in / {t.output_tokens} out, {t.chat_calls} chat calls{unknown}"),
        ("time", f"{t.seconds:.2f} s"),
    ]


def _totals_table(totals: Totals, k: int) -> Table:
    table = Table("metric", "value", title="totals")
    for name, value in totals_rows(totals, k):
        table.add_row(name, escape(value))
    return table


def _failed_cases(report: EvaluationReport, console: Console) -> None:
    for case in report.cases:
        if case.outcome is CaseOutcome.ERROR:
            why = f"{case.error_message} " if case.error_message else ""
            console.print(f"[red]failed[/] {escape(case.id)}: {escape(why)}({escape(case.error_code or '')})")


def render_table(report: EvaluationReport, console: Console, comparison: Comparison | None = None) -> None:
    """Print the cases, the totals and what ran; with ``comparison``, its changes after them."""
    k = report.settings.k
    table = Table(title="cases")
    for name in ("case", "outcome", "validity", "support", "coverage", f"recall@{k}", "RR", "reason", "tokens", "time"):
        table.add_column(name, overflow="fold")
    for case in report.cases:
        table.add_row(*_case_row(case))
    console.print(table)
    _failed_cases(report, console)
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
        cases = Table("case", "outcome", *(m.name for m in changed[0].metrics[:QUALITY_METRICS]), title="changed cases")
        for case in changed:
            outcome = case.current_outcome.value
            if case.baseline_outcome != case.current_outcome:
                outcome = f"{case.baseline_outcome.value} -> {outcome}"
            cases.add_row(escape(case.id), outcome, *(_signed(m) for m in case.metrics[:QUALITY_METRICS]))
        console.print(cases)
    else:
        console.print("[dim]no case changed[/]")
    for side, ids in (("baseline", comparison.only_in_baseline), ("current run", comparison.only_in_current)):
        if ids:
            console.print(f"[dim]only in the {side}: {escape(', '.join(ids))}[/]")
