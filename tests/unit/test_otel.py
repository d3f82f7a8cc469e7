"""Span capture, the OTLP/HTTP receiver, span sources and span -> tool-call extraction."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import random
from typing import Any

import pytest

from agentverity_props.observation import Observation
from agentverity_props.otel import (
    NoSpansArrived,
    OTLPReceiver,
    OTLPReceiverSource,
    SpanCollector,
    SpanEvent,
    SpanRecord,
    new_trace_context,
    spans_to_tool_calls,
)

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _post(rx: OTLPReceiver, body: bytes, ctype: str, *, gz: bool = False,
          path: str = "/v1/traces", length: int | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", rx.port, timeout=10)
    try:
        headers = {"Content-Type": ctype}
        if gz:
            headers["Content-Encoding"] = "gzip"
        if length is not None:
            conn.putrequest("POST", path)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.putheader("Content-Length", str(length))
            conn.endheaders()
            conn.send(body)
        else:
            conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _pb_request(*, trace_id: str = TRACE, tools: tuple[tuple[str, str], ...] = (
        ("lookup_order", "success"),)) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

    def kv(k: str, v: str) -> KeyValue:
        return KeyValue(key=k, value=AnyValue(string_value=v))

    spans = [Span(trace_id=bytes.fromhex(trace_id), span_id=bytes.fromhex("00f067aa0ba902b7"),
                  name="invoke_agent support", start_time_unix_nano=1, end_time_unix_nano=99,
                  attributes=[kv("gen_ai.operation.name", "invoke_agent")])]
    for i, (name, status) in enumerate(tools):
        spans.append(Span(
            trace_id=bytes.fromhex(trace_id), span_id=bytes([0, 0, 0, 0, 0, 0, 1, i + 1]),
            parent_span_id=bytes.fromhex("00f067aa0ba902b7"), name=f"execute_tool {name}",
            start_time_unix_nano=10 + i, end_time_unix_nano=20 + i,
            attributes=[kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", name),
                        kv("gen_ai.tool.status", status)],
            events=[Span.Event(name="gen_ai.tool.message", time_unix_nano=11,
                               attributes=[kv("content", json.dumps({"order_id": "1002"}))])],
            status=Status(code=2 if status == "error" else 1)))
    req = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource={"attributes": [kv("service.name", "svc")]},
        scope_spans=[ScopeSpans(spans=spans)])])
    return req.SerializeToString()


@pytest.fixture
def rx() -> Any:
    with OTLPReceiver(port=0, max_bytes=64 * 1024) as receiver:
        yield receiver


def test_receiver_protobuf(rx: OTLPReceiver) -> None:
    assert rx.endpoint == f"http://127.0.0.1:{rx.port}/v1/traces"
    status, _ = _post(rx, _pb_request(tools=(("lookup_order", "success"),
                                             ("issue_refund", "error"))),
                      "application/x-protobuf")
    assert status == 200
    spans = rx.collector.get(TRACE)
    assert len(spans) == 3
    assert {s.service for s in spans} == {"svc"}
    tools = spans_to_tool_calls(spans)
    assert [(t.name, t.status) for t in tools] == [("lookup_order", "success"),
                                                    ("issue_refund", "error")]
    assert tools[0].arguments == {"order_id": "1002"}
    assert Observation(tools=tools).fired_tools() == ("lookup_order",)
    assert rx.stats.accepted == 1
    assert rx.stats.spans == 3


def test_receiver_gzip_and_json(rx: OTLPReceiver) -> None:
    status, _ = _post(rx, gzip.compress(_pb_request()), "application/x-protobuf", gz=True)
    assert status == 200
    doc = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "js"}}]}, "scopeSpans": [{"spans": [
            {"traceId": "ab" * 16, "spanId": "cd" * 8, "parentSpanId": "", "name": "execute_tool x",
             "startTimeUnixNano": "5", "endTimeUnixNano": "6", "status": {"code": 2},
             "attributes": [{"key": "gen_ai.operation.name",
                             "value": {"stringValue": "execute_tool"}},
                            {"key": "n", "value": {"intValue": "7"}},
                            {"key": "l", "value": {"arrayValue": {"values": [
                                {"boolValue": True}]}}}]}]}]}]}
    status, body = _post(rx, gzip.compress(json.dumps(doc).encode()), "application/json",
                         gz=True)
    assert status == 200
    assert body == b"{}"
    (span,) = rx.collector.get("ab" * 16)
    assert span.status == "ERROR"
    assert span.attributes["n"] == 7
    assert span.attributes["l"] == (True,)
    assert span.parent_span_id is None
    (tool,) = spans_to_tool_calls([span])
    assert tool.name == "x"
    assert tool.status == "error"


def test_receiver_rejects_oversized_and_malformed(rx: OTLPReceiver) -> None:
    status, _ = _post(rx, b"x" * 10, "application/x-protobuf", length=rx.max_bytes + 1)
    assert status == 413
    bomb = gzip.compress(b"\0" * (rx.max_bytes * 16 + 10))
    assert len(bomb) < rx.max_bytes
    status, _ = _post(rx, bomb, "application/x-protobuf", gz=True)
    assert status == 413
    assert _post(rx, b"\xff\xff\xff", "application/x-protobuf")[0] == 400
    assert _post(rx, b"{not json", "application/json")[0] == 400
    assert _post(rx, json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "zz", "spanId": "cd" * 8}]}]}]}).encode(), "application/json")[0] == 400
    assert _post(rx, b"{}", "text/plain")[0] == 400
    assert _post(rx, b"not gzip", "application/json", gz=True)[0] == 400
    assert _post(rx, b"{}", "application/json", path="/v1/metrics")[0] == 404
    st = rx.stats
    assert st.rejected_too_large == 2
    assert st.rejected_malformed == 5
    assert rx.collector.total_spans == 0
    assert "rejected 2 oversized" in OTLPReceiverSource(rx).describe()


def test_receiver_with_real_otlp_exporter() -> None:
    exporter_mod = pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    with OTLPReceiver(port=0) as rx:
        provider = TracerProvider()  # private: the global provider is left alone
        exporter = exporter_mod.OTLPSpanExporter(endpoint=rx.endpoint, timeout=5)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("t")
        with tracer.start_as_current_span("root") as root, tracer.start_as_current_span(
                "execute_tool search_faq", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_faq",
                    "gen_ai.tool.status": "success",
                    "gen_ai.tool.call.arguments": '{"query": "hours"}'}):
            pass
        provider.shutdown()
        trace_id = format(root.get_span_context().trace_id, "032x")
        spans = rx.collector.get(trace_id)
    (tool,) = spans_to_tool_calls(spans)
    assert tool.name == "search_faq"
    assert tool.arguments == {"query": "hours"}


def test_receiver_arguments() -> None:
    from agentverity_props.errors import InvalidArgument
    with pytest.raises(InvalidArgument):
        OTLPReceiver(port=70000)
    with pytest.raises(InvalidArgument):
        OTLPReceiver(max_bytes=10)
    with pytest.raises(InvalidArgument):
        OTLPReceiverSource(object())


def _span(name: str, *, start: int, tool: str | None = None, status: str | None = "success",
          parent: str | None = "aa" * 8, sid: str | None = None, **attrs: Any) -> SpanRecord:
    a: dict[str, Any] = dict(attrs)
    if tool is not None:
        a.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool})
        if status is not None:
            a["gen_ai.tool.status"] = status
    return SpanRecord(trace_id=TRACE, span_id=sid or f"{start:016x}", name=name,
                      parent_span_id=parent, start_ns=start, end_ns=start + 1, attributes=a)


def test_tool_extraction_order_and_filters() -> None:
    rng = random.Random(7)
    spans = [_span("chat", start=0, **{"gen_ai.operation.name": "chat"}),
             _span("execute_tool b", start=30, tool="b"),
             _span("execute_tool a", start=10, tool="a", status="error"),
             _span("execute_tool c", start=20, tool="c", status=None),
             _span("execute_tool Out", start=40, tool="Out", **{
                 "gen_ai.tool.description": "IMPORTANT: This StructuredOutputTool should ..."}),
             _span("execute_tool legacy", start=50)]  # no gen_ai attributes at all
    rng.shuffle(spans)
    tools = spans_to_tool_calls(spans)
    assert [(t.name, t.status) for t in tools] == [("a", "error"), ("c", "unknown"),
                                                    ("b", "success"), ("legacy", "unknown")]
    assert [t.name for t in spans_to_tool_calls(spans, exclude=["b"])] == ["a", "c", "legacy"]
    assert "Out" in [t.name for t in spans_to_tool_calls(spans, include_structured_output=True)]


def test_tool_arguments_latest_conventions_event() -> None:
    msgs = [{"role": "tool", "parts": [{"type": "tool_call", "name": "t",
                                        "arguments": {"k": [1, 2]}}]}]
    span = SpanRecord(TRACE, "bb" * 8, "execute_tool t", attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t",
        "gen_ai.tool.status": "success"},
        events=(SpanEvent("gen_ai.client.inference.operation.details",
                          {"gen_ai.input.messages": json.dumps(msgs)}),))
    (tool,) = spans_to_tool_calls([span])
    assert tool.arguments == {"k": [1, 2]}


def test_collector_wait_semantics() -> None:
    c = SpanCollector(max_traces=2)
    assert c.wait(TRACE, timeout_s=0.05) == []  # nothing: returns empty at the timeout
    c.add([_span("child", start=1, parent="ff" * 8)])
    got = c.wait(TRACE, timeout_s=5, root_span_id="ff" * 8, settle_s=0)
    assert len(got) == 1
    # rooted elsewhere: waits for the root's child until the timeout, then returns what it has
    assert len(c.wait(TRACE, timeout_s=0.05, root_span_id="ee" * 8)) == 1
    for i in range(3):
        c.add([SpanRecord(f"{i:032x}", "11" * 8, "x")])
    assert c.get(TRACE) == []  # oldest trace dropped: memory stays bounded
    assert len(c.pop(f"{2:032x}")) == 1
    assert c.get(f"{2:032x}") == []


def test_trace_context_and_no_spans_message() -> None:
    ctx = new_trace_context({"agentverity.case": "refund, fast"})
    h = ctx.headers()
    version, trace_id, span_id, flags = h["traceparent"].split("-")
    assert (version, flags, len(trace_id), len(span_id)) == ("00", "01", 32, 16)
    assert h["baggage"] == "agentverity.case=refund%2C%20fast"
    assert new_trace_context().trace_id != ctx.trace_id
    err = NoSpansArrived(TRACE, 2.0, "http://127.0.0.1:4318/v1/traces")
    assert str(err) == (f"no spans arrived for trace {TRACE} within 2s: is the agent "
                        "instrumented and exporting to http://127.0.0.1:4318/v1/traces?")
    assert err.kind == "no_spans"
    assert not err.retryable


def test_otlp_source_waits_in_thread(rx: OTLPReceiver) -> None:
    source = OTLPReceiverSource(rx)

    async def go() -> list[SpanRecord]:
        # no root span id: complete once no new span arrived for a short while
        waiter = asyncio.ensure_future(source.wait_for(TRACE, timeout_s=5))
        await asyncio.sleep(0.05)
        await asyncio.to_thread(_post, rx, _pb_request(), "application/x-protobuf")
        return await waiter

    spans = asyncio.run(go())
    assert {s.name for s in spans} >= {"execute_tool lookup_order"}
    assert rx.collector.get(TRACE) == []  # read once


# ------------------------------------------------------------------ in-process capture


def test_in_process_strands_capture() -> None:
    pytest.importorskip("strands")
    from agentverity_props.adapters import from_strands
    from agentverity_props.examples.support import SupportOutcome, support_factory
    from agentverity_props.otel._traced import TracedAdapter

    inner = from_strands(support_factory(seed=3, ambiguity=0.0),
                         structured_output_model=SupportOutcome)
    adapter = TracedAdapter(inner, span_timeout_s=5, exclude_tools=())
    obs = adapter.invoke("Refund order 1004 please")  # $640: the refund tool errors
    assert [(t.name, t.status) for t in obs.tools] == [("lookup_order", "success"),
                                                        ("issue_refund", "error")]
    assert obs.fired_tools() == ("lookup_order",)
    assert obs.tools[1].arguments == {"order_id": "1004", "amount": 640.0}
    # async path, a fresh trace per call
    obs2 = asyncio.run(adapter.ainvoke("How long does shipping take?"))
    assert obs2.fired_tools() == ("search_faq",)
