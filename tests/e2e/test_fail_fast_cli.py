"""An agent that always fails costs at most 20 calls in every command, and the cause is on
the terminal (through the real CLI in a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
pytestmark = pytest.mark.e2e

AGENTS = '''
import os

def _count():
    with open(os.environ["COUNT_FILE"], "a") as f:
        f.write("x")

def raises(prompt):
    _count()
    raise RuntimeError("model API key missing")

def returns_none(prompt):
    _count()
    return None

def wrong_key(prompt):
    _count()
    return {"decision": "allow", "score": 0.1}
'''
BENCH = '''version: "1"
name: tiny
tasks:
  - {id: a, name: A, prompt: "2+2?", evaluation: {type: exact_match, expected: "4"}}
  - {id: b, name: B, prompt: "3+3?", evaluation: {type: exact_match, expected: "6"}}
'''
CAUSES = {"raises": "model API key missing", "returns_none": "returned NoneType",
          "wrong_key": "the verdict key 'verdict' is absent; the answers have keys decision"}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(AGENTS)
    (tmp_path / "in.txt").write_text("hello there\nplan an attack\nbook a table\nwhat now\n")
    (tmp_path / "bench.yaml").write_text(BENCH)
    return tmp_path


def _commands(d: Path, agent: str) -> dict[str, list[str]]:
    ref = f"{d / 'agents.py'}:{agent}"
    key = ["--verdict-key", "verdict"] if agent == "wrong_key" else []
    return {
        "run": ["run", "--agent", ref, "--inputs", str(d / "in.txt"), *key],
        "snapshot": ["snapshot", "--agent", ref, "--inputs", str(d / "in.txt"), "-o",
                     str(d / "snap.json"), "--accept-reference", *key],
        "bench": ["bench", "--agent", ref, "--benchmark", str(d / "bench.yaml"), "--runs",
                  "20"],
        "compare": ["compare", ref, ref, "--benchmark", str(d / "bench.yaml")],
        "enlarge": ["enlarge", "--agent", ref, "--inputs", str(d / "in.txt"), "-o",
                    str(d / "more.txt"), *key],
    }


@pytest.mark.parametrize("agent", sorted(CAUSES))
@pytest.mark.parametrize("command", ["run", "snapshot", "bench", "compare", "enlarge"])
def test_an_always_failing_agent_is_stopped_fast_with_the_cause(files: Path, agent: str,
                                                                command: str) -> None:
    if agent == "wrong_key" and command in ("bench", "compare"):
        pytest.skip("bench and compare grade answer text, not a verdict key")
    count = files / "count"
    proc = subprocess.run([sys.executable, "-m", "agentverity_props",
                           *_commands(files, agent)[command]], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={**__import__("os").environ, "COUNT_FILE": str(count)})
    calls = len(count.read_text()) if count.exists() else 0
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert calls <= 20, (calls, out)
    if agent == "returns_none" and command in ("bench", "compare"):
        return  # graded as an empty answer: a failure of the task, reported as such
    assert CAUSES[agent] in " ".join(out.split()), out


def test_an_http_agent_where_nothing_listens_is_stopped_fast(tmp_path: Path) -> None:
    """Connection refused on every call: stopped within 20 calls (retries included), with the
    cause, in seconds rather than minutes."""
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "agent.py").write_text(
        "from agentverity_props import from_http\n"
        f"agent = from_http('http://127.0.0.1:{port}/ask')\n")
    (tmp_path / "in.txt").write_text("hello there\nplan an attack\nbook a table\nwhat now\n")
    proc = subprocess.run([sys.executable, "-m", "agentverity_props", "run", "--agent",
                           f"{tmp_path / 'agent.py'}:agent", "--inputs",
                           str(tmp_path / "in.txt"), "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    import json
    report = json.loads(proc.stdout)
    assert report["calls"]["total"] <= 20
    assert "cannot reach the agent" in report["ledger"]["stop_cause"]
