"""The real CLI in subprocesses: snapshot / check / bench / compare exit codes, agentverdict
parity on its own bundled benchmark, and a snapshot write killed midway."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

CLI = [sys.executable, "-c", "from agentverity_props.cli import main; main()"]

AGENTS = textwrap.dedent("""
    import random, threading

    def gate(p):
        return "block" if "attack" in p else "allow"

    def drifted(p):
        return "allow" if p == "attack plan 3" else gate(p)

    _rng = random.Random(5)
    _lock = threading.Lock()

    def noisy(p):
        with _lock:
            flip = _rng.random() < 0.4
        v = gate(p)
        return ("allow" if v == "block" else "block") if flip else v

    _good, _bad = random.Random(1), random.Random(2)

    def good(p):
        return "4"

    def bad(p):
        with _lock:
            return "4" if _bad.random() < 0.5 else "5"
""")

# deterministic agentverdict-style agent: run_agent(task) -> str, one task raises
VERDICT_AGENT = textwrap.dedent("""
    ANSWERS = {
        "Reply with exactly: Hello, AgentVerdict!": "Hello, AgentVerdict!",
        "What is 7 + 5? Reply with only the number.": "12",
        "Reply with exactly: true": "True",
        "Write the word agentverdict in uppercase only.": "AGENTVERDICT",
        "Return only an identifier with three uppercase letters, a hyphen, and four digits.":
            "ABC-1234",
        "Name the capital of France.": "The capital is Paris.",
        "How many days are in a standard week? Reply with only the number.": "7 days",
    }

    def run_agent(task: str) -> str:
        if "acknowledged" in task:
            raise RuntimeError("boom")
        return ANSWERS.get(task, "I verified it.")
""")

MATH = textwrap.dedent("""
    version: "1"
    name: math
    tasks:
      - {id: add, prompt: "2+2?", evaluation: {type: exact_match, expected: "4"}}
      - {id: add2, prompt: "2+2 again?", evaluation: {type: one_of, expected: ["4", "four"]}}
