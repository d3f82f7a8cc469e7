"""Every command the documentation shows runs as written.

Each shell block of README.md, docs/*.md and examples/README.md is read line by line
(``\\`` continuations joined, ``$`` prompts and trailing comments dropped). The
``agentverity-props`` commands of one document run in order in one scratch directory holding
a copy of ``examples/`` (so a file one command writes is there for the next), as a real
subprocess: none may end in a usage error, a refusal (``error: ...``) or a traceback, and
each must exit with a documented code of a finished command (0, 1, or 2 for incomplete or
undecided evidence). A line ending in ``&`` that starts an example service is
started in the background and awaited; fixed ports in a document are replaced by free ones.
``pip install`` lines must name extras that exist and that the test environment installs.

The commands run in the environment a user has at that point, not in ``[dev]``: README's
set-up command 1 in a fresh venv (``setup_venvs["setup"]``, tests/e2e/conftest.py), or that
environment plus ``[html,http,otel]`` for a document asking for those
(``setup_venvs["later"]``); a document asking for an extra neither has (a framework's
adapter, docs/agents.md) runs in the test environment, which installs every extra.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
SHELL = ("bash", "sh", "shell", "console", "")
PORT = re.compile(r"(?<![\d.])(4318|8080|8000)(?!\d)")

# whole documented analyses in fresh environments built by pip: the second job
pytestmark = [pytest.mark.e2e, pytest.mark.docs]


def shell_lines(text: str) -> list[str]:
    """The command lines of a document's shell blocks."""
    out: list[str] = []
    for body in _blocks(text):
        for raw in body.replace("\\\n", " ").splitlines():
            line = raw.strip()
            if line.startswith("$ "):
                line = line[2:]
            if not line or line.startswith("#"):
                continue
            out.append(line)
    return out


def _blocks(text: str) -> list[str]:
    """The bodies of the fenced blocks whose language is a shell (or none)."""
    blocks: list[str] = []
    lang: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, body = line[3:].strip(), []
            else:
                if lang in SHELL:
                    blocks.append("\n".join(body) + "\n")
                lang = None
        elif lang is not None:
            body.append(line)
    return blocks


def _strip_comment(line: str) -> str:
    lex = shlex.shlex(line, posix=True, punctuation_chars=False)
    lex.whitespace_split = True
    lex.commenters = "#"
    return " ".join(t if t in ("&&", "&") else shlex.quote(t) for t in lex)


def commands(doc: Path) -> list[str]:
    """The lines to run or check, ``a && b`` chains split into their commands."""
    lines: list[str] = []
    for x in shell_lines(doc.read_text(encoding="utf-8")):
        try:
            lines += [part.strip() for part in _strip_comment(x).split(" && ")]
        except ValueError:  # prose or program output in a plain block, not a command
            continue
    return [x for x in lines if x and (_argv(x)[1][:1] == ["agentverity-props"]
                                        or x.rstrip().endswith("&") or "pip install" in x)]


