"""End to end: the ``tools`` CLI (a real subprocess) against agents behind HTTP on 127.0.0.1.

The main test drives examples/http_agent_service.py (a real Strands agent exporting its
spans over OTLP/HTTP with the official exporter). The failure paths use a small in-test
server whose endpoints fail on purpose and post OTLP JSON spans to the CLI's receiver.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "examples" / "http_agent_service.py"
EXAMPLE_CASES = ROOT / "examples" / "tools_cases.yaml"
CLI = ["-c", "import sys; from agentverity_props.cli import main; main(sys.argv[1:])"]
SECRET = "sk-test-9f8e7d6c5b4a"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_cli(*args: str, env: dict[str, str] | None = None,
            timeout: float = 90) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "AGENT_API_KEY": SECRET, **(env or {})}
    return subprocess.run([sys.executable, *CLI, "tools", *args], capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=ROOT, check=False)


@pytest.fixture(scope="module")
def otlp_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def service(otlp_port: int) -> Iterator[str]:
    """The example service, exporting to the receiver the CLI will open on ``otlp_port``."""
    # the service exports with the official OTLP exporter (dev dependency)
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    proc = subprocess.Popen(
        [sys.executable, str(SERVICE), "--port", "0",
         "--otlp-endpoint", f"http://127.0.0.1:{otlp_port}/v1/traces"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("LISTENING "):
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"service did not start: {line!r} {err[-2000:]}")
        yield f"http://127.0.0.1:{int(line.split()[1])}/ask"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_example_service_end_to_end(service: str, otlp_port: int, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    res = run_cli("--config", str(EXAMPLE_CASES), "--otlp-port", str(otlp_port),
                  "--format", "json", "--output", str(out), env={"AGENT_URL": service})
    assert res.returncode == 1, res.stderr
    report = json.loads(out.read_text())
    assert next(iter(report)) == "schema"
    assert report["schema"] == "agentverity_props.tools/1"
    cases = {c["name"]: c for c in report["cases"]}
    refund = cases["refund looks the order up, then refunds"]
    assert refund["status"] == "pass"
    assert refund["tools_seen"] == ["lookup_order", "issue_refund"]
    # the structured-output tool the service uses is not an action: never listed
    assert all("SupportOutcome" not in c["tools_seen"] for c in report["cases"])
    ordered = cases["refund arguments and order"]
    assert ordered["status"] == "pass"
    assert ordered["calls"] == 3
    args = [t["arguments"] for t in ordered["runs"][0]["tools"]]
    assert args[0] == {"order_id": "1003"}
    faq = cases["FAQ or escalation, never a refund"]
    assert faq["status"] == "pass"
    assert faq["tools_seen"] == ["search_faq"]
    assert faq["runs"][0]["similarity"] > 0.6
    # issue_refund ran but failed (over $500): it does not count as fired
    over = cases["a refund over the limit does not fire"]
    assert over["status"] == "fail"
    assert over["tools_seen"] == ["lookup_order"]
    assert over["tools_errored"] == ["issue_refund"]
    assert "issue_refund" in over["reasons"][0]
    # distinct calls, distinct traces
    traces = [r["trace_id"] for c in report["cases"] for r in c["runs"]]
    assert len(set(traces)) == len(traces) == 6
    blob = out.read_text() + res.stdout + res.stderr
    assert SECRET not in blob
    # the URL filled from ${AGENT_URL} is not a secret (no secret-like name, key or prefix):
    # it is shown, so a failing case says which endpoint it called
    assert f"http:POST {service}" in blob


def test_all_pass_exit_zero_junit(service: str, otlp_port: int, tmp_path: Path) -> None:
    cases = tmp_path / "ok.yaml"
    cases.write_text(f"""
config: {{span_timeout_s: 5}}
cases:
  - name: escalation
    url: {service}
    api_key: ${{AGENT_API_KEY}}
    body: {{input: "This is unacceptable, I want a lawyer"}}
    required_tools: [escalate_to_human]
    forbidden_tools: [issue_refund, lookup_order]
