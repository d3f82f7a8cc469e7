"""Finished spans as plain data, and a thread-safe store of them grouped by trace id.

Both span sources (the in-process SDK processor and the OTLP/HTTP receiver) turn what they
see into :class:`SpanRecord` values and hand them to a :class:`SpanCollector`; everything
downstream (tool extraction, reports) reads records only, never SDK or protobuf objects.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SpanCollector", "SpanEvent", "SpanRecord"]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """One span event (Strands records tool inputs as ``gen_ai.tool.message`` events)."""

    name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    time_ns: int = 0


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """A finished span, independent of where it came from.

    Attributes:
        trace_id: 32 lower-case hex digits.
        span_id: 16 lower-case hex digits.
        parent_span_id: the parent's span id, or ``None`` for a root span.
        status: ``"UNSET"``, ``"OK"`` or ``"ERROR"``.
        service: the resource's ``service.name`` when known.
    """

    trace_id: str
    span_id: str
    name: str
    parent_span_id: str | None = None
    start_ns: int = 0
    end_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    status: str = "UNSET"
    service: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "span_id": self.span_id, "name": self.name,
                "parent_span_id": self.parent_span_id, "start_ns": self.start_ns,
                "end_ns": self.end_ns, "status": self.status, "service": self.service,
                "attributes": dict(self.attributes),
                "events": [{"name": e.name, "attributes": dict(e.attributes),
                            "time_ns": e.time_ns} for e in self.events]}


class SpanCollector:
    """Spans grouped by trace id, with blocking waits.

    Memory stays bounded: at most ``max_traces`` traces are kept (oldest dropped first) and
    at most ``max_spans_per_trace`` spans each, so an agent that floods the receiver cannot
    exhaust the harness.
    """

    def __init__(self, *, max_traces: int = 4096, max_spans_per_trace: int = 10_000) -> None:
        self._traces: OrderedDict[str, list[SpanRecord]] = OrderedDict()
        self._last_ns: dict[str, int] = {}
        self._cond = threading.Condition()
        self._max_traces = max_traces
        self._max_spans = max_spans_per_trace
        self.total_spans = 0

    def add(self, spans: list[SpanRecord]) -> None:
        """Store ``spans`` and wake every waiter."""
        if not spans:
            return
        now = time.monotonic_ns()
        with self._cond:
            for s in spans:
                bucket = self._traces.get(s.trace_id)
                if bucket is None:
                    bucket = self._traces[s.trace_id] = []
                    while len(self._traces) > self._max_traces:
                        old, _ = self._traces.popitem(last=False)
                        self._last_ns.pop(old, None)
                if len(bucket) < self._max_spans:
                    bucket.append(s)
                self._last_ns[s.trace_id] = now
                self.total_spans += 1
            self._cond.notify_all()

    def get(self, trace_id: str) -> list[SpanRecord]:
        with self._cond:
            return list(self._traces.get(trace_id, ()))

    def pop(self, trace_id: str) -> list[SpanRecord]:
        """Remove and return the spans of ``trace_id`` (a trace is read once)."""
        with self._cond:
            self._last_ns.pop(trace_id, None)
            return self._traces.pop(trace_id, [])

    def wait(self, trace_id: str, *, timeout_s: float, root_span_id: str | None = None,
             settle_s: float = 0.05) -> list[SpanRecord]:
        """Block until the trace looks complete, or ``timeout_s`` passes; return its spans.

        Complete means no new span of the trace arrived for ``settle_s`` and, when
        ``root_span_id`` (the caller's own span, parent of the agent's outermost span) is
        given, a span whose parent it is has arrived: that span ends last on the agent side,
        so every span inside it has ended before it. A trace with no span at all is waited
        for until the timeout. Never blocks for more than ``timeout_s``.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            while True:
                spans = self._traces.get(trace_id)
                now = time.monotonic()
                wake = deadline - now
                if spans:
                    rooted = root_span_id is None or any(
                        s.parent_span_id == root_span_id for s in spans)
                    quiet = (time.monotonic_ns() - self._last_ns.get(trace_id, 0)) / 1e9
                    if rooted and quiet >= settle_s:
                        return list(spans)
                    if rooted:
                        wake = min(wake, max(0.005, settle_s - quiet))
                if now >= deadline:
                    return list(spans or ())
                self._cond.wait(timeout=min(wake, 0.5))
