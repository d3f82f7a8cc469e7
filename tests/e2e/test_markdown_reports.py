"""``--format markdown`` of every result kind, made by the real CLI (or the pytest plugin) in
subprocesses on the shipped example agents, parsed with markdown-it-py: tables well formed,
no raw control character, no HTML but ``<sub>``, links relative; each report names what it
decided. A run result with hostile strings planted where agent text can appear renders as
data. Producers run concurrently to keep this short."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _markdown_check import check_markdown

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "agentverity_props"]
TIMEOUT = 300
GATE = str(ROOT / "examples" / "plain_gate.py")
PROBES = str(ROOT / "examples" / "inputs" / "moderation.txt")
BENCH = str(ROOT / "examples" / "moderation_benchmark.yaml")

TOOLS_CASES = """\
config: {span_timeout_s: 5}
cases:
  - name: "refund | looks the order up, then refunds"
    agent: agentverity_props.examples.support:agent
    prompt: "I want a refund for order 1002"
    runs: 3
    required_tools: [lookup_order, issue_refund]
  - name: a refund over the limit does not fire
    agent: agentverity_props.examples.support:agent
    prompt: "Refund order 1004 please"
    required_tools: [issue_refund]
"""

PROPERTY_TEST = f"""\
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from agentverity_props import agent_property, from_callable
import importlib.util
spec = importlib.util.spec_from_file_location("plain_gate", {GATE!r})
plain_gate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plain_gate)

WORDS = ["hello", "please", "help", "urgent", "order", "refund"]
prompts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)
gate = from_callable(plain_gate.buggy_gate, identity="buggy-gate")


