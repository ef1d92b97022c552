"""The evidence trail: what each tool call asked and which ids and spans it returned.

:class:`TrailRecorder` is the extension point: anything with ``record(call)``. The
tools call it once per call, errors included, after the result is built; it is
given ids, byte spans, codes and timings, never document text, quotes or answers.
:class:`ToolTrail` is the in-memory one.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol, runtime_checkable

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import ConfigurationError
from graphrag_orm.tools.values import ToolCall

__all__ = ["DEFAULT_TRAIL_CALLS", "MAX_TRAIL_CALLS", "ToolTrail", "TrailRecorder"]

DEFAULT_TRAIL_CALLS = 1_000
MAX_TRAIL_CALLS = 100_000


@runtime_checkable
class TrailRecorder(Protocol):
    """Receives one :class:`ToolCall` per tool call. It must not raise; it runs in the agent's loop."""

    def record(self, call: ToolCall) -> None: ...


class ToolTrail:
    """The last ``max_calls`` calls in memory (1,000 by default, at most 100,000), oldest first.

    ``dropped`` counts the calls that fell off the front, so a full trail says so.
    """

    def __init__(self, max_calls: int = DEFAULT_TRAIL_CALLS) -> None:
        if isinstance(max_calls, bool) or not isinstance(max_calls, int) or not 1 <= max_calls <= MAX_TRAIL_CALLS:
            raise ConfigurationError(ErrorCode.INVALID_OPTION, f"ToolTrail: max_calls must be 1 to {MAX_TRAIL_CALLS:,}")
        self._calls: deque[ToolCall] = deque(maxlen=max_calls)
        self.dropped = 0

    def record(self, call: ToolCall) -> None:
        if len(self._calls) == self._calls.maxlen:
            self.dropped += 1
        self._calls.append(call)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(self._calls)

    def clear(self) -> None:
        self._calls.clear()
        self.dropped = 0