""")


def run_many(cmds: list[list[str]], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Run CLI invocations concurrently (each is a fresh interpreter)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("AGENTVERITY_PROPS_SALT", None)
    procs = [subprocess.Popen([*CLI, *c], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in cmds]
    out = []
    for cmd, p in zip(cmds, procs, strict=True):
        stdout, stderr = p.communicate(timeout=300)
        out.append(subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr))
    return out


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "inputs.txt").write_text("\n".join(
        [f"attack plan {i}" for i in range(10)] + [f"hello friend {i}" for i in range(10)]))
    (tmp_path / "math.yaml").write_text(MATH)
    return tmp_path


def test_snapshot_and_check_exit_codes(work):
    base = ["--inputs", "inputs.txt"]
    refused, ok = run_many([
        ["snapshot", "--agent", "agents.py:gate", *base, "-o", "refused.json"],
        ["snapshot", "--agent", "agents.py:gate", *base, "-o", "s.json", "--accept-reference",
         "--format", "json"]], work)
    assert refused.returncode == 2
    # every evidence rule passed: the preview's next step, not an error
    assert "preview: every evidence rule passed" in refused.stderr
    assert "--accept-reference" in refused.stderr
    assert not (work / "refused.json").exists()
    assert ok.returncode == 0, ok.stderr
    doc = json.loads((work / "s.json").read_text())
    assert doc["schema"] == "agentverity_props.snapshot/2"
    assert doc["admission"]["admitted"]
    assert "attack plan" not in (work / "s.json").read_text()

    chk = ["check", *base, "--snapshot", "s.json", "--format", "json"]
    clean, drift, stoch, missing, new_name, old_name = run_many([
        [*chk, "--agent", "agents.py:gate"],
        [*chk, "--agent", "agents.py:drifted"],
        [*chk, "--agent", "agents.py:noisy"],
        ["check", "--agent", "agents.py:gate", *base, "--snapshot", "nope.json"],
        [*chk, "--agent", "agents.py:gate", "--drift-tolerance", "0.3"],
        [*chk, "--agent", "agents.py:gate", "--tolerance", "0.3"],  # the old name still works
    ], work)
    for named in (new_name, old_name):
        assert named.returncode == 0, named.stderr
        assert json.loads(named.stdout)["drift"]["tolerance"] == 0.3
    assert clean.returncode == 0, clean.stderr
    d = json.loads(clean.stdout)
    assert d["status"] == "clean"
    assert d["calls"]["total"] < d["calls"]["full_rerun_estimate"] == doc["calls"]["total"]
    assert drift.returncode == 1, drift.stderr
    d = json.loads(drift.stdout)
    assert d["drift"]["inputs"] == 1
    assert d["inputs"]
    assert stoch.returncode == 2, stoch.stderr
    d = json.loads(stoch.stdout)
    assert [r["rule"] for r in d["inadmissible"]] == ["verdict-deterministic"]
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1
    assert "not found" in missing.stderr


def test_bench_parity_with_agentverdicts_runner_and_exit_codes(work):
    agentverdict = pytest.importorskip("agentverdict")
    from agentverdict.loaders import load_benchmark as av_load
    from agentverdict.loaders import load_python_agent
    from agentverdict.runners import run_benchmark as av_run

    general = Path(agentverdict.__file__).parent / "benchmark_data" / "general.yaml"
    (work / "verdict_agent.py").write_text(VERDICT_AGENT)
    (work / "typo.yaml").write_text(MATH.replace("expected: \"4\"", "expcted: \"4\""))
    ours, ours_early, passing, typo, cmp_bad, cmp_same = run_many([
        ["bench", "--agent", "verdict_agent.py", "--benchmark", str(general), "--runs", "3",
         "--no-early-stop", "--format", "json"],
        ["bench", "--agent", "verdict_agent.py", "--benchmark", str(general), "--runs", "3",
         "--format", "json"],
        ["bench", "--agent", "agents.py:good", "--benchmark", "math.yaml", "--runs", "5"],
        ["bench", "--agent", "agents.py:good", "--benchmark", "typo.yaml"],
        ["compare", "agents.py:good", "agents.py:bad", "--benchmark", "math.yaml",
         "--format", "json"],
        ["compare", "agents.py:good", "agents.py:good", "--benchmark", "math.yaml",
         "--max-runs", "5", "--format", "junit"],
    ], work)

    # agentverdict's own runner on the same agent file and benchmark
    theirs = av_run(load_python_agent(work / "verdict_agent.py"), av_load(general),
                    runs_per_task=3)
    expected = {t.task_id: t.passed_attempts for t in theirs.tasks}
    # the same grading; our exit code says 2 when a run errored (a failed agent call is
    # missing evidence), else 1 on any failed task, as agentverdict's does
    errored = any(t.errored_attempts for t in theirs.tasks)
    assert ours.returncode == (2 if errored else 1 if theirs.failed_tasks else 0), ours.stderr
    d = json.loads(ours.stdout)
    assert {t["id"]: t["passes"] for t in d["tasks"]} == expected
    assert {t["id"]: t["status"] == "PASS" for t in d["tasks"]} == \
        {t.task_id: t.fully_passed for t in theirs.tasks}
    assert {t["id"]: t["errors"] for t in d["tasks"]} == \
        {t.task_id: t.errored_attempts for t in theirs.tasks}
    assert d["calls"]["saved"] == 0

    # early stopping: same verdicts, fewer calls, savings reported
    e = json.loads(ours_early.stdout)
    assert ours_early.returncode == ours.returncode
    assert [t["status"] for t in e["tasks"]] == [t["status"] for t in d["tasks"]]
    assert e["calls"]["saved"] == 8
    assert e["calls"]["attempts"] == 22

    assert passing.returncode == 0, passing.stderr
    assert "Exit 0" in passing.stdout
    assert typo.returncode == 2
    assert typo.stderr.count("\n") == 1
    assert "unknown key 'expcted'" in typo.stderr
    assert "typo.yaml:5" in typo.stderr

    assert cmp_bad.returncode == 1, cmp_bad.stderr
    c = json.loads(cmp_bad.stdout)
    assert c["pairs"][0]["metrics"]["pass_rate"]["verdict"] == "A better"
    assert c["regressions"]
    assert c["stop_reason"] == "decided"
    assert cmp_same.returncode == 0, cmp_same.stderr
    assert 'failures="0"' in cmp_same.stdout
    assert "<failure" not in cmp_same.stdout


KILL_CHILD = textwrap.dedent("""
    import sys
    from agentverity_props.snapshot._create import load_snapshot, write_snapshot
    path = sys.argv[1]
    doc = load_snapshot(path)
    doc["tool_version"] = "x" * 30_000_000  # padding in a field of the format
    print("ready", flush=True)
    gen = 0
    while True:
        gen += 1
        doc["agent"] = f"generation {gen}"
        write_snapshot(path, doc)
