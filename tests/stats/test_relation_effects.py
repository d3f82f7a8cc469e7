"""The pooled relation effect: each stated error rate, checked by simulation.

Scores are made exactly as the relation procedure makes them (:func:`exact_scores` of two
fresh source draws and two fresh follow-up draws per round, epochs of every input once and
then uniform samples of the procedure's size), from agents with their own generators: quiet
on most inputs, coin flips on a few, so the noise is uneven.
Each bound is a one-sided Clopper-Pearson check at 99.9%: a test that would fail if the
claimed rate were false, and almost never fails by chance if it is true.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest

from agentverity_props import from_callable, run
from agentverity_props.decide import EffectTest, min_scores_to_hold
from agentverity_props.relations import MAX_SCORES, Relation
from agentverity_props.relations._pooled import (
    LATER_EPOCH,
    exact_scores,
    first_sample,
    prior_variance,
)
from agentverity_props.runner import RunConfig

pytestmark = pytest.mark.stats

TOL, ALPHA, BETA = 0.1, 0.05, 0.05


CASE_REL = Relation("case", "invariant", str.upper)


def binary_scores(s: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_scores` of ``CASE_REL`` for many rounds at once: ``s`` and ``f`` hold each
    round's two source and two follow-up draws as booleans (``True`` = block), one round a
    row. With binary verdicts the forward score is the mean disagreement of the four
    (source, follow-up) pairs less ``[s1 != s2]``, the reverse one the same mean less
    ``[f1 != f2]`` (test_binary_scores_are_exact_scores checks all 16 rounds)."""
    cross = (s[:, :, None] != f[:, None, :]).mean(axis=(1, 2))
    return cross - (s[:, 0] != s[:, 1]), cross - (f[:, 0] != f[:, 1])


def simulate(p: np.ndarray, q: np.ndarray, rng: np.random.Generator, *,
             max_scores: int = MAX_SCORES, tolerance: float = TOL,
             violation: float | None = None, sampled: bool = False) -> str:
    """One pooled test over inputs with source P(block) = p[i] and follow-up q[i]; binary
    verdicts, both score sides, the relation procedure's epochs and scores (``sampled``:
    the first epoch a uniform sample too, as under ``quick``)."""
    k = len(p)
    d = float(np.mean([2 * pi * (1 - pi) for pi in p]))
    t = EffectTest(tolerance=tolerance, alpha=ALPHA, beta=BETA, sides=2,
                   prior_var=prior_variance(d), violation=violation)
    epoch = 0
    while t.scores() < max_scores:
        size = first_sample(k) if epoch == 0 else LATER_EPOCH
        idx = np.arange(k) if epoch == 0 and not sampled else rng.integers(k, size=size)
        epoch += 1
        s = rng.random((len(idx), 2)) < p[idx, None]
        f = rng.random((len(idx), 2)) < q[idx, None]
        fwd, rev = binary_scores(s, f)
        st = t.feed([fwd.tolist(), rev.tolist()])
        if st != "undecided":
            return st
    return "undecided"


def test_binary_scores_are_exact_scores() -> None:
    """The vectorised scores are the relation procedure's own, on every binary round."""
    label = ("allow", "block")
    rounds = np.array(list(itertools.product([False, True], repeat=4)))
    fwd, rev = binary_scores(rounds[:, :2], rounds[:, 2:])
    for row, z, z2 in zip(rounds, fwd, rev, strict=True):
        a, b = [label[int(x)] for x in row[:2]], [label[int(x)] for x in row[2:]]
        assert exact_scores(CASE_REL, a, b) == (z, z2), row


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


def beta_claim_holds(wrong: int, n: int) -> bool:
    """A one-sided binomial test of "HOLDS rate <= beta": False when the observed rate is
    above beta beyond sampling error (p < 0.001), so a false claim fails the test."""
    return binomtest(wrong, n, BETA, alternative="greater").pvalue > 0.001


