"""The HTML report: one self-contained page, no network, no JavaScript.

The page holds what ran and when, the totals (beside the baseline's with ``compare``),
a chart per metric as inline SVG (:mod:`graphrag_orm.evaluation.charts`), the changed
cases of a comparison, then every case, **failing cases first** (each open, with its
retrieved items' titles, sources and spans, the phrases each holds, and the answer's
citations with what the stored-bytes check found), the others folded in ``<details>``.
Every piece of text from the cases, the documents or the answers is escaped.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Final

from graphrag_orm.evaluation.charts import charts
from graphrag_orm.evaluation.compare import QUALITY_METRICS, Comparison, MetricDelta, compare_reports
from graphrag_orm.evaluation.table import rate, signed, totals_rows
from graphrag_orm.evaluation.values import CaseResult, ClientLabel, EvaluationReport

__all__ = ["render_html", "write_html"]

_STYLE: Final = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d1d1f;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;margin:6px 0 12px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f6}.meta{color:#555}.stand-in{background:#fff3cd;padding:0 4px;border-radius:3px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:12px}
figure{margin:0;border:1px solid #e3e3e3;border-radius:6px;padding:6px}figcaption{font-weight:600}
figure svg{width:100%;height:auto}.case{border:1px solid #e3e3e3;border-radius:6px;margin:10px 0;padding:6px 10px}
.failing{border-color:#d9534f;border-left-width:5px}.bad{color:#c9302c;font-weight:600}.good{color:#2e7d32}
summary{cursor:pointer;font-weight:600}q{font-style:italic}code{font-size:12px}
"""


def _label(name: str, label: ClientLabel | None) -> str:
    if label is None:
        return f"<li>{name}: none</li>"
    badge = ' <span class="stand-in">stand-in</span>' if label.stand_in else ""
    return f"<li>{name}: {escape(label.label)}{badge}</li>"


def _header(report: EvaluationReport, baseline: EvaluationReport | None) -> str:
    labels, settings = report.labels, report.settings
    against = (
        f"<p class=meta>Compared with the run of {baseline.started_at:%Y-%m-%d %H:%M:%S} UTC.</p>" if baseline else ""
    )
    return (
        "<h1>Evaluation report</h1>"
        f"<p class=meta>Run {report.started_at:%Y-%m-%d %H:%M:%S} UTC, {len(report.cases)} cases in "
        f"{report.seconds:.2f} s; k={settings.k}, {settings.concurrency} lane(s), routes "
        f"{escape(', '.join(settings.routes)) or '-'}.</p>{against}<ul class=meta>"
        + _label("retriever", labels.retriever)
        + _label("embedder", labels.embedder)
        + _label("chat", labels.chat)
        + (f"<li>embedding set: {escape(labels.embedding_set)}</li>" if labels.embedding_set else "")
        + "</ul>"
        + "".join(
            f"<p class=bad>limit reached: {limit.name.value} ({limit.value})</p>" for limit in report.limits_reached
        )
    )


def _number(value: int | float | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.2f}"


def _change(metric: MetricDelta) -> str:
    if metric.delta is None or metric.better is None:
        return "-" if metric.delta is None else "0"
    return f"<span class={'good' if metric.better else 'bad'}>{signed(metric.delta)}</span>"


def _totals(report: EvaluationReport, comparison: Comparison | None) -> str:
    rows = totals_rows(report.totals, report.settings.k)
    body = "".join(f"<tr><th>{escape(name)}</th><td>{escape(value)}</td></tr>" for name, value in rows)
    table = f"<h2>Totals</h2><table>{body}</table>"
    if comparison is None:
        return table
    compared = "".join(
        f"<tr><th>{escape(m.name)}</th><td>{_number(m.baseline)}</td><td>{_number(m.current)}</td>"
        f"<td>{_change(m)}</td></tr>"
        for m in comparison.metrics
    )
    return table + (
        "<h2>Compared with the baseline</h2><table><tr><th>metric</th><th>baseline</th><th>current</th>"
        f"<th>change</th></tr>{compared}</table>{_changed_cases(comparison)}"
    )


