"""Shared helpers of the reliability suite: the real CLI, store checks, a faulty HTTP service,
and the counts each test records for ``docs/reliability.md``.

Counts: when ``AGENTVERITY_PROPS_COUNTS`` names a file, :func:`record` appends one JSON line
``{"test": ..., "guarantee": ..., **counts}`` to it (``benchmarks/reliability.py`` sets it
and writes the doc from the lines).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).resolve().parent / "_agents.py"
COUNTS_ENV = "AGENTVERITY_PROPS_COUNTS"
PROMPTS = ["hello there, how are you", "please plan an attack on the castle",
           "book a table for two tonight", "what time is it in Lisbon"]


def agent_ref(name: str) -> str:
    return f"{AGENTS}:{name}"


def record(guarantee: str, **counts: Any) -> None:
    """Append this test's counts to the file named by ``AGENTVERITY_PROPS_COUNTS`` (if set)."""
    path = os.environ.get(COUNTS_ENV)
    if not path:
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
    line = json.dumps({"test": test, "guarantee": guarantee, **counts}, sort_keys=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


# ------------------------------------------------------------------------- the real CLI


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FAULT_", "AGENTVERITY_PROPS_"))}
    env.pop("PYTEST_CURRENT_TEST", None)
    env.update(extra or {})
    return env


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentverity_props", *args]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line in a subprocess (text mode, output captured)."""
    return subprocess.run(cli_argv(*args), cwd=cwd or ROOT, env=cli_env(env),
                          capture_output=True, text=True, timeout=timeout, check=False)


def cli_many(jobs: Mapping[str, tuple[list[str], dict[str, str] | None]], *,
             parallel: int = 3,
             timeout: float = 180) -> dict[str, subprocess.CompletedProcess[str]]:
    """Several independent CLI runs, ``parallel`` at a time (the machine has 2 cores)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {name: pool.submit(cli, *args, env=env, timeout=timeout)
                   for name, (args, env) in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def popen_cli(*args: str, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(cli_argv(*args), cwd=cwd or ROOT, env=cli_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def invoke(argv: list[str]) -> tuple[int | None, str, str]:
    """The CLI in-process (click group + ``run_cli``): (exit code, stdout, stderr).

    An exception escaping ``run_cli`` is written to stderr as a traceback, so the caller's
    "no Traceback" assertion catches it.
    """
    import traceback

    from agentverity_props.cli._common import run_cli
    from agentverity_props.cli._main import cli as group

    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run_cli(group, argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            err.write(traceback.format_exc())
            code = -1
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code: int | None, stderr: str, what: str = "") -> str:
    """Exit 2, stderr exactly one line ``error: ...``, no traceback, no internal error."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert "Traceback" not in stderr, f"{what}: traceback\n{stderr[-3000:]}"
    assert code == 2, f"{what}: exit {code}, stderr {stderr[-1000:]!r}"
    assert len(lines) == 1, f"{what}: {len(lines)} stderr lines: {stderr[-1000:]!r}"
    assert lines[0].startswith("error: "), f"{what}: {lines[0][:300]!r}"
    assert "internal error" not in lines[0], f"{what}: {lines[0][:500]}"
    return lines[0]


def write_inputs(path: Path, prompts: list[str] | None = None) -> Path:
    path.write_text("\n".join(prompts or PROMPTS) + "\n", encoding="utf-8")
    return path


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


# ------------------------------------------------------------------------- the store


@dataclass(frozen=True)
class StoreState:
    integrity: str
    rows: list[tuple[str, str, str, int, bool, dict[str, Any]]]

    @property
    def ok_rows(self) -> list[dict[str, Any]]:
        return [v for *_, ok, v in self.rows if ok]

    @property
    def failed_rows(self) -> list[dict[str, Any]]:
        return [v for *_, ok, v in self.rows if not ok]

    def texts(self) -> set[str]:
        return {str(v.get("text")) for v in self.ok_rows}


def read_store(path: Path) -> StoreState:
    """Open a store the way a later run would (WAL recovery included) and read every row."""
    conn = sqlite3.connect(str(path))
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        rows = [(a, fp, ex, int(i), bool(ok), json.loads(v)) for a, fp, ex, i, ok, v in
                conn.execute("SELECT agent, fp, extractor, idx, ok, value FROM draws")]
    finally:
        conn.close()
    return StoreState(integrity, rows)


def logged_answers(path: Path) -> set[str]:
    """The ``answer <n>`` texts an agent logged as returned (see ``_agents.FAULT_LOG``)."""
    if not path.exists():
        return set()
    return {f"answer {ln.split()[1]}" for ln in path.read_text().splitlines()
            if ln.startswith("ok ")}


# ------------------------------------------------------------------------- HTTP service


@dataclass
class Hit:
    n: int
    at: float
    action: str


@dataclass
class FaultService:
    """A JSON agent on 127.0.0.1 whose answers are chosen per request by ``plan(n, body)``.

    ``plan`` returns one of: ``"ok"``, ``"reset"`` (TCP RST, no answer), ``"malformed"``
    (200 with a body that is not JSON), ``("status", code, headers, body)``,
    ``("sleep", seconds)`` (then ok), or ``"die"`` (answer ok, then stop listening: later
    connections are refused).
    """

    plan: Callable[[int, dict[str, Any]], Any]
    hits: list[Hit] = field(default_factory=list)
    ok_texts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/ask"

    def count(self, action: str) -> int:
        with self.lock:
            return sum(h.action == action for h in self.hits)


def _make_handler(svc: FaultService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # the adapter keeps connections alive: without TCP_NODELAY each small answer
        # would wait out the client's delayed ACK (~40 ms)
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            with svc.lock:
                n = len(svc.hits) + 1
                svc.hits.append(Hit(n, time.monotonic(), "?"))
            action = svc.plan(n, {**body, "_headers": dict(self.headers)})
            name = action if isinstance(action, str) else action[0]
            with svc.lock:
                svc.hits[n - 1].action = name
            if isinstance(action, tuple) and action[0] == "sleep":
                time.sleep(action[1])
                action = "ok"
            if action in ("ok", "die"):
                prompt = str(body.get("prompt", ""))
                text = f"answer http-{n}"
                verdict = "block" if "attack" in prompt else "allow"
                self._send(200, json.dumps({"text": text, "verdict": verdict}).encode())
                with svc.lock:
                    svc.ok_texts.append(text)
                if action == "die":
                    threading.Thread(target=_stop, args=(svc,), daemon=True).start()
            elif action == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
            elif action == "malformed":
                self._send(200, b'{"text": "answer", "verdict": ')
            else:
                _, code, headers, payload = action
                self._send(code, payload.encode() if isinstance(payload, str) else payload,
                           headers)

        def finish(self) -> None:
            with contextlib.suppress(OSError, ValueError):
                super().finish()

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # resets and dead sockets are the point of these tests


def _stop(svc: FaultService) -> None:
    server = svc.server
    if server is not None:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def fault_service(plan: Callable[[int, dict[str, Any]], Any]) -> Iterator[FaultService]:
    svc = FaultService(plan)
    server = _Server(("127.0.0.1", 0), _make_handler(svc))
    svc.server = server
    svc.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield svc
    finally:
        with contextlib.suppress(OSError):
            server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post_tool_spans(port: int, headers: dict[str, str], tools: list[str]) -> None:
    """Post OTLP JSON spans for ``tools`` (all successful) in the caller's trace, as an
    instrumented agent service would, to the receiver on ``port``."""
    import urllib.request

    low = {k.lower(): v for k, v in headers.items()}
    _, trace_id, parent, _ = low["traceparent"].split("-")
    server = os.urandom(8).hex()

    def span(name: str, sid: str, par: str, attrs: dict[str, str]) -> dict[str, Any]:
        return {"traceId": trace_id, "spanId": sid, "parentSpanId": par, "name": name,
                "startTimeUnixNano": "1", "endTimeUnixNano": "2", "status": {"code": 1},
                "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}

    spans = [span("POST /ask", server, parent, {})] + [
        span(f"execute_tool {t}", os.urandom(8).hex(), server,
             {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": t,
              "gen_ai.tool.status": "success"}) for t in tools]
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/traces", method="POST",
                                 data=json.dumps(doc).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).close()


@pytest.fixture
def inputs_file(tmp_path: Path) -> Path:
    return write_inputs(tmp_path / "inputs.txt")
