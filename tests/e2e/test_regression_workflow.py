"""The baseline workflow of docs/regression.md, start to finish, on the shipped plain gate and
the real CLI, as a CI job would run it (``GITHUB_ACTIONS=true``, a job summary file):

1. create the baseline (enlarge, snapshot --accept-reference) and "commit" it;
2. check the unchanged agent: exit 0, a clean summary, no annotation;
3. check a planted regression (the gate with the URGENT bug): exit 1, every input whose
   verdict the bug moves named (by fingerprint) in the Markdown summary and annotated;
4. bless with inadmissible evidence (the noisy gate: a stochastic verdict): refused, exit 2,
   the committed snapshot byte for byte unchanged;
5. bless the intended change (the bug is now the reference): admitted, the changed reference
   said, and the check of that agent is clean again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _markdown_check import check_markdown

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "agentverity_props"]
GATE = "examples/plain_gate.py"
TIMEOUT = 300


def _cli(*args: str, cwd: Path, summary: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.pop("AGENTVERITY_PROPS_SALT", None)
    env["XDG_CACHE_HOME"] = str(cwd / ".cache")
    if summary is not None:
        env.update(GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(summary))
    return subprocess.run([*CLI, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


def test_create_check_regress_bless(tmp_path: Path) -> None:
    from agentverity_props.engine import Probe
    from agentverity_props.examples.plain import buggy_gate, gate

    probes, snap = tmp_path / "probes.txt", tmp_path / "snapshot.json"
    # 1. the baseline: a probe set that is not blind, then the admitted snapshot
    p = _cli("enlarge", "--agent", f"{GATE}:gate", "--inputs", "examples/inputs/moderation.txt",
             "-o", str(probes), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = _cli("snapshot", "--agent", f"{GATE}:gate", "--inputs", str(probes), "-o", str(snap),
             "--accept-reference", "--annotations", "none", cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    committed = snap.read_bytes()

    def check(agent: str) -> tuple[int, str, str]:
        summary = tmp_path / f"summary-{agent}.md"
        summary.write_text("")
        p = _cli("check", "--agent", f"{GATE}:{agent}", "--inputs", str(probes),
                 "--snapshot", str(snap), "--no-progress", cwd=tmp_path, summary=summary)
        return p.returncode, summary.read_text(), p.stdout + p.stderr

    # 2. unchanged agent: clean
    code, md, log = check("gate")
    assert code == 0, log[-3000:]
    found = check_markdown(md)
    assert "agentverity-props check: ✅ exit 0" in found["headings"][0]
    assert "What moved" not in md
    assert "::error" not in log

    # 3. planted regression: exit 1, every moved input named in the summary
    texts = [t for t in probes.read_text().splitlines() if t.strip()]
    moved = {Probe.make(t).fp.split(":", 1)[1][:12] for t in texts
             if gate(t)["verdict"] != buggy_gate(t)["verdict"]}
    assert moved, "the planted bug moves no probe: the test would prove nothing"
    code, md, log = check("buggy_gate")
    assert code == 1, log[-3000:]
    found = check_markdown(md)
    assert "agentverity-props check: ❌ exit 1" in found["headings"][0]
    assert f"What moved: {len(moved)} changed" in md
    for fp in moved:
        assert f"`{fp}`" in md, f"moved input {fp} not named in\n{md}"
        assert f"snapshot input changed%3A {fp}" in log
    assert log.count("::error") == len(moved)

    # 4. bless with inadmissible evidence: refused, the committed file untouched
    p = _cli("snapshot", "--agent", f"{GATE}:noisy_gate", "--inputs", str(probes), "-o",
             str(snap), "--accept-reference", "--annotations", "none", cwd=tmp_path)
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr[-2000:]
    assert "verdict-deterministic" in p.stderr
    assert f"{snap} is unchanged" in p.stderr
    assert snap.read_bytes() == committed

    # 5. bless the intended change: admitted, the moved references said, then clean again
    p = _cli("snapshot", "--agent", f"{GATE}:buggy_gate", "--inputs", str(probes), "-o",
             str(snap), "--accept-reference", "--annotations", "none", cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert f"blessed: changed {len(moved)} reference(s) of {snap}" in p.stderr
    assert snap.read_bytes() != committed
    code, md, log = check("buggy_gate")
    assert code == 0, log[-3000:]
    assert "agentverity-props check: ✅ exit 0" in check_markdown(md)["headings"][0]


def test_bench_against_a_baseline_tells_flaky_from_changed(tmp_path: Path) -> None:
    """The noisy gate's flips on the borderline task are flaky (some runs pass, some fail);
    the planted bug's move on the URGENT task is changed (every run agrees, both times)."""
    bench = "examples/ci/benchmark.yaml"
    base = tmp_path / "bench.json"
    p = _cli("bench", "--agent", f"{GATE}:gate", "--benchmark", bench, "--format", "json",
             "-o", str(base), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = _cli("bench", "--agent", f"{GATE}:noisy_gate", "--benchmark", bench, "--baseline",
             str(base), "--no-early-stop", "--runs", "20", "--format", "markdown",
             cwd=tmp_path)
    assert p.returncode == 1, p.stderr  # kill-process fails some of its runs
    check_markdown(p.stdout)
    assert "What moved since the baseline: 0 changed, 1 flaky" in p.stdout
    assert "| `kill-process` | **flaky** | PASS → FAIL | 5/5 (100%) |" in p.stdout
    p = _cli("bench", "--agent", f"{GATE}:buggy_gate", "--benchmark", bench, "--baseline",
             str(base), "--format", "markdown", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    check_markdown(p.stdout)
    assert "What moved since the baseline: 1 changed, 0 flaky" in p.stdout
    assert "| `urgent-reset` | **changed** | PASS → FAIL | 5/5 (100%) | 0/1 (0%) | -1.00 |" \
        in p.stdout
