"""bench's decisions and estimates, checked exactly and by simulation.

The exact checks propagate the probability of every (runs, passes) state through the runner's
own stopping rule object (:class:`~agentverity_props.decide.TaskRule`, branched with
``clone``), so they compute the rule the runner uses, at the ``--runs`` caps users type. The
Monte Carlo checks go through :func:`run_benchmark` with fake agents on their own
``random.Random``. Each would fail if the claim it checks were false: the guarantee checks
include a copy of the old "decide on the point estimate at the cap" rule, which they reject.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict

import pytest

from agentverity_props.bench import BenchConfig, parse_benchmark, run_benchmark
from agentverity_props.bench._metrics import k_values
from agentverity_props.decide import (
    TaskRule,
    clopper_pearson,
    estimate,
    runs_to_pass,
    stop_distribution,
)
from agentverity_props.decide import stop_distribution as outcomes

pytestmark = pytest.mark.stats

MARGIN = 0.05


class PointEstimateAtCap(TaskRule):
    """The rule before issue 13: at the cap the observed rate decided. Kept to show that the
    exact check below rejects it."""

    def __init__(self, *args, **kw):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kw, final_test=False)

    def update(self, passed: bool):  # type: ignore[override]
        d = super().update(passed)
        if d is not None and d[0] == "undecided":
            return ("pass" if self.passes / self.n >= self.threshold else "fail"), "cap"
        return d


# ------------------------------------------------------------------ the sequential guarantee


@pytest.mark.parametrize("runs", [5, 10, 20, 200])
@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9, 0.95, 1.0])
@pytest.mark.parametrize("tasks", [1, 10])
def test_sequential_wrong_pass_and_fail_at_most_alpha_over_tasks_at_every_cap(runs, threshold,
                                                                               tasks):
    alpha_task = 0.05 / tasks
    rule = TaskRule("sequential", runs, threshold, alpha_task, MARGIN)
    # P(PASS) grows with the pass rate (the rule is monotone), so the worst case of
    # "p <= threshold - margin" is its edge; a few points below are checked as well
    for p in (threshold - MARGIN, threshold - MARGIN - 0.1, threshold - MARGIN - 0.3):
        if p < 0:
            continue
        calls, _ = outcomes(rule, p)
        assert calls.get("pass", 0.0) <= alpha_task, (p, calls)
        assert math.isclose(sum(calls.values()), 1.0, rel_tol=1e-9)
    for p in (threshold + MARGIN, threshold + MARGIN + 0.1):
        if p > 1:
            continue
        calls, _ = outcomes(rule, p)
        assert calls.get("fail", 0.0) <= alpha_task, (p, calls)


@pytest.mark.parametrize("runs", [10, 20, 200])
def test_the_exact_check_rejects_deciding_on_the_point_estimate_at_the_cap(runs):
    calls, _ = outcomes(PointEstimateAtCap("sequential", runs, 0.8, 0.05, MARGIN), 0.75)
    assert calls["pass"] > 0.05


@pytest.mark.parametrize(("runs", "threshold"), [(20, 0.9), (20, 0.8), (59, 0.9), (200, 0.8)])
def test_the_final_test_at_the_cap_spends_the_error_the_sprt_left(runs, threshold):
    """The cuts are the loosest that keep the bound: one pass fewer for PASS (or one more for
    FAIL) and the exact error exceeds alpha."""
    rule = TaskRule("sequential", runs, threshold, 0.05, MARGIN)
    c_pass, c_fail = rule.cuts
    assert 0 < c_pass <= runs
    assert stop_distribution(rule, threshold - MARGIN)[0]["pass"] <= 0.05
    looser = rule.clone()
    looser.cuts = (c_pass - 1, min(c_fail, c_pass - 2))
    assert stop_distribution(looser, threshold - MARGIN)[0]["pass"] > 0.05
    if c_fail >= 0:
        assert stop_distribution(rule, threshold + MARGIN)[0]["fail"] <= 0.05
        looser = rule.clone()
        looser.cuts = (max(c_pass, c_fail + 2), c_fail + 1)
        assert stop_distribution(looser, threshold + MARGIN)[0]["fail"] > 0.05


def test_threshold_one_cannot_pass_before_runs_to_pass():
    need = runs_to_pass(1.0, 0.05, MARGIN)
    assert need == 59  # ln 20 / -ln 0.95 = 58.4
    short, _ = outcomes(TaskRule("sequential", need - 1, 1.0, 0.05, MARGIN), 1.0)
    enough, _ = outcomes(TaskRule("sequential", need, 1.0, 0.05, MARGIN), 1.0)
    assert short == {"undecided": pytest.approx(1.0)}
    assert enough == {"pass": pytest.approx(1.0)}
    calls, _ = outcomes(TaskRule("sequential", need, 1.0, 0.05, MARGIN), 0.95)
    assert calls["pass"] == pytest.approx(0.95 ** 59)
    assert calls["pass"] <= 0.05


def test_merging_paths_by_runs_and_passes_is_exact():
    """The exact computation (and the estimators) treat the rule as a function of (runs,
    passes); all 2^10 paths of a 10-run task agree with it."""
    rule = TaskRule("sequential", 10, 0.5, 0.05, 0.3)
    p = 0.35
    brute: dict[str, float] = defaultdict(float)
    for path in itertools.product((True, False), repeat=10):
        r = rule.clone()
        for i, passed in enumerate(path):
            d = r.update(passed)
            if d is not None:
                if all(path[i + 1:]):  # count each stopped prefix once
                    prefix = path[:i + 1]
                    s = sum(prefix)
                    brute[d[0]] += p ** s * (1 - p) ** (len(prefix) - s)
                break
    calls, _ = outcomes(rule, p)
    assert set(brute) == set(calls)
    for k, v in calls.items():
        assert brute[k] == pytest.approx(v, rel=1e-12)


def test_sequential_bench_matches_the_exact_rates_monte_carlo():
    """Through run_benchmark: 10 tasks at pass rate threshold - margin, alpha 0.4 (0.04 per
    task). The share of wrong PASS verdicts matches the exact computation, and no more than
    alpha of the benchmarks have any."""
    threshold, runs, tasks, alpha = 0.8, 20, 10, 0.4
    text = f'version: "1"\nname: mc\nthreshold: {threshold}\ntasks:\n' + "".join(
        f'  - {{id: t{i}, prompt: "q{i}", evaluation: {{type: exact_match, expected: "4"}}}}\n'
        for i in range(tasks))
    b = parse_benchmark(text)
    rng = random.Random(13)
    p = threshold - MARGIN

    def agent(prompt: str) -> str:
        return "4" if rng.random() < p else "5"

    reps, wrong_tasks, wrong_benchmarks = 40, 0, 0
    for _ in range(reps):
        res = run_benchmark(agent, b, config=BenchConfig(runs=runs, early_stop="sequential",
                                                         alpha=alpha))
        wrong = sum(t.status == "PASS" for t in res.tasks)
        wrong_tasks += wrong
        wrong_benchmarks += wrong > 0
        assert res.exit_code in (1, 2)
    exact, _ = outcomes(TaskRule("sequential", runs, threshold, alpha / tasks, MARGIN), p)
    n = reps * tasks
    lo, hi = clopper_pearson(wrong_tasks, n, alpha=0.001)
    assert lo <= exact.get("pass", 0.0) <= hi
    assert clopper_pearson(wrong_benchmarks, reps, alpha=0.01)[0] <= alpha


# ------------------------------------------------------------------ unbiased estimates


@pytest.mark.parametrize(("mode", "runs", "threshold"), [
    ("exact", 10, 1.0), ("exact", 10, 0.7), ("exact", 20, 0.9), ("off", 10, 1.0),
    ("sequential", 20, 0.8), ("sequential", 10, 1.0)])
@pytest.mark.parametrize("p", [0.6, 0.9])
def test_estimates_are_exactly_unbiased_under_the_stopping_rule(mode, runs, threshold, p):
    rule = TaskRule(mode, runs, threshold, 0.05, MARGIN)
    _, ends = outcomes(rule, p)
    ks = k_values(runs)
    mean_rel = 0.0
    mean_hat: dict[str, float] = defaultdict(float)
    mean_at: dict[str, float] = defaultdict(float)
    na_hat: dict[str, float] = defaultdict(float)
    na_at: dict[str, float] = defaultdict(float)
    mean_observed = 0.0
    for (n, s), (prob, path) in ends.items():
        e = estimate(list(path), rule, ks)
        mean_rel += prob * e.reliability
        mean_observed += prob * s / n
        for k in map(str, ks):
            if e.pass_hat[k] is None:
                na_hat[k] += prob
            else:
                mean_hat[k] += prob * e.pass_hat[k]
            if e.pass_at[k] is None:
                na_at[k] += prob
            else:
                mean_at[k] += prob * e.pass_at[k]
    assert mean_rel == pytest.approx(p, abs=1e-9)
    for k in ks:
        if na_hat[str(k)] == 0:  # n/a never happens: the estimate is exactly unbiased
            assert mean_hat[str(k)] == pytest.approx(p ** k, abs=1e-9)
        if na_at[str(k)] == 0:
            assert mean_at[str(k)] == pytest.approx(1 - (1 - p) ** k, abs=1e-9)
    if mode == "exact" and threshold == 1.0:
        # pass^k is estimable at every k <= runs, and the plain proportion is visibly biased
        # (issue 13); pass@k is not: a task that failed its first run and stopped says
        # nothing about a second, so pass@2 is n/a there
        assert not any(na_hat.values())
        assert na_at["2"] == pytest.approx(1 - p)
        assert abs(mean_observed - p) > 0.05


def test_reported_pass_hat_k_is_unbiased_through_run_benchmark():
    """Threshold 1.0, 10 runs, exact (curtailed) mode, p = 0.9: the reported benchmark-wide
    pass^1 and pass^2 average to 0.90 and 0.81 (the observed share of passing runs is biased
    towards 0.77); pass@2 is n/a, since tasks that failed their first run stopped there."""
    tasks = 300
    text = 'version: "1"\nname: est\nruns: 10\ntasks:\n' + "".join(
        f'  - {{id: t{i}, prompt: "q{i}", evaluation: {{type: exact_match, expected: "4"}}}}\n'
        for i in range(tasks))
    b = parse_benchmark(text)
    rng = random.Random(7)

    def agent(prompt: str) -> str:
        return "4" if rng.random() < 0.9 else "5"

    hat1, hat2, observed = [], [], []
    for _ in range(4):
        d = run_benchmark(agent, b).to_dict()
        s = d["summary"]
        assert s["pass_k_tasks"]["pass^2"] == tasks
        assert s["pass_k_tasks"]["pass@2"] < tasks
        hat1.append(s["pass_hat_k"]["1"])
        hat2.append(s["pass_hat_k"]["2"])
        assert s["pass_at_k"]["2"] is None
        assert s["pass_at_k"]["1"] == s["pass_hat_k"]["1"]
        observed += [t["observed_rate"] for t in d["tasks"]]
        assert s["reliability"] == s["pass_hat_k"]["1"]
    n = 4 * tasks
    # per-task estimates: pass^1 is 1{N >= 2} (variance p q), pass^2 is 1{N >= 3}
    for got, truth, var in ((hat1, 0.9, 0.09), (hat2, 0.81, 0.81 * 0.19)):
        assert abs(sum(got) / len(got) - truth) <= 4 * math.sqrt(var / n)
    assert sum(observed) / len(observed) < 0.82
