"""compare: paired verdicts, random order within each pair, warm-up, the latency margin, one
family-wise alpha, and text / JSON / JUnit / HTML that agree with the decision rule."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentverity_props.bench import CompareConfig, compare_agents, parse_benchmark
from agentverity_props.bench._compare import METRICS, WEIGHTS, alpha_split
from agentverity_props.errors import InvalidArgument
from agentverity_props.observation import Observation
from agentverity_props.report import dumps, load_result, render_compare_junit, render_compare_text

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"

ONE = """
version: "1"
name: demo
tasks:
  - id: t
    name: T
    prompt: "q"
    evaluation:
      type: exact_match
      expected: "4"
"""


def tasks(n: int) -> str:
    return 'version: "1"\nname: many\ntasks:\n' + "".join(
        f"  - {{id: t{i}, prompt: 'q{i}', evaluation: {{type: exact_match, expected: '4'}}}}\n"
        for i in range(n))


def validate(d: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / "compare.schema.json").read_text())
    jsonschema.validate(json.loads(dumps(d)), schema)


class Counting:
    """A deterministic agent that fails on chosen call numbers (thread-safe)."""

    def __init__(self, fail_at=(), *, answer="4", wrong="5", raise_at=()):
        self.n = 0
        self.fail_at, self.raise_at = set(fail_at), set(raise_at)
        self.answer, self.wrong = answer, wrong
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self.lock:
            i = self.n
            self.n += 1
        if i in self.raise_at:
            raise RuntimeError("agent broke")
        return self.wrong if i in self.fail_at else self.answer


class Timed:
    """Answers "4" and reports a chosen latency per call (the adapter keeps it as measured)."""

    def __init__(self, latencies):
        self.latencies = latencies
        self.n = 0
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> Observation:
        with self.lock:
            i = self.n
            self.n += 1
        return Observation(text="4", latency_s=self.latencies(i))


def agrees_with_rule(m: dict) -> None:
    """A verdict names a better agent exactly when its e-value reached the threshold, and
    says 'equivalent' exactly when both one-sided equivalence e-values reached theirs."""
    eq = m.get("equivalence")
    if m["better"] is None:
        shown = eq is not None and eq["decided_at_round"] is not None
        assert m["verdict"] == (f"equivalent within ±{eq['margin']:g}" if shown
                                else "inconclusive")
        assert m["verdict_e_value"] < m["threshold"]
    else:
        assert m["verdict"] == f"{m['better']} better"
        assert m["verdict_e_value"] == m["decided_e_value"] >= m["threshold"]
        assert m["alpha"] == pytest.approx(1 / m["threshold"])


def every_metric(d: dict):
    for p in d["pairs"]:
        yield from p["metrics"].values()
        for t in p["tasks"]:
            yield from t["metrics"].values()


# ------------------------------------------------------------------ verdicts


def test_compare_flags_100_to_91_drop():
    b = parse_benchmark(ONE)
    res = compare_agents([Counting(), Counting(fail_at={i * 11 for i in range(9)})], b,
                         config=CompareConfig(max_runs=100, warmup=0))
    d = res.to_dict()
    m = d["pairs"][0]["metrics"]["pass_rate"]
    assert res.verdict(0, 1) == "A better"
    assert (m["better"], m["wins"], m["losses"]) == ("A", 9, 0)
    assert m["decided_at_round"] == 89
    assert m["verdict_e_value"] == pytest.approx(51.2)  # 2^9 / 10 >= 1 / (0.05 / 2) = 40
    assert m["threshold"] == pytest.approx(40)
    assert m["interval"][0] > 0
    assert res.exit_code == 1
    assert res.regressions
    assert res.rounds == 89  # stopped as soon as decided, not at 100
    validate(d)


def test_compare_10_to_8_is_inconclusive_with_runs_needed():
    b = parse_benchmark(ONE)
    # min_runs = max_runs: the futility stop (test below) would end it at run 2
    res = compare_agents([Counting(), Counting(fail_at={3, 7})], b,
                         config=CompareConfig(max_runs=10, min_runs=10, warmup=0))
    d = res.to_dict()
    m = d["pairs"][0]["metrics"]["pass_rate"]
    assert m["verdict"] == "inconclusive"
    assert m["e_value"] == m["verdict_e_value"] == pytest.approx(4 / 3)
    assert m["interval"][0] < 0 < m["interval"][1]
    assert m["further_runs"]["rounds"] > 10
    assert m["further_runs"]["max_runs_hint"] == 10 + m["further_runs"]["rounds"]
    assert res.exit_code == 0
    assert d["stop_reason"] == "max runs reached (10)"
    assert d["winners"] == []
    validate(d)


def test_compare_stops_when_no_outcome_within_the_cap_can_decide():
    """One task, at most 10 runs: after 2 concordant runs, 8 more items can lift the sign
    e-value to 2^8 / 9 = 28.4 < 40 at most, and equivalence needs more than 8 items on each
    side: the comparison stops (futility), inconclusive, with the runs a decision needs."""
    b = parse_benchmark(ONE)
    res = compare_agents([Counting(), Counting(fail_at={3, 7})], b,
                         config=CompareConfig(max_runs=10, warmup=0))
    d = res.to_dict()
    assert res.rounds == 2
    assert d["stop_reason"].startswith("futile: no outcome of the remaining runs")
    assert res.verdict(0, 1) == "inconclusive"
    assert res.exit_code == 0
    validate(d)
    # one run more allowed: 9 wins in a row would reach 51.2 >= 40, so it keeps going
    res = compare_agents([Counting(), Counting(fail_at={3, 7})], b,
                         config=CompareConfig(max_runs=11, warmup=0))
    assert res.rounds == 3


def test_identical_agents_are_equivalent_within_the_margin():
    """Five tasks, identical deterministic agents: equivalent within 0.1 after 9 runs per
    task (92 calls with the warm-ups, where the cap of 50 runs spends 502); a 0.2 margin
    decides sooner; the verdict, its e-values and the margin are in the JSON."""
    b = parse_benchmark(tasks(5))
    res = compare_agents([lambda p: "4", lambda p: "4"], b)
    d = res.to_dict()
    m = d["pairs"][0]["metrics"]["pass_rate"]
    assert res.verdict(0, 1) == m["verdict"] == "equivalent within ±0.1"
    assert (res.rounds, d["calls"]["total"], d["stop_reason"]) == (9, 92, "decided")
    eq = m["equivalence"]
    assert eq["decided_at_round"] == 9
    assert min(eq["e_value_upper"], eq["e_value_lower"]) >= eq["threshold"] == 80
    assert m["further_runs"] is None
    assert m["better"] is None
    assert d["config"]["margin"] == 0.1
    assert res.exit_code == 0
    assert res.equivalences == ["A vs B pass rate equivalent within ±0.1"]
    assert "equivalent within ±0.1 at run 9" in res.summary()
    validate(d)
    wide = compare_agents([lambda p: "4", lambda p: "4"], b,
                          config=CompareConfig(margin=0.2))
    assert wide.rounds < res.rounds


def test_compare_margin_is_checked():
    with pytest.raises(InvalidArgument, match="margin"):
        CompareConfig(margin=0.0)
    with pytest.raises(InvalidArgument, match="margin"):
        CompareConfig(margin=1.5)


def test_compare_three_agents_one_family_wise_alpha():
    b = parse_benchmark(tasks(2))
    res = compare_agents([lambda p: "4", lambda p: "5", lambda p: "4"], b,
                         config=CompareConfig(max_runs=30, min_runs=30))
    d = res.to_dict()
    assert [(p["a"], p["b"]) for p in d["pairs"]] == [("A", "B"), ("A", "C"), ("B", "C")]
    mult = d["multiplicity"]
    per = mult["alpha_per_verdict"]
    assert per["pass_rate"] == pytest.approx(0.05 / 2 / 3)
    assert per["equivalence"] == pytest.approx(0.05 / 4 / 3)
    assert per["per_task"] == pytest.approx(0.05 / 8 / (3 * 3 * 2))
    assert mult["verdicts"] == 3 * (3 * (1 + 2) + 1)
    # the alphas of every verdict printed add up to the family-wise alpha
    total = 3 * (sum(per[m] for m in METRICS) + per["equivalence"] + 2 * 3 * per["per_task"])
    assert total == pytest.approx(0.05) == mult["family_alpha"]
    assert res.verdict(0, 1) == "A better"
    assert res.verdict(1, 2) == "C better"
    assert res.verdict(0, 2) == "equivalent within ±0.1"  # identical: never a better one
    assert d["calls"]["total"] == 30 * 2 * 3 + 3  # and one warm-up call per agent
    assert res.exit_code == 1  # B is worse than the baseline A
    assert "score" not in json.dumps(d)
    for m in every_metric(d):
        agrees_with_rule(m)
    validate(d)


def test_alpha_split_sums_to_alpha_and_weights_are_stated():
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    for pairs, n_tasks in ((1, 1), (3, 7), (6, 50)):
        s = alpha_split(0.05, pairs, n_tasks)
        total = pairs * (sum(s[m] for m in METRICS) + s["equivalence"]
                         + n_tasks * len(METRICS) * s["per_task"])
        assert total == pytest.approx(0.05)


def test_compare_error_rate_metric_and_labels():
    b = parse_benchmark(ONE)
    flaky = Counting(raise_at=set(range(0, 400, 2)))
    res = compare_agents([lambda p: "4", flaky], b, labels=["old", "new"],
                         config=CompareConfig(max_runs=40, min_runs=40))
    d = res.to_dict()
    assert d["pairs"][0]["metrics"]["error_rate"]["verdict"] == "old better"
    s = d["agents"][1]["summary"]
    assert s["errors"] > 0
    assert math.isclose(s["error_rate"], s["errors"] / s["attempts"])
    with pytest.raises(InvalidArgument):
        compare_agents([lambda p: "4"], b)


@pytest.mark.parametrize("kw", [{"latency_margin": -0.1}, {"warmup": -1}, {"seed": "x"},
                                {"max_runs": 5, "min_runs": 6}])
def test_bad_config_is_invalid_argument(kw):
    with pytest.raises(InvalidArgument):
        CompareConfig(**kw)


# ------------------------------------------------------------------ the design


def test_order_within_each_pair_is_random_seeded_and_recorded():
    log: list[tuple[str, str]] = []
    lock = threading.Lock()

    def agent(name):
        def call(prompt):
            with lock:
                log.append((name, prompt))
            return "4"
        return call

    b = parse_benchmark(tasks(3))
    cfg = CompareConfig(max_runs=40, min_runs=40, warmup=0, seed=7, engine=None)
    res = compare_agents([agent("A"), agent("B")], b, config=cfg)
    order = res.to_dict()["pairs"][0]["order"]
    assert order["a_first"] + order["b_first"] == 40 * 3
    # both orders happen, neither overwhelmingly (a fair coin: 120 items, 4.4 sd is 24)
    assert 30 <= order["a_first"] <= 90
    # the log agrees with the counts: per prompt, calls alternate agents pairwise
    firsts = {"A": 0, "B": 0}
    for i in range(3):
        calls = [n for n, p in log if p == f"q{i}"]
        assert len(calls) == 80
        for k in range(0, 80, 2):
            assert {calls[k], calls[k + 1]} == {"A", "B"}  # a pair never interleaves
            firsts[calls[k]] += 1
    assert firsts == {"A": order["a_first"], "B": order["b_first"]}
    # the same seed, the same order; another seed, another
    again = compare_agents([agent("A"), agent("B")], b, config=cfg).to_dict()["pairs"][0]
    assert again["order"] == order
    other = compare_agents([agent("A"), agent("B")], b,
                           config=CompareConfig(max_runs=40, warmup=0, seed=8))
    assert other.to_dict()["pairs"][0]["order"] != order


def test_warmup_calls_are_counted_and_reported_but_not_in_the_statistics():
    b = parse_benchmark(tasks(2))
    a, c = Counting(fail_at={0}), Counting(fail_at={0})  # the warm-up answer is wrong
    res = compare_agents([a, c], b, config=CompareConfig(max_runs=5, min_runs=5, warmup=2))
    d = res.to_dict()
    assert a.n == c.n == 5 * 2 + 2
    assert d["calls"]["warmup"] == 4
    assert d["calls"]["per_agent"] == {"A": 12, "B": 12}
    assert [ag["warmup"]["calls"] for ag in d["agents"]] == [2, 2]
    assert [ag["summary"]["attempts"] for ag in d["agents"]] == [10, 10]
    assert all(ag["summary"]["passes"] == 10 for ag in d["agents"])  # wrong warm-up unseen
    assert "warm-up" in render_compare_text(d)
    none = compare_agents([Counting(), Counting()], b, config=CompareConfig(max_runs=5,
                                                                            warmup=0))
    assert none.to_dict()["calls"]["warmup"] == 0


def test_latency_needs_the_practical_margin():
    b = parse_benchmark(tasks(2))
    fast, slow = Timed(lambda i: 1.0), Timed(lambda i: 1.05)  # 5% slower: not practical
    res = compare_agents([fast, slow], b, config=CompareConfig(max_runs=30))
    m = res.to_dict()["pairs"][0]["metrics"]["latency"]
    assert (m["wins"], m["losses"], m["verdict"]) == (0, 0, "inconclusive")
    assert "by more than 10%" in m["effect_label"]
    res = compare_agents([Timed(lambda i: 1.0), Timed(lambda i: 1.05)], b,
                         config=CompareConfig(max_runs=30, latency_margin=0.01))
    m = res.to_dict()["pairs"][0]["metrics"]["latency"]
    assert m["verdict"] == "A better"
    assert m["losses"] == 0


def test_latency_is_the_calls_own_duration_not_the_wait_for_a_worker():
    """Six tasks, one worker per agent: a call queues behind up to five others; its latency
    must be its own 100 ms, not the time since it was scheduled (up to 600 ms).

    Needs wall-clock time: the bounds leave each call 2.5x its sleep (the median) and 3.5x
    (all but the two slowest), so two CPU-bound processes beside the suite do not fail it,
    while queueing (200-600 ms for most calls) still does."""
    b = parse_benchmark(tasks(6))

    def sleepy(prompt):
        time.sleep(0.1)
        return "4"

    from agentverity_props.engine import EngineConfig
    res = compare_agents([sleepy, sleepy], b, config=CompareConfig(
        max_runs=3, min_runs=3, warmup=0, engine=EngineConfig(max_workers=1)))
    lat = sorted(x.latency_s for agent in res.attempts for task in agent for x in task)
    assert len(lat) == 36
    assert min(lat) >= 0.1
    assert lat[len(lat) // 2] < 0.25
    assert lat[-3] < 0.35  # queueing would give up to 6 x 100 ms


def test_a_latched_verdict_shows_the_e_value_it_was_decided_on():
    # A is faster for the first 13 rounds, then B for the rest: latency is decided early
    # and its current e-value later falls below the threshold; the verdict stands (it was
    # valid when made) and every output shows the e-value of the decision, never a lower one
    b = parse_benchmark(ONE)
    a = Timed(lambda i: 1.0 if i < 13 else 2.0)
    c = Timed(lambda i: 2.0 if i < 13 else 1.0)
    res = compare_agents([a, c], b, config=CompareConfig(max_runs=40, warmup=0))
    d = res.to_dict()
    m = d["pairs"][0]["metrics"]["latency"]
    assert m["verdict"] == "A better"
    assert m["e_value"] < m["threshold"] <= m["verdict_e_value"]
    for mm in every_metric(d):
        agrees_with_rule(mm)
    text = render_compare_text(d)
    row = next(line for line in text.splitlines()
               if line.startswith("A vs B") and " latency " in line)
    shown = float(re.search(r"better\s+\S+\s+\[[^\]]+\]\s+([\d.e+]+)", row).group(1))
    assert shown >= m["threshold"]
    assert f"≥ {m['threshold']:.3g}" in row
    junit = render_compare_junit(d)
    assert f"E {m['verdict_e_value']:.3f}" in junit


def test_text_json_junit_state_the_family_wise_alpha_and_references():
    b = parse_benchmark(tasks(2))
    res = compare_agents([lambda p: "4", lambda p: "4"], b, refs=["old.py:agent",
                                                                "new.py:agent"],
                         config=CompareConfig(max_runs=5))
    d = res.to_dict()
    assert [a["ref"] for a in d["agents"]] == ["old.py:agent", "new.py:agent"]
    assert (d["pairs"][0]["a_ref"], d["pairs"][0]["b_ref"]) == ("old.py:agent", "new.py:agent")
    assert "at most 0.05" in d["guarantee"]
    text = render_compare_text(d)
    assert "family-wise alpha 0.05 over the 10 verdicts it may reach" in text
    assert "A = old.py:agent" in text
    assert "B = new.py:agent" in text
    junit = render_compare_junit(d)
    assert 'name="family_alpha" value="0.05"' in junit
    html = pytest.importorskip("agentverity_props.report._html").render_html(d)
    assert "family-wise alpha 0.05" in html
    assert "old.py:agent" in html
    assert "new.py:agent" in html
    validate(d)


def test_a_version_1_file_is_migrated_and_renders(tmp_path):
    b = parse_benchmark(ONE)
    d = compare_agents([lambda p: "4", lambda p: "5"], b,
                       config=CompareConfig(max_runs=12)).to_dict()
    # the version-1 shape: no design, references, order, warm-up or family-wise alpha
    v1 = {k: v for k, v in d.items() if k not in ("design", "guarantee", "winners")}
    v1["schema"] = "agentverity_props.compare/1"
    v1["multiplicity"] = {"method": "bonferroni", "pairs": 1, "metrics": list(METRICS),
                          "tasks": 1, "overall_alpha": 0.05, "per_task_alpha": 0.05 / 3}
    v1["config"] = {k: v for k, v in d["config"].items()
                    if k not in ("latency_margin", "warmup", "order_seed")}
    v1["agents"] = [{k: v for k, v in a.items() if k not in ("ref", "warmup")}
                    for a in d["agents"]]
    v1["pairs"] = [{**{k: v for k, v in p.items()
                       if k not in ("a_ref", "b_ref", "order", "latency_median_ratio")},
                    "metrics": {n: {k: v for k, v in m.items() if k != "verdict_e_value"}
                                for n, m in p["metrics"].items()}} for p in d["pairs"]]
    v1["calls"] = {k: v for k, v in d["calls"].items() if k != "warmup"}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(v1))
    got = load_result(path)
    assert got["schema"] == "agentverity_props.compare/2"
    assert got["multiplicity"]["family_alpha"] is None
    assert got["winners"] == ["A vs B pass_rate"]
    assert "not family-wise" in render_compare_text(got)
    render_compare_junit(got)
    validate(got)


# ------------------------------------------------------------------ the real CLI


AGENT = '''
import random
import time

_rng = random.Random()


def run_agent(task: str) -> str:
    time.sleep(_rng.uniform(0.0005, 0.003))
    return "4" if _rng.random() < 0.8 else "5"
'''


@pytest.mark.e2e
def test_an_agent_file_against_its_copy_through_the_cli_names_no_winner(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT)
    shutil.copy(tmp_path / "agent.py", tmp_path / "agent_copy.py")
    (tmp_path / "bench.yaml").write_text(tasks(8))
    cmd = [sys.executable, "-m", "agentverity_props", "compare", "agent.py", "agent_copy.py",
           "--benchmark", "bench.yaml", "--max-runs", "25", "--min-runs", "25", "--no-progress",
           # identical agents: a winner has probability <= alpha; at 0.001 this test is not
           # flaky (at the default 0.05 it would fail about one run in a hundred, by design)
           "--alpha", "0.001"]
    res = subprocess.run([*cmd, "--format", "json", "-o", "cmp.json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    d = json.loads((tmp_path / "cmp.json").read_text())
    assert d["winners"] == []
    assert [a["ref"] for a in d["agents"]] == ["agent.py", "agent_copy.py"]
    assert d["pairs"][0]["order"]["a_first"] + d["pairs"][0]["order"]["b_first"] == 25 * 8
    assert d["calls"]["warmup"] == 2
    for m in every_metric(d):
        agrees_with_rule(m)
    validate(d)
    # the saved result re-rendered: text and HTML name both agents by their references
    text = subprocess.run([sys.executable, "-m", "agentverity_props", "report", "cmp.json",
                           "--format", "text"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert text.returncode == 0, text.stderr
    assert "A = agent.py" in text.stdout
    assert "B = agent_copy.py" in text.stdout
    assert "better" not in text.stdout.split("Verdicts")[1].split("Exit")[0]
    html = subprocess.run([sys.executable, "-m", "agentverity_props", "report", "cmp.json",
                           "--html", "cmp.html"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert html.returncode == 0, html.stderr
    page = (tmp_path / "cmp.html").read_text()
    assert "agent_copy.py" in page
    assert "family-wise alpha" in page


def test_budget_stops_between_rounds_and_a_partial_round_is_kept_but_not_tested():
    from agentverity_props.engine import EngineConfig

    b = parse_benchmark(tasks(3))
    # 1 warm-up + 3 rounds of 3 tasks = 10 calls per agent; the 4th round runs out midway
    res = compare_agents([Counting(), Counting()], b, config=CompareConfig(
        max_runs=10, engine=EngineConfig(budget=12)))
    d = res.to_dict()
    assert d["stop_reason"] == "call budget exhausted"
    assert (res.complete, res.exit_code) == (False, 2)
    assert d["rounds"] == 3
    assert d["calls"]["per_agent"] == {"A": 12, "B": 12}
    kept = [a["summary"]["attempts"] for a in d["agents"]]
    assert kept == [11, 11]  # the partial round's answers are reported ...
    m = d["pairs"][0]["metrics"]["pass_rate"]
    assert m["items"] == 9  # ... but only complete rounds reach the tests
    assert sum(d["pairs"][0]["order"].values()) == 9
    validate(d)


def test_three_agents_each_pair_is_ordered_at_random():
    b = parse_benchmark(tasks(2))
    res = compare_agents([lambda p: "4"] * 3, b, config=CompareConfig(max_runs=60, min_runs=60,
                                                                      seed=3))
    for p in res.to_dict()["pairs"]:
        first = p["order"]
        assert first["a_first"] + first["b_first"] == 120
        assert 35 <= first["a_first"] <= 85  # a fair coin per item (4.2 sd)
