"""Faulty HTTP agents (a real server on 127.0.0.1) through the real CLI.

A burst of faulty answers hits requests 3-6 (two draws of two attempts each with
``--retries 1``): refused or reset connections, 429 with ``Retry-After``, 500s, answers
slower than the timeout, malformed JSON, and a service that dies mid-run. Each run ends
cleanly with exit 2, the report names the failure kind and message, and the store keeps
exactly the answers the service gave.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from .conftest import agent_ref, cli, fault_service, load_json, read_store, record, write_inputs

pytestmark = pytest.mark.e2e

BURST = range(3, 7)
RETRY_AFTER_S = 0.3
#: the agent's HTTP timeout. It applies to every request, so an ordinary answer slowed by CPU
#: load past it would be one more failed attempt and break the exact counts below: 3 s is
#: far above a loopback answer beside two CPU-bound processes. A slow answer takes 10 s,
#: well past it (so the "slow answers" case waits out 4 timeouts: ~12 s of wall-clock time).
TIMEOUT_S = 3.0

# plan for a request in the burst, failure kind, message fragment, retryable
SCENARIOS: dict[str, tuple[Any, str, str, bool]] = {
    "connection reset": ("reset", "connect", "cannot reach the agent", True),
    "429 with Retry-After": (("status", 429, {"Retry-After": str(RETRY_AFTER_S)}, "{}"),
                             "rate_limit", "HTTP 429", True),
    "burst of 500s": (("status", 500, {}, '{"error": "overloaded"}'), "http_5xx", "HTTP 500",
                      True),
    "slow answers": (("sleep", 10.0), "timeout", f"no answer within {TIMEOUT_S:g}s", True),
    "malformed JSON": ("malformed", "bad_output", "the answer is not JSON", False),
}


def _run(tmp_path: Path, url: str, *extra: str) -> tuple[Any, dict[str, Any], Path]:
    inputs = write_inputs(tmp_path / "inputs.txt")
    store, report = tmp_path / "s.db", tmp_path / "r.json"
    proc = cli("run", "--agent", agent_ref("http"), "--inputs", str(inputs), "--store",
               str(store), "--record", "--max-workers", "1", "--no-relations", "--format",
               "json", "--output", str(report), *extra,
               env={"FAULT_URL": url, "FAULT_HTTP_TIMEOUT": str(TIMEOUT_S)})
    assert "Traceback" not in proc.stderr
    assert report.exists(), proc.stderr[-2000:]
    return proc, load_json(report), store


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_http_fault_burst(tmp_path: Path, scenario: str) -> None:
    fault, kind, fragment, retryable = SCENARIOS[scenario]

    def plan(n: int, body: dict[str, Any]) -> Any:
        return fault if n in BURST else "ok"

    with fault_service(plan) as svc:
        proc, rep, store = _run(tmp_path, svc.url, "--retries", "1")
        hits = list(svc.hits)
        served = set(svc.ok_texts)
    assert proc.returncode == 2, proc.stderr
    assert rep["complete"] is False
    assert rep["exit_code"] == 2
    ledger = rep["ledger"]
    # Every faulty request is one failed attempt: retried, or the last attempt of a failed
    # draw. Which draw each request served depends on the schedule (a draw waiting out its
    # backoff leaves its worker to the next draw), so only the totals are fixed.
    failed_draws = ledger["failures"]
    if retryable:
        assert ledger["retries"] + failed_draws == len(BURST), ledger
        assert failed_draws >= 1, ledger  # the burst outlasts the draws in flight
    else:
        assert (ledger["retries"], failed_draws) == (0, len(BURST)), ledger
    assert ledger["failure_kinds"] == {kind: failed_draws}, ledger
    assert all(fragment in m for m in ledger["failure_samples"][kind]), ledger
    assert ledger["failure_samples"][kind][0].startswith("http:fault-service")  # which agent
    assert ledger["calls"] == len(hits)  # one request per attempt, nothing hidden
    if kind == "rate_limit":  # after a 429, no request at all before its Retry-After
        gaps = [hits[n].at - hits[n - 1].at for n in range(BURST.start, BURST.stop)]
        assert min(gaps) >= RETRY_AFTER_S - 0.01, gaps  # hits[n] is request n + 1
    state = read_store(store)
    assert state.integrity == "ok"
    assert state.texts() == served  # every answer the service gave, and only those
    assert len(state.failed_rows) == failed_draws
    record("http-faults", scenario=scenario, requests=len(hits), failed_draws=failed_draws,
           stored_ok=len(state.ok_rows))


def test_service_dies_mid_run(tmp_path: Path) -> None:
    def plan(n: int, body: dict[str, Any]) -> Any:
        # requests already in flight when the service stops are cut off, never answered
        return "ok" if n < 30 else "die" if n == 30 else "reset"

    with fault_service(plan) as svc:
        proc, rep, store = _run(tmp_path, svc.url, "--retries", "0")
        served = set(svc.ok_texts)
    assert proc.returncode == 2, proc.stderr
    assert rep["complete"] is False
    ledger = rep["ledger"]
    assert ledger["failure_kinds"].get("connect", 0) >= 1
    assert any("cannot reach the agent" in m for m in ledger["failure_samples"]["connect"])
    state = read_store(store)
    assert state.integrity == "ok"
    assert len(served) == 30
    assert state.texts() == served
    assert len(state.failed_rows) == ledger["failures"]
    record("http-faults", scenario="service dies after 30 answers", stored_ok=len(served),
           failed_draws=ledger["failures"])


def test_connection_refused_from_the_start(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc, rep, store = _run(tmp_path, f"http://127.0.0.1:{port}/ask", "--retries", "0",
                            "--budget", "40")
    assert proc.returncode == 2
    assert rep["complete"] is False
    assert rep["ledger"]["failure_kinds"]["connect"] >= 1
    assert read_store(store).integrity == "ok"
    assert read_store(store).ok_rows == []
    record("http-faults", scenario="connection refused", calls=rep["ledger"]["calls"])


def _tools_file(path: Path, runs: int) -> Path:
    path.write_text(
        "config:\n  span_timeout_s: 0.2\n  retries: 0\ncases:\n"
        f"  - name: faulty service\n    url: ${{FAULT_URL}}\n    prompt: refund order 1\n"
        f"    body: {{prompt: \"${{prompt}}\"}}\n    runs: {runs}\n"
        "    required_tools: [lookup_order]\n", encoding="utf-8")
    return path


def test_tools_command_against_a_failing_service(tmp_path: Path) -> None:
    def plan(n: int, body: dict[str, Any]) -> Any:
        return ("status", 503, {}, '{"error": "down"}')

    cases = _tools_file(tmp_path / "cases.yaml", runs=3)
    with fault_service(plan) as svc:
        proc = cli("tools", "--config", str(cases), "--format", "json", "--output",
                   str(tmp_path / "t.json"), env={"FAULT_URL": svc.url})
        hits = len(svc.hits)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stdout + proc.stderr
    rep = load_json(tmp_path / "t.json")
    text = json.dumps(rep)
    assert "HTTP 503" in text  # which calls failed and why
    assert rep["cases"][0]["errors"] == hits >= 1
    record("http-faults", scenario="tools: service answers 503", requests=hits)