""")


def test_snapshot_write_killed_midway_leaves_the_previous_snapshot(tmp_path):
    from agentverity_props import create_snapshot
    from agentverity_props.snapshot._create import load_snapshot

    path = tmp_path / "snap.json"
    res = create_snapshot(lambda p: "block" if "attack" in p else "allow",
                          [f"attack {i}" for i in range(8)] + [f"hi {i}" for i in range(8)],
                          accept_reference=True, output=path)
    assert res.admitted
    original = path.read_bytes()
    (tmp_path / "child.py").write_text(KILL_CHILD)
    interrupted = 0
    for _ in range(3):
        if interrupted:
            break
        child = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), str(path)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".snap.json.*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        assert child.returncode == -signal.SIGKILL
        leftovers = list(tmp_path.glob(".snap.json.*.tmp"))
        interrupted += bool(leftovers)
        for f in leftovers:
            f.unlink()
        doc = load_snapshot(path)  # parses and validates: never a torn file
        if path.read_bytes() != original:  # a later write completed before the kill
            assert len(doc["tool_version"]) == 30_000_000
            assert doc["agent"].startswith("generation ")
    assert interrupted >= 1  # at least one kill landed mid-write


def test_the_shipped_sample_benchmark_runs_as_documented() -> None:
    """examples/moderation_benchmark.yaml: bench and compare exactly as its header says."""
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    bench = root / "examples" / "moderation_benchmark.yaml"
    run = [sys.executable, "-m", "agentverity_props"]
    res = subprocess.run([*run, "bench", "--agent", "examples/plain_gate.py:gate",
                          "--benchmark", str(bench)], cwd=root, capture_output=True,
                         text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "every task passed" in res.stdout
    res = subprocess.run([*run, "compare", "examples/plain_gate.py:gate",
                          "examples/plain_gate.py:noisy_gate", "--benchmark", str(bench)],
                         cwd=root, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode in (0, 1), res.stdout + res.stderr
    assert "A vs B" in res.stdout


def test_enlarge_then_snapshot_is_admitted_on_the_shipped_deterministic_gate(tmp_path) -> None:
    """The shipped probe set is too close to blind for a snapshot; the refusal says what to
    do, and after enlarge (which aims below the threshold by the interval's width) the
    snapshot is admitted."""
    import subprocess
    import sys

    root = Path(__file__).parents[2]
    run = [sys.executable, "-m", "agentverity_props"]
    gate = "examples/plain_gate.py:gate"
    probes = "examples/inputs/moderation.txt"
    res = subprocess.run([*run, "snapshot", "--agent", gate, "--inputs", probes, "-o",
                          str(tmp_path / "s.json"), "--accept-reference"], cwd=root,
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 2
    assert "agentverity-props enlarge --threshold" in res.stderr
    more = tmp_path / "more.txt"
    res = subprocess.run([*run, "enlarge", "--agent", gate, "--inputs", probes, "-o",
                          str(more)], cwd=root, capture_output=True, text=True, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run([*run, "snapshot", "--agent", gate, "--inputs", str(more), "-o",
                          str(tmp_path / "s.json"), "--accept-reference"], cwd=root,
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "s.json").exists()


def test_accepting_a_preview_replays_its_draws_instead_of_spending_them_again(work):
    env = {**os.environ, "PYTHONHASHSEED": "0", "XDG_CACHE_HOME": str(work / "cache")}
    env.pop("AGENTVERITY_PROPS_SALT", None)

    def snap(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "snapshot", "--agent", "agents.py:gate", "--inputs",
                               "inputs.txt", "-o", "s.json", "--format", "json", *extra],
                              cwd=work, env=env, capture_output=True, text=True, timeout=300,
                              check=False)

    preview = snap()
    assert preview.returncode == 2
    spent = json.loads(preview.stdout)["calls"]["total"]
    assert spent > 0
    assert "--accept-reference replays them" in preview.stderr
    accepted = snap("--accept-reference")
    assert accepted.returncode == 0, accepted.stderr
    doc = json.loads(accepted.stdout)
    assert doc["calls"]["total"] == 0, doc["calls"]  # every draw came from the preview
    assert doc["admission"]["admitted"]
    assert "0 new call(s)" in accepted.stderr
    assert list((work / "cache").rglob("*.sqlite3")) == []  # consumed once written
    again = snap("--accept-reference")  # no preview left: the evidence is gathered afresh
    assert json.loads(again.stdout)["calls"]["total"] == spent


def test_check_of_a_snapshot_accepted_from_a_preview_counts_the_replayed_draws(work):
    """The reused preview's draws are the snapshot's evidence: check's full re-run estimate
    counts them (0 live calls would make any check look more expensive than a re-run)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "XDG_CACHE_HOME": str(work / "cache")}
    env.pop("AGENTVERITY_PROPS_SALT", None)
    snap = [*CLI, "snapshot", "--agent", "agents.py:gate", "--inputs", "inputs.txt", "-o",
            "s.json", "--format", "json"]
    first = subprocess.run(snap, cwd=work, env=env, capture_output=True, text=True,
                           timeout=300, check=False)
    spent = json.loads(first.stdout)["calls"]["total"]
    subprocess.run([*snap, "--accept-reference"], cwd=work, env=env, capture_output=True,
                   text=True, timeout=300, check=True)
    doc = json.loads((work / "s.json").read_text())
    assert doc["calls"]["total"] == 0
    assert doc["calls"]["replayed"] == spent
    chk = subprocess.run([*CLI, "check", "--agent", "agents.py:gate", "--inputs", "inputs.txt",
                          "--snapshot", "s.json", "--format", "json"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    calls = json.loads(chk.stdout)["calls"]
    assert calls["full_rerun_estimate"] == spent
    assert calls["saved"] == spent - calls["total"]
