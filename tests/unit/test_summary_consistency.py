"""A report's summary lines never contradict its body: each is derived from the values the
body prints, and call totals are one sum (live calls per phase; replayed draws apart)."""

from __future__ import annotations

import random
import re

from agentverity_props import from_callable, run
from agentverity_props.bench import CompareConfig, compare_agents, parse_benchmark
from agentverity_props.report._bench import render_compare_text
from agentverity_props.report._text import render_run_text
from agentverity_props.runner import RunConfig
from agentverity_props_pytest import _tally

# most inputs say 'allow', a few 'review' or 'block': a probe set whose blindness is undecided
PROMPTS = [f"everyday question number {i}" for i in range(26)] + [
    "weapon laws", "buy a weapon", "weapon cleaning", "plan an attack", "attack plan",
    "weapon storage", "is this a weapon"]


def _gate(seed: int):
    rng = random.Random(seed)

    def gate(prompt: str) -> str:
        if "attack" in prompt:
            return "block"
        return "review" if "weapon" in prompt and rng.random() < 0.5 else "allow"
    return gate


def _line(text: str, start: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(start))


def _calls_line_sum(line: str) -> tuple[int, int]:
    """(sum of the per-phase figures, the total) of a ``Calls:`` line."""
    head = line.split(" (", maxsplit=1)[0]
    phases = [int(n) for n in re.findall(r"(?:meter|blindness|dependence|stationarity|relations) "
                                         r"(\d+)", head)]
    total = int(re.search(r"total (\d+) live", head).group(1))
    return sum(phases), total


def test_the_exit_line_says_what_the_body_says_about_blindness():
    result = run(from_callable(_gate(0), identity="gate"), PROMPTS, [],
                 config=RunConfig(max_workers=1, seed=1))
    d = result.to_dict()
    text = render_run_text(d)
    exit_line = _line(text, "Exit ")
    status = d["blindness"]["status"]
    assert f"Blindness  {status}" in text
    if status == "ok":
        assert "not blind" in exit_line
    else:
        assert "not blind" not in exit_line
    if d["exit_code"] == 0:
        assert "no relation tested" in exit_line  # relations=[]: none was
        assert f"meter {d['meter']['call']}" in exit_line
    # the fixture is built to be undecided: the rule above must have been exercised
    assert status == "undecided", status


def test_call_totals_are_one_sum_on_a_run_and_on_its_replay(tmp_path):
    store = str(tmp_path / "draws.sqlite3")
    first = run(from_callable(_gate(3), identity="gate"), PROMPTS, [],
                config=RunConfig(store_path=store, store_mode="record", max_workers=1))

    def must_not_call(prompt: str) -> str:
        raise AssertionError("replay made a live call")

    again = run(from_callable(must_not_call, identity="gate"), PROMPTS, [],
                config=RunConfig(store_path=store, store_mode="replay", max_workers=1))
    for result, live in ((first, True), (again, False)):
        d = result.to_dict()
        calls = d["calls"]
        phases = sum(v for k, v in calls.items() if k not in ("total", "live", "replayed"))
        assert phases == calls["total"] == calls["live"], calls
        assert (calls["live"] > 0) is live
        assert calls["replayed"] == (0 if live else first.to_dict()["calls"]["live"])
        line = _line(render_run_text(d), "Calls: ")
        assert _calls_line_sum(line) == (calls["total"], calls["total"]), line
        assert f"replayed {calls['replayed']} from the store" in line
    assert first.to_dict()["calls"]["stationarity"] > 0  # the phase once miscounted on replay


def test_compare_shows_the_evidence_its_equivalence_verdict_rests_on():
    bench = parse_benchmark("""
version: "1"
name: same
tasks:
  - {id: hi, prompt: "say hi", evaluation: {type: exact_match, expected: hi}}
  - {id: yo, prompt: "say yo", evaluation: {type: exact_match, expected: yo}}
""")

    def agent(prompt: str) -> str:
        return prompt.rsplit(maxsplit=1)[-1]

    res = compare_agents([agent, agent], bench, config=CompareConfig(max_runs=200, seed=0))
    d = res.to_dict()
    m = d["pairs"][0]["metrics"]["pass_rate"]
    assert m["verdict"].startswith("equivalent"), m["verdict"]
    eq = m["equivalence"]
    text = render_compare_text(d)
    row = next(ln for ln in text.splitlines() if "pass_rate" in ln)
    assert "equivalent" in row
    assert f"≥ {eq['threshold']:.3g}: equivalent" in row  # not "open" beside "equivalent"
    lo, hi = m["interval"]
    if lo < -eq["margin"] or hi > eq["margin"]:  # an interval wider than the margin shown
        assert f"[{lo:+.3f}, {hi:+.3f}]*" in row
        assert "is not the evidence of this verdict" in text


def test_the_pytest_tally_shows_the_confirming_draws_not_only_first_draw_flips():
    rec = {"calls": 120, "candidates": 1, "confirmed": 1, "undecided": 0,
           "raw_violations": 0, "first": None,
           "minimal": {"confirmation": {"follow_up_violations": 14, "follow_up_draws": 16}}}
    line = _tally(rec)
    assert "1 confirmed (minimal: 14/16 follow-up draws violate)" in line
    assert "0 flipped on their first draw (noise included)" in line
    assert "raw flips" not in line


def test_the_html_compare_row_of_an_equivalent_pair_shows_its_evidence():
    from agentverity_props.report import render_html

    bench = parse_benchmark("""
version: "1"
name: same
tasks:
  - {id: hi, prompt: "say hi", evaluation: {type: exact_match, expected: hi}}
  - {id: yo, prompt: "say yo", evaluation: {type: exact_match, expected: yo}}
""")

    def agent(prompt: str) -> str:
        return prompt.rsplit(maxsplit=1)[-1]

    d = compare_agents([agent, agent], bench,
                       config=CompareConfig(max_runs=200, seed=0)).to_dict()
    html = render_html(d)
    row = next(r for r in re.findall(r"<tr>.*?</tr>", html, re.S) if "pass rate" in r
               and "equivalent" in r)
    assert "&lt;" not in row  # not "E < threshold" beside "equivalent"
    assert "(both one-sided tests)" in row
