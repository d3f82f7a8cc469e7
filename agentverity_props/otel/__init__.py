"""Tool calls from OpenTelemetry GenAI spans, in process or over OTLP/HTTP (extra ``otel``).

The OpenTelemetry SDK and protobuf modules are imported only by the pieces that need them:
the in-process capture and the receiver's protobuf decoder.
"""

from __future__ import annotations

from ._receiver import DEFAULT_MAX_BYTES, OTLPReceiver, ReceiverStats
from ._records import SpanCollector, SpanEvent, SpanRecord
from ._sources import (
    InProcessSource,
    NoSpansArrived,
    OTLPReceiverSource,
    SpanSource,
    TraceContext,
    new_trace_context,
)
from ._tools import is_tool_span, spans_to_tool_calls
from ._traced import TracedAdapter

__all__ = [
    "DEFAULT_MAX_BYTES",
    "InProcessSource",
    "NoSpansArrived",
    "OTLPReceiver",
    "OTLPReceiverSource",
    "ReceiverStats",
    "SpanCollector",
    "SpanEvent",
    "SpanRecord",
    "SpanSource",
    "TraceContext",
    "TracedAdapter",
    "is_tool_span",
    "new_trace_context",
    "spans_to_tool_calls",
]
