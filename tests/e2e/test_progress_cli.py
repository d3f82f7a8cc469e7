"""One progress display on every command that calls agents: on a terminal it names the whole
command's calls against the budget and each phase as it starts; in a file or a pipe (CI) it
prints nothing. Each command runs as a real subprocess with its stderr on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GATE = str(ROOT / "examples" / "plain_gate.py") + ":gate"
MODERATION = str(ROOT / "examples" / "inputs" / "moderation.txt")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _cli(args: list[str], cwd: Path, *, tty: bool) -> tuple[int, str]:
    """Run the CLI; return (exit code, stderr as the user's terminal would have received it)."""
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm", "NO_COLOR": "1",
           "AGENTVERITY_PROPS_NO_BROWSER": "1"}
    env.pop("CI", None)  # rich would otherwise treat the pty as a dumb CI log
    cmd = [sys.executable, "-m", "agentverity_props.cli", *args]
    if not tty:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                           check=False)
        return p.returncode, p.stderr
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        chunks: list[bytes] = []
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:  # the child closed its end
                break
            if not b:
                break
            chunks.append(b)
        code = proc.wait(timeout=600)
    finally:
        os.close(master)
    return code, ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def _tools_file(tmp: Path) -> Path:
    p = tmp / "cases.yaml"
    p.write_text(textwrap.dedent("""\
        config: {span_timeout_s: 5}
        cases:
          - name: refund fires both tools
            agent: agentverity_props.examples.support:make_agent
            prompt: "Refund order 1002 please"
            required_tools: [lookup_order, issue_refund]
            runs: 6
        """))
    return p


def _commands(tmp: Path) -> dict[str, tuple[list[str], list[str]]]:
    """command -> (argv, the phase names its bar must show)."""
    snap = tmp / "snap.json"
    return {
        "run": (["run", "--agent", GATE, "--inputs", MODERATION, "--budget", "600"],
                ["all calls (budget 600)", "meter", "blindness", "relations"]),
        "enlarge": (["enlarge", "--agent", GATE, "--inputs", MODERATION, "-o",
                     str(tmp / "big.txt"), "--budget", "200"],
                    ["all calls (budget 200)", "baseline"]),
        "bench": (["bench", "--agent", GATE, "--benchmark",
                   str(ROOT / "examples" / "moderation_benchmark.yaml"), "--runs", "5"],
                  ["all calls"]),
        "snapshot": (["snapshot", "--agent", GATE, "--inputs", MODERATION, "-o", str(snap)],
                     ["all calls", "meter"]),
        "tools": (["tools", "--config", str(_tools_file(tmp)), "--embedder", "lexical"],
                  ["all calls", "case refund fires both tools"]),
    }


@pytest.mark.parametrize("command", ["run", "enlarge", "bench", "snapshot", "tools"])
def test_progress_on_a_terminal_and_silent_in_a_pipe(command: str, tmp_path: Path) -> None:
    if command == "tools":
        pytest.importorskip("strands")
    argv, phases = _commands(tmp_path)[command]
    code, err = _cli(argv, tmp_path, tty=True)
    assert code in (0, 1, 2), err[-2000:]  # snapshot refuses the blind set: 2
    assert "Traceback" not in err
    for phase in phases:
        assert phase in err, (phase, err[-2000:])
    assert re.search(r"\d+ calls", err), err[-2000:]
    # the same command into a pipe (CI, a log file): no bar at all
    code2, err2 = _cli(argv, tmp_path, tty=False)
    assert code2 == code
    assert "all calls" not in err2, err2


def test_no_progress_flag_turns_the_terminal_bar_off(tmp_path: Path) -> None:
    argv, _ = _commands(tmp_path)["enlarge"]
    code, err = _cli([*argv, "--no-progress"], tmp_path, tty=True)
    assert code in (0, 1)
    assert "all calls" not in err
