"""The CI recipes in examples/ci/ run as written: their shell steps (GitHub ``run:``, GitLab
``script:`` / ``after_script:``) are extracted from the YAML and run with bash in a temporary
checkout, against a baseline made with the documented commands, the way the CI would run
them (GitHub: ``bash -eo pipefail`` per step, ``if: always()`` steps after a failure,
``GITHUB_ACTIONS=true`` and ``GITHUB_STEP_SUMMARY`` set; GitLab: the script lines in one
shell stopping at the first failure, then the after_script). Only the install step is left
out: the package under test is already installed. ``agentverity-props`` on PATH is this
interpreter's ``-m agentverity_props``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _markdown_check import check_markdown

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with the shipped examples and a committed baseline, made as the recipes'
    header comments say (enlarge, snapshot --accept-reference, a bench result)."""
    repo = tmp_path_factory.mktemp("repo")
    shutil.copytree(ROOT / "examples", repo / "examples",
                    ignore=shutil.ignore_patterns("recorded", "__pycache__"))
    bindir = repo.parent / f"{repo.name}-bin"
    bindir.mkdir()
    shim = bindir / "agentverity-props"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m agentverity_props \"$@\"\n")
    shim.chmod(0o755)
    (repo / "regression").mkdir()
    env = _env(repo, bindir, {})
    for cmd in ("agentverity-props enlarge --agent examples/plain_gate.py:gate --inputs "
                "examples/inputs/moderation.txt -o regression/probes.txt",
                "agentverity-props snapshot --agent examples/plain_gate.py:gate --inputs "
                "regression/probes.txt -o regression/snapshot.json --accept-reference",
                "agentverity-props bench --agent examples/plain_gate.py:gate --benchmark "
                "examples/ci/benchmark.yaml --format json -o regression/bench.json"):
        p = subprocess.run(["bash", "-eo", "pipefail", "-c", cmd], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=TIMEOUT, check=False)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return repo


def _env(repo: Path, bindir: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "CI_", "AGENTVERITY_PROPS_SALT"))}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(repo / ".cache")
    env.update(extra)
    return env


def _bin(repo: Path) -> Path:
    return repo.parent / f"{repo.name}-bin"


def _fresh(checkout: Path, tmp_path: Path) -> Path:
    repo = tmp_path / checkout.name
    shutil.copytree(checkout, repo)
    shutil.copytree(_bin(checkout), tmp_path / f"{checkout.name}-bin")
    shim = tmp_path / f"{checkout.name}-bin" / "agentverity-props"
    shim.chmod(0o755)
    return repo


def run_github(repo: Path, overrides: dict[str, str]) -> dict[str, Any]:
    wf = yaml.safe_load((ROOT / "examples" / "ci" / "github-workflow.yml").read_text())
    job = wf["jobs"]["gate"]
    summary = repo / "step_summary.md"
    summary.write_text("")
    env = _env(repo, _bin(repo), {**{k: str(v) for k, v in wf.get("env", {}).items()},
                                  **{k: str(v) for k, v in job.get("env", {}).items()},
                                  **overrides, "GITHUB_ACTIONS": "true",
                                  "GITHUB_STEP_SUMMARY": str(summary)})
    steps, failed, out = [], False, ""
    for step in job["steps"]:
        if "run" not in step or step.get("name") == "Install agentverity-props":
            continue
        if failed and "always()" not in str(step.get("if", "")):
            steps.append((step["name"], None))
            continue
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                            step["run"]], cwd=repo, env={**env, **step.get("env", {})},
                           capture_output=True, text=True, timeout=TIMEOUT, check=False)
        steps.append((step["name"], p.returncode))
        out += p.stdout + p.stderr
        failed = failed or p.returncode != 0
    return {"steps": dict(steps), "summary": summary.read_text(), "log": out}


