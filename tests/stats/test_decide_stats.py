"""Simulation tests: each error-rate claim of ``agentverity_props.decide`` is checked here.

Each test would fail if its claim were false: the observed error rate must stay within the
nominal rate plus three binomial standard errors of the simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentverity_props.decide import BernoulliSPRT, BetaCS, PairedSignTest, sprt_expected_n
from agentverity_props.decide._rules import beta_cs_interval

pytestmark = pytest.mark.stats


def _tol(alpha: float, reps: int) -> float:
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def _sprt_run(rule: BernoulliSPRT, theta: float, rng: np.random.Generator, max_n: int) -> str:
    for _ in range(max_n):
        d = rule.update(bool(rng.random() < theta))
        if d is not None:
            return d.call
    return "undecided"


@pytest.mark.parametrize("theta", [0.0, 0.01, 0.025])
def test_sprt_never_calls_high_below_p0_more_than_alpha(theta):
    rng = np.random.default_rng(1)
    reps = 1500
    wrong = sum(_sprt_run(BernoulliSPRT(0.025, 0.10), theta, rng, 3000) == "high"
                for _ in range(reps))
    assert wrong / reps <= _tol(0.05, reps)


@pytest.mark.parametrize("theta", [0.10, 0.2, 0.5])
def test_sprt_never_calls_low_above_p1_more_than_alpha(theta):
    rng = np.random.default_rng(2)
    reps = 1500
    wrong = sum(_sprt_run(BernoulliSPRT(0.025, 0.10), theta, rng, 3000) == "low"
                for _ in range(reps))
    assert wrong / reps <= _tol(0.05, reps)


def test_sprt_expected_n_matches_simulation():
    rng = np.random.default_rng(3)
    for theta in (0.0, 0.05, 0.2):
        ns = []
        for _ in range(800):
            rule = BernoulliSPRT(0.025, 0.10)
            while rule.update(bool(rng.random() < theta)) is None:
                pass
            ns.append(rule.n)
        exact = sprt_expected_n(0.025, 0.10, theta)
        assert abs(np.mean(ns) - exact) < 4 * np.std(ns) / math.sqrt(len(ns)) + 0.5


def test_beta_cs_covers_under_continuous_monitoring():
    """P(the true rate ever leaves the running interval) <= alpha, checked after every draw."""
    rng = np.random.default_rng(4)
    reps, n = 400, 300
    for theta in (0.02, 0.3):
        misses = 0
        for _ in range(reps):
            cs = BetaCS(0.05)
            for x in rng.random(n) < theta:
                cs.update(bool(x))
                lo, hi = cs.interval()
                if not lo <= theta <= hi:
                    misses += 1
                    break
        assert misses / reps <= _tol(0.05, reps)


def test_paired_sign_test_false_call_rate_under_continuous_monitoring():
    rng = np.random.default_rng(5)
    reps, n = 600, 500
    for one_sided in (False, True):
        wrong = 0
        for _ in range(reps):
            t = PairedSignTest(0.05, one_sided=one_sided)
            for x in rng.random(n) < 0.5:
                if t.update(1 if x else -1) is not None:
                    wrong += 1
                    break
        assert wrong / reps <= _tol(0.05, reps)


def test_paired_sign_test_one_sided_never_calls_against_its_direction():
    t = PairedSignTest(0.05, one_sided=True)
    for _ in range(200):
        assert t.update(-1) is None


def test_paired_sign_test_decides_a_real_difference():
    rng = np.random.default_rng(6)
    calls = []
    for _ in range(200):
        t = PairedSignTest(0.05)
        d = None
        while d is None:
            d = t.update(1 if rng.random() < 0.8 else -1)
        calls.append(d.call)
    assert calls.count("first") >= 190


def test_beta_cs_interval_zero_events_shrinks():
    lo, hi = beta_cs_interval(0, 300, 0.05)
    assert lo == 0.0
    assert hi < 0.03
    assert beta_cs_interval(0, 10, 0.05)[1] > hi
