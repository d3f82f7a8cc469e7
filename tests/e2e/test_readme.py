"""README examples run, and print what README says they print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import shown_outputs

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()
# the python blocks whose output README shows are run and compared by test_shown_outputs.py
_SHOWN = {s.code for s in shown_outputs.shown(ROOT / "README.md")
          if isinstance(s, shown_outputs.Shown)}
BLOCKS = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if b not in _SHOWN]

pytestmark = pytest.mark.e2e


def test_readme_has_the_two_setup_commands_and_ci_runs_the_second():
    commands = re.findall(r"```bash\n(.*?)\n```", README.split("## Set-up")[1], re.S)[:2]
    assert "agentverity-props demo" in commands[0]
    ci = (ROOT / ".ci/run").read_text()
    assert commands[1] in ci.splitlines()
    # two test jobs, both run, that together select every test: the fast one, then the
    # statistical simulations with the documented commands in fresh environments
    jobs = commands[1].split(" && ")[1:]
    assert jobs == [f"python -m pytest -m {m} -n auto --dist loadfile"
                    for m in ('"not stats and not docs"', '"stats or docs"')], jobs


@pytest.mark.parametrize(("job", "linters", "expected"), [
    ("true && false", "true", 1),   # the second job fails: CI fails
    ("false && true", "true", 1),   # the first job fails (the second never runs): CI fails
    ("true && true", "false", 1),   # a linter fails
    ("true && true", "true", 0),
])
def test_ci_fails_when_a_test_job_fails(job: str, linters: str, expected: int) -> None:
    """.ci/run from README's test command on, with each job and linter replaced by ``true``
    or ``false``, under the script's own shell options: under ``set -e`` a failure inside an
    && list does not stop a script, so the command's status must be kept and returned."""
    ci = (ROOT / ".ci/run").read_text()
    options = next(ln for ln in ci.splitlines() if ln.startswith("set -"))
    command = re.findall(r"```bash\n(.*?)\n```", README.split("## Set-up")[1], re.S)[1]
    tail = ci[ci.index(command):].replace(command, job, 1)
    tail = tail.replace("ruff check .", linters).replace("mypy", linters)
    got = subprocess.run(["bash", "-c", f"{options}\n{tail}"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert got.returncode == expected, (tail, got.stderr)


@pytest.mark.docs  # README's examples run as written: the full job's, with the other doc runs
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_examples_without_a_shown_output_run(index, tmp_path):
    code = BLOCKS[index]
    script = tmp_path / "example.py"
    script.write_text(code)
    if "def test_" in code:  # a pytest example: run it with pytest (a failing property)
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               str(script)], capture_output=True, text=True, timeout=300,
                              check=False, cwd=tmp_path)
        assert "CaseViolation" in proc.stdout, proc.stdout[-3000:]
        return
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.docs
def test_readme_regression_commands_run_as_written(tmp_path):
    """The CLI block of README runs line by line from a copy of the repository's examples:
    no command ends in a usage error or a traceback, and each exit code is as documented."""
    import shutil

    block = README.split("Regression references, after a first diagnosis")[1]
    commands = re.search(r"```bash\n(.*?)\n```", block, re.S).group(1).splitlines()
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    expected = {"enlarge": {0}, "snapshot": {0}, "check": {0, 1}, "bench": {0},
                "compare": {0, 1}, "run": {0, 1}, "report": {0}}
    for line in commands:
        args = line.split()
        assert args[0] == "agentverity-props", line
        proc = subprocess.run([sys.executable, "-m", "agentverity_props", *args[1:]],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              check=False)
        assert proc.returncode in expected[args[1]], (line, proc.stdout[-2000:],
                                                      proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr, line
    assert (tmp_path / "out" / "snap.json").exists()
    assert (tmp_path / "out" / "run.html").exists()
    # run from the repository root, they leave nothing beside the tracked files: everything
    # they write is under out/, which .gitignore leaves out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "out"]
    assert "/out/" in (ROOT / ".gitignore").read_text().splitlines()


def test_readme_exit_table_has_one_row_per_code():
    table = README.split("**Exit codes**")[1].split("\n\n")[1]
    codes = [row.split("|")[1].strip() for row in table.splitlines()[2:] if row.startswith("|")]
    assert codes == ["2", "1", "0"], codes