def test_holds_is_wrong_at_most_beta_at_the_tolerance() -> None:
    """Inputs whose follow-up shifts just enough that the mean effect is the tolerance (the
    least favourable case for HOLDS), quiet and coin-flip inputs mixed: HOLDS in at most
    beta of runs."""
    rng = np.random.default_rng(12)
    n, wrong = 200, 0
    for _ in range(n):
        p = np.full(30, 0.0)
        p[::5] = 0.5
        q = p.copy()
        # on quiet inputs the follow-up flips with probability r: effect r there
        r = TOL * 30 / 24
        q[[i for i in range(30) if i % 5]] = r
        assert abs(effect(p, q) - TOL) < 1e-9
        wrong += simulate(p, q, rng) == "holds"
    assert beta_claim_holds(wrong, n), wrong


#: P(block) of a source whose shift to a coin flip has excess disagreement exactly TOL:
#: same_pp = 0.5 + 2 (p - 0.5)^2 = 0.5 + TOL.
NOISY_P = 0.5 - math.sqrt(TOL / 2)


@pytest.mark.parametrize("n_inputs", [5, 10, 30])
@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_holds_is_wrong_at_most_beta_on_noisy_inputs(n_inputs: int, direction: str) -> None:
    """Every input noisy (72/28) and shifted to 50/50 (forward: excess disagreement exactly
    the tolerance) or the reverse (50/50 made 72/28: the follow-up more decided, the reverse
    side exactly the tolerance): HOLDS at most beta at every probe-set size. The scores'
    conditional mean given the past must be the effect itself, not the mean over earlier
    draws (which gave 0.110 at ten inputs)."""
    rng = np.random.default_rng(100 + n_inputs + (direction == "reverse"))
    p, q = np.full(n_inputs, NOISY_P), np.full(n_inputs, 0.5)
    if direction == "reverse":
        p, q = q, p
    assert abs(max(effect(p, q), effect(q, p)) - TOL) < 1e-9
    n = 200
    wrong = sum(simulate(p, q, rng) == "holds" for _ in range(n))
    assert beta_claim_holds(wrong, n), (wrong, n)


def test_violated_is_wrong_at_most_alpha_at_the_tolerance() -> None:
    rng = np.random.default_rng(13)
    n, wrong = 300, 0
    for _ in range(n):
        p = np.full(30, 0.0)
        q = np.full(30, TOL)  # a 10% flip everywhere: effect exactly the tolerance
        wrong += simulate(p, q, rng) == "violated"
    assert upper_bound(wrong, n) <= ALPHA + 0.03, wrong


def test_quicks_two_thresholds_keep_their_error_rates() -> None:
    """``quick``: a HOLDS rules out 0.2 (wrong at most beta when the effect is 0.2), a
    VIOLATED shows an effect above 0.1 (wrong at most alpha when it is 0.1), every epoch a
    uniform sample of the inputs; in between either may come, and a 0.2 effect is found."""
    rng = np.random.default_rng(14)
    n = 300
    p = np.full(30, 0.0)
    at_v = [simulate(p, np.full(30, 0.1), rng, tolerance=0.2, violation=0.1, sampled=True)
            for _ in range(n)]
    assert upper_bound(at_v.count("violated"), n) <= ALPHA + 0.03, at_v.count("violated")
    at_t = [simulate(p, np.full(30, 0.2), rng, tolerance=0.2, violation=0.1, sampled=True)
            for _ in range(n)]
    assert beta_claim_holds(at_t.count("holds"), n), at_t.count("holds")
    # what the second threshold buys: at tolerance 0.2 alone an effect of 0.2 is found in
    # only part of the runs; with 0.1 it is found in nearly all of them
    assert at_t.count("violated") >= 0.9 * n, at_t.count("violated")


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
        # the confirmed inputs decide it; the pooled test then runs one epoch, whose
        # estimate shows the effect (its bounds need not have crossed the tolerance)
        assert any(str(o.status) == "confirmed" for o in rel.outcomes)
        assert rel.effect["estimate"] > 0.1