def _argv(line: str) -> tuple[dict[str, str], list[str]]:
    """``A=1 B=2 cmd args`` -> ({A: 1, B: 2}, [cmd, args])."""
    words = shlex.split(line.rstrip("& "))
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    return env, words


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _extras() -> tuple[set[str], str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    return set(extras), " ".join(extras["dev"])


def _check_install(line: str) -> None:
    names, dev = _extras()
    for spec in re.findall(r"\[([a-z0-9_,\- ]+)\]", line):
        for extra in (e.strip() for e in spec.split(",")):
            assert extra in names, f"{line!r}: no extra {extra!r} in pyproject.toml"
            assert extra == "dev" or extra == "similarity" or extra in dev, \
                f"{line!r}: the test environment ([dev]) does not install [{extra}]"


def _test_environment_first(doc: Path) -> int:
    """The documents run in the test environment come first: their worker starts at once,
    while another (tests/e2e/test_setup_env.py) builds the fresh environments the others
    need, instead of both waiting for one build."""
    return 0 if environment_for(doc) == "dev" else 1


def _doc_extras(doc: Path) -> set[str]:
    """The extras a document's own ``pip install`` lines name (``[dev]`` aside)."""
    out: set[str] = set()
    for line in commands(doc):
        if "pip install" in line and ".[dev]" not in line:
            for spec in re.findall(r"\[([a-z0-9_,\- ]+)\]", line):
                out |= {e.strip() for e in spec.split(",")}
    return out


def environment_for(doc: Path) -> str:
    """Which environment a user following ``doc`` has: setup, later, or dev."""
    from _fresh_venv import LATER_EXTRAS, setup_extras
    need = _doc_extras(doc)
    have = set(setup_extras().split(","))
    if need <= have:
        return "setup"
    if need <= have | set(LATER_EXTRAS.split(",")):
        return "later"
    return "dev"


def test_readme_and_regression_docs_run_in_the_setup_environment() -> None:
    # the "fresh venv" promise: README's commands need only README's set-up
    assert environment_for(ROOT / "README.md") == "setup"
    assert environment_for(ROOT / "docs" / "regression.md") == "setup"
    assert environment_for(ROOT / "docs" / "reports.md") == "setup"
    assert environment_for(ROOT / "docs" / "tools.md") == "later"


DOCS_WITH_COMMANDS = sorted((d for d in DOCS if commands(d)), key=_test_environment_first)


@pytest.mark.parametrize("doc", DOCS_WITH_COMMANDS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_documented_command_runs(doc: Path, tmp_path: Path,
                                       request: pytest.FixtureRequest) -> None:
    env_name = environment_for(doc)
    python = sys.executable if env_name == "dev" else \
        str(request.getfixturevalue("setup_venvs")[env_name].python)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "agentverity_props").symlink_to(ROOT / "agentverity_props")
    ports: dict[str, str] = {}
    services: list[subprocess.Popen[str]] = []
    env0 = {**os.environ, "AGENTVERITY_PROPS_NO_BROWSER": "1"}
    ran = 0
    try:
        for written in commands(doc):
            if "pip install" in written:
                _check_install(written)
                continue
            line = PORT.sub(lambda m: ports.setdefault(m.group(1), str(_free_port())), written)
            env, argv = _argv(line)
            if argv[0] == "agentverity-props":
                argv = [python, "-m", "agentverity_props", *argv[1:]]
            elif argv[0] == "python":
                argv[0] = python
            if line.rstrip().endswith("&"):
                services.append(_start(argv, {**env0, **env}, tmp_path))
                continue
            proc = subprocess.run(argv, cwd=tmp_path, env={**env0, **env}, capture_output=True,
                                  text=True, timeout=600, check=False)
            ran += 1
            where = (f"{doc.name} (environment {env_name}): {line}\n{proc.stdout[-1500:]}\n"
                     f"{proc.stderr[-1500:]}")
            assert "Traceback" not in proc.stderr, where
            assert "Usage:" not in proc.stderr, where
            # 0/1: a finished run; 2 only as a report's "incomplete or undecided" (a noisy
            # example agent), never a refusal of the command line or its files
            assert proc.returncode in (0, 1, 2), where
            assert not any(ln.startswith("error:") for ln in proc.stderr.splitlines()), where
            if argv[3:] == ["demo"]:
                check_demo(proc, where)
    finally:
        for s in services:
            s.terminate()
            try:
                s.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                s.kill()
                s.communicate(timeout=10)
    assert ran or not any("agentverity-props" in c for c in commands(doc))


def check_demo(proc: subprocess.CompletedProcess[str], where: str = "") -> None:
    """What README says the demo does: it finds the planted bug, ends with exit 1, and says
    that this exit 1 is the expected result (checked here, on the run README's set-up
    command makes in a fresh environment, rather than on a second demo run of its own)."""
    assert proc.returncode == 1, where
    assert "VIOLATED" in proc.stdout, where
    # the last words a new user reads say that this exit 1 is the demo's expected result
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "Exit 1 is this demo's expected result: its agent has a planted case bug"), where


def _start(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """A documented background service; returns once it says it listens."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    line = proc.stdout.readline() if ready else ""
    if "LISTENING" not in line:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"{' '.join(argv)} did not start: {line!r} {err[-2000:]}")
    return proc


def test_the_harness_sees_the_commands_it_should() -> None:
    readme = commands(ROOT / "README.md")
    assert "agentverity-props demo" in readme  # the run check_demo checks
    assert any(c.startswith("agentverity-props enlarge") for c in readme)
    assert _argv("A=1 B='x y' agentverity-props run --x 1 &") == (
        {"A": "1", "B": "x y"}, ["agentverity-props", "run", "--x", "1"])
    assert _strip_comment("agentverity-props report r.json   # a comment") == \
        "agentverity-props report r.json"