""")
    out = tmp_path / "r.xml"
    res = run_cli("--config", str(cases), "--otlp-port", str(otlp_port), "--format", "junit",
                  "--output", str(out))
    assert res.returncode == 0, res.stdout + res.stderr
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "1"
    assert suite.get("failures") == "0"
    assert "escalate_to_human" in out.read_text()


# ------------------------------------------------------------------ failure paths


class _Faulty(BaseHTTPRequestHandler):
    """Endpoints that misbehave on purpose; successful answers post their spans first."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # kept-alive connections: no delayed-ACK wait
    counts: ClassVar[dict[str, int]] = {}
    lock: ClassVar[threading.Lock] = threading.Lock()
    otlp: ClassVar[str] = ""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, code: int, doc: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _post_spans(self, tools: list[tuple[str, str]], pad: int = 0) -> None:
        _, trace_id, parent, _ = self.headers["traceparent"].split("-")
        server_id = os.urandom(8).hex()

        def span(name: str, sid: str, par: str, attrs: dict[str, str], t: int) -> dict[str, Any]:
            return {"traceId": trace_id, "spanId": sid, "parentSpanId": par, "name": name,
                    "startTimeUnixNano": str(t), "endTimeUnixNano": str(t + 10),
                    "attributes": [{"key": k, "value": {"stringValue": v}}
                                   for k, v in attrs.items()], "status": {"code": 1}}

        spans = [span("POST /faulty", server_id, parent, {"pad": "x" * pad}, 1)]
        for i, (tool, status) in enumerate(tools):
            spans.append(span(f"execute_tool {tool}", os.urandom(8).hex(), server_id,
                              {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                               "gen_ai.tool.status": status}, 2 + i))
        doc = {"resourceSpans": [{"resource": {"attributes": []},
                                  "scopeSpans": [{"spans": spans}]}]}
        req = urllib.request.Request(self.otlp, data=json.dumps(doc).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=5).close()
        except urllib.error.HTTPError as exc:  # 413 for /huge: the harness must say so
            exc.close()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path
        with self.lock:
            n = self.counts[path] = self.counts.get(path, 0) + 1
        if path == "/flaky" and n <= 2:
            self._send(500, {"error": "warming up"})
        elif path == "/limited" and n == 1:
            self._send(429, {"error": "slow down"}, {"Retry-After": "1"})
        elif path == "/quiet":
            self._send(200, {"text": "done, but nobody is watching"})
        elif path == "/huge":
            self._post_spans([("search_faq", "success")], pad=200_000)
            self._send(200, {"text": "ok"})
        elif path == "/broken-tool":
            self._post_spans([("lookup_order", "error"), ("search_faq", "success")])
            self._send(200, {"text": "partial"})
        else:
            self._post_spans([("lookup_order", "success"), ("issue_refund", "success")])
            self._send(200, {"text": "refunded"})


