"""Tool calls from OpenTelemetry GenAI spans, in process or over OTLP/HTTP (extra ``otel``).

The OpenTelemetry SDK and protobuf modules are imported only by the pieces that need them:
the in-process capture and the receiver's protobuf decoder.
"""

from __future__ import annotations

from ._receiver import OTLPReceiver
from ._records import SpanCollector, SpanEvent, SpanRecord
from ._sources import (
    InProcessSource,
    NoSpansArrived,
    OTLPReceiverSource,
    SpanSource,
    new_trace_context,
)
from ._tools import spans_to_tool_calls
from ._traced import TracedAdapter

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "OTLPReceiver",
    "OTLPReceiverSource",
    "SpanRecord",
    "SpanSource",
    "TracedAdapter",
]
