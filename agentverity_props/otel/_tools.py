"""OpenTelemetry GenAI spans -> the ordered tool calls of one agent call.

A tool call is an ``execute_tool`` span (``gen_ai.operation.name``). Its status is
``gen_ai.tool.status`` when the framework set it (Strands: ``success`` | ``error``), else the
span status. Only ``success`` counts as "fired" downstream
(:meth:`~agentverity_props.observation.Observation.fired_tools`). Structured-output tools
(Strands registers one named after the output model) are left out: they are how the agent
formats its answer, not an action it took.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..observation import ToolCall
from ._records import SpanRecord

__all__ = ["is_tool_span", "spans_to_tool_calls"]

_STRUCTURED_MARK = "StructuredOutputTool"


def is_tool_span(span: SpanRecord) -> bool:
    op = span.attributes.get("gen_ai.operation.name")
    if op is not None:
        return op == "execute_tool"
    return span.name.startswith("execute_tool ")


def _tool_name(span: SpanRecord) -> str:
    name = span.attributes.get("gen_ai.tool.name")
    if isinstance(name, str) and name:
        return name
    return span.name.removeprefix("execute_tool").strip() or "?"


def _as_args(value: Any) -> dict[str, Any] | None:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return dict(parsed) if isinstance(parsed, Mapping) else None
    return None


def _arguments(span: SpanRecord) -> dict[str, Any]:
    # latest GenAI conventions: a span attribute
    args = _as_args(span.attributes.get("gen_ai.tool.call.arguments"))
    if args is not None:
        return args
    for ev in span.events:
        # Strands' default conventions: the input is the content of a gen_ai.tool.message event
        if ev.name == "gen_ai.tool.message":
            args = _as_args(ev.attributes.get("content"))
            if args is not None:
                return args
        # latest conventions with span events: the tool_call part of gen_ai.input.messages
        if ev.name == "gen_ai.client.inference.operation.details":
            raw = ev.attributes.get("gen_ai.input.messages")
            try:
                msgs = json.loads(raw) if isinstance(raw, str) else None
            except ValueError:
                msgs = None
            for msg in msgs or ():
                for part in (msg or {}).get("parts", ()) if isinstance(msg, dict) else ():
                    if isinstance(part, dict) and part.get("type") == "tool_call":
                        args = _as_args(part.get("arguments"))
                        if args is not None:
                            return args
    return {}


def _status(span: SpanRecord) -> str:
    status = span.attributes.get("gen_ai.tool.status")
    if isinstance(status, str) and status:
        return status.lower()
    if span.status == "ERROR":
        return "error"
    # a tool span with no result status was interrupted or abandoned: it did not fire
    return "unknown"


def spans_to_tool_calls(spans: Iterable[SpanRecord], *, exclude: Iterable[str] = (),
                        include_structured_output: bool = False) -> tuple[ToolCall, ...]:
    """The tool calls in ``spans``, in the order they started.

    Args:
        spans: the finished spans of one trace (any order).
        exclude: tool names to leave out (e.g. a known structured-output model name).
        include_structured_output: keep Strands' structured-output tool calls.
    """
    skip = set(exclude)
    tool_spans = [s for s in spans if is_tool_span(s)]
    tool_spans.sort(key=lambda s: (s.start_ns, s.end_ns, s.span_id))
    out: list[ToolCall] = []
    for s in tool_spans:
        name = _tool_name(s)
        if name in skip:
            continue
        desc = s.attributes.get("gen_ai.tool.description")
        if (not include_structured_output and isinstance(desc, str)
                and _STRUCTURED_MARK in desc):
            continue
        call_id = s.attributes.get("gen_ai.tool.call.id")
        out.append(ToolCall(name=name, arguments=_arguments(s), status=_status(s),
                            call_id=str(call_id) if call_id is not None else None))
    return tuple(out)
