"""A global evaluation in the terminal: one row per case, the totals, who answered, the limits reached.

The counterpart of :mod:`graphrag_orm.evaluation.table` for
:class:`~graphrag_orm.evaluation.global_cases.GlobalEvaluationReport`: the same marks (``-`` for a
figure that does not apply, ``x`` before a failing case's id, case text escaped) and the same
colours per outcome. Failed cases are listed after the table with their message and code.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from graphrag_orm.evaluation.global_cases import GlobalCaseResult, GlobalEvaluationReport, GlobalTotals
from graphrag_orm.evaluation.table import outcome_style, rate
from graphrag_orm.evaluation.values import CaseOutcome, CitationStatus

__all__ = ["global_totals_rows", "render_global_table"]

#: The outcomes that are the right one for their case.
_RIGHT = frozenset({CaseOutcome.ANSWERED, CaseOutcome.ABSTAINED})


def _validity(case: GlobalCaseResult) -> str:
    if not case.citations:
        return "-"
    valid = sum(check.status is CitationStatus.VALID for check in case.citations)
    style = "green" if valid == len(case.citations) else "red"
    return f"[{style}]{valid}/{len(case.citations)}[/]"


def _case_row(case: GlobalCaseResult) -> list[str]:
    mark = "" if case.outcome in _RIGHT else "[red]x[/] "
    return [
        mark + escape(case.id),
        f"[{outcome_style(case.outcome)}]{case.outcome.value}[/]",
        _validity(case),
        rate(case.phrase_coverage),
        rate(case.document_coverage),
        escape(case.error_code or case.reason or ""),
        str(case.chat_calls),
        f"{case.seconds:.2f} s",
    ]


def global_totals_rows(totals: GlobalTotals) -> list[tuple[str, str]]:
    """The totals as (metric, value) lines of plain text."""
    t = totals
    return [
        ("cases", f"{t.cases} ({t.errors} errors)"),
        ("citation validity", f"{rate(t.citation_validity)} ({t.valid_citations}/{t.citations} citations)"),
        (
            "abstention",
            f"{rate(t.abstention)} (answered {t.answered}, abstained {t.abstained}, "
            f"wrongly refused {t.wrongly_refused}, wrongly answered {t.wrongly_answered}, "
            f"failed refusals {t.failed_refusals})",
        ),
        ("phrase coverage", rate(t.phrase_coverage)),
        ("document coverage", rate(t.document_coverage)),
        ("refusal reasons", ", ".join(f"{reason} {count}" for reason, count in t.reasons.items()) or "none"),
        ("chat calls", str(t.chat_calls)),
        ("time", f"{t.seconds:.2f} s"),
    ]


def render_global_table(report: GlobalEvaluationReport, console: Console) -> None:
    """Print the cases, the failed cases' messages, the totals and who answered."""
    table = Table(title="global cases")
    for name in ("case", "outcome", "validity", "phrases", "documents", "reason", "calls", "time"):
        table.add_column(name, overflow="fold")
    for case in report.cases:
        table.add_row(*_case_row(case))
    console.print(table)
    for case in report.cases:
        if case.outcome is CaseOutcome.ERROR:
            why = f"{case.error_message} " if case.error_message else ""
            console.print(f"[red]failed[/] {escape(case.id)}: {escape(why)}({escape(case.error_code or '')})")
    totals = Table("metric", "value", title="totals")
    for name, value in global_totals_rows(report.totals):
        totals.add_row(name, escape(value))
    console.print(totals)
    console.print(
        f"[dim]answered by {escape(report.writer)}; started {report.started_at:%Y-%m-%d %H:%M:%S} UTC[/]",
        soft_wrap=True,
    )
    for limit in report.limits_reached:
        console.print(f"[yellow]limit reached: {limit.name.value} ({limit.value})[/]")
