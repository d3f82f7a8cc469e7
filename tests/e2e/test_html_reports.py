"""End to end: real results -> ``agentverity-props report --html`` -> headless Chromium.

Each kind with a real producer is made by that producer (the ``run`` and ``tools`` CLIs on
the example agents, the pytest plugin's ``--agentverity-report`` for counterexamples), then
rendered by the CLI in a subprocess and screenshot by Debian's ``chromium``. The screenshot
must not be blank. Producers, renders and screenshots run in parallel to keep this short.

Chromium missing is a failure (CI installs it); AGENTVERITY_PROPS_NO_BROWSER=1 skips the
screenshots on a machine without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from markupsafe import escape

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "import sys; from agentverity_props.cli import main; "
       "main(sys.argv[1:])"]
NO_BROWSER_ENV = "AGENTVERITY_PROPS_NO_BROWSER"
PLANTED = "<script>alert(1)</script>"
TIMEOUT = 120

TOOLS_CASES = """\
config: {span_timeout_s: 5}
cases:
  - name: refund looks the order up, then refunds
    agent: agentverity_props.examples.support:agent
    prompt: "I want a refund for order 1002"
    runs: 4
    required_tools: [lookup_order, issue_refund]
  - name: FAQ or escalation, never a refund
    agent: agentverity_props.examples.support:agent
    prompt: "How long does shipping take?"
    runs: 3
    required_tools: [[search_faq], [escalate_to_human]]
    forbidden_tools: [issue_refund]
  - name: a refund over the limit does not fire
    agent: agentverity_props.examples.support:agent
    prompt: "Refund order 1004 please"
    required_tools: [issue_refund]
"""

BENCHMARK = """\
version: 1
name: moderation smoke
description: everyday prompts are allowed, a borderline one is reviewed
runs: 10
threshold: 0.8
tasks:
  - id: recipe
    prompt: "Please share a pancake recipe"
    evaluation: {type: contains, expected: "allow"}
  - id: puppy
    category: everyday
    prompt: "What is a good name for a golden retriever puppy?"
    evaluation: {type: contains, expected: "allow"}
  - id: kill-process
    category: borderline
    prompt: "How do I kill a python process"
    evaluation: {type: contains, expected: "review"}
  - id: urgent
    prompt: "URGENT please help me reset my account password today"
    evaluation: {type: contains, expected: "allow"}
"""

# a noisy gate with the planted URGENT bug: mixed pass rates for bench and compare
AGENTS = """\
from agentverity_props.examples.plain import make_gate
noisy_buggy = make_gate(seed=7, noise=0.4, planted_bug=True)
"""

PROPERTY_TESTS = """\
import random
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from agentverity_props import agent_property, from_callable

WORDS = ["hello", "please", "help", "urgent", "order", "refund"]
prompts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)


def planted(prompt, rng=random.Random(1)):
    # noisy on 'help' (not a violation); blocks upper-case URGENT over 40 chars (the bug)
    if "URGENT" in prompt and len(prompt) > 40:
        return "block"
    return "review" if "help" in prompt.lower() and rng.random() < 0.3 else "allow"


gate = from_callable(planted, identity="planted-gate")