@agent_property(agent=gate)
@seed(1)
@settings(database=None, max_examples=30, suppress_health_check=list(HealthCheck))
@given(prompt=prompts)
def test_case_invariance(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")
"""

CONVERSATIONS = """\
from agentverity_props.examples.support_conversation import support_machine

TestBuggy = support_machine(seed=0, bug=True).TestCase
"""


def _popen(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


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


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    """kind -> (exit code, Markdown, stderr), every one from its real producer."""
    d = tmp_path_factory.mktemp("markdown")
    (d / "cases.yaml").write_text(TOOLS_CASES)
    (d / "test_props.py").write_text(PROPERTY_TEST)
    (d / "test_conv.py").write_text(CONVERSATIONS)
    few = d / "few.txt"
    few.write_text("".join(Path(PROBES).read_text().splitlines(keepends=True)[:8]))
    md = {k: d / f"{k}.md" for k in ("run", "assess", "bench", "compare", "plan", "tools")}
    no_ci = ["--annotations", "none"]
    procs = {
        "run": [*CLI, "run", "--agent", f"{GATE}:buggy_gate", "--inputs", PROBES,
                "--format", "markdown", "-o", str(md["run"]), *no_ci],
        "assess": [*CLI, "assess", "--promptfoo",
                   str(ROOT / "examples" / "recorded" / "promptfoo_support.json"),
                   "--verdict-key", "route", "--format", "markdown", "-o", str(md["assess"])],
        "snapshot": [*CLI, "snapshot", "--agent", f"{GATE}:gate", "--inputs", PROBES,
                     "-o", str(d / "refused.json"), "--accept-reference", "--format",
                     "markdown", *no_ci],
        "bench": [*CLI, "bench", "--agent", f"{GATE}:noisy_gate", "--benchmark", BENCH,
                  "--runs", "10", "--format", "markdown", "-o", str(md["bench"])],
        "compare": [*CLI, "compare", f"{GATE}:gate", f"{GATE}:noisy_gate", "--benchmark",
                    BENCH, "--max-runs", "8", "--format", "markdown", "-o", str(md["compare"])],
        "plan": [*CLI, "plan", "--inputs", str(few), "--seeds", "2", "--format", "markdown",
                 "-o", str(md["plan"])],
        "tools": [*CLI, "tools", "--config", str(d / "cases.yaml"), "--format", "markdown",
                  "-o", str(md["tools"])],
        "enlarge": [*CLI, "enlarge", "--agent", f"{GATE}:gate", "--inputs", PROBES, "-o",
                    str(d / "probes.txt"), "--report", str(d / "enlarge.json"), "--format",
                    "markdown"],
        "boundary": [*CLI, "boundary", "--agent", f"{GATE}:gate", "--from",
                     "How do I kill a python process", "--to", "Please share a pancake recipe",
                     "--format", "markdown"],
        "counterexample": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_props.py", f"--agentverity-report={d / 'cx.json'}"],
        "conversation": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         "-p", "no:randomly", "test_conv.py",
                         f"--agentverity-conversation-report={d / 'conv.json'}"],
    }
    done = _wait({k: _popen(v, d) for k, v in procs.items()})
    out: dict[str, tuple[int, str, str]] = {}
    for kind, (code, so, se) in done.items():
        if kind in md:
            assert md[kind].exists(), f"{kind} wrote no report ({code}): {se[-2000:]}"
            out[kind] = (code, md[kind].read_text(), se)
        else:
            out[kind] = (code, so, se)
    # the pytest plugin writes JSON: `report --format markdown` renders it
    for kind, src in (("counterexample", d / "cx.json"), ("conversation", d / "conv.json")):
        assert src.exists(), f"{kind}: {done[kind][1][-2000:]}"
        p = subprocess.run([*CLI, "report", str(src), "--format", "markdown"], cwd=d,
                           capture_output=True, text=True, timeout=TIMEOUT, check=False)
        assert p.returncode == 0, p.stderr
        out[kind] = (done[kind][0], p.stdout, p.stderr)
    # check: a snapshot of the enlarged (not blind) probe set, then the buggy gate against it
    snap = subprocess.run([*CLI, "snapshot", "--agent", f"{GATE}:gate", "--inputs",
                           str(d / "probes.txt"), "-o", str(d / "snap.json"),
                           "--accept-reference", "--format", "json", *no_ci], cwd=d,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert snap.returncode == 0, snap.stderr
    chk = subprocess.run([*CLI, "check", "--agent", f"{GATE}:buggy_gate", "--inputs",
                          str(d / "probes.txt"), "--snapshot", str(d / "snap.json"),
                          "--format", "markdown", *no_ci], cwd=d, capture_output=True,
                         text=True, timeout=TIMEOUT, check=False)
    out["check"] = (chk.returncode, chk.stdout, chk.stderr)
    return out


#: kind -> (the exit code its producer gives on these examples, words its report must show)
EXPECTED: dict[str, tuple[int, tuple[str, ...]]] = {
    "run": (1, ("agentverity-props run", "VIOLATED", "Counterexamples", "meter")),
    "assess": (0, ("agentverity-props assess", "meter")),
    "snapshot": (2, ("agentverity-props snapshot", "refused", "not-blind")),
    "check": (1, ("agentverity-props check", "What moved", "changed")),
    "bench": (0, ("agentverity-props bench", "Tasks", "PASS")),
    "compare": (0, ("agentverity-props compare", "pass_rate")),
    "plan": (0, ("agentverity-props plan", "Calls per phase")),
    "tools": (1, ("agentverity-props tools", "FAIL", "refund | looks the order up")),
    "enlarge": (0, ("agentverity-props enlarge", "Boundary pairs")),
    "boundary": (0, ("agentverity-props boundary", "before", "after")),
    "counterexample": (1, ("property tests", "minimal counterexample", "URGENT")),
    "conversation": (1, ("conversation tests", "minimal conversation")),
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_every_kind_renders_as_sound_markdown(reports: dict[str, Any], kind: str) -> None:
    code, text, err = reports[kind]
    want_code, words = EXPECTED[kind]
    assert code == want_code, f"{kind} exited {code}: {err[-2000:]}"
    found = check_markdown(text)
    assert found["tables"], f"{kind}: no table of decisions"
    assert text.startswith("### agentverity-props"), text[:200]
    assert f"exit {want_code}" in found["headings"][0]
    shown = found["text"]
    for w in words:
        assert w in shown, f"{kind}: {w!r} missing from\n{text[:3000]}"


def test_no_prompt_in_a_markdown_file_unless_asked(reports: dict[str, Any]) -> None:
    """The run's Markdown goes to a file others read: inputs by fingerprint, as in JSON."""
    _, text, _ = reports["run"]
    for prompt in Path(PROBES).read_text().splitlines()[:28]:
        assert prompt not in text


def test_report_links_the_html_written_beside_it(tmp_path: Path) -> None:
    res = tmp_path / "run.json"
    p = subprocess.run([*CLI, "run", "--agent", f"{GATE}:gate", "--inputs", PROBES,
                        "--no-relations", "--format", "json", "-o", str(res)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert res.exists(), p.stderr
    (tmp_path / "site").mkdir()
    p = subprocess.run([*CLI, "report", str(res), "--html", "site/html/run.html", "--format",
                        "markdown", "-o", "site/summary.md"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=TIMEOUT, check=False)
    assert p.returncode == 0, p.stderr
    found = check_markdown((tmp_path / "site" / "summary.md").read_text())
    assert found["links"] == ["html/run.html"]  # relative to the Markdown file's folder
    assert (tmp_path / "site" / "html" / "run.html").exists()


HOSTILE = ("`x` | **bold** <script>alert(1)</script> [click](https://evil.example/x) "
           "@octocat #1 \x1b[31mred\x1b[0m \u202eevil\nsecond line ![i](http://e/i.png) "
           "www.evil.example")


def test_hostile_agent_text_stays_data(reports: dict[str, Any], tmp_path: Path) -> None:
    """Agent names, verdicts, prompts and findings that hold Markdown, HTML, links, mentions,
    escape sequences and line breaks are shown as data: no table breaks, no link, no HTML,
    no mention, no control character."""
    res = tmp_path / "run.json"
    p = subprocess.run([*CLI, "run", "--agent", f"{GATE}:buggy_gate", "--inputs", PROBES,
                        "--format", "json", "-o", str(res), "--annotations", "none"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
                       check=False)
    assert res.exists(), p.stderr
    d = json.loads(res.read_text())
    d["agent"] = HOSTILE
    d["inputs"] = {e["fp"]: f"{HOSTILE} {i}" for i, e in enumerate(d["meter"]["per_input"])}
    for r in d["relations"]:
        r["name"] = HOSTILE
        for o in r["outcomes"]:
            o["source_value"] = HOSTILE
    d["findings"] = [f"finding {HOSTILE}"]
    d["blindness"]["modal_verdict"] = HOSTILE
    res.write_text(json.dumps(d))
    p = subprocess.run([*CLI, "report", str(res), "--format", "markdown"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert p.returncode == 0, p.stderr
    found = check_markdown(p.stdout)  # no link, no HTML but <sub>, tables whole
    assert found["links"] == []
    assert "\\x1b[31mred" in found["text"]  # the escape written out, not sent
    assert "<script>" in found["text"]  # shown as text
    # GitHub links a mention or an issue reference only in plain text, never in code
    assert not any("@octocat" in t or "#1" in t for t in found["plain"])


def test_markdown_of_a_result_kind_without_a_renderer_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"schema": "agentverity_props.nothing/1"}))
    p = subprocess.run([*CLI, "report", str(bad), "--format", "markdown"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert p.returncode == 2
    assert p.stderr.startswith("error:")
    assert len(p.stderr.strip().splitlines()) == 1

