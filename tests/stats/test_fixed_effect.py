"""The fixed-sample pooled effect of a recording (decide.FixedEffect): its stated error rates,
checked by simulation at the boundary (the effect exactly at the tolerance), where they are
largest, on noisy inputs, at N = 5, 10 and 30 inputs.

The bounds are normal approximations (the module docstring says so); these tests are what
stands behind the claim "HOLDS is wrong with probability at most beta, VIOLATED at most
alpha per side". Each cell fails when its rate is above the claim beyond sampling error (a
one-sided binomial test at 0.001 per cell). The fakes use their own numpy Generator.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy.stats import binom

from agentverity_props.decide import FixedEffect, u_statistic

pytestmark = pytest.mark.stats

TOL, BETA = 0.1, 0.05
REPS = 200


def _ne(a: object, b: object) -> bool:
    return a != b


def _effects(p: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """Forward sum p (p - q) and reverse sum q (q - p) of one input."""
    return float((p * (p - q)).sum()), float((q * (q - p)).sum())


def _rates(ps: list[list[float]], qs: list[list[float]], n: int, seed: int, *,
           alpha: float = 0.05) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    got = {"holds": 0, "violated": 0, "undecided": 0}
    for _ in range(REPS):
        t = FixedEffect(tolerance=TOL, alpha=alpha, beta=BETA, sides=2)
        t.add([list(rng.choice(len(p), size=n, p=p)) for p in ps],
              [list(rng.choice(len(q), size=n, p=q)) for q in qs])
        got[t.decide([_ne, _ne], [_ne, _ne])] += 1
    return {k: v / REPS for k, v in got.items()}


def _above(rate: float, claim: float) -> bool:
    """The rate is above the claim beyond sampling error (one-sided, 0.001)."""
    k = round(rate * REPS)
    return bool(binom.sf(k - 1, REPS, claim) < 0.001)


_B_FWD = 0.72 - TOL / 0.44          # 72/28 -> 49/51: forward effect exactly 0.1
_B_REV = 0.5 + (TOL / 2) ** 0.5      # 50/50 -> 72/28: reverse effect exactly 0.1

BOUNDARY = {
    # every input noisy, the effect spread evenly
    "forward, every input 72/28 -> 49/51": lambda n: ([[0.72, 0.28]] * n,
                                                     [[_B_FWD, 1 - _B_FWD]] * n),
    "reverse, every input 50/50 -> 72/28": lambda n: ([[0.5, 0.5]] * n,
                                                     [[_B_REV, 1 - _B_REV]] * n),
    # rare violations: the binomial lower tail (a plug-in variance would be too small)
    "forward, decided source, follow-up 90/10": lambda n: ([[1.0, 0.0]] * n,
                                                          [[0.9, 0.1]] * n),
    # the effect on a few inputs only
    "forward, a coin flip on one input in five": lambda n: (
        [[1.0, 0.0]] * n, [[0.5, 0.5]] * (n // 5) + [[1.0, 0.0]] * (n - n // 5)),
    # three verdicts, the follow-up more decided
    "reverse, three verdicts 90/5/5 -> decided": lambda n: ([[0.9, 0.05, 0.05]] * n,
                                                           [[1.0, 0.0, 0.0]] * n),
}


@pytest.mark.parametrize("name", sorted(BOUNDARY))
@pytest.mark.parametrize(("inputs", "draws"), [(5, 12), (10, 6), (10, 24), (30, 12)])
def test_holds_at_the_tolerance_is_at_most_beta(name: str, inputs: int, draws: int) -> None:
    ps, qs = BOUNDARY[name](inputs)
    side = [_effects(np.array(p), np.array(q)) for p, q in zip(ps, qs, strict=True)]
    effect = max(np.mean(side, axis=0))
    if abs(effect - TOL) > 1e-9:
        pytest.skip(f"{name} at {inputs} inputs is not at the tolerance ({effect:.3f})")
    r = _rates(ps, qs, draws, seed=zlib.crc32(f"{name}/{inputs}/{draws}".encode()))
    assert not _above(r["holds"], BETA), (name, inputs, draws, r)


@pytest.mark.parametrize(("inputs", "draws"), [(5, 12), (10, 24), (30, 6)])
def test_violated_at_the_tolerance_is_at_most_alpha_per_side(inputs: int, draws: int) -> None:
    # alpha 0.1 over two sides: 0.05 a side, large enough for 200 runs to see an excess
    for name in ("forward, every input 72/28 -> 49/51", "reverse, every input 50/50 -> 72/28",
                 "forward, decided source, follow-up 90/10"):
        ps, qs = BOUNDARY[name](inputs)
        r = _rates(ps, qs, draws, seed=inputs * 1000 + draws, alpha=0.1)
        assert not _above(r["violated"], 0.05), (name, inputs, draws, r)


def test_no_effect_is_never_violated_and_holds_on_ten_noisy_inputs() -> None:
    rng = np.random.default_rng(7)
    mixes = [list(rng.dirichlet([1.0, 1.0, 1.0])) for _ in range(10)]
    r = _rates(mixes, mixes, 24, seed=11)
    assert not _above(r["violated"], 0.05 / 2), r
    # the power this test is for: a relation that holds is decided HOLDS on 480 draws
    assert r["holds"] >= 0.8, r


def test_the_u_statistic_is_unbiased_and_its_jackknife_variance_errs_high() -> None:
    rng = np.random.default_rng(3)
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.4, 0.2])
    want = _effects(p, q)[0]
    us, vs = [], []
    for _ in range(3000):
        s = list(rng.choice(3, size=8, p=p))
        f = list(rng.choice(3, size=8, p=q))
        u, v = u_statistic(s, f, _ne, _ne)
        us.append(u)
        vs.append(v)
    se = np.std(us) / np.sqrt(len(us))
    assert abs(np.mean(us) - want) < 4 * se
    assert np.mean(vs) >= np.var(us) * 0.97  # Efron-Stein: the jackknife is biased upwards


def test_an_input_with_too_few_draws_is_left_out_and_none_is_undecided() -> None:
    t = FixedEffect(tolerance=TOL, alpha=0.05, beta=BETA, sides=2)
    t.add([["a", "a"]], [["a", "a", "a"]])
    assert t.decide([_ne, _ne], [_ne, _ne]) == "undecided"
    assert t.left_out == 1
    assert t.scores() == 0
