"""In-process span capture: an SDK ``SpanProcessor`` that files finished spans by trace id.

OpenTelemetry allows one global ``TracerProvider`` per process, and Strands reads it. The
capture joins whatever SDK provider is already installed (so a user's own exporters keep
working) or installs one; it is added once per process and shared by every source.
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import BadInput
from ._records import SpanCollector, SpanEvent, SpanRecord

__all__ = ["SpanCapture", "install_capture", "record_from_sdk"]

_lock = threading.Lock()
_installed: SpanCapture | None = None


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def record_from_sdk(span: Any) -> SpanRecord:
    """Turn an SDK ``ReadableSpan`` into a :class:`SpanRecord`."""
    ctx = span.context
    parent = span.parent
    status = getattr(getattr(span.status, "status_code", None), "name", "UNSET")
    resource = getattr(span, "resource", None)
    service = None
    if resource is not None:
        service = resource.attributes.get("service.name")
    return SpanRecord(
        trace_id=_hex(ctx.trace_id, 32),
        span_id=_hex(ctx.span_id, 16),
        name=span.name,
        parent_span_id=_hex(parent.span_id, 16) if parent is not None else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
        attributes=dict(span.attributes or {}),
        events=tuple(SpanEvent(e.name, dict(e.attributes or {}), e.timestamp or 0)
                     for e in span.events),
        status=str(status),
        service=str(service) if service is not None else None,
    )


class SpanCapture:
    """A span processor feeding a :class:`SpanCollector` (synchronously, on span end)."""

    def __init__(self, collector: SpanCollector | None = None) -> None:
        self.collector = collector or SpanCollector()

    # SpanProcessor interface (duck-typed: the SDK only calls these methods)
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        return None

    def _on_ending(self, span: Any) -> None:
        return None

    def on_end(self, span: Any) -> None:
        try:
            self.collector.add([record_from_sdk(span)])
        except Exception:  # a capture bug must never break the agent under test
            return

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def install_capture() -> SpanCapture:
    """The process-wide capture, added to the global SDK ``TracerProvider`` on first use.

    Raises:
        BadInput: the process's global provider is not the OpenTelemetry SDK's, so spans
            cannot be observed in process.
    """
    global _installed
    with _lock:
        if _installed is not None:
            return _installed
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            if type(provider).__name__ != "ProxyTracerProvider":
                raise BadInput(
                    f"the global OpenTelemetry tracer provider is a {type(provider).__name__}, "
                    "not the SDK's TracerProvider, so in-process spans cannot be captured",
                    "install opentelemetry.sdk.trace.TracerProvider as the global provider")
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):  # someone else won the race
                raise BadInput("could not install an OpenTelemetry SDK TracerProvider",
                               "set one with trace.set_tracer_provider() before running")
        capture = SpanCapture()
        provider.add_span_processor(capture)  # type: ignore[arg-type]
        _installed = capture
        return capture