@pytest.fixture
def faulty(otlp_port: int) -> Iterator[tuple[str, int]]:
    port = free_port()  # the receiver for this CLI run
    handler = type("Faulty", (_Faulty,), {"counts": {}, "lock": threading.Lock(),
                                          "otlp": f"http://127.0.0.1:{port}/v1/traces"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_failure_paths(faulty: tuple[str, int], tmp_path: Path) -> None:
    base, rx_port = faulty
    down = f"http://127.0.0.1:{free_port()}/ask"  # nothing listens there
    cases = tmp_path / "faults.yaml"
    refund = "required_tools: [lookup_order, issue_refund]"
    cases.write_text(f"""
config: {{span_timeout_s: 1.5, max_otlp_bytes: 65536, retries: 2}}
cases:
  - {{name: service down, url: "{down}", body: {{}}, {refund}}}
  - {{name: 500s then recovery, url: "{base}/flaky", api_key: "${{AGENT_API_KEY}}", {refund}}}
  - {{name: 429 with Retry-After, url: "{base}/limited", {refund}}}
  - {{name: no spans, url: "{base}/quiet", {refund}}}
  - {{name: tool with error status, url: "{base}/broken-tool",
     required_tools: [[lookup_order], [escalate_to_human]]}}
  - {{name: oversized OTLP payload, url: "{base}/huge", required_tools: [search_faq]}}
""")
    out = tmp_path / "r.json"
    res = run_cli("--config", str(cases), "--otlp-port", str(rx_port), "--format", "json",
                  "--output", str(out))
    assert res.returncode == 2, res.stderr  # incomplete evidence outranks a failure
    report = json.loads(out.read_text())
    cases_by = {c["name"]: c for c in report["cases"]}
    assert cases_by["service down"]["status"] == "error"
    assert "cannot reach the agent" in cases_by["service down"]["message"]
    flaky = cases_by["500s then recovery"]
    assert flaky["status"] == "pass"
    assert flaky["tools_seen"] == ["lookup_order", "issue_refund"]
    limited = cases_by["429 with Retry-After"]
    assert limited["status"] == "pass"
    quiet = cases_by["no spans"]
    assert quiet["status"] == "error"
    assert (f"no spans arrived for trace {quiet['runs'][0]['trace_id']} within 1.5s: is the "
            f"agent instrumented and exporting to http://127.0.0.1:{rx_port}/v1/traces"
            ) in quiet["message"]
    broken = cases_by["tool with error status"]
    assert broken["status"] == "fail"
    assert broken["tools_seen"] == ["search_faq"]
    assert broken["tools_errored"] == ["lookup_order"]
    huge = cases_by["oversized OTLP payload"]
    assert huge["status"] == "error"
    assert "rejected 1 oversized" in huge["message"]
    assert SECRET not in out.read_text() + res.stderr


def test_no_cases_without_failures_exit_two(faulty: tuple[str, int], tmp_path: Path) -> None:
    base, rx_port = faulty
    cases = tmp_path / "quiet.yaml"
    cases.write_text(f"""
config: {{span_timeout_s: 0.5}}
cases:
  - {{name: uninstrumented, url: "{base}/quiet", required_tools: [search_faq]}}
""")
    res = run_cli("--config", str(cases), "--otlp-port", str(rx_port))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "ERROR" in res.stdout
    assert "no spans arrived for trace" in " ".join(res.stdout.split())


# ------------------------------------------------------------------ configuration errors


def test_unset_variable_exit_two_without_secrets(tmp_path: Path) -> None:
    cases = tmp_path / "c.yaml"
    cases.write_text("""
config: {api_key: "${AGENT_API_KEY}"}
cases:
  - name: x
    url: http://127.0.0.1:9/ask
    api_key: "Bearer-${AGENTVERITY_TEST_SURELY_UNSET}"
    required_tools: [a]
""")
    res = run_cli("--config", str(cases), env={"AGENTVERITY_TEST_SURELY_UNSET": ""})
    assert res.returncode == 2
    assert "AGENTVERITY_TEST_SURELY_UNSET" in res.stderr
    assert "cases[0].api_key" in res.stderr
    assert SECRET not in res.stdout + res.stderr


def test_malformed_yaml_exit_two_with_line(tmp_path: Path) -> None:
    cases = tmp_path / "bad.yaml"
    cases.write_text("cases:\n  - name: x\n    url: [unclosed\n    required_tools: [a]\n")
    res = run_cli("--config", str(cases))
    assert res.returncode == 2
    assert f"{cases}:" in res.stderr
    assert "YAML syntax error" in res.stderr
    assert ":5:" in res.stderr or ":4:" in res.stderr


def test_unknown_key_exit_two(tmp_path: Path) -> None:
    cases = tmp_path / "typo.yaml"
    cases.write_text("cases:\n  - name: x\n    url: http://127.0.0.1:9/a\n"
                     "    requierd_tools: [a]\n")
    res = run_cli("--config", str(cases))
    assert res.returncode == 2
    assert "unknown key 'requierd_tools'" in res.stderr
    assert "did you mean 'required_tools'" in res.stderr
    assert f"{cases}:4" in res.stderr
