"""Wrap an in-process agent so each call runs in a fresh trace and reports its tool spans."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..observation import Observation
from ._sources import InProcessSource, NoSpansArrived
from ._tools import spans_to_tool_calls

__all__ = ["TracedAdapter"]


class TracedAdapter:
    """Adapter decorator: a fresh trace per call; ``tools`` come from its ``execute_tool`` spans.

    Args:
        inner: any adapter (``from_strands``, ``from_callable``...).
        span_timeout_s: how long to wait for the call's spans after it returns.
        exclude_tools: tool names never counted (e.g. a structured-output model name).
        require_spans: when true a call whose trace has no span fails with
            :class:`~agentverity_props.otel.NoSpansArrived`; when false it keeps ``tools=()``.
    """

    def __init__(self, inner: Any, *, span_timeout_s: float = 5.0,
                 exclude_tools: tuple[str, ...] = (), require_spans: bool = True) -> None:
        self.inner = inner
        self.identity = str(inner.identity)
        self.is_async = bool(inner.is_async)
        self.span_timeout_s = span_timeout_s
        self.exclude_tools = exclude_tools
        self.require_spans = require_spans
        self.source = InProcessSource()

    @contextlib.contextmanager
    def _root(self) -> Iterator[tuple[str, str]]:
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        tracer = trace.get_tracer("agentverity_props")
        # an empty parent context forces a new trace id for every call
        span = tracer.start_span("agentverity_props.call", context=otel_context.Context())
        ctx = span.get_span_context()
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")
        finally:
            otel_context.detach(token)
            span.end()

    def _finish(self, obs: Observation, trace_id: str, span_id: str) -> Observation:
        # in process, spans are filed synchronously as they end: once the agent's outermost
        # span is here, every span inside it is too, so there is nothing to settle
        spans = self.source.collector.wait(trace_id, timeout_s=self.span_timeout_s,
                                           root_span_id=span_id, settle_s=0.0)
        self.source.collector.pop(trace_id)
        agent_spans = [s for s in spans if s.span_id != span_id]
        if not agent_spans and self.require_spans:
            raise NoSpansArrived(trace_id, self.span_timeout_s, self.source.describe())
        tools = spans_to_tool_calls(agent_spans, exclude=self.exclude_tools)
        return replace(obs, tools=tools)

    def invoke(self, prompt: str) -> Observation:
        t0 = time.perf_counter()
        with self._root() as (trace_id, span_id):
            obs = self.inner.invoke(prompt)
        obs = obs if obs.latency_s else replace(obs, latency_s=time.perf_counter() - t0)
        return self._finish(obs, trace_id, span_id)

    async def ainvoke(self, prompt: str) -> Observation:
        import asyncio

        t0 = time.perf_counter()
        with self._root() as (trace_id, span_id):
            obs = await self.inner.ainvoke(prompt)
        obs = obs if obs.latency_s else replace(obs, latency_s=time.perf_counter() - t0)
        return await asyncio.to_thread(self._finish, obs, trace_id, span_id)

    def __repr__(self) -> str:
        return f"TracedAdapter({self.inner!r})"
