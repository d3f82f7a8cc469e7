"""Hostile HTTP services and OTLP payloads against the real CLI and a real receiver.

A service on 127.0.0.1 that echoes the caller's credential across the cut of the error
snippet, one that leaks its own upstream ``sk-`` key, one that streams an endless chunked
body, one that answers 10 MB per call; OTLP bodies nested 200,000 deep or gzip-truncated.
No fragment of a secret reaches any output, memory stays bounded, and the receiver answers
400 without a traceback.
"""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from .conftest import (
    ROOT,
    agent_ref,
    cli,
    fault_service,
    load_json,
    record,
    write_inputs,
)
from .test_privacy import Outputs, _post, _report_renderings, tools_while_probing

pytestmark = pytest.mark.e2e

SECRETS = {"bearer token": "tok-SUPERSECRET-98765",
           "sk key": "sk-live-4f9a1c7e2b8d6f3a0e5c"}
UPSTREAM = "sk-live-9c2e7d4b1a6f0e3d"  # a key the service leaks of its own accord
_PREFIX = '{"error": "bad credentials", "detail": "'


def _fragments(secret: str, width: int = 8) -> set[str]:
    """Every piece of ``secret`` long enough to matter (a cut secret leaks these)."""
    return {secret[i:i + width] for i in range(len(secret) - width + 1)}


def _echo_across_the_cut(n: int, body: dict[str, Any]) -> Any:
    """401 whose body echoes the Authorization header so that it straddles character 200
    of the body, then the service's own upstream key."""
    auth = body["_headers"].get("Authorization", "")
    pad = 200 - len(_PREFIX) - len("Authorization: ") - len(auth) // 2
    text = (_PREFIX + "x" * pad + f"Authorization: {auth}" + f" upstream key {UPSTREAM}"
            + '"}')
    return ("status", 401, {}, text)


@pytest.mark.parametrize("kind", list(SECRETS))
def test_secret_echoed_across_the_snippet_cut_leaks_no_fragment(tmp_path: Path,
                                                                 kind: str) -> None:
    secret = SECRETS[kind]
    inputs = write_inputs(tmp_path / "inputs.txt")
    out = Outputs()
    with fault_service(_echo_across_the_cut) as svc:
        env = {"FAULT_URL": svc.url, "FAULT_API_KEY": secret}
        base = ["run", "--agent", agent_ref("http"), "--inputs", str(inputs), "--budget", "40",
                "--retries", "0"]
        for fmt in ("json", "junit"):
            proc = cli(*base, "--format", fmt, "-o", str(tmp_path / f"run.{fmt}"),
                       "--store", str(tmp_path / "store.db"), env=env)
            out.add_proc(f"run {fmt}", proc)
            assert proc.returncode == 2, proc.stderr
        text = cli(*base, env=env)
        out.add_proc("run text", text)
        hits = len(svc.hits)
    out.add_files(tmp_path, "run.*", "store.db*")
    _report_renderings(out, tmp_path, tmp_path / "run.json", "run")
    messages = json.dumps(load_json(tmp_path / "run.json")["ledger"])
    assert "HTTP 401" in messages, messages[:500]  # the snippet is there, redacted
    leaks = {frag: out.leaks(frag) for frag in _fragments(secret) | _fragments(UPSTREAM)}
    leaks = {k: v for k, v in leaks.items() if v}
    assert not leaks, f"secret fragments in outputs: {sorted(leaks.items())[:5]}"
    record("hostile-secrets", scenario=f"401 echoing the {kind} across the 200-char cut",
           requests=hits, outputs_searched=len(out.blobs),
           fragments_checked=len(_fragments(secret) | _fragments(UPSTREAM)))


# ------------------------------------------------------------------ oversized answers