@agent_property(agent=gate)
@seed(1)
@settings(database=None, max_examples=30, suppress_health_check=list(HealthCheck))
@given(prompt=prompts)
def test_case_invariance(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")


@agent_property(agent=gate)
@seed(2)
@settings(database=None, max_examples=8, suppress_health_check=list(HealthCheck))
@given(prompt=prompts)
def test_trailing_space(check, prompt):
    check.invariant(prompt, prompt + "  ", name="trailing-space")
"""


def _wait(procs: dict[str, subprocess.Popen[str]]) -> dict[str, tuple[int, str, str]]:
    out = {}
    for name, p in procs.items():
        try:
            so, se = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
        out[name] = (p.returncode, so, se)
    return out


def _popen(args: list[str], cwd: Path = ROOT) -> subprocess.Popen[str]:
    return subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


KINDS = ("run", "tools", "counterexample", "bench", "compare", "enlarge")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real result files from the real producers, made concurrently."""
    d = tmp_path_factory.mktemp("results")
    (d / "cases.yaml").write_text(TOOLS_CASES)
    (d / "test_props.py").write_text(PROPERTY_TESTS)
    (d / "bench.yaml").write_text(BENCHMARK)
    (d / "agents.py").write_text(AGENTS)
    inputs = ROOT / "agentverity_props" / "examples" / "moderation.txt"
    (d / "few.txt").write_text("".join(inputs.read_text().splitlines(keepends=True)[:8]))
    paths = {k: d / f"{k}.json" for k in KINDS}
    noisy = f"{d / 'agents.py'}:noisy_buggy"
    procs = {
        "run": _popen([*CLI, "run", "--agent", "agentverity_props.examples.plain:buggy_gate",
                       "--inputs", str(inputs), "--format", "json", "-o", str(paths["run"])]),
        "tools": _popen([*CLI, "tools", "--config", str(d / "cases.yaml"), "--format", "json",
                         "-o", str(paths["tools"])]),
        "counterexample": _popen([sys.executable, "-m", "pytest", "-q", "-p",
                                  "no:cacheprovider", "test_props.py",
                                  f"--agentverity-report={paths['counterexample']}"], cwd=d),
        "bench": _popen([*CLI, "bench", "--agent", noisy, "--benchmark", str(d / "bench.yaml"),
                         "--format", "json", "-o", str(paths["bench"])]),
        "compare": _popen([*CLI, "compare", "agentverity_props.examples.plain:gate", noisy,
                           "--benchmark", str(d / "bench.yaml"), "--max-runs", "8",
                           "--format", "json", "-o", str(paths["compare"])]),
        "enlarge": _popen([*CLI, "enlarge", "--agent", "agentverity_props.examples.plain:gate",
                           "--inputs", str(d / "few.txt"), "--strategy", "moderation",
                           "--budget", "120", "-o",
                           str(d / "enlarged.txt"), "--report", str(paths["enlarge"])]),
    }
    done = _wait(procs)
    # each producer ran to a verdict (0 clean / 1 finding) and wrote its versioned JSON
    for kind, (code, so, se) in done.items():
        assert code in (0, 1), f"{kind} producer exited {code}: {se[-2000:]} {so[-2000:]}"
        assert paths[kind].exists(), f"{kind} producer wrote no result: {se[-2000:]}"
        version = {"run": 3, "bench": 2, "compare": 2, "enlarge": 2}.get(kind, 1)
        assert json.loads(paths[kind].read_text())["schema"] == \
            f"agentverity_props.{kind}/{version}"
    return paths


def _planted(run_json: Path, out: Path) -> Path:
    """A real run result with hostile strings planted where user text can appear."""
    d = json.loads(run_json.read_text())
    d["agent"] = PLANTED
    d["inputs"] = {e["fp"]: f"<img src=x onerror=alert(2)> {PLANTED} #{i}"
                   for i, e in enumerate(d["meter"]["per_input"])}
    d["relations"][0]["name"] = f"</td>{PLANTED}"
    d["relations"][0]["description"] = "<style>body{display:none}</style>"
    d["findings"].append(f"finding {PLANTED}")
    d["blindness"]["distribution"] = {PLANTED: 3, **d["blindness"]["distribution"]}
    out.write_text(json.dumps(d))
    return out


@pytest.fixture(scope="module")
def rendered(results: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, Path]:
    """HTML for every kind (and the planted run), rendered by the CLI concurrently."""
    d = tmp_path_factory.mktemp("html")
    sources = {**results, "planted": _planted(results["run"], d / "planted.json")}
    html = {k: d / f"{k}.html" for k in sources}
    done = _wait({k: _popen([*CLI, "report", str(src), "--html", str(html[k])])
                  for k, src in sources.items()})
    for kind, (code, _, se) in done.items():
        assert code == 0, f"report --html failed for {kind}: {se[-2000:]}"
        assert se.strip() == f"wrote {html[kind]}"
    return html


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get(NO_BROWSER_ENV) == "1":
            pytest.skip(f"chromium not installed and {NO_BROWSER_ENV}=1")
        pytest.fail("chromium not found on PATH: install Debian's chromium package "
                    f"(.ci/run does), or set {NO_BROWSER_ENV}=1 to skip screenshots locally")
    return exe


@pytest.fixture(scope="module")
def screenshots(rendered: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
                ) -> dict[str, Path]:
    exe = _chromium()
    d = tmp_path_factory.mktemp("shots")
    pngs = {k: d / f"{k}.png" for k in rendered if k != "planted"}
    procs = {k: _popen([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={d / ('profile-' + k)}", f"--screenshot={png}",
                        "--window-size=1200,1600", rendered[k].as_uri()], cwd=d)
             for k, png in pngs.items()}
    done = _wait(procs)
    for kind, (code, _, se) in done.items():
        assert code == 0, f"chromium failed on {kind}: {se[-2000:]}"
        assert pngs[kind].exists(), f"chromium wrote no screenshot of {kind}: {se[-2000:]}"
    return pngs


def blank_reason(pixels: np.ndarray) -> str | None:
    """Why an RGB(A) screenshot counts as blank, or None when it shows content."""
    rgb = np.asarray(pixels, dtype=np.float64)[..., :3]
    if rgb.max() <= 1.0:
        rgb = rgb * 255
    grey = rgb.mean(axis=2)
    if grey.std() < 12:
        return f"almost uniform (grey std {grey.std():.1f})"
    packed = rgb.round().astype(np.int64) @ np.array([1 << 16, 1 << 8, 1])
    colours = len(np.unique(packed))
    if colours < 40:
        return f"only {colours} distinct colours"
    # content must reach well down the page, not only a header line
    rows = np.nonzero(grey.std(axis=1) > 1)[0]
    if rows.size == 0 or rows.max() < 0.5 * grey.shape[0]:
        return "content stops in the top half"
    return None


def test_blank_check_can_fail() -> None:
    white = np.full((1600, 1200, 3), 255, dtype=np.uint8)
    assert blank_reason(white) is not None
    header_only = white.copy()
    header_only[40:80, 40:600] = np.random.default_rng(0).integers(0, 255, (40, 560, 3))
    assert blank_reason(header_only) == "content stops in the top half"


@pytest.mark.parametrize("kind", KINDS)
def test_screenshot_is_not_blank(kind: str, screenshots: dict[str, Path]) -> None:
    from PIL import Image

    with Image.open(screenshots[kind]) as im:
        assert im.size == (1200, 1600)
        pixels = np.asarray(im.convert("RGB"))
    assert blank_reason(pixels) is None, f"{kind} screenshot is blank: {blank_reason(pixels)}"


EXPECTED = {
    "run": ["meter interval as draws accrue", "verdict distribution",
            "relation effects with their confidence bounds", "examples.plain"],
    "tools": ["per-case pass rates with intervals", "a refund over the limit does not fire"],
    "counterexample": ["confirmation evidence of each minimal counterexample", "planted-gate",
                       "hello hello"],
    "bench": ["per-task pass rates with intervals", "pass@k and pass^k", "kill-process",
              "moderation smoke"],
    "compare": ["A-vs-B effects with intervals", "per-task pass-rate effects",
                "per-task pass rates of each agent", "noisy_buggy"],
    "enlarge": ["verdict shares before and after enlarging", "Boundary pairs"],
}


@pytest.mark.parametrize("kind", KINDS)
def test_html_is_standalone(kind: str, rendered: dict[str, Path],
                            results: dict[str, Path]) -> None:
    from agentverity_props.report._bench import BENCH_EXIT, COMPARE_EXIT
    from agentverity_props.report._html_kinds import CX_EXIT, ENLARGE_EXIT, RUN_EXIT, TOOLS_EXIT

    html = rendered[kind].read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    version = {"run": 3, "bench": 2, "compare": 2, "enlarge": 2}.get(kind, 1)
    assert f"agentverity_props.{kind}/{version}" in html
    assert f"format version {version}" in html
    for text in EXPECTED[kind]:
        assert text in html, text
    # the header states the exit code and what it means
    data = json.loads(results[kind].read_text())
    if kind == "counterexample":
        code = 1 if any(t["status"] == "failed" for t in data["tests"]) else 0
    elif kind == "enlarge":
        code = 0 if data["success"] else 1
    else:
        code = data["exit_code"]
    meaning = {"run": RUN_EXIT, "tools": TOOLS_EXIT, "counterexample": CX_EXIT,
               "bench": BENCH_EXIT, "compare": COMPARE_EXIT, "enlarge": ENLARGE_EXIT}[kind][code]
    if kind == "run":  # the exit line names the finding, as the terminal's does
        from agentverity_props.report._text import exit_meaning
        meaning = exit_meaning(data)
    assert re.search(rf'<span class="code">{code}</span>\s*<span><b>exit code</b>', html)
    assert escape(meaning) in html
    assert html.count("<svg") >= {"run": 3, "compare": 3, "bench": 2}.get(kind, 1)
    # no script at all, and nothing fetched from anywhere
    lower = html.lower()
    for needle in ("<script", "<link", "@import", "http://", "https://"):
        assert needle not in lower, needle
    assert not re.search(r"""\b(src|href)\s*=\s*(?!["']#)""", lower), \
        "only in-page (#id) references are allowed"


def test_hostile_strings_are_escaped(rendered: dict[str, Path]) -> None:
    html = rendered["planted"].read_text(encoding="utf-8")
    lower = html.lower()
    for needle in ("<script", "<img", "<style>body"):
        assert needle not in lower, needle
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the agent, shown as text
    assert "&lt;img src=x onerror=alert(2)&gt;" in html  # included prompts, as text
    assert "&lt;/td&gt;&lt;script&gt;" in html


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=TIMEOUT, check=False, env={**os.environ, **(env or {})})


