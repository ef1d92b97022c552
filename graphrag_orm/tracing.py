"""OpenTelemetry spans: ids, counts, codes and timings only.

Span names are the reference's (``GraphRag.Ingest``, ``GraphRag.Document``,
``GraphRag.Embed``, ``GraphRag.Extract``, ``GraphRag.Write``, ``GraphRag.Retrieve``,
``GraphRag.Answer``, ``GraphRag.Rewrite``, ``GraphRag.Remove``, ``GraphRag.Tool``), and
``GraphRag.GraphAsk``, ``GraphRag.Merge``, ``GraphRag.UndoMerge``, ``GraphRag.Evaluate``,
``GraphRag.Adopt``, ``GraphRag.Reembed``: :class:`SpanName`. Attributes are restricted to an allow-list
of names whose values are ids (hashes), counts, statuses, codes and durations: never
document text, questions, quotes, prompts, paths or URIs. A failure sets the span's
status to its error code, never an exception message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

__all__ = ["ALLOWED_ATTRIBUTES", "TRACER_NAME", "SpanName", "SpanRecorder", "span", "tracer"]

TRACER_NAME = "graphrag_orm"


class SpanName(StrEnum):
    INGEST = "GraphRag.Ingest"
    DOCUMENT = "GraphRag.Document"
    EMBED = "GraphRag.Embed"
    EXTRACT = "GraphRag.Extract"
    WRITE = "GraphRag.Write"
    RETRIEVE = "GraphRag.Retrieve"
    RETRIEVE_STAGE = "GraphRag.Retrieve.Stage"
    ANSWER = "GraphRag.Answer"
    REWRITE = "GraphRag.Rewrite"
    REMOVE = "GraphRag.Remove"
    TOOL = "GraphRag.Tool"
    #: A graph question (Text2Cypher): the model call, the gates and the sandboxed read.
    GRAPH_ASK = "GraphRag.GraphAsk"
    #: One entity-resolution merge, or its undo.
    MERGE = "GraphRag.Merge"
    UNDO_MERGE = "GraphRag.UndoMerge"
    #: One evaluation run over a file of cases.
    EVALUATE = "GraphRag.Evaluate"
    #: Adopting a graph another library wrote (apply or undo), and a re-embedding backfill page.
    ADOPT = "GraphRag.Adopt"
    REEMBED = "GraphRag.Reembed"
    #: A question about the whole corpus from the community reports (offline, or a model's map and reduce).
    GLOBAL_ANSWER = "GraphRag.GlobalAnswer"


#: The only attribute names spans may carry; each holds an id, count, code, status or timing.
ALLOWED_ATTRIBUTES = frozenset(
    {
        "graphrag.run_id",
        "graphrag.document_id",
        "graphrag.documents",
        "graphrag.status",
        "graphrag.error_code",
        "graphrag.chunks",
        "graphrag.sections",
        "graphrag.calls",
        "graphrag.texts",
        "graphrag.input_tokens",
        "graphrag.output_tokens",
        "graphrag.retries",
        "graphrag.repairs",
        "graphrag.rate_limited",
        "graphrag.items",
        "graphrag.context_items",
        "graphrag.omitted_items",
        "graphrag.routes",
        #: A retrieval stage's name, as the application registered it.
        "graphrag.stage",
        "graphrag.candidates",
        "graphrag.utf8_bytes",
        "graphrag.disposition",
        "graphrag.reason",
        "graphrag.citations",
        "graphrag.deltas",
        "graphrag.turns",
        "graphrag.outcome",
        "graphrag.scope",
        "graphrag.scope_chunks",
        "graphrag.limits",
        "graphrag.entities",
        "graphrag.facts",
        "graphrag.pruned",
        "graphrag.batches",
        "graphrag.removed",
        "graphrag.elapsed_ms",
        #: An agent tool's name: one of the four tools, or "unknown" (never the name an agent sent).
        "graphrag.tool",
        # text2cypher
        "graphrag.rows",
        # resolution
        "graphrag.merges",
        # evaluation
        "graphrag.cases",
        # reembedding
        "graphrag.pages",
        #: backfill, complete or cleanup.
        "graphrag.phase",
        # global answers: reports cited, findings dropped (no longer located) and invented (never shown)
        "graphrag.reports",
        "graphrag.findings_dropped",
        "graphrag.findings_invented",
    }
)


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


class SpanRecorder:
    """A thin wrapper that only lets allow-listed attributes through."""

    def __init__(self, span: Span) -> None:
        self._span = span

    def set(self, name: str, value: str | int | float | bool | list[str]) -> None:
        key = f"graphrag.{name}"
        if key not in ALLOWED_ATTRIBUTES:
            raise ValueError(f"span attribute {key!r} is not on the allow-list of ids, counts and codes")
        self._span.set_attribute(key, value)

    def fail(self, code: str) -> None:
        """Mark the span failed with a stable code (never a message)."""
        self._span.set_attribute("graphrag.error_code", code)
        self._span.set_status(Status(StatusCode.ERROR, code))


@contextmanager
def span(name: SpanName, **attributes: str | int | float | bool | list[str]) -> Iterator[SpanRecorder]:
    """Open ``name`` as the current span; an escaping exception is recorded by type only."""
    with tracer().start_as_current_span(name.value, record_exception=False, set_status_on_exception=False) as raw:
        recorder = SpanRecorder(raw)
        for key, value in attributes.items():
            recorder.set(key, value)
        try:
            yield recorder
        except BaseException as error:
            code = getattr(error, "code", None)
            recorder.fail(str(code) if isinstance(code, str) else type(error).__name__)
            raise