def test_github_workflow_passes_on_the_unchanged_agent(checkout: Path, tmp_path: Path) -> None:
    repo = _fresh(checkout, tmp_path)
    got = run_github(repo, {})
    assert set(got["steps"].values()) == {0}, got["steps"]
    found = check_markdown(got["summary"])
    heads = found["headings"]
    assert any("agentverity-props check: ✅ exit 0" in h for h in heads), heads
    assert any("agentverity-props bench: ✅ exit 0" in h for h in heads), heads
    assert "::error" not in got["log"]
    for name in ("check.xml", "check.html", "bench.xml", "bench.html"):
        assert (repo / "out" / name).stat().st_size > 0


def test_github_workflow_fails_on_a_regression_and_names_it(checkout: Path,
                                                            tmp_path: Path) -> None:
    repo = _fresh(checkout, tmp_path)
    got = run_github(repo, {"AGENT": "examples/plain_gate.py:buggy_gate"})
    steps = got["steps"]
    assert steps["Check the agent against the committed snapshot"] == 1, got["log"][-3000:]
    assert steps["Benchmark tasks"] == 1  # if: always(): it runs after the failure, and fails
    assert steps["JUnit and HTML reports"] == 0
    found = check_markdown(got["summary"])
    assert any("agentverity-props check: ❌ exit 1" in h for h in found["headings"])
    assert "What moved: 1 changed" in got["summary"]
    assert "What moved since the baseline: 1 changed, 0 flaky" in got["summary"]
    assert "`urgent-reset` | **changed** | PASS → FAIL" in got["summary"]
    assert "::error title=agentverity-props%3A bench task urgent-reset FAIL" in got["log"]
    from agentverity_props.report import load_result
    bench = load_result(repo / "out" / "bench.json")  # validated by the bench model
    assert bench["moved"]["changed"] == 1
    assert [t["id"] for t in bench["moved"]["tasks"] if t["kind"] == "changed"] == \
        ["urgent-reset"]
    assert "::error title=agentverity-props%3A snapshot input changed" in got["log"]
    assert (repo / "out" / "check.xml").read_text().count("<failure") == 1
    assert (repo / "out" / "check.html").exists()
    html = (repo / "out" / "bench.html").read_text()
    assert "What moved since the baseline" in html
    assert '<span class="status bad">changed</span>' in html


def run_gitlab(repo: Path, overrides: dict[str, str]) -> dict[str, Any]:
    ci = yaml.safe_load((ROOT / "examples" / "ci" / "gitlab-ci.yml").read_text())
    job = ci["agent-regression-gate"]
    env = _env(repo, _bin(repo), {**{k: str(v) for k, v in job["variables"].items()},
                                  **overrides, "GITLAB_CI": "true", "CI": "true"})

    def sh(lines: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               "\n".join(lines)], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT, check=False)

    assert [s for s in job["before_script"] if "pip install" not in s] == []
    script = sh(job["script"])
    after = sh(job["after_script"])
    return {"script": script, "after": after, "artifacts": job["artifacts"]}


@pytest.mark.parametrize(("agent", "code"), [("gate", 0), ("buggy_gate", 1)])
def test_gitlab_job_exit_codes_and_artefacts(checkout: Path, tmp_path: Path, agent: str,
                                             code: int) -> None:
    repo = _fresh(checkout, tmp_path)
    got = run_gitlab(repo, {"AGENT": f"examples/plain_gate.py:{agent}"})
    assert got["script"].returncode == code, got["script"].stderr[-3000:]
    assert got["after"].returncode == 0, got["after"].stderr[-3000:]
    assert got["artifacts"]["reports"]["junit"] == "out/*.xml"
    assert (repo / "out" / "check.xml").exists()
    text = (repo / "out" / "summary.md").read_text()
    found = check_markdown(text)
    assert any(f"agentverity-props check: {'✅' if code == 0 else '❌'} exit {code}" in h
               for h in found["headings"])
    assert "::error" not in got["script"].stdout  # no GitHub workflow command on GitLab