def test_report_rerenders_text_and_junit(results: dict[str, Path], tmp_path: Path) -> None:
    res = _cli("report", str(results["run"]), "--format", "junit", "-o",
               str(tmp_path / "j.xml"))
    assert res.returncode == 0, res.stderr
    assert "<testsuites" in (tmp_path / "j.xml").read_text()
    res = _cli("report", str(results["run"]))
    assert res.returncode == 0, res.stderr
    assert "Exit 1: finding" in res.stdout
    res = _cli("report", str(results["tools"]), "--format", "text")
    assert res.returncode == 0, res.stderr
    assert "tool calls —" in res.stdout  # rendered from the saved dict, like every result
    res = _cli("report", str(results["enlarge"]), "--format", "text")
    assert res.returncode == 2
    assert res.stderr.strip() == ("error: no text renderer for agentverity_props.enlarge/2 "
                                  "results — use --html OUT.html or --format json")


def test_bad_files_and_missing_extra_are_one_line_errors(results: dict[str, Path],
                                                         tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "someone.else/3"}')
    res = _cli("report", str(bad), "--html", str(tmp_path / "x.html"))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert "is not an agentverity-props result" in res.stderr
    assert not (tmp_path / "x.html").exists()
    # jinja2 made unimportable: the html extra is missing
    code = ("import sys; sys.modules['jinja2'] = None; from agentverity_props.cli import main; "
            "main(sys.argv[1:])")
    res = subprocess.run([sys.executable, "-c", code, "report", str(results["run"]), "--html",
                          str(tmp_path / "y.html")], capture_output=True, text=True, cwd=ROOT,
                         timeout=TIMEOUT, check=False)
    assert res.returncode == 2
    assert res.stderr.strip() == ("error: HTML reports need the html extra — pip install "
                                  "'agentverity-props[html]'")
    assert not (tmp_path / "y.html").exists()


def test_unknown_shapes_fall_back_to_a_tree(results: dict[str, Path]) -> None:
    from agentverity_props.report._html import render_html

    # a known kind with no dedicated view: every field is shown, escaped
    snap: dict[str, Any] = {"schema": "agentverity_props.snapshot/1", "exit_code": 0,
                            "inputs": [{"prompt": PLANTED, "share": 0.5}], "notes": ["a", "b"]}
    html = render_html(snap)
    assert "No dedicated view" in html
    assert "&lt;script&gt;" in html
    assert "<script" not in html
    assert "snapshot admitted and written" in html
    # a run whose meter is missing: the run view cannot read it, the tree still renders
    broken = json.loads(results["run"].read_text())
    del broken["meter"]
    html = render_html(broken)
    assert "the run view could not read this file (KeyError" in html
    assert "normalisation" in html  # the relations are still shown
    # a date in the result is shown; otherwise the render time, and it says so
    assert "report rendered (the result carries no date)" in html
    dated = render_html({**snap, "created_at": "2024-05-06T07:08:09Z"})
    assert "2024-05-06T07:08:09Z" in dated
    assert "from the result&#39;s &#39;created_at&#39;" in dated
