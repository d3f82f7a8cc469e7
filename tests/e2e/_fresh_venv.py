"""Fresh environments built as README's set-up builds them (used by conftest.py).

``setup_venvs`` makes, once per session, the environment a new user gets from README's
set-up command 1 (``python3 -m venv .venv && pip install -e '.[EXTRAS]'``, the extras read
from README itself), then a copy of it into which the extras a user adds next
(``[html,http,otel]``, docs/tools.md) are installed the same way, one after the other, as
a user does. Both are kept under the user's cache folder, keyed by this checkout's path,
pyproject.toml and the Python version, so a second session reuses them (pip's own wheel
cache makes the first build about a minute). ``AGENTVERITY_PROPS_NO_FRESH_VENV=1`` skips
the tests that need them (an offline machine), as ``AGENTVERITY_PROPS_NO_BROWSER=1`` skips
the screenshots.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: what a user installs after the set-up to follow docs/tools.md and docs/reports.md
LATER_EXTRAS = "html,http,otel"


def setup_extras() -> str:
    """The extras of README's set-up command 1 (``pip install -e '.[...]'``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Set-up", 1)[1]
    m = re.search(r"pip install -e '\.\[([a-z0-9_,-]+)\]'", block)
    assert m, "README's set-up command 1 installs no extras with pip install -e '.[...]'"
    return m.group(1)


@dataclass(frozen=True)
class Venv:
    """A built environment: its python and what ``pip check`` said about it."""

    python: Path
    pip_check: subprocess.CompletedProcess[str]


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=900, check=False, cwd=ROOT)


def _build(where: Path, extras_steps: list[str], base: Path | None) -> Venv:
    done = where / ".built"
    python = where / "bin" / "python"
    if not done.exists():
        shutil.rmtree(where, ignore_errors=True)
        if base is not None:  # a user who installs more into the set-up's environment
            shutil.copytree(base, where, symlinks=True)
            (where / ".built").unlink(missing_ok=True)
        else:
            subprocess.run([sys.executable, "-m", "venv", str(where)], check=True,
                           timeout=300, capture_output=True)
        for extras in extras_steps:
            got = _pip(python, "install", "-q", "-e", f".[{extras}]")
            if got.returncode:
                pytest.fail(f"pip install -e '.[{extras}]' failed in a fresh venv:\n"
                            f"{got.stderr[-3000:]}")
        done.write_text("ok\n")
    return Venv(python=python, pip_check=_pip(python, "check"))


def build_setup_venvs() -> dict[str, Venv]:
    """``{"setup": README's set-up env, "later": it plus [html,http,otel]}``."""
    extras = setup_extras()
    key = hashlib.sha256("\0".join([
        str(ROOT), (ROOT / "pyproject.toml").read_text(encoding="utf-8"), extras,
        sys.version]).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    home = cache / "agentverity-props-tests" / key
    home.mkdir(parents=True, exist_ok=True)
    # one builder at a time: two pytest-xdist workers asking at once (test_setup_env.py and
    # test_docs_commands.py on different workers) would otherwise remove each other's
    # half-built environment; the second waits, then finds both built
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            setup = _build(home / "setup", [extras], None)
            later = _build(home / "later", [LATER_EXTRAS], home / "setup")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return {"setup": setup, "later": later}
