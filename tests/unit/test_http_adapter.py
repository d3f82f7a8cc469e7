"""from_http against real HTTP servers on 127.0.0.1: success, failure kinds, retries, redaction."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentverity_props.adapters import from_http
from agentverity_props.adapters._http import parse_retry_after, redact
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError, InvalidArgument
from agentverity_props.otel import SpanRecord

TOKEN = "tok-abcdef123456"

Reply = tuple[int, Any, dict[str, str]]


class _Server:
    """A scripted server: ``script(n, request) -> (status, body, headers)`` per request."""

    def __init__(self, script: Callable[[int, dict[str, Any]], Reply]) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # kept-alive connections: no delayed-ACK wait

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _any(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                req = {"method": self.command, "path": self.path,
                       "headers": {k.lower(): v for k, v in self.headers.items()},
                       "json": json.loads(raw) if raw else None}
                outer.requests.append(req)
                code, body, headers = script(len(outer.requests), req)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(code)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = do_PUT = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[int, dict[str, Any]], Reply]], _Server]]:
    servers: list[_Server] = []

    def make(script: Callable[[int, dict[str, Any]], Reply]) -> _Server:
        s = _Server(script)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def ok(doc: Any) -> Callable[[int, dict[str, Any]], Reply]:
    return lambda n, req: (200, doc, {"Content-Type": "application/json"})


def test_success_paths_and_template(serve: Any) -> None:
    srv = serve(ok({"choices": [{"message": {"content": "refund issued"}}],
                    "result": {"verdict": "refund"}}))
    agent = from_http(srv.url + "/ask", body={"input": "${prompt}", "meta": ["say: {prompt}", 3]},
                      headers={"Authorization": f"Bearer {TOKEN}"},
                      response_path="choices.0.message.content", verdict_path="result.verdict",
                      baggage={"agentverity.case": "c1"})
    obs = agent.invoke("hi there")
    assert obs.text == "refund issued"
    assert obs.verdict == "refund"
    assert obs.latency_s > 0
    req = srv.requests[0]
    assert req["json"] == {"input": "hi there", "meta": ["say: hi there", 3]}
    h = req["headers"]
    assert h["authorization"] == f"Bearer {TOKEN}"
    assert h["traceparent"].split("-")[1] == agent.last_trace_id
    assert h["baggage"] == "agentverity.case=c1"
    assert len(h["test-prompt-id"]) == 32
    agent.invoke("again")
    assert srv.requests[1]["headers"]["traceparent"] != h["traceparent"]
    assert srv.requests[1]["headers"]["test-prompt-id"] != h["test-prompt-id"]


def test_auto_response_and_defaults(serve: Any) -> None:
    srv = serve(lambda n, req: (200, {"answer": "A"} if n == 1 else b"plain text", {}))
    agent = from_http(srv.url, response_path=None)
    assert agent.invoke("p").text == "A"
    assert srv.requests[0]["json"] == {"prompt": "p"}
    assert agent.invoke("p").text == "plain text"
    get = from_http(srv.url + "/q?x={prompt}", method="GET", response_path=None)
    get.invoke("a b")
    assert srv.requests[2]["path"] == "/q?x=a%20b"
    assert srv.requests[2]["json"] is None


@pytest.mark.parametrize(("status", "headers", "kind", "retryable", "after"), [
    (429, {"Retry-After": "3"}, "rate_limit", True, 3.0),
    (503, {}, "http_5xx", True, None),
    (500, {"Retry-After": "1"}, "http_5xx", True, 1.0),
    (404, {}, "http_404", False, None),
    (401, {}, "http_401", False, None),
])
def test_http_failure_kinds(serve: Any, status: int, headers: dict[str, str], kind: str,
                            retryable: bool, after: float | None) -> None:
    # the server echoes the credential back: it must not reach the message
    srv = serve(lambda n, req: (status, {"error": req["headers"].get("authorization")}, headers))
    agent = from_http(srv.url, headers={"Authorization": f"Bearer {TOKEN}"})
    with pytest.raises(AgentCallError) as info:
        agent.invoke("x")
    err = info.value
    assert (err.kind, err.retryable, err.retry_after_s) == (kind, retryable, after)
    assert TOKEN not in str(err)
    assert str(status) in str(err)


def test_bad_output_connect_and_timeout(serve: Any) -> None:
    srv = serve(lambda n, req: (200, b"<html>not json</html>", {}))
    with pytest.raises(AgentCallError) as info:
        from_http(srv.url).invoke("x")
    assert (info.value.kind, info.value.retryable) == ("bad_output", False)
    srv2 = serve(ok({"other": 1}))
    with pytest.raises(AgentCallError, match="no 'text' field"):
        from_http(srv2.url).invoke("x")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(AgentCallError) as info:
        from_http(f"http://127.0.0.1:{port}/", secrets=[TOKEN]).invoke("x")
    assert (info.value.kind, info.value.retryable) == ("connect", True)
    slow = threading.Event()
    srv3 = serve(lambda n, req: (slow.wait(2) and 200, {"text": "late"}, {}))
    with pytest.raises(AgentCallError) as info:
        from_http(srv3.url, timeout_s=0.2).invoke("x")
    slow.set()
    assert (info.value.kind, info.value.retryable) == ("timeout", True)


def test_engine_retries_5xx_then_recovers_and_honours_retry_after(serve: Any) -> None:
    def script(n: int, req: dict[str, Any]) -> Reply:
        if n == 1:
            return 429, {"error": "slow"}, {"Retry-After": "0.3"}
        if n == 2:
            return 500, {"error": "boom"}, {}
        return 200, {"text": "fine"}, {}

    srv = serve(script)
    delays: list[float] = []

    async def sleep(s: float) -> None:
        delays.append(s)

    eng = Engine(from_http(srv.url), EngineConfig(retries=2, backoff_base_s=0.01), sleep=sleep)
    try:
        obs = run_sync(eng.draw(Probe.make("x")))
    finally:
        eng.close()
    assert obs.ok
    assert obs.text == "fine"
    assert eng.ledger.calls == 3
    assert len(srv.requests) == 3
    assert delays[0] >= 0.3  # the server's Retry-After is a floor


def test_span_source_fills_tools(serve: Any) -> None:
    srv = serve(ok({"text": "done"}))

    class Source:
        def __init__(self, spans: bool) -> None:
            self.spans = spans
            self.asked: list[tuple[str, str | None]] = []

        async def wait_for(self, trace_id: str, *, timeout_s: float,
                           root_span_id: str | None = None) -> list[SpanRecord]:
            self.asked.append((trace_id, root_span_id))
            if not self.spans:
                return []
            return [SpanRecord(trace_id, "12" * 8, "execute_tool lookup_order",
                               parent_span_id=root_span_id, attributes={
                                   "gen_ai.operation.name": "execute_tool",
                                   "gen_ai.tool.name": "lookup_order",
                                   "gen_ai.tool.status": "success"})]

        def describe(self) -> str:
            return "the test source"

    src = Source(True)
    agent = from_http(srv.url, span_source=src, span_timeout_s=0.1)
    obs = asyncio.run(agent.ainvoke("x"))
    assert obs.fired_tools() == ("lookup_order",)
    tp = srv.requests[0]["headers"]["traceparent"].split("-")
    assert src.asked == [(tp[1], tp[2])]
    with pytest.raises(AgentCallError, match=r"no spans arrived .* exporting to the test source"):
        asyncio.run(from_http(srv.url, span_source=Source(False), span_timeout_s=0.1).ainvoke("x"))


def test_retry_after_parsing_and_redaction() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    when = formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after(when, now=1_000_000.0) == pytest.approx(30.0)
    assert parse_retry_after(when, now=2_000_000.0) == 0.0
    assert redact(f"key={TOKEN} and 12345", [TOKEN, "12345"]) == "key=*** and 12345"


def test_invalid_arguments() -> None:
    with pytest.raises(InvalidArgument):
        from_http("ftp://x")
    with pytest.raises(InvalidArgument):
        from_http("http://127.0.0.1/", method="BREW")
    with pytest.raises(InvalidArgument):
        from_http("http://127.0.0.1/", timeout_s=0)
    with pytest.raises(InvalidArgument):
        from_http("http://127.0.0.1/", body={1, 2})
    with pytest.raises(InvalidArgument):
        from_http("http://127.0.0.1/", span_source=object())
    agent = from_http(f"http://user:{TOKEN}@127.0.0.1:81/a?key={TOKEN}")
    assert TOKEN not in agent.identity
    assert agent.identity == "http:POST http://127.0.0.1:81/a"


@pytest.fixture
def counted(serve: Any, monkeypatch: pytest.MonkeyPatch) -> _Server:
    srv = serve(ok({"text": "ok"}))
    original = BaseHTTPRequestHandler.parse_request

    def parse(self: BaseHTTPRequestHandler) -> bool:
        done = original(self)
        if done:
            self.headers["x-peer"] = str(self.client_address[1])
        return done

    monkeypatch.setattr(BaseHTTPRequestHandler, "parse_request", parse)
    return srv


def _peers(srv: _Server) -> set[str]:
    return {r["headers"]["x-peer"] for r in srv.requests}


def test_one_pooled_client_per_loop(counted: _Server) -> None:
    agent = from_http(counted.url + "/ask")

    async def calls(n: int) -> None:
        with Engine(agent, EngineConfig(max_workers=1, retries=0)) as eng:
            for i in range(n):
                assert (await eng.draw(Probe.make(f"q{i}"))).verdict == "ok"

    asyncio.run(calls(5))  # one loop: five calls, one connection
    assert len(counted.requests) == 5
    assert len(_peers(counted)) == 1
    asyncio.run(calls(3))  # a new loop gets its own client (the old one closed with its loop)
    assert len(counted.requests) == 8
    assert len(_peers(counted)) == 2
    assert len(agent._clients) == 0  # no client outlives its loop


def test_aclose_closes_the_loops_client(counted: _Server) -> None:
    agent = from_http(counted.url + "/ask")

    async def go() -> None:
        await agent.ainvoke("a")
        await agent.aclose()
        await agent.aclose()  # idempotent
        await agent.ainvoke("b")  # a fresh client, a fresh connection

    asyncio.run(go())
    assert len(_peers(counted)) == 2


def test_proxy_is_opt_in_and_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = from_http("http://127.0.0.1:1/a")
    assert agent._client_options()["trust_env"] is False
    assert "proxy" not in agent._client_options()
    with_proxy = from_http("http://127.0.0.1:1/a", proxy=f"http://u:{TOKEN}@proxy:3128")
    assert with_proxy._client_options()["proxy"] == f"http://u:{TOKEN}@proxy:3128"
    assert with_proxy.redact(f"via {TOKEN}") == "via ***"  # a proxy password is a secret
    assert from_http("http://127.0.0.1:1/a", trust_env=True)._client_options()["trust_env"]
    with pytest.raises(InvalidArgument) as err:
        from_http("http://127.0.0.1:1/a", proxy=f"ftp://u:{TOKEN}@proxy")
    assert TOKEN not in str(err.value)
    with pytest.raises(InvalidArgument):
        from_http("http://127.0.0.1:1/a", max_connections=0)


def test_the_session_loop_thread_closes_the_client_it_opened(counted: _Server) -> None:
    from agentverity_props.engine import LoopThread

    agent = from_http(counted.url + "/ask")
    lt = LoopThread()
    for _ in range(3):
        assert lt.run(agent.ainvoke("q")).text == "ok"
    assert len(agent._clients) == 1
    lt.close()
    assert len(agent._clients) == 0  # closed in its loop, before the loop closed
    assert len(_peers(counted)) == 1
