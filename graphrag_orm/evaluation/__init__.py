"""Evaluation on your own cases: citation validity, answer support, abstention, coverage, recall@k and MRR, no model judge.

``load_cases(path)`` reads a JSONL file of :class:`EvalCase`\\ s; ``Evaluator(rag, k=10).run(cases)``
returns an :class:`EvaluationReport` (JSON round-trips); :func:`render_table` prints it,
:func:`write_html` writes a self-contained page with a chart per metric (the ``eval``
extra: matplotlib), and :func:`compare_reports` gives the difference between two runs.
The metrics are defined in :mod:`graphrag_orm.evaluation.metrics`; questions about the whole
corpus (global cases, the same file) run through :class:`GlobalEvaluator`
(:mod:`graphrag_orm.evaluation.global_cases`) and print with :func:`render_global_table`;
:class:`~graphrag_orm.evaluation.stand_ins.InMemoryRetriever` is a stand-in for tests.
"""

from graphrag_orm.errors import EvaluationError
from graphrag_orm.evaluation.cases import EvalCase, load_cases, parse_cases
from graphrag_orm.evaluation.compare import CaseDelta, Comparison, MetricDelta, compare_reports, load_report
from graphrag_orm.evaluation.global_cases import (
    GlobalCaseResult,
    GlobalEvaluationReport,
    GlobalEvaluator,
    GlobalTotals,
)
from graphrag_orm.evaluation.global_table import render_global_table
from graphrag_orm.evaluation.html import write_html
from graphrag_orm.evaluation.metrics import holds
from graphrag_orm.evaluation.runner import Answerer, EvaluationOptions, Evaluator, EvidenceRetriever
from graphrag_orm.evaluation.stand_ins import InMemoryRetriever
from graphrag_orm.evaluation.stored import StoredChunk, StoredChunks, StoredText
from graphrag_orm.evaluation.table import render_comparison, render_table
from graphrag_orm.evaluation.values import (
    CaseOutcome,
    CaseResult,
    CitationCheck,
    CitationStatus,
    ClientLabel,
    EvaluatedItem,
    EvaluationReport,
    EvaluationSettings,
    RunLabels,
    Totals,
)

__all__ = [
    "Answerer",
    "CaseDelta",
    "CaseOutcome",
    "CaseResult",
    "CitationCheck",
    "CitationStatus",
    "ClientLabel",
    "Comparison",
    "EvalCase",
    "EvaluatedItem",
    "EvaluationError",
    "EvaluationOptions",
    "EvaluationReport",
    "EvaluationSettings",
    "Evaluator",
    "EvidenceRetriever",
    "GlobalCaseResult",
    "GlobalEvaluationReport",
    "GlobalEvaluator",
    "GlobalTotals",
    "InMemoryRetriever",
    "MetricDelta",
    "RunLabels",
    "StoredChunk",
    "StoredChunks",
    "StoredText",
    "Totals",
    "compare_reports",
    "holds",
    "load_cases",
    "load_report",
    "parse_cases",
    "render_comparison",
    "render_global_table",
    "render_table",
    "write_html",
]
