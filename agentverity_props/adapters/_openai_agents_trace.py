"""The OpenAI Agents SDK side of :func:`~agentverity_props.adapters.from_openai_agents`: a
local ``TracingProcessor`` that keeps the function spans of the adapter's own runs.

The SDK's run items do not say whether a tool failed (a ``failure_error_function`` hands the
model a message either way); the tool's function span does, through the error the SDK
attaches to it. Each adapter call runs under a fresh trace id and *watches* it; the processor
keeps that trace's outer-run function spans until the call reads them, and ignores every
other trace. Nothing is exported anywhere.

While a call runs inside a recording OpenTelemetry span, the processor also emits GenAI
``execute_tool`` / ``invoke_agent`` spans under it, timed by the SDK, so span readers (the
``tools`` command) see the same tool calls.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from datetime import datetime
from typing import Any

__all__ = ["ToolSpan", "Watch", "ensure_processor", "otel_parent"]


@dataclasses.dataclass(frozen=True)
class ToolSpan:
    """One finished function span of the outer run: the tool's name, error, arguments, times."""

    name: str
    error: str | None
    arguments: str | None
    started_at: str | None
    ended_at: str | None


class Watch:
    """The function spans of one adapter call's trace, outermost run only."""

    __slots__ = ("function_ids", "order", "otel_context", "parents", "seen", "spans")

    def __init__(self, otel_context: Any) -> None:
        self.otel_context = otel_context
        self.seen = False
        self.parents: dict[str, str | None] = {}
        self.function_ids: set[str] = set()
        self.order: dict[str, int] = {}  # function span id -> start order
        self.spans: list[tuple[int, ToolSpan]] = []


class _ToolSpanProcessor:
    """An SDK ``TracingProcessor`` (duck-typed) that keeps the tool spans of watched traces.

    Only traces an adapter call registered are kept, and only until that call reads them,
    so memory stays flat; everything else passes through untouched.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: dict[str, Watch] = {}
        self._order = 0

    def watch(self, trace_id: str, otel_context: Any) -> Watch:
        w = Watch(otel_context)
        with self._lock:
            self._watches[trace_id] = w
        return w

    def unwatch(self, trace_id: str) -> None:
        with self._lock:
            self._watches.pop(trace_id, None)

    def on_trace_start(self, trace: Any) -> None:
        w = self._watches.get(getattr(trace, "trace_id", ""))
        if w is not None:
            w.seen = True

    def on_trace_end(self, trace: Any) -> None:
        return None

    def on_span_start(self, span: Any) -> None:
        w = self._watches.get(span.trace_id)
        if w is None:
            return
        with self._lock:
            w.parents[span.span_id] = span.parent_id
            if type(span.span_data).__name__ == "FunctionSpanData":
                w.function_ids.add(span.span_id)
                self._order += 1
                w.order[span.span_id] = self._order

    def on_span_end(self, span: Any) -> None:
        w = self._watches.get(span.trace_id)
        if w is None:
            return
        is_agent = type(span.span_data).__name__ == "AgentSpanData"
        if not is_agent and span.span_id not in w.function_ids:
            return
        # a tool of an agent used as a tool runs in the same trace: only the outer run's count
        parent = w.parents.get(span.span_id)
        while parent is not None:
            if parent in w.function_ids:
                return
            parent = w.parents.get(parent)
        error = span.error
        data = span.span_data
        if is_agent:  # an agent that called no tool still leaves a span for span readers
            if w.otel_context is not None:
                _emit_otel("invoke_agent", str(data.name), w.otel_context,
                           started_at=span.started_at, ended_at=span.ended_at,
                           error=None if error is None else str(error.get("message")))
            return
        record = ToolSpan(
            name=str(data.name),
            error=None if error is None else str(error.get("message") or "error"),
            arguments=data.input if isinstance(data.input, str) else None,
            started_at=span.started_at, ended_at=span.ended_at)
        with self._lock:
            w.spans.append((w.order.get(span.span_id, 0), record))
        if w.otel_context is not None:
            _emit_otel("execute_tool", record.name, w.otel_context, started_at=record.started_at,
                       ended_at=record.ended_at, error=record.error,
                       arguments=record.arguments or "{}")

    def shutdown(self, timeout: float | None = None) -> None:
        return None

    def force_flush(self) -> None:
        return None


_processor_lock = threading.Lock()
_processor: _ToolSpanProcessor | None = None


def ensure_processor() -> _ToolSpanProcessor:
    """The process-wide processor, (re-)registered if ``set_trace_processors`` dropped it."""
    global _processor
    from agents.tracing import get_trace_provider

    provider = get_trace_provider()
    with _processor_lock:
        first = _processor is None
        if _processor is None:
            _processor = _ToolSpanProcessor()
        current = getattr(getattr(provider, "_multi_processor", None), "_processors", None)
        if first or (isinstance(current, tuple) and _processor not in current):
            provider.register_processor(_processor)  # type: ignore[arg-type]
        return _processor


def otel_parent() -> Any:
    """The current OpenTelemetry context when a recording span is active, else None."""
    otel_trace = sys.modules.get("opentelemetry.trace")
    if otel_trace is None:  # nobody imported OpenTelemetry: nobody is recording
        return None
    if not otel_trace.get_current_span().is_recording():
        return None
    from opentelemetry import context
    return context.get_current()


def _ns(iso: str | None) -> int | None:
    if not iso:
        return None
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1e9)
    except ValueError:
        return None


def _emit_otel(operation: str, name: str, parent: Any, *, started_at: str | None,
               ended_at: str | None, error: str | None, arguments: str | None = None) -> None:
    """One GenAI span (``execute_tool`` or ``invoke_agent``) under ``parent``, SDK-timed."""
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode

    attributes: dict[str, Any] = {"gen_ai.operation.name": operation,
                                  "gen_ai.system": "openai_agents"}
    if operation == "execute_tool":
        attributes.update({"gen_ai.tool.name": name, "gen_ai.tool.call.arguments": arguments,
                           "gen_ai.tool.status": "error" if error else "success"})
    else:
        attributes["gen_ai.agent.name"] = name
    tracer = trace.get_tracer("agentverity_props.openai_agents")
    span = tracer.start_span(f"{operation} {name}", context=parent,
                             start_time=_ns(started_at), attributes=attributes)
    if error:
        span.set_status(Status(StatusCode.ERROR, error))
    span.end(end_time=_ns(ended_at))
