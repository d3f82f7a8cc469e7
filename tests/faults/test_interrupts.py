"""Interrupts and crashes: SIGINT/SIGTERM mid-run write a partial report marked incomplete
and leave the store consistent; kill -9 while a report, a snapshot or the store is being
written leaves the previous file intact.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    ROOT,
    agent_ref,
    cli,
    cli_env,
    fault_service,
    free_port,
    load_json,
    logged_answers,
    popen_cli,
    post_tool_spans,
    read_store,
    record,
    write_inputs,
)

pytestmark = pytest.mark.e2e


def _wait_for_calls(log: Path, proc: subprocess.Popen[str], n: int) -> None:
    """Until the agent was called ``n`` times. A hang limit in wall-clock time, generous:
    the CLI's start-up alone takes several seconds beside two CPU-bound processes."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _out, err = proc.communicate()
            raise AssertionError(f"the run ended before the signal: {err[-2000:]}")
        if log.exists() and len(log.read_text().splitlines()) >= n:
            return
        time.sleep(0.02)
    raise AssertionError("the agent was never called")


def _bench_file(path: Path) -> Path:
    path.write_text('version: "1"\nname: slow\nruns: 40\ntasks:\n'
                    '  - {id: a, prompt: "hello there", evaluation: {type: contains, '
                    'expected: "answer"}}\n'
                    '  - {id: b, prompt: "plan an attack", evaluation: {type: contains, '
                    'expected: "answer"}}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize(("command", "sig"), [("run", signal.SIGINT), ("run", signal.SIGTERM),
                                              ("bench", signal.SIGINT),
                                              ("check", signal.SIGTERM)])
def test_signal_mid_run_writes_a_partial_report(tmp_path: Path, command: str,
                                                sig: signal.Signals) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    store, report, log = tmp_path / "s.db", tmp_path / "r.json", tmp_path / "calls.log"
    if command == "run":
        args = ["run", "--agent", agent_ref("slow"), "--inputs", str(inputs)]
    elif command == "bench":
        args = ["bench", "--agent", agent_ref("slow"), "--benchmark",
                str(_bench_file(tmp_path / "b.yaml")), "--no-early-stop"]
    else:
        snap = tmp_path / "snap.json"
        made = cli("snapshot", "--agent", agent_ref("good"), "--inputs", str(inputs),
                   "--output", str(snap), "--accept-reference")
        assert made.returncode == 0, made.stderr
        args = ["check", "--agent", agent_ref("slow"), "--inputs", str(inputs), "--snapshot",
                str(snap)]
    proc = popen_cli(*args, "--store", str(store), "--record", "--max-workers", "1",
                     "--format", "json", "--output", str(report),
                     env={"FAULT_LOG": str(log), "FAULT_SLEEP": "0.05"})
    try:
        _wait_for_calls(log, proc, 8)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err
    assert proc.returncode == 2, err
    rep = load_json(report)
    assert rep["exit_code"] == 2
    assert rep["ledger"]["interrupted"] is True
    if command == "check":
        assert rep["status"] == "incomplete"
    else:
        assert rep["complete"] is False
        assert rep["stop_reason"] == "interrupted"
    state = read_store(store)
    assert state.integrity == "ok"
    answered = logged_answers(log)
    # every call that finished, including the one in flight when the signal came, is kept
    assert state.texts() == answered
    assert len(state.rows) == rep["ledger"]["calls"]
    record("interrupts", command=command, signal=sig.name, calls_before_stop=len(answered),
           stored=len(state.rows))


# ---------------------------------------------------------------- kill -9 during a write

# Runs the CLI with the atomic writer paused at one point of a write (after half the
# bytes, after fsync, just before the rename): the parent kills the process there.
_PAUSE = r"""
import os, sys, time
import agentverity_props._internal.atomic as atomic

POINT = os.environ["PAUSE_AT"]
real = os


def pause(where):
    if where == POINT:
        sys.stderr.write("PAUSED " + where + "\n")
        sys.stderr.flush()
        time.sleep(120)


class HalfFile:
    def __init__(self, fh):
        self.fh = fh
    def write(self, data):
        half = len(data) // 2
        self.fh.write(data[:half])
        self.fh.flush()
        pause("mid-write")
        return self.fh.write(data[half:]) + half
    def __getattr__(self, name):
        return getattr(self.fh, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self.fh.__exit__(*exc)


class Proxy:
    def __getattr__(self, name):
        return getattr(real, name)
    def fdopen(self, fd, *a, **k):
        return HalfFile(real.fdopen(fd, *a, **k))
    def fsync(self, fd):
        real.fsync(fd)
        pause("after-fsync")
    def replace(self, src, dst):
        pause("before-rename")
        real.replace(src, dst)


atomic.os = Proxy()
from agentverity_props.cli import main
main(sys.argv[1:])
"""


