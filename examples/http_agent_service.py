"""A Strands support agent behind a small HTTP server, exporting its spans over OTLP/HTTP.

This is the shape of a real deployment the ``tools`` command tests: the agent runs in its own
process; the harness POSTs a request carrying W3C ``traceparent``/``baggage`` headers; the
service joins that trace, runs the agent, and exports the agent's OpenTelemetry spans to the
harness's OTLP receiver, where ``execute_tool`` spans show which tools really ran.

Run it (offline: the agent's model is rule-based, see ``agentverity_props.examples.support``)::

    python examples/http_agent_service.py --port 8080 \\
        --otlp-endpoint http://127.0.0.1:4318/v1/traces
    agentverity-props tools --config examples/tools_cases.yaml --otlp-port 4318

API: ``POST /ask`` with ``{"input": "..."}`` (or ``"prompt"``) answers
``{"text": reply, "verdict": first tool}``; ``GET /health`` answers ``{"ok": true}``.
The chosen port is printed on stdout as ``LISTENING <port>``.

Needs the extras ``strands`` and ``otel`` plus ``opentelemetry-exporter-otlp-proto-http``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def setup_tracing(endpoint: str | None, service_name: str) -> Any:
    """Install a global TracerProvider exporting to ``endpoint`` (None: no tracing at all)."""
    if not endpoint:
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:  # one line naming the fix, not a traceback
        raise SystemExit(f"error: --otlp-endpoint needs OpenTelemetry ({exc.name} is missing)"
                         " — pip install 'agentverity-props[http,otel]'") from None

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint,
                                                                    timeout=2)))
    trace.set_tracer_provider(provider)
    return provider


class SupportService:
    """Runs one fresh support agent per request, inside the caller's trace."""

    def __init__(self, *, provider: Any, seed: int, ambiguity: float) -> None:
        from agentverity_props.examples.support import SupportOutcome, build_support_agent

        self.provider = provider
        self._build = build_support_agent
        self._outcome = SupportOutcome
        self._rng = random.Random(seed)
        self._ambiguity = ambiguity

    def answer(self, prompt: str, headers: dict[str, str]) -> dict[str, Any]:
        if self.provider is None:
            return self._run(prompt)
        from opentelemetry import baggage, propagate, trace

        # propagators look keys up in lower case; HTTP header names are case-insensitive
        ctx = propagate.extract({k.lower(): v for k, v in headers.items()})
        tracer = trace.get_tracer("examples.http_agent_service")
        try:
            with tracer.start_as_current_span("POST /ask", context=ctx,
                                              kind=trace.SpanKind.SERVER) as span:
                for key, value in baggage.get_all(ctx).items():
                    span.set_attribute(f"baggage.{key}", str(value))
                return self._run(prompt)
        finally:
            # export before answering, so the caller need not wait for the batch timer; a
            # receiver that is not listening must not slow the answer down (half a second at
            # most: the spans of that call are then missing, which the caller reports)
            self.provider.force_flush(timeout_millis=500)

    def _run(self, prompt: str) -> dict[str, Any]:
        agent = self._build(rng=self._rng, ambiguity=self._ambiguity)
        result = agent(prompt, structured_output_model=self._outcome)
        out = result.structured_output
        return {"text": out.reply, "verdict": out.verdict}


def make_handler(service: SupportService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # clients keep connections alive (agentverity-props' HTTP adapter does): without
        # TCP_NODELAY every small answer would wait out the client's delayed ACK (~40 ms)
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, code: int, doc: dict[str, Any]) -> None:
            body = json.dumps(doc).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200 if self.path == "/health" else 404, {"ok": self.path == "/health"})

        def do_POST(self) -> None:
            if self.path != "/ask":
                self._send(404, {"error": "POST /ask"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if length > 1_000_000:
                    self._send(413, {"error": "request too large"})
                    return
                doc = json.loads(self.rfile.read(length) or b"{}")
                prompt = str(doc.get("input") or doc.get("prompt") or "")
            except (ValueError, AttributeError):
                self._send(400, {"error": "send a JSON object with input"})
                return
            if not prompt:
                self._send(400, {"error": "input is empty"})
                return
            try:
                self._send(200, service.answer(prompt, dict(self.headers.items())))
            except Exception as exc:  # the agent failed: a 500 the harness may retry
                self._send(500, {"error": type(exc).__name__})

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = free)")
    parser.add_argument("--otlp-endpoint",
                        default=os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
                        help="OTLP/HTTP traces URL (default $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)")
    parser.add_argument("--no-otel", action="store_true",
                        help="run uninstrumented (to see what the harness says then)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ambiguity", type=float, default=0.0,
                        help="chance that an ambiguous request takes its other route")
    args = parser.parse_args(argv)

    provider = None if args.no_otel else setup_tracing(args.otlp_endpoint,
                                                        "support-http-agent")
    service = SupportService(provider=provider, seed=args.seed, ambiguity=args.ambiguity)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(service))
    server.daemon_threads = True

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
        if provider is not None:
            provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
