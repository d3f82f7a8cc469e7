"""The meter's wrong-direction rate stays <= alpha across true rates, heterogeneity and
intra-input correlation, under the stopping rule actually used."""

from __future__ import annotations

import random

import pytest

from agentverity_props import measure
from agentverity_props.decide import BernoulliSPRT
from agentverity_props.decide._rules import sprt_expected_n
from tests.support.sim import exact_theta, probe_set_binary, sim_tolerance, simulate_meter

pytestmark = pytest.mark.stats

EPS, ALPHA = 0.05, 0.05
P0, P1 = EPS / 2, EPS * 2


GRID = [(t, icc) for t in (0.0, 0.01, 0.025, 0.10, 0.20, 0.40) for icc in (0.0, 0.1, 0.5)
        if not (t == 0.0 and icc) and t / (2 * (1 - icc)) <= 0.25]


@pytest.mark.parametrize(("theta", "icc"), GRID)
def test_wrong_direction_rate_at_most_alpha(theta, icc):
    rates = probe_set_binary(theta, icc)
    true = exact_theta(rates)
    reps = 2000
    _, call = simulate_meter(rates, reps=reps, seed=hash((theta, icc)) % 2**32)
    if true <= P0 + 1e-9:
        wrong = (call == 1).mean()
    elif true >= P1 - 1e-9:
        wrong = (call == -1).mean()
    else:  # pragma: no cover - the grid avoids the indifference zone
        pytest.skip("inside the indifference zone")
    assert wrong <= sim_tolerance(ALPHA, reps), (theta, icc, true, wrong)


def test_concentrated_heterogeneity():
    """Half the disagreement mass on 1 input of 20 (p = 0.5 there, 0 elsewhere): theta 0.025."""
    import numpy as np
    rates = np.zeros(20)
    rates[0] = 0.5
    assert exact_theta(rates) == pytest.approx(0.025)
    reps = 2000
    _, call = simulate_meter(rates, reps=reps, seed=11)
    assert (call == 1).mean() <= sim_tolerance(ALPHA, reps)
    rates[:4] = 0.5  # theta 0.10
    _, call = simulate_meter(rates, reps=reps, seed=12)
    assert (call == -1).mean() <= sim_tolerance(ALPHA, reps)


def test_simulation_drives_the_same_rule_as_the_class():
    rule = BernoulliSPRT(P0, P1, alpha=ALPHA)
    seq = [False] * 10 + [True] + [False] * 40
    llr = 0.0
    for x in seq:
        d = rule.update(x)
        llr += rule._llr1 if x else rule._llr0
        if d is not None:
            break
    assert rule.llr == pytest.approx(llr)


def test_sample_size_near_wald_sprt_outside_indifference_zone():
    import numpy as np
    for theta in (0.0, 0.01, 0.2, 0.5):
        rates = probe_set_binary(theta, 0.0)
        calls, _ = simulate_meter(rates, reps=2000, seed=5)
        wald = 2 * sprt_expected_n(P0, P1, exact_theta(rates))
        assert np.mean(calls) <= 1.3 * wald + 2


class _NoisyAgent:
    """Per-input binary agent with its own Random (Hypothesis-proof)."""

    def __init__(self, rates: dict[str, float], seed: int) -> None:
        self.rates = rates
        self.rng = random.Random(seed)

    def __call__(self, prompt: str) -> str:
        return "block" if self.rng.random() < self.rates[prompt] else "allow"


@pytest.mark.parametrize(("theta", "expect_wrong"), [(0.0, "verdict-stochastic"),
                                                     (0.2, "verdict-deterministic")])
def test_end_to_end_meter_error_rate(theta, expect_wrong):
    """The real meter through the real engine, including concurrency and reordering."""
    from agentverity_props import from_callable
    rates = probe_set_binary(theta, 0.1 if theta else 0.0, n_inputs=10)
    prompts = [f"input {i}" for i in range(10)]
    reps = 150
    wrong = 0
    calls = []
    for r in range(reps):
        agent = from_callable(_NoisyAgent(dict(zip(prompts, rates, strict=True)), seed=r))
        m = measure(agent, prompts, max_workers=3, seed=r)
        wrong += m.call == expect_wrong
        calls.append(m.calls)
        assert m.call != "undecided" or m.calls >= 590
    assert wrong / reps <= sim_tolerance(ALPHA, reps)
