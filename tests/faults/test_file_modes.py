"""Written files get the permissions ``open(path, "w")`` would give them: ``0o666`` less the
umask (0644 under umask 022), or those of the file they replace; still written atomically
(a temporary file beside the target, renamed over it). Reports, HTML pages, enlarged probe
sets and snapshots are shared with a team and uploaded as CI artifacts: 0600 breaks that.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentverity_props._internal.atomic import atomic_write_bytes, atomic_write_text

from .conftest import ROOT, cli_env

pytestmark = pytest.mark.e2e


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test, and restore it."""
    before = os.umask(0o022)
    os.umask(before)
    yield os.umask
    os.umask(before)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600),
                                                (0o002, 0o664)],
                         ids=["umask-022", "umask-077", "umask-002"])
def test_a_new_file_follows_the_umask(tmp_path: Path, umask, mask: int,
                                      expected: int) -> None:
    umask(mask)
    atomic_write_text(tmp_path / "r.json", "{}\n")
    atomic_write_bytes(tmp_path / "r.bin", b"\x00")
    assert _mode(tmp_path / "r.json") == expected
    assert _mode(tmp_path / "r.bin") == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.bin", "r.json"]  # no temp left


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask) -> None:
    umask(0o022)
    target = tmp_path / "r.html"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    atomic_write_text(target, "new")
    assert target.read_text(encoding="utf-8") == "new"
    assert _mode(target) == 0o640


def test_every_cli_output_is_0644_under_umask_022(tmp_path: Path) -> None:
    """``run -o``, ``report --html``, ``enlarge -o`` and ``snapshot -o``, as a user runs them."""
    cli = [sys.executable, "-m", "agentverity_props"]
    gate, probes = "examples/plain_gate.py:gate", "examples/inputs/moderation.txt"
    more, run_json = tmp_path / "more.txt", tmp_path / "run.json"
    html, snap = tmp_path / "run.html", tmp_path / "snap.json"
    steps = [
        ([*cli, "run", "--agent", gate, "--inputs", probes, "--no-relations", "--format",
          "json", "-o", str(run_json)], (0, 1)),
        ([*cli, "report", str(run_json), "--html", str(html)], (0,)),
        ([*cli, "enlarge", "--agent", gate, "--inputs", probes, "-o", str(more)], (0,)),
        ([*cli, "snapshot", "--agent", gate, "--inputs", str(more), "-o", str(snap),
          "--accept-reference"], (0,)),
    ]
    for argv, codes in steps:
        res = subprocess.run(argv, cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                             timeout=300, check=False, umask=0o022)
        assert res.returncode in codes, (argv[3], res.stdout[-1500:] + res.stderr[-1500:])
    for p in (run_json, html, more, snap):
        assert _mode(p) == 0o644, (p.name, oct(_mode(p)))
