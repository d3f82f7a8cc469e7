"""Boundary location's error rates: a numeric threshold located within 1% at 5% noise in few
calls, and a 'located' claim (the adjacent pair's verdicts differ beyond the noise) wrong at
most alpha of the time, also where the verdict is a coin flip over a whole band."""

from __future__ import annotations

import random
import statistics

import pytest
from scipy.stats import binom

from agentverity_props import from_callable
from agentverity_props.strategies import locate_boundary

pytestmark = pytest.mark.stats


def _amount(p: str) -> float:
    return float(p.split("$")[1].split(maxsplit=1)[0].replace(",", ""))


def _threshold(seed: int, limit: float, noise: float):
    rng = random.Random(seed)

    def gate(p: str) -> str:
        v = "manager" if _amount(p) > limit else "approve"
        if rng.random() < noise:
            v = "approve" if v == "manager" else "manager"
        return v
    return from_callable(gate)


@pytest.mark.parametrize(("lo", "hi", "limit"), [(450, 9000, 2000), (120, 125000, 2000),
                                                 (10, 100000, 37500)])
def test_a_numeric_threshold_is_located_within_one_percent_in_few_calls(lo, hi, limit):
    seeds, within, calls = 40, 0, []
    for seed in range(seeds):
        loc = locate_boundary(_threshold(seed, limit, 0.05), f"Claim for ${lo:,} today",
                              f"Claim for ${hi:,} today", a_verdict="approve",
                              b_verdict="manager", budget=200, seed=seed)
        calls.append(loc.calls)
        if loc.status == "located":
            x, y = (_amount(f"${loc.edit[k]}") for k in ("before", "after"))
            within += x <= limit < y and y - x <= 0.01 * limit + 1
    assert within >= 0.9 * seeds, within
    assert statistics.median(calls) <= 60, calls


def test_a_located_claim_inside_a_coin_flip_band_is_rare() -> None:
    """Between $1,000 and $3,000 the verdict is a fair coin: an adjacent pair inside the band
    has equal verdict distributions, so 'located' there is a false claim (alpha = 0.1)."""
    alpha, seeds, false = 0.1, 200, 0
    for seed in range(seeds):
        rng = random.Random(seed)

        def gate(p: str, rng: random.Random = rng) -> str:
            x = _amount(p)
            if x < 1000:
                return "approve"
            if x > 3000:
                return "manager"
            return rng.choice(["approve", "manager"])
        loc = locate_boundary(from_callable(gate), "Claim for $100 today",
                              "Claim for $10,000 today", a_verdict="approve",
                              b_verdict="manager", budget=300, alpha=alpha, seed=seed)
        if loc.status == "located":
            x, y = (_amount(f"${loc.edit[k]}") for k in ("before", "after"))
            false += x >= 1000 and y <= 3000
    # a claim as stated gives at most Binomial(200, 0.1) false claims; its 0.999 quantile
    # (31) is far below what a rate of 2 alpha would give (40 on average)
    assert false <= binom.ppf(0.999, seeds, alpha), false