class _Endless(BaseHTTPRequestHandler):
    """A 200 with a chunked body that never ends (until the client hangs up)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    sent: ClassVar[list[int]] = []

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"x" * 65536
        frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        total = 0
        try:
            self.wfile.write(b'5\r\n{"a":\r\n')
            while total < 8 * 1024 ** 3:  # 8 GiB: far past any sane limit
                self.wfile.write(frame)
                total += len(chunk)
        except OSError:
            pass
        finally:
            _Endless.sent.append(total)
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None


def _hwm_mb(pid: int) -> float:
    """The process's peak RSS so far (``VmHWM``; 0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cli_rss(*args: str, env: dict[str, str], timeout: float) -> tuple[int, str, float]:
    """The real CLI in a subprocess: (exit code, stderr, its own peak RSS in MB). Read from
    ``/proc/PID/status`` while it runs (``wait4``'s ``ru_maxrss`` would start from the RSS
    of this test process at the fork), else from ``wait4``."""
    import os
    import subprocess
    import tempfile
    import time

    from .conftest import cli_argv, cli_env

    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cli_argv(*args), cwd=ROOT, env=cli_env(env),
                                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        peak = 0.0
        while True:
            peak = max(peak, _hwm_mb(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.02)
        err.seek(0)
        if not peak:  # no /proc: an upper bound
            peak = usage.ru_maxrss / 1024
        return proc.returncode, err.read().decode("utf-8", "replace"), peak


def test_endless_chunked_body_is_cut_off(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    server = _Server(("127.0.0.1", 0), _Endless)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/ask"
        code, stderr, rss = cli_rss("run", "--agent", agent_ref("http"), "--inputs",
                                    str(inputs), "--budget", "8", "--retries", "0",
                                    "--no-relations", "--format", "json", "-o",
                                    str(tmp_path / "run.json"),
                                    env={"FAULT_URL": url, "FAULT_HTTP_TIMEOUT": "20"},
                                    timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in stderr
    assert code == 2, stderr
    doc = load_json(tmp_path / "run.json")
    kinds = doc["meter"]["failure_kinds"]
    # every answered call is too_large; the engine's fail-fast stops the queued ones
    assert "too_large" in kinds, kinds
    assert set(kinds) <= {"too_large", "Interrupted"}, kinds
    assert rss < 1536, f"peak RSS of a child {rss:.0f} MB"
    sent = max(_Endless.sent or [0])
    assert sent < 256 * 1024 * 1024, f"the client read {sent} bytes of an endless body"
    record("hostile-http", scenario="endless chunked body", too_large=kinds["too_large"],
           peak_rss_mb=round(rss))


def test_ten_megabyte_answers_are_refused_not_kept(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    huge = json.dumps({"text": "y" * (10 * 1024 * 1024), "verdict": "allow"})

    def plan(n: int, body: dict[str, Any]) -> Any:
        # every other answer is sound, so the run goes on (no fail-fast) through 120 calls
        return ("status", 200, {}, huge) if n % 2 == 0 else "ok"

    with fault_service(plan) as svc:
        code, stderr, rss = cli_rss("run", "--agent", agent_ref("http"), "--inputs",
                                    str(inputs), "--budget", "120", "--retries", "0",
                                    "--format", "json", "-o", str(tmp_path / "run.json"),
                                    env={"FAULT_URL": svc.url}, timeout=300)
        requests = len(svc.hits)
    assert "Traceback" not in stderr
    assert code == 2, stderr
    ledger = load_json(tmp_path / "run.json")["ledger"]
    kinds = dict(ledger.get("failure_kinds") or {})
    assert requests >= 100, requests
    assert kinds.get("too_large", 0) >= 40, ledger
    assert rss < 1536, f"peak RSS of the run {rss:.0f} MB"
    record("hostile-http", scenario="10 MB answers on every other call", requests=requests,
           too_large=kinds["too_large"], peak_rss_mb=round(rss))


# ------------------------------------------------------------------ OTLP receiver

DEEP = b"[" * 200_000
TRUNCATED_GZIP = gzip.compress(json.dumps({"resourceSpans": []}).encode() * 50)[:-12]


def _hostile_posts(port: int) -> dict[str, int]:
    return {"nested 200,000 deep": _post(port, DEEP, ctype="application/json"),
            "truncated gzip": _post(port, TRUNCATED_GZIP, ctype="application/json",
                                    encoding="gzip"),
            "sound payload after them": _post(port, b'{"resourceSpans": []}',
                                              ctype="application/json")}


EXPECTED = {"nested 200,000 deep": 400, "truncated gzip": 400, "sound payload after them": 200}


def test_otlp_receiver_refuses_deep_nesting_and_truncated_gzip() -> None:
    pytest.importorskip("opentelemetry.proto")
    from agentverity_props.otel import OTLPReceiver

    with OTLPReceiver(port=0) as rx:
        seen = _hostile_posts(rx.port)
        stats = rx.stats
    assert seen == EXPECTED
    assert stats.rejected_malformed == 2
    record("hostile-otlp", scenario="receiver: deep JSON, truncated gzip",
           refused=stats.rejected_malformed, accepted=stats.accepted)


def test_otlp_receiver_of_tools_prints_no_traceback(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.proto")
    proc, seen = tools_while_probing(tmp_path, _hostile_posts)
    assert "Traceback" not in proc.stderr
    assert "RecursionError" not in proc.stderr
    assert seen == EXPECTED
    record("hostile-otlp", scenario="tools receiver: deep JSON, truncated gzip",
           exit=proc.returncode, stderr_lines=len(proc.stderr.splitlines()))
