"""Simulation tests: each error-rate claim of ``agentverity_props.decide`` is checked here.

Each test would fail if its claim were false: the observed error rate must stay within the
nominal rate plus three binomial standard errors of the simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentverity_props.decide import (
    BernoulliSPRT,
    BetaCS,
    PairedSignTest,
    PooledSign,
    beta_cs_interval,
    binomial_tail,
    census_share_bounds,
    clopper_pearson,
    confirmation_plan,
    mixture_share_bounds,
    sign_log_e,
    sprt_expected_n,
    wilson,
)
from tests.support.sim import sim_tolerance

pytestmark = pytest.mark.stats


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
    assert wrong / reps <= sim_tolerance(0.05, reps)


@pytest.mark.parametrize("theta", [0.10, 0.2, 0.5])
def test_sprt_never_calls_low_above_p1_more_than_alpha(theta):
    rng = np.random.default_rng(2)
    reps = 1500
    wrong = sum(_sprt_run(BernoulliSPRT(0.025, 0.10), theta, rng, 3000) == "low"
                for _ in range(reps))
    assert wrong / reps <= sim_tolerance(0.05, reps)


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
        assert misses / reps <= sim_tolerance(0.05, reps)


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
        assert wrong / reps <= sim_tolerance(0.05, reps)


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


def _binom_pmf(n: int, theta: float) -> np.ndarray:
    from scipy import stats
    return stats.binom.pmf(np.arange(n + 1), n, theta)


@pytest.mark.parametrize("side", ["two-sided", "upper", "lower"])
def test_clopper_pearson_covers_at_least_nominal(side):
    """Exact coverage (summed over the binomial, not simulated) is >= 1 - alpha everywhere."""
    alpha = 0.05
    for n in (1, 7, 30, 120):
        bounds = [clopper_pearson(k, n, alpha=alpha, side=side) for k in range(n + 1)]
        for theta in np.linspace(0.001, 0.999, 181):
            cover = sum(p for p, (lo, hi) in zip(_binom_pmf(n, theta), bounds, strict=True)
                        if lo <= theta <= hi)
            assert cover >= 1 - alpha - 1e-9, (n, theta, cover)


def test_clopper_pearson_one_sided_bounds_are_the_two_sided_at_twice_alpha():
    for k, n in ((0, 10), (3, 10), (10, 10), (17, 40)):
        lo2, hi2 = clopper_pearson(k, n, alpha=0.10)
        assert clopper_pearson(k, n, alpha=0.05, side="upper") == (0.0, hi2)
        assert clopper_pearson(k, n, alpha=0.05, side="lower") == (lo2, 1.0)


def test_wilson_default_quantile_is_the_exact_95_percent_one():
    from scipy.special import ndtri
    z, k, n = float(ndtri(0.975)), 7, 20
    p, denom = k / n, 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    assert wilson(k, n) == (centre - half, centre + half)
    lo90, hi90 = wilson(k, n, confidence=0.90)
    assert centre - half < lo90 < p < hi90 < centre + half


def test_wilson_covers_near_nominal_away_from_the_edges():
    for n in (40, 200):
        bounds = [wilson(k, n) for k in range(n + 1)]
        covers = [sum(p for p, (lo, hi) in zip(_binom_pmf(n, t), bounds, strict=True)
                      if lo <= t <= hi) for t in np.linspace(0.2, 0.8, 61)]
        assert 0.93 <= float(np.mean(covers)) <= 0.97


def test_confirmation_plan_rejects_a_within_tolerance_rate_at_most_alpha():
    for tol in (0.05, 0.1, 0.3, 0.45):
        for alpha in (0.05, 0.0025, 1e-4):
            k, c = confirmation_plan(tol, alpha)
            assert binomial_tail(c, k, tol) <= alpha  # the worst case p = tolerance
            assert binomial_tail(c - 1, k, tol) > alpha  # c is the smallest such count


def test_blindness_bounds_cover_every_share_simultaneously():
    """Both bounds contain every pi_v at once with probability >= 1 - alpha."""
    rng = np.random.default_rng(7)
    p = np.array([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8], [1.0, 0.0]])  # units x categories
    pi = p.mean(axis=0)
    reps, alpha = 300, 0.05
    miss_mix = miss_census = 0
    for _ in range(reps):
        units = rng.integers(len(p), size=60)
        draws = [int(rng.random() >= p[u, 0]) for u in units]
        mix = mixture_share_bounds({v: draws.count(v) for v in set(draws)}, alpha=alpha)
        miss_mix += any(not lo <= pi[v] <= hi for v, (lo, hi) in mix.items())
        per = [{v: sum(1 for u, d in zip(units, draws, strict=True) if u == i and d == v)
                for v in (0, 1)} for i in range(len(p))]
        cen = census_share_bounds(per, alpha=alpha)
        miss_census += any(not lo <= pi[v] <= hi for v, (lo, hi) in cen.items())
    assert miss_mix / reps <= sim_tolerance(alpha, reps)
    assert miss_census / reps <= sim_tolerance(alpha, reps)


def test_one_sign_e_process_on_both_schedules():
    """PairedSignTest (every pair) and PooledSign (rounds of one item) read the same E."""
    rng = np.random.default_rng(8)
    for one_sided in (False, True):
        wins, losses = rng.integers(0, 30, size=(2, 50))
        t = PairedSignTest(0.05, one_sided=one_sided)
        t.wins, t.losses = 7, 3
        assert t.log_e() == sign_log_e(7, 3, one_sided=one_sided)
        vec = sign_log_e(wins, losses, one_sided=one_sided)
        one_by_one = [sign_log_e(int(a), int(b), one_sided=one_sided)
                      for a, b in zip(wins, losses, strict=True)]
        assert one_by_one == vec.tolist()
    for _ in range(50):
        seq = [1 if x else -1 for x in rng.random(300) < 0.75]
        t, s = PairedSignTest(0.05), PooledSign(0.05)
        d = None
        for x in seq:
            d = d or t.update(x)
            s.add(x)
            s.end_round()
        assert (d.call, d.n) == (s.decision, s.decided_at_round)
        assert d.e_value == s.decided_e
