"""A recording's inputs tested one by one (decide.exact_split_p with Holm): the stated error
is exact, so under H0 (source and follow-up share one verdict distribution) P(p <= a) <= a at
every sample size; checked by simulation (a one-sided binomial test at 0.001 fails when the
rate is above a beyond sampling error), on the exact enumeration and on the Monte Carlo path.
The fakes use their own numpy Generator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

import agentverity_props.decide._fixed_local as fixed_local
from agentverity_props.decide import exact_split_p, holm

pytestmark = pytest.mark.stats

RUNS = 1500


def _null_p_values(n: int, m: int, labels: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(RUNS):
        mix = rng.dirichlet([1.0] * labels)
        out.append(exact_split_p(list(rng.choice(labels, n, p=mix)),
                                 list(rng.choice(labels, m, p=mix)), seed=len(out)))
    return np.array(out)


def _above(k: int, runs: int, a: float) -> bool:
    return bool(binom.sf(k - 1, runs, a) < 0.001)


@pytest.mark.parametrize(("n", "m", "labels"), [(24, 24, 3), (6, 30, 2), (12, 5, 4)])
def test_the_split_test_is_exact_under_h0(n: int, m: int, labels: int) -> None:
    ps = _null_p_values(n, m, labels, seed=n * 100 + m * 10 + labels)
    for a in (0.05, 0.01):
        assert not _above(int((ps <= a).sum()), RUNS, a), (a, (ps <= a).mean())


def test_the_monte_carlo_path_is_valid_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixed_local, "MAX_TABLES", 1)
    monkeypatch.setattr(fixed_local, "MC_PERMUTATIONS", 400)
    rng = np.random.default_rng(5)
    ps = []
    for i in range(400):
        mix = rng.dirichlet([1.0, 1.0, 1.0])
        ps.append(exact_split_p(list(rng.choice(3, 12, p=mix)), list(rng.choice(3, 12, p=mix)),
                                seed=i))
    assert not _above(int((np.array(ps) <= 0.05).sum()), 400, 0.05)


def test_it_finds_a_follow_up_that_changes_the_verdict_and_holm_controls_the_family() -> None:
    # the real SmolLM2 recording's bug shape: 22/2 -> 9/15 (a forced 'block' on half the calls)
    # (below the 0.00125 a recording of ten inputs gives the first of them in Holm)
    assert exact_split_p(["allow"] * 22 + ["block"] * 2, ["allow"] * 9 + ["block"] * 15) < 1e-3
    # Holm: ten true nulls never rejected together beyond alpha (family-wise)
    rng = np.random.default_rng(9)
    hits = 0
    for _ in range(300):
        ps = []
        for _ in range(10):
            mix = rng.dirichlet([1.0, 1.0])
            ps.append(exact_split_p(list(rng.choice(2, 10, p=mix)),
                                    list(rng.choice(2, 10, p=mix))))
        hits += any(holm(ps, 0.05))
    assert not _above(hits, 300, 0.05)