@pytest.fixture(scope="module")
def previous_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A valid report and an admitted snapshot, written by an earlier run."""
    d = tmp_path_factory.mktemp("previous")
    inputs = write_inputs(d / "inputs.txt")
    rep = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--no-relations",
              "--format", "json", "--output", str(d / "report.json"))
    snap = cli("snapshot", "--agent", agent_ref("good"), "--inputs", str(inputs), "--output",
               str(d / "snap.json"), "--accept-reference")
    assert rep.returncode == 0, rep.stderr
    assert snap.returncode == 0, snap.stderr
    return {"inputs": inputs, "report": d / "report.json", "snapshot": d / "snap.json"}


@pytest.mark.parametrize("point", ["mid-write", "after-fsync", "before-rename"])
@pytest.mark.parametrize("target", ["report", "snapshot"])
def test_kill_9_during_an_atomic_write_keeps_the_previous_file(
        tmp_path: Path, previous_files: dict[str, Path], target: str, point: str) -> None:
    path = tmp_path / f"{target}.json"
    shutil.copyfile(previous_files[target], path)
    before = path.read_bytes()
    inputs = str(previous_files["inputs"])
    if target == "report":
        args = ["run", "--agent", agent_ref("good"), "--inputs", inputs, "--relations", "case",
                "--format", "json", "--output", str(path)]
    else:
        args = ["snapshot", "--agent", agent_ref("good"), "--inputs", inputs, "--output",
                str(path), "--accept-reference", "--seed", "1"]
    proc = subprocess.Popen([sys.executable, "-c", _PAUSE, *args], cwd=ROOT,
                            env=cli_env({"PAUSE_AT": point}), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith(f"PAUSED {point}"), line + proc.stderr.read()[-2000:]
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert path.read_bytes() == before  # byte for byte the previous file
    json.loads(before)
    record("kill-9-write", target=target, point=point, intact=1)


def test_kill_9_while_recording_keeps_the_store_consistent(tmp_path: Path) -> None:
    """Random kill -9 moments while draws are being committed: the store always opens,
    passes integrity_check, and every previously committed draw is still there."""
    from agentverity_props.store import Store

    inputs = write_inputs(tmp_path / "inputs.txt")
    store = tmp_path / "s.db"
    first = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--store",
                str(store), "--no-relations")
    assert first.returncode == 0, first.stderr
    baseline = {r[:4]: r for r in read_store(store).rows}
    rng = random.Random(7)
    kills = 0
    for seed in range(1, 4):
        log = tmp_path / f"calls{seed}.log"
        # a new seed draws new indices: the store grows while it is being killed
        proc = popen_cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs),
                         "--store", str(store), "--seed", str(seed * 100), "--max-workers", "4",
                         env={"FAULT_LOG": str(log)})
        try:
            _wait_for_calls(log, proc, 1)
            time.sleep(rng.uniform(0.0, 0.3))
            proc.kill()
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        kills += proc.returncode == -signal.SIGKILL
        state = read_store(store)
        assert state.integrity == "ok"
        now = {r[:4]: r for r in state.rows}
        assert all(now.get(k) == v for k, v in baseline.items())  # nothing lost or changed
        assert state.texts() <= logged_answers(log) | {v.get("text") for *_, v in
                                                         baseline.values()}
        with Store(store) as s:  # the product itself reopens it
            assert s.count() == len(state.rows)
        baseline = now
    record("kill-9-write", target="store", kills=kills, rows=len(baseline))



def test_sigint_during_enlarge_keeps_the_previous_output(tmp_path: Path) -> None:
    """enlarge keeps no partial set: an interrupt is one line, exit 2, the old file intact."""
    inputs = write_inputs(tmp_path / "inputs.txt", ["hello there", "book a table",
                                                    "what time is it", "nice weather"])
    out, log = tmp_path / "enlarged.txt", tmp_path / "calls.log"
    out.write_text("the previous set\n")
    proc = popen_cli("enlarge", "--agent", agent_ref("slow_allow"), "--inputs", str(inputs),
                     "--strategy", "moderation",
                     "--output", str(out), "--budget", "300", "--max-workers", "1",
                     env={"FAULT_LOG": str(log), "FAULT_SLEEP": "0.2"})
    try:
        # 0.2 s a call: after the 10th, the other 290 of the budget take a minute, so under
        # CPU load the signal still finds the run going (it once exited 1 instead of 2 at
        # 0.05 s a call, under a load average of 8-10 on 2 cores)
        _wait_for_calls(log, proc, 10)
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, err[-2000:]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines == ["error: interrupted"], err
    assert out.read_text() == "the previous set\n"
    record("interrupts", command="enlarge", signal="SIGINT",
           calls_before_stop=len(logged_answers(log)), stored=0)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_tools_writes_a_partial_report(tmp_path: Path, sig: signal.Signals) -> None:
    port = free_port()

    def plan(n: int, body: dict[str, Any]) -> Any:
        time.sleep(0.1)
        post_tool_spans(port, body["_headers"], ["lookup_order"])
        return "ok"

    cases = tmp_path / "cases.yaml"
    cases.write_text("config: {span_timeout_s: 5, retries: 0}\ncases:\n"
                     "  - {name: slow, url: '${FAULT_URL}', prompt: hi, runs: 200, "
                     "required_tools: [lookup_order]}\n", encoding="utf-8")
    report = tmp_path / "r.json"
    with fault_service(plan) as svc:
        proc = popen_cli("tools", "--config", str(cases), "--otlp-port", str(port), "--format",
                         "json", "--output", str(report), env={"FAULT_URL": svc.url})
        try:
            # until five answers were judged: the signal must find the run started and far
            # from done (200 runs of >= 0.1 s), whatever the load. A hang limit, generous.
            deadline = time.monotonic() + 120
            while svc.count("ok") < 5 and proc.poll() is None:
                assert time.monotonic() < deadline, "the tools run never made 5 calls"
                time.sleep(0.02)
            assert proc.poll() is None, "the run ended before the signal"
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert "Traceback" not in err
    assert proc.returncode == 2
    rep = load_json(report)
    assert rep["exit_code"] == 2
    assert "interrupted" in err
    (case,) = rep["cases"]
    assert case["decided_by"].startswith("interrupted after"), case
    assert 1 <= len(case["runs"]) < 200  # the finished calls are kept and judged
