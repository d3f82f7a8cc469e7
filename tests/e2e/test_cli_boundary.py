"""``agentverity-props boundary`` in a subprocess: located, no crossing, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.e2e

AGENT = '''
import random, re
_rng = random.Random(5)
def gate(prompt):
    m = re.search(r"weighs ([\\d.]+) kg", prompt)
    v = "freight" if m and float(m.group(1)) > 31.5 else "parcel"
    if _rng.random() < 0.05:
        v = "parcel" if v == "freight" else "freight"
    return v
'''


def cli(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp / "shipping_agent.py").write_text(AGENT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp), os.environ.get("PYTHONPATH", ""), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "agentverity_props", "boundary",
                           "--agent", "shipping_agent:gate", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_located_names_the_crossing_edit(tmp_path):
    proc = cli(tmp_path, "--from", "Box to Turin weighs 12.0 kg", "--to",
               "Box to Turin weighs 80.0 kg")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("boundary: weighs ")
    assert "flips parcel → freight" in first
    before, after = (float(x) for x in first.split("weighs ")[1].split(" flips")[0]
                     .split(" → "))
    assert before <= 31.5 < after
    assert after - before <= 0.01 * before + 0.1


def test_json_and_no_crossing(tmp_path):
    proc = cli(tmp_path, "--from", "Box weighs 2.0 kg", "--to", "Box weighs 9.0 kg",
               "--format", "json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "no-crossing"
    assert data["low"] == "Box weighs 2.0 kg"
    assert data["step_log"]


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    proc = cli(tmp_path, "--from", "same", "--to", "same")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "error:" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = cli(tmp_path, "--from", "a", "--to", "b", "--budget", "0")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
