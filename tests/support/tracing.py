"""The spans a block of code records, captured in memory (the OpenTelemetry SDK's exporter)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["captured_spans"]


@contextlib.contextmanager
def captured_spans() -> Iterator[InMemorySpanExporter]:
    """Every span finished inside the block, in the exporter this yields.

    The global provider can be set only once per process, so it is swapped and put back
    as it was: None when unset (restoring the proxy ``get_tracer_provider()`` returns
    would make the proxy delegate to itself).
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = trace._TRACER_PROVIDER
    trace._TRACER_PROVIDER = provider
    try:
        yield exporter
    finally:
        trace._TRACER_PROVIDER = previous