def _changed_cases(comparison: Comparison) -> str:
    changed = comparison.changed_cases
    if not changed:
        return "<p class=meta>No case changed.</p>"
    names = [metric.name for metric in changed[0].metrics[:QUALITY_METRICS]]
    head = "".join(f"<th>{escape(name)}</th>" for name in ["case", "outcome", *names])
    rows = ""
    for case in changed:
        outcome = case.current_outcome.value
        if case.baseline_outcome != case.current_outcome:
            outcome = f"{case.baseline_outcome.value} → {outcome}"
        cells = "".join(f"<td>{_change(metric)}</td>" for metric in case.metrics[:QUALITY_METRICS])
        rows += f"<tr><td>{escape(case.id)}</td><td>{escape(outcome)}</td>{cells}</tr>"
    return f"<h3>Changed cases</h3><table><tr>{head}</tr>{rows}</table>"


def _charts(report: EvaluationReport, baseline: EvaluationReport | None) -> str:
    figures = "".join(
        f"<figure><figcaption>{escape(title)}</figcaption>{svg}</figure>" for title, svg in charts(report, baseline)
    )
    return f"<h2>Charts</h2><div class=charts>{figures}</div>"


def _phrases(case: CaseResult) -> str:
    if not case.required_phrases:
        return ""
    marks = "".join(
        f"<li class={'good' if found else 'bad'}>{'found' if found else 'not retrieved'}: <q>{escape(phrase)}</q></li>"
        for phrase, found in zip(case.required_phrases, case.phrases_found, strict=False)
    )
    return f"<p>Required phrases:</p><ul>{marks}</ul>"


def _items(case: CaseResult) -> str:
    if not case.items:
        return "<p class=meta>No evidence retrieved.</p>"
    rows = "".join(
        f"<tr><td>{item.rank}</td><td>{escape(item.title or '')}</td><td>{escape(item.source_uri)}</td>"
        f"<td>[{item.start_byte}, {item.end_byte})</td>"
        f"<td>{escape(', '.join(case.required_phrases[i] for i in item.phrases))}</td></tr>"
        for item in case.items
    )
    return (
        f"<table><tr><th>rank</th><th>title</th><th>source</th><th>bytes</th><th>phrases held</th></tr>{rows}</table>"
    )


def _citations(case: CaseResult) -> str:
    if not case.citations:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(c.chunk_id[:12])}</code></td><td>[{c.start_byte}, {c.end_byte})</td>"
        f"<td class={'good' if c.status.value == 'valid' else 'bad'}>{c.status.value}</td>"
        f"<td><q>{escape(c.quote)}</q></td></tr>"
        for c in case.citations
    )
    return f"<table><tr><th>chunk</th><th>bytes</th><th>stored bytes</th><th>quote</th></tr>{rows}</table>"


def _case(case: CaseResult) -> str:
    label = "answerable" if case.answerable else "not answerable"
    why = case.error_code or case.reason
    support = "-" if case.supported is None else ("yes" if case.supported else "no")
    summary = (
        f"{escape(case.id)}: {case.outcome.value}{f' ({escape(why)})' if why else ''} — "
        f"validity {rate(case.citation_validity)}, support {support}, coverage {rate(case.coverage)}, "
        f"recall {rate(case.recall_at_k)}, RR {rate(case.reciprocal_rank)}"
    )
    answer = f"<p>Answer: {escape(case.answer)}</p>" if case.answer else ""
    if case.error_message:
        answer += f"<p class=bad>Failed: {escape(case.error_message)} ({escape(case.error_code or '')})</p>"
    body = f"<p><q>{escape(case.question)}</q> ({label})</p>{answer}{_phrases(case)}{_items(case)}{_citations(case)}"
    css = "case failing" if case.failing else "case"
    opened = " open" if case.failing else ""
    return f"<details class='{css}'{opened}><summary>{summary}</summary>{body}</details>"


def render_html(report: EvaluationReport, compare: EvaluationReport | None = None) -> str:
    """The whole page as text; ``compare`` is the baseline run."""
    comparison = compare_reports(report, compare) if compare is not None else None
    ordered = [case for case in report.cases if case.failing] + [case for case in report.cases if not case.failing]
    failing = sum(case.failing for case in report.cases)
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Evaluation report</title>"
        f"<style>{_STYLE}</style></head><body>"
        + _header(report, compare)
        + _totals(report, comparison)
        + _charts(report, compare)
        + f"<h2>Cases ({failing} failing, shown first)</h2>"
        + "".join(_case(case) for case in ordered)
        + "</body></html>\n"
    )


def write_html(report: EvaluationReport, path: Path | str, compare: EvaluationReport | None = None) -> Path:
    """Write :func:`render_html` to ``path`` (UTF-8) and return it; ``missing-extra`` without matplotlib."""
    page = render_html(report, compare)
    target = Path(path)
    target.write_text(page, encoding="utf-8")
    return target
