"""Issue 46's defects, one test each: what a report prints is true as printed (every printed
inequality holds, every count is the sum it claims, every word agrees with the page)."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

from agentverity_props import from_callable
from agentverity_props.decide import account
from agentverity_props.property._records import Counterexample, PropertyRecord
from agentverity_props.report._snapshot import render_snapshot_text
from agentverity_props.report._text import render_run_text
from agentverity_props.runner import RunConfig
from agentverity_props.snapshot import create_snapshot
from agentverity_props_pytest import _format_counterexample

# a forced flip ('!' -> 'technical' on 16 of 17 draws) decided by the reverse e-process:
# forward 6.68e3 < 2/alpha = 1.8e4 <= reverse 5.2e4 (the numbers the issue reproduced)
FLIP = {"alpha": 0.000111, "e_violation": 6680.0, "e_reverse": 52000.0, "e_pass": 0.01,
        "follow_up_violations": 16, "follow_up_draws": 17, "source_violations": 3,
        "source_draws": 16, "test": "two e-processes"}


def _record(confirmation: dict) -> PropertyRecord:
    rec = PropertyRecord(test="t::test_bang", agent="a", alpha=0.05, alpha_candidate=0.000111,
                         max_candidates=225, calls=300)
    rec.minimal = rec.first = Counterexample(
        test="t::test_bang", relation="bang", rtype="invariant", source="hello",
        follow_up="hello!", source_value="billing", follow_up_value="technical",
        confirmation=confirmation, kwargs={"prompt": "hello"}, calls_at_confirmation=40)
    return rec


def _inequalities(text: str) -> list[tuple[float, int, float]]:
    """(e-value, k, threshold) of each ``e-value E ≥ k/alpha_candidate = T`` printed."""
    return [(float(e), int(k), float(t)) for e, k, t in re.findall(
        r"e-value ([\d.e+-]+) (?:>=|≥) (\d)/alpha_candidate(?: = ([\d.e+-]+))?", text)]


def test_counterexample_section_prints_the_e_value_that_decided_and_its_threshold():
    section = _format_counterexample(_record(FLIP))
    ineq = _inequalities(section)
    assert ineq, section
    for e, k, t in ineq:
        assert e >= t, section  # true as printed
        assert k == 2  # a two-sided candidate: each direction at alpha_candidate / 2
    assert "reverse e-value 5.2e+04" in section
    # the old section: 'e-value 6.68e+03 >= 1/alpha_candidate, alpha_candidate = 0.000111'
    assert "6.68e+03 >=" not in section
    assert "6.68e+03 ≥" not in section


def test_a_forced_flip_is_not_described_as_a_more_decided_follow_up():
    text = account(FLIP).sentence()
    assert "more decided" not in text
    assert "flips the verdict" in text
    # a follow-up that rarely leaves the source's verdict, decided in reverse, is one
    quiet = {**FLIP, "follow_up_violations": 2, "source_violations": 7}
    assert "more decided" in account(quiet).sentence()


def test_the_section_and_the_exception_share_one_account():
    # the exception's text is built by the decorator from the same account: its sentence
    # appears word for word in the section
    section = _format_counterexample(_record(FLIP))
    assert account(FLIP).sentence() in section


def test_a_one_sided_decision_crosses_one_over_alpha():
    one = {k: v for k, v in FLIP.items() if k != "e_reverse"} | {"e_violation": 1.0e4}
    acc = account(one)
    assert acc.test == "forward"
    assert acc.sides == 1
    assert acc.inequality() == "e-value 1e+04 ≥ 1/alpha_candidate = 9.01e+03"


# -------------------------------------------------------------------------- snapshot

def _noisy(seed: int):
    rng = random.Random(seed)

    def gate(prompt: str) -> str:
        if "weapon" in prompt:
            return "block" if rng.random() < 0.9 else "review"
        return "allow" if rng.random() < 0.9 else "review"
    return gate


def _quiet(prompt: str) -> str:
    return "block" if "weapon" in prompt else "allow"


PROBES = [f"everyday question {i}" for i in range(12)] + [f"weapon question {i}"
                                                          for i in range(12)]


def test_a_snapshot_counts_every_phase_of_its_calls():
    res = create_snapshot(from_callable(_noisy(1), identity="noisy"), PROBES,
                          config=RunConfig(max_workers=1, seed=3))
    d = res.to_dict()
    calls = d["calls"]
    assert "dependence" in calls
    phases = ("meter", "blindness", "dependence", "reference", "calibration", "change")
    assert sum(calls.get(k) or 0 for k in phases) == calls["total"], calls
    text = render_snapshot_text(d)
    line = next(ln.strip() for ln in text.splitlines() if ln.strip().startswith("Calls:"))
    printed = [int(n) for k, n in re.findall(r"(?:^Calls:|·) ([a-z]+) (\d+)", line)
               if k != "total"]
    assert sum(printed) == calls["total"], line


def test_the_stochastic_refusal_reads_as_words_and_says_what_to_do_next():
    res = create_snapshot(from_callable(_noisy(2), identity="noisy"), PROBES,
                          config=RunConfig(max_workers=1, seed=3))
    rules = {r.rule: r.message for r in res.refusals}
    msg = rules.get("verdict-deterministic", "")
    assert d_meter(res) == "verdict-stochastic"  # the case the test is about
    assert "finds the verdict stochastic" in msg
    assert "next:" in msg, msg
    assert "verdict verdict-" not in res.refusal_message()


def d_meter(res) -> str:
    return res.to_dict()["meter"]["call"]


def test_the_preview_is_a_next_step_not_an_error(tmp_path):
    agent = tmp_path / "gate.py"
    agent.write_text("def gate(prompt):\n    return 'block' if 'weapon' in prompt else "
                     "'allow'\n")
    inputs = tmp_path / "probes.txt"
    inputs.write_text("\n".join(PROBES) + "\n")
    out = tmp_path / "snap.json"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": str(Path(__file__).parents[2])}

    def snapshot(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentverity_props", "snapshot",
                               "--agent", f"{agent}:gate", "--inputs", str(inputs), "-o",
                               str(out), *more], capture_output=True, text=True, env=env,
                              cwd=tmp_path, check=False)

    r = snapshot()
    assert r.returncode == 2  # nothing was written
    assert not out.exists()
    assert "error: snapshot refused" not in r.stderr, r.stderr
    assert "preview: every evidence rule passed" in r.stderr
    r = snapshot("--accept-reference")
    assert r.returncode == 0, r.stderr
    assert "Review each reference" not in r.stdout
    assert "The references admitted" in r.stdout


# ------------------------------------------------------------------------------- run

def _upper_flips(prompt: str) -> str:
    return "block" if prompt.upper() == prompt else "allow"


def test_raw_flips_count_every_pair_that_flips_on_a_deterministic_agent():
    from agentverity_props import run
    from agentverity_props.relations import Relation

    # one edit a pair (the built-in case family would add title/lower pairs that hold)
    res = run(from_callable(_upper_flips, identity="upper"), PROBES,
              [Relation("case", "invariant", str.upper)],
              config=RunConfig(max_workers=1, seed=1))
    (rel,) = res.to_dict()["relations"]
    # every follow-up (the input upper-cased) gets 'block', every source 'allow': each
    # pair's first follow-up draw flips, whichever procedure scored it first
    assert rel["raw_violations"] == rel["exercised"] == len(PROBES)
    text = render_run_text(res.to_dict())
    row = next(ln for ln in text.splitlines() if ln.startswith("allow "))
    assert row.rstrip().endswith(f"{len(PROBES)}/{len(PROBES)}"), row


# ---------------------------------------------------------------------------- assess

def test_assess_counts_follow_ups_apart_from_inputs_and_says_which_draws_it_read(tmp_path):
    agent = tmp_path / "noisy.py"
    agent.write_text("import random\n_r = random.Random(7)\n"
                     "def gate(p):\n    if 'weapon' in p:\n"
                     "        return 'block' if _r.random() < 0.9 else 'review'\n"
                     "    return 'allow' if _r.random() < 0.9 else 'review'\n")
    inputs = tmp_path / "probes.txt"
    inputs.write_text("\n".join(PROBES) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentverity_props", *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path,
                              check=False)

    store = str(tmp_path / "s.sqlite")
    cli("run", "--agent", f"{agent}:gate", "--inputs", str(inputs), "--relations", "case",
        "--store", store)
    out = cli("assess", "--store", store, "--inputs", str(inputs), "--relations", "case",
              "--seed", "9").stdout
    head = out.splitlines()[0]
    n_in = int(re.search(r"(\d+) inputs", head).group(1))
    assert n_in == len(PROBES)
    split = re.search(r"(\d+) input\(s\)(?: and (\d+) follow-up\(s\))? gave more than one",
                      out)
    assert int(split.group(1)) <= n_in, out  # inputs, follow-ups apart
    recorded = int(re.search(r"(\d+) recorded draws", head).group(1))
    replayed = int(re.search(r"replayed (\d+) from the store", out).group(1))
    if replayed != recorded:
        assert f"{replayed} of them replayed" in head
        assert f"{recorded - replayed} recorded draw(s) not replayed" in out


# ------------------------------------------------------------------------------- check

def test_check_ci_summary_and_annotations_name_inputs_when_the_user_allows_it(tmp_path):
    agent = tmp_path / "g.py"
    agent.write_text("def gate(p):\n    return 'block' if 'weapon' in p else 'allow'\n"
                     "def buggy(p):\n    return 'block' if 'weapon' in p or '3' in p "
                     "else 'allow'\n")
    inputs = tmp_path / "probes.txt"
    inputs.write_text("\n".join(PROBES) + "\n")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "GITHUB_STEP_SUMMARY": str(summary)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentverity_props", *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path,
                              check=False)

    snap = str(tmp_path / "s.json")
    cli("snapshot", "--agent", f"{agent}:gate", "--inputs", str(inputs), "-o", snap,
        "--accept-reference", "--annotations", "none")
    summary.unlink(missing_ok=True)
    r = cli("check", "--agent", f"{agent}:buggy", "--inputs", str(inputs), "--snapshot", snap,
            "--include-inputs", "--annotations", "github", "--format", "json", "-o",
            str(tmp_path / "c.json"))
    assert r.returncode == 1, r.stderr
    changed = [p for p in PROBES if "3" in p and "weapon" not in p]
    commands = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("::error")]
    assert any(repr(changed[0]) in ln for ln in commands), commands
    md = summary.read_text()
    assert f"`{changed[0]}`" in md
    assert "shows inputs by their text" in md
