"""The pooled relation effect: each stated error rate, checked by simulation.

Scores are made exactly as the relation procedure makes them (fresh source and follow-up
draws scored against each input's earlier source draws, frozen per epoch), from agents with
their own generators: quiet on most inputs, coin flips on a few, so the noise is uneven.
Each bound is a one-sided Clopper-Pearson check at 99.9%: a test that would fail if the
claimed rate were false, and almost never fails by chance if it is true.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from agentverity_props import RunConfig, from_callable, run
from agentverity_props.decide import EffectTest, min_scores_to_hold
from agentverity_props.relations import Relation

TOL, ALPHA, BETA = 0.1, 0.05, 0.05


def simulate(p: np.ndarray, q: np.ndarray, rng: np.random.Generator, *, epochs: int = 40,
             past: int = 2) -> str:
    """One pooled test over inputs with source P(block) = p[i] and follow-up q[i]; binary
    verdicts, epochs over every input, the forward score of the relation procedure."""
    k = len(p)
    src = [list(rng.random(past) < p[i]) for i in range(k)]
    # the variance prior from the pair disagreement of the past draws (as the meter's)
    d = float(np.mean([2 * pi * (1 - pi) for pi in p]))
    t = EffectTest(tolerance=TOL, alpha=ALPHA, beta=BETA, prior_var=min(0.25, 0.8 * d + 0.002))
    for _ in range(epochs):
        frozen = [np.array(s) for s in src]
        s_new = rng.random(k) < p
        f = rng.random(k) < q
        z = [float(np.mean(frozen[i] != f[i]) - np.mean(frozen[i] != s_new[i]))
             for i in range(k)]
        for i in range(k):
            src[i].append(bool(s_new[i]))
        st = t.feed([z])
        if st != "undecided":
            return st
    return "undecided"


def effect(p: np.ndarray, q: np.ndarray) -> float:
    """The exact excess disagreement, mean over inputs (binary verdicts)."""
    same_pq = p * q + (1 - p) * (1 - q)
    same_pp = p * p + (1 - p) * (1 - p)
    return float(np.mean(same_pp - same_pq))


def upper_bound(k: int, n: int) -> float:
    return float(binomtest(k, n).proportion_ci(0.998, method="exact").high)


def uneven(k: int, rng: np.random.Generator) -> np.ndarray:
    """Quiet on most inputs (P(block) 0 or 1, a few 0.03), coin flips on every fifth."""
    p = np.where(rng.random(k) < 0.5, 0.0, 1.0)
    p[::5] = 0.5
    p[1::7] = np.abs(p[1::7] - 0.03)
    return p


def test_no_false_violation_when_the_relation_holds() -> None:
    rng = np.random.default_rng(11)
    n, bad = 300, 0
    for _ in range(n):
        p = uneven(30, rng)
        bad += simulate(p, p, rng) == "violated"
    assert upper_bound(bad, n) <= ALPHA + 0.03, bad


def test_holds_is_wrong_at_most_beta_at_the_tolerance() -> None:
    """Inputs whose follow-up shifts just enough that the mean effect is the tolerance (the
    least favourable case for HOLDS): HOLDS in at most beta of runs."""
    rng = np.random.default_rng(12)
    n, wrong = 300, 0
    for _ in range(n):
        p = np.full(30, 0.0)
        p[::5] = 0.5
        q = p.copy()
        # on quiet inputs the follow-up flips with probability r: effect r there
        r = TOL * 30 / 24
        q[[i for i in range(30) if i % 5]] = r
        assert abs(effect(p, q) - TOL) < 1e-9
        wrong += simulate(p, q, rng) == "holds"
    assert upper_bound(wrong, n) <= BETA + 0.04, wrong


def test_violated_is_wrong_at_most_alpha_at_the_tolerance() -> None:
    rng = np.random.default_rng(13)
    n, wrong = 300, 0
    for _ in range(n):
        p = np.full(30, 0.0)
        q = np.full(30, TOL)  # a 10% flip everywhere: effect exactly the tolerance
        wrong += simulate(p, q, rng) == "violated"
    assert upper_bound(wrong, n) <= ALPHA + 0.03, wrong


@pytest.mark.parametrize("flip", [0.5, 0.3])
def test_a_partial_violation_is_found(flip: float) -> None:
    """A deterministic gate the transform makes flip on `flip` of the calls, every input."""
    rng = np.random.default_rng(14)
    p = np.zeros(20)
    found = sum(simulate(p, p + flip, rng) == "violated" for _ in range(100))
    assert found >= 97


def test_a_quiet_agent_holds_in_the_fewest_scores_possible() -> None:
    t = EffectTest(tolerance=TOL, alpha=ALPHA, beta=BETA, prior_var=0.002)
    n = min_scores_to_hold(TOL, BETA)
    assert t.feed([[0.0] * (n - 1)]) == "undecided"
    t = EffectTest(tolerance=TOL, alpha=ALPHA, beta=BETA, prior_var=0.002)
    assert t.feed([[0.0] * n]) == "holds"


def test_bounds_contain_the_estimate_and_are_ordered() -> None:
    rng = np.random.default_rng(15)
    t = EffectTest(tolerance=TOL, alpha=ALPHA, beta=BETA, sides=2)
    for _ in range(5):
        t.feed([list(rng.choice([-1.0, 0.0, 1.0], 30, p=[0.1, 0.7, 0.2])),
                list(rng.choice([-1.0, 0.0, 1.0], 30))])
    st = t.state()
    assert st["lower"] <= st["estimate"] <= st["upper"]


# ------------------------------------------------------------------ through ``run``


def _keyed(shares: list[float], shout_share: float | None, seed: int):
    rng = np.random.default_rng(seed)

    def agent(prompt: str) -> str:
        i = int(prompt.rsplit(maxsplit=1)[-1])
        share = shares[i]
        if shout_share is not None and prompt.isupper():
            share = shout_share
        return "allow" if rng.random() < share else "block"

    return agent


def _inputs(n: int) -> list[str]:
    return [f"question number {i}" for i in range(n)]


CASE = [Relation("case", "invariant", str.upper)]


def test_run_holds_on_an_uneven_agent_whose_relation_holds() -> None:
    statuses = []
    for seed in range(6):
        shares = [0.5 if i % 5 == 0 else 1.0 for i in range(25)]
        res = run(from_callable(_keyed(shares, None, seed)), _inputs(25), CASE,
                  config=RunConfig(seed=seed, max_workers=2))
        statuses.append(str(res.relations[0].status))
    assert "VIOLATED" not in statuses
    assert statuses.count("HOLDS") >= 5, statuses


def test_run_finds_a_coin_flip_bug_on_a_deterministic_gate() -> None:
    for seed in range(3):
        res = run(from_callable(_keyed([1.0] * 20, 0.5, seed)), _inputs(20), CASE,
                  config=RunConfig(seed=seed, max_workers=2))
        rel = res.relations[0]
        assert str(rel.status) == "VIOLATED", rel.statement()
        assert rel.effect is not None
        assert rel.effect["lower"] > 0.1
