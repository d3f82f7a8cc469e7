"""Where a call's spans come from: the :class:`SpanSource` protocol and its implementations.

A source answers one question: "which spans belong to trace T?" The harness gives every
agent call a fresh W3C trace, so spans are matched to calls by trace id alone. A vendor
span API (for example one polled by test id) is added by implementing ``wait_for``; nothing
else changes.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable
from urllib.parse import quote

from ..errors import AgentCallError
from ._records import SpanCollector, SpanRecord

__all__ = ["InProcessSource", "NoSpansArrived", "OTLPReceiverSource", "SpanSource",
           "TraceContext", "new_trace_context"]


@runtime_checkable
class SpanSource(Protocol):
    """Delivers the finished spans of one trace."""

    async def wait_for(self, trace_id: str, *, timeout_s: float,
                       root_span_id: str | None = None) -> list[SpanRecord]:
        """Wait up to ``timeout_s`` for the trace's spans; an empty list when none arrived.

        ``root_span_id`` is the caller's own span (the ``traceparent`` parent): its direct
        child is the agent's outermost span, whose arrival means the trace is complete.
        """
        ...

    def describe(self) -> str:
        """Where the spans should be sent, for "no spans arrived" messages."""
        ...


class NoSpansArrived(AgentCallError):
    """No span of a call's trace reached the source: incomplete evidence, not a finding."""

    def __init__(self, trace_id: str, timeout_s: float, where: str) -> None:
        super().__init__(
            f"no spans arrived for trace {trace_id} within {timeout_s:g}s: is the agent "
            f"instrumented and exporting to {where}?", kind="no_spans", retryable=False)
        self.trace_id = trace_id


@dataclass(frozen=True)
class TraceContext:
    """A fresh W3C trace for one agent call."""

    trace_id: str
    span_id: str
    baggage: Mapping[str, str]

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-01"

    def headers(self) -> dict[str, str]:
        """``traceparent`` (sampled) and, when there is any, ``baggage``."""
        out = {"traceparent": self.traceparent}
        if self.baggage:
            out["baggage"] = ",".join(f"{quote(k, safe='')}={quote(v, safe='')}"
                                      for k, v in self.baggage.items())
        return out


def new_trace_context(baggage: Mapping[str, str] | None = None) -> TraceContext:
    """A random, valid (non-zero) trace id and parent span id."""
    trace_id = secrets.token_hex(16)
    span_id = secrets.token_hex(8)
    while int(trace_id, 16) == 0 or int(span_id, 16) == 0:  # pragma: no cover - 2**-64
        trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return TraceContext(trace_id, span_id, dict(baggage or {}))


class _CollectorSource:
    collector: SpanCollector

    async def wait_for(self, trace_id: str, *, timeout_s: float,
                       root_span_id: str | None = None) -> list[SpanRecord]:
        # the collector blocks on a condition variable: wait in a worker thread so the
        # event loop keeps serving other calls meanwhile
        spans = await asyncio.to_thread(self.collector.wait, trace_id, timeout_s=timeout_s,
                                        root_span_id=root_span_id)
        self.collector.pop(trace_id)
        return spans


class InProcessSource(_CollectorSource):
    """Spans of agents running in this process (installs the SDK capture on first use)."""

    def __init__(self) -> None:
        from ._capture import install_capture
        self.collector = install_capture().collector

    def describe(self) -> str:
        return "this process's global OpenTelemetry TracerProvider"


class OTLPReceiverSource(_CollectorSource):
    """Spans exported over OTLP/HTTP to a :class:`~agentverity_props.otel.OTLPReceiver`."""

    def __init__(self, receiver: object) -> None:
        from ._receiver import OTLPReceiver
        if not isinstance(receiver, OTLPReceiver):
            from ..errors import InvalidArgument
            raise InvalidArgument(f"OTLPReceiverSource needs an OTLPReceiver, got "
                                  f"{type(receiver).__name__}")
        self.receiver = receiver
        self.collector = receiver.collector

    def describe(self) -> str:
        st = self.receiver.stats
        extra = ""
        if st.rejected_too_large or st.rejected_malformed:
            extra = (f" (the receiver rejected {st.rejected_too_large} oversized and "
                     f"{st.rejected_malformed} malformed payloads; last: {st.last_error})")
        elif st.requests == 0:
            extra = " (the receiver has received no export request at all)"
        return self.receiver.endpoint + extra
