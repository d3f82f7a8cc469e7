"""Faulty Python agents through the real CLI: the run ends cleanly, the evidence is marked
incomplete (exit 2), the report names the failed calls and why, and the store keeps every
successful call made so far.

Agents live in ``_agents.py``; faults hit every third (or tenth) call. Every run records
into a store with ``--retries 0``, so each call is exactly one stored draw.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    PROMPTS,
    agent_ref,
    cli,
    load_json,
    logged_answers,
    popen_cli,
    read_store,
    record,
    write_inputs,
)

pytestmark = pytest.mark.e2e

REGEX = "^VERDICT: (allow|block)$"

# agent, extra CLI args, env, where the fault shows ("ledger" failure / "meter" no-decision),
# its kind, a fragment of the message the report must carry (None: kind only)
SCENARIOS: dict[str, tuple[str, list[str], dict[str, str], str, str, str | None]] = {
    "raises": ("raises", [], {}, "ledger", "error", "planted failure in call"),
    "returns None": ("returns_none", [], {}, "ledger", "bad_output", "NoneType"),
    "returns bytes": ("returns_bytes", [], {}, "ledger", "bad_output", "bytes"),
    "hangs past the timeout (sync)": ("hangs_then_answers", ["--timeout", "0.3"],
                                      {"FAULT_EVERY": "10"}, "ledger", "timeout",
                                      "no answer within 0.3 s"),
    "hangs forever (async)": ("hangs_forever_async", ["--timeout", "0.3"],
                              {"FAULT_EVERY": "10"}, "ledger", "timeout", "no answer within"),
    "unknown verdict label": ("unknown_label", ["--verdict-regex", REGEX], {}, "meter",
                              "no_decision", None),
    "10 MB answer, closed label set": ("returns_huge", ["--verdict-regex", REGEX],
                                       {"FAULT_AT": "5"}, "meter", "no_decision", None),
}


def run_faulty(tmp_path: Path, agent: str, extra: list[str], env: dict[str, str],
               *, command: str = "run") -> tuple[Any, dict[str, Any], Path, Path]:
    inputs = write_inputs(tmp_path / "inputs.txt")
    store, report, log = tmp_path / "s.db", tmp_path / "r.json", tmp_path / "calls.log"
    args = [command, "--agent", agent_ref(agent), "--inputs", str(inputs), "--store",
            str(store), "--record", "--retries", "0", "--format", "json", "--output",
            str(report), *extra]
    if command == "run":
        args.append("--no-relations")
    proc = cli(*args, env={"FAULT_LOG": str(log), **env})
    assert report.exists(), proc.stderr[-2000:]
    return proc, load_json(report), store, log


def check_store_keeps_successes(store: Path, log: Path, ledger: dict[str, Any], *,
                                logs_answers: bool) -> int:
    state = read_store(store)
    assert state.integrity == "ok"
    # --record, --retries 0: one row per live call, failures included
    assert len(state.rows) == ledger["calls"]
    assert len(state.failed_rows) == ledger["failures"]
    if logs_answers:
        returned = logged_answers(log)
        assert state.texts() <= returned  # no row the agent never answered
        # every returned answer is kept, except those that came back after their timeout
        late = ledger["failure_kinds"].get("timeout", 0)
        assert len(returned - state.texts()) <= late
    return len(state.ok_rows)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_faulty_agent_run_is_incomplete_and_keeps_evidence(tmp_path: Path, scenario: str) -> None:
    agent, extra, env, where, kind, fragment = SCENARIOS[scenario]
    proc, rep, store, log = run_faulty(tmp_path, agent, extra, env)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert rep["complete"] is False
    assert rep["exit_code"] == 2
    ledger = rep["ledger"]
    if where == "ledger":
        assert ledger["failure_kinds"].get(kind, 0) >= 1, ledger
        assert any(fragment in m for m in ledger["failure_samples"][kind]), ledger
        # which calls: the inputs whose draws failed, by fingerprint
        failed_inputs = [p["fp"] for p in rep["meter"]["per_input"] if p["failures"]]
        assert failed_inputs
        assert sum(p["failures"] for p in rep["meter"]["per_input"]) <= ledger["failures"]
    else:
        assert rep["meter"]["failure_kinds"].get(kind, 0) >= 1, rep["meter"]
        undecided = [p["fp"] for p in rep["meter"]["per_input"]
                     if p["draws"] > sum(p["counts"].values())]
        assert undecided  # which inputs had draws without a verdict
    kept = check_store_keeps_successes(store, log, ledger,
                                       logs_answers=agent not in ("unknown_label",
                                                                  "returns_huge"))
    assert kept >= 1
    record("agent-faults", scenario=scenario, calls=ledger["calls"],
           failures=ledger["failures"] or rep["meter"]["failures"], stored_ok=kept)


def test_text_report_names_the_failures(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    proc = cli("run", "--agent", agent_ref("raises"), "--inputs", str(inputs), "--retries", "0",
               "--relations", "case,typo")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Incomplete:" in proc.stdout
    assert "error x" in proc.stdout
    assert "Exit 2" in proc.stdout
    record("agent-faults", scenario="text report with relations", calls=1)


def test_ten_megabyte_answer_is_no_verdict(tmp_path: Path) -> None:
    proc, rep, _store, _log = run_faulty(tmp_path, "returns_huge", [], {"FAULT_AT": "5"})
    size = (tmp_path / "r.json").stat().st_size
    assert proc.returncode == 2
    assert rep["complete"] is False
    assert rep["meter"]["failure_kinds"] == {"no_decision": 1}  # the one 10 MB answer
    assert size < 1_000_000, f"report is {size} bytes"
    record("agent-faults", scenario="10 MB answer, default extractor", calls=rep["calls"]
           ["total"], failures=1, report_bytes=size)


def test_agent_that_kills_its_process_loses_no_finished_call(tmp_path: Path) -> None:
    """SIGKILL from inside a call: every call finished before is in the store, intact."""
    kill_after = 25
    inputs = write_inputs(tmp_path / "inputs.txt")
    store, log, report = tmp_path / "s.db", tmp_path / "calls.log", tmp_path / "r.json"
    proc = cli("run", "--agent", agent_ref("suicide"), "--inputs", str(inputs), "--store",
               str(store), "--record", "--max-workers", "1", "--format", "json", "--output",
               str(report), env={"FAULT_LOG": str(log), "FAULT_KILL_AFTER": str(kill_after)})
    assert proc.returncode == -signal.SIGKILL
    assert not report.exists()  # no half-written report either
    state = read_store(store)
    assert state.integrity == "ok"
    finished = logged_answers(log)
    assert len(finished) == kill_after
    assert len(state.rows) == kill_after == len(state.ok_rows)
    assert state.texts() == finished
    record("kill-9-agent", workers=1, finished_calls=kill_after, stored=len(state.rows))


def test_agent_that_kills_its_process_under_concurrency(tmp_path: Path) -> None:
    """Four workers: calls in flight may die with the process, finished ones may not."""
    kill_after = 40
    inputs = write_inputs(tmp_path / "inputs.txt")
    store, log = tmp_path / "s.db", tmp_path / "calls.log"
    proc = cli("run", "--agent", agent_ref("suicide"), "--inputs", str(inputs), "--store",
               str(store), "--record", "--max-workers", "4",
               env={"FAULT_LOG": str(log), "FAULT_KILL_AFTER": str(kill_after)})
    assert proc.returncode == -signal.SIGKILL
    state = read_store(store)
    assert state.integrity == "ok"
    returned = logged_answers(log)
    assert state.texts() <= returned  # no row the agent never answered
    # an answer still on its way from a worker thread to the store may be lost, at most one
    # per worker; every other returned answer is committed
    assert len(returned) - 4 <= len(state.rows) <= len(returned)
    record("kill-9-agent", workers=4, finished_calls=len(returned), stored=len(state.rows))


@pytest.mark.parametrize("command", ["snapshot", "check"])
def test_snapshot_and_check_under_a_raising_agent(tmp_path: Path, command: str) -> None:
    extra: list[str] = []
    if command == "snapshot":
        extra = ["--accept-reference"]
        out_args = ["--output", str(tmp_path / "snap.json")]
    else:
        snap = tmp_path / "ref.json"
        inputs = write_inputs(tmp_path / "inputs.txt")
        made = cli("snapshot", "--agent", agent_ref("good"), "--inputs", str(inputs),
                   "--output", str(snap), "--accept-reference")
        assert made.returncode == 0, made.stdout + made.stderr
        out_args = ["--snapshot", str(snap), "--output", str(tmp_path / "r.json")]
    inputs = write_inputs(tmp_path / "inputs.txt")
    store, log = tmp_path / "s.db", tmp_path / "calls.log"
    proc = cli(command, "--agent", agent_ref("raises"), "--inputs", str(inputs), "--store",
               str(store), "--record", "--retries", "0", "--format", "json", *out_args,
               *extra, env={"FAULT_LOG": str(log)})
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr
    if command == "snapshot":
        rep = json.loads(proc.stdout)
        assert not (tmp_path / "snap.json").exists()  # refused: nothing written
        assert "[complete]" in proc.stderr
        rule = next(r for r in rep["admission"]["rules"] if r["rule"] == "complete")
        assert rule["passed"] is False
        assert "failed (error x" in rule["message"]
        # the snapshot report names failures by count and kind only (no ledger section)
        found = re.search(r"(\d+) draw\(s\) failed \(error x", rule["message"])
        assert found is not None, rule
        failed = int(found[1])
        ledger = {"calls": rep["calls"]["total"], "failures": failed, "failure_kinds": {}}
    else:
        rep = load_json(tmp_path / "r.json")
        assert rep["status"] == "incomplete"
        ledger = rep["ledger"]
        assert any("planted failure" in m for m in ledger["failure_samples"]["error"])
    kept = check_store_keeps_successes(store, log, ledger, logs_answers=True)
    record("agent-faults", scenario=f"{command}: raises", calls=ledger["calls"],
           failures=ledger["failures"], stored_ok=kept)


def _bench_file(path: Path) -> Path:
    tasks = "".join(f'  - id: t{i}\n    prompt: "{p}"\n    evaluation: {{type: contains, '
                    f'expected: "answer"}}\n' for i, p in enumerate(PROMPTS))
    path.write_text(f'version: "1"\nname: faults\nruns: 4\ntasks:\n{tasks}', encoding="utf-8")
    return path


def _bench_run(tmp_path: Path, command: str) -> tuple[Any, dict[str, Any], Path, Path]:
    bench = _bench_file(tmp_path / "b.yaml")
    store, log, report = tmp_path / "s.db", tmp_path / "calls.log", tmp_path / "r.json"
    agents = [agent_ref("raises")] if command == "bench" else [agent_ref("good"),
                                                                agent_ref("raises")]
    head = ["bench", "--agent", agents[0]] if command == "bench" else ["compare", *agents,
                                                                        "--max-runs", "6"]
    proc = cli(*head, "--benchmark", str(bench), "--store", str(store), "--record",
               "--retries", "0", "--no-early-stop" if command == "bench" else "--min-runs",
               *([] if command == "bench" else ["2"]), "--format", "json", "--output",
               str(report), env={"FAULT_LOG": str(log)})
    assert report.exists(), proc.stderr
    return proc, load_json(report), store, log


@pytest.mark.parametrize("command", ["bench", "compare"])
def test_bench_and_compare_under_a_raising_agent_keep_evidence(tmp_path: Path,
                                                               command: str) -> None:
    proc, rep, store, log = _bench_run(tmp_path, command)
    assert "Traceback" not in proc.stderr
    assert not proc.stderr.strip()
    assert proc.returncode == rep["exit_code"] != 0
    text = json.dumps(rep)
    assert "planted failure in call" in text  # the report says which calls failed and why
    state = read_store(store)
    assert state.integrity == "ok"
    assert state.texts() == logged_answers(log)  # every answered call is kept
    assert state.failed_rows
    record("agent-faults", scenario=f"{command}: raises", stored_ok=len(state.ok_rows),
           failures=len(state.failed_rows))


@pytest.mark.parametrize("command", ["bench", "compare"])
def test_bench_and_compare_mark_failed_calls_incomplete(tmp_path: Path, command: str) -> None:
    proc, rep, _, _ = _bench_run(tmp_path, command)
    assert rep["complete"] is False
    assert proc.returncode == 2


def test_sync_agent_that_never_returns_can_be_stopped(tmp_path: Path) -> None:
    """Every worker slot held by a call that never returns: SIGTERM still ends the run with
    a partial report (a thread cannot be killed, so waiting draws must notice the stop)."""
    inputs = write_inputs(tmp_path / "inputs.txt")
    log, report = tmp_path / "calls.log", tmp_path / "r.json"
    proc = popen_cli("run", "--agent", agent_ref("hangs_forever_sync"), "--inputs",
                     str(inputs), "--timeout", "0.2", "--retries", "0", "--max-workers", "2",
                     "--no-relations", "--format", "json", "--output", str(report),
                     env={"FAULT_LOG": str(log)})
    try:
        for _ in range(600):  # until both worker slots are stuck in the hanging call
            if log.exists() and log.read_text().count("hang") >= 2:
                break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(0.5)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=120)  # a hang detector, not a speed limit
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError("the run neither finished nor stopped on SIGTERM") from None
        assert proc.returncode == 2
        rep = load_json(report)
        assert rep["complete"] is False
        assert rep["ledger"]["failure_kinds"].get("timeout", 0) >= 1
        record("agent-faults", scenario="sync agent never returns, then SIGTERM",
               calls=rep["ledger"]["calls"], failures=rep["ledger"]["failures"])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_enlarge_under_a_raising_agent(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    out, report = tmp_path / "enlarged.txt", tmp_path / "e.json"
    proc = cli("enlarge", "--agent", agent_ref("raises"), "--inputs", str(inputs),
               "--strategy", "moderation", "--output",
               str(out), "--report", str(report), "--budget", "60")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stdout + proc.stderr
    rep = load_json(report)
    assert rep["complete"] is False
    assert any("planted failure" in m for m in rep["ledger"]["failure_samples"]["error"])
    # the search runs max_workers calls at a time, so which calls fail depends on their order:
    # the text must state exactly the failures the ledger counted, and their cause
    assert f"incomplete: {rep['ledger']['failures']} agent call(s) failed" in proc.stdout
    assert "cause: RuntimeError: planted failure in call" in proc.stdout
    assert out.read_text().splitlines() == PROMPTS  # the set is still written
    record("agent-faults", scenario="enlarge: raises", calls=rep["calls"],
           failures=rep["ledger"]["failures"])
