"""Simulation tests of boundary location's error claims (``search._boundary``).

1. A reported ``located`` pair is wrong (the threshold is not between its two values) at most
   ``alpha`` of the time at 5% noise — with the defaults, and with per-step tests made so weak
   (a lead of one) that steps err often and only the final confirmation stands between a
   wrong step and a wrong report.
2. On an agent with no boundary at all (every text the same noisy verdict distribution) a
   ``located`` is always false: it happens at most ``alpha`` of the time.
3. A fast version of the benchmark goal: a numeric threshold located within 1% at 5% noise
   in at most 60 calls (median).

Each assertion allows the nominal rate plus three binomial standard errors; every agent has
its own ``random.Random``.
"""

from __future__ import annotations

import contextlib
import random
import re
import statistics

import pytest

from agentverity_props import locate_boundary
from tests.support.sim import sim_tolerance

pytestmark = pytest.mark.stats

ALPHA = 0.05
THRESHOLD = 2000


def _limit(n: int, rate: float) -> float:
    return n * sim_tolerance(rate, n)


def travel(seed: int, noise: float):
    rng = random.Random(seed)

    def agent(prompt: str) -> str:
        m = re.search(r"costs ([\d,]+)", prompt)
        v = "manager" if m and int(m.group(1).replace(",", "")) > THRESHOLD else "approve"
        if rng.random() < noise:
            v = "approve" if v == "manager" else "manager"
        return v
    return agent


def value(s: str) -> int:
    return int(s.replace(",", ""))


def run(seed: int, **kw):
    rng = random.Random(10_000 + seed)
    lo, hi = rng.randint(100, 1900), rng.randint(2100, 60_000)
    loc = locate_boundary(travel(seed, 0.05), f"A train to Ghent costs {lo:,} in total",
                          f"A train to Ghent costs {hi:,} in total", alpha=ALPHA,
                          budget=300, **kw)
    wrong = loc.located and not (value(loc.edit["before"]) <= THRESHOLD
                                 < value(loc.edit["after"]))
    return loc, wrong


@pytest.mark.parametrize(("seeds", "kw"), [
    (150, {}),
    (300, {"step_noise": 0.3, "step_alpha": 0.45}),  # a lead of 1: steps err ~5% each
])
def test_a_located_pair_is_wrong_at_most_alpha(seeds, kw):
    results = [run(s, **kw) for s in range(seeds)]
    wrong = sum(w for _, w in results)
    located = sum(loc.located for loc, _ in results)
    assert wrong <= _limit(seeds, ALPHA), (wrong, located)
    assert located >= 0.8 * seeds
    if kw:  # the weak steps really erred: the final confirmation was what guarded
        assert sum(loc.attempts > 1 for loc, _ in results) >= 0.05 * seeds


def test_no_boundary_is_never_located_beyond_alpha():
    seeds = 400
    located = 0
    for s in range(seeds):
        rng = random.Random(s)

        def agent(prompt: str, rng: random.Random = rng) -> str:
            return "approve" if rng.random() < 0.6 else "manager"
        loc = locate_boundary(agent, "A bus to Bern costs 300", "A bus to Bern costs 9,000",
                              alpha=ALPHA, budget=150)
        located += loc.located
    assert located <= _limit(seeds, ALPHA)


def test_numeric_threshold_within_one_percent_in_sixty_calls():
    results = [run(s)[0] for s in range(40)]
    within = [loc for loc in results if loc.located and
              value(loc.edit["before"]) <= THRESHOLD < value(loc.edit["after"]) and
              value(loc.edit["after"]) - value(loc.edit["before"]) <= 0.01 * THRESHOLD]
    assert len(within) >= 0.9 * len(results)
    assert statistics.median(loc.calls for loc in results) <= 60


def _constant_noisy(verdict: str, other: str, noise: float, seed: int):
    rng = random.Random(seed)
    return lambda prompt: other if rng.random() < noise else verdict


def test_a_step_goes_the_wrong_way_at_most_its_stated_rate():
    """The per-step walk at exactly its stated noise: the bound r^k / (1 + r^k) is tight."""
    from agentverity_props.engine import Engine, EngineConfig, EvidencePool, run_sync
    from agentverity_props.search import BoundaryConfig
    from agentverity_props.search._boundary import _Locator, _Stop

    conf = BoundaryConfig(step_noise=0.2, step_alpha=0.06)
    k = conf.lead
    r = 0.2 / 0.8
    bound = r ** k / (1 + r ** k)
    assert k == 2
    n, wrong = 2000, 0
    for seed in range(n):
        eng = Engine(_constant_noisy("approve", "manager", 0.2, seed), EngineConfig())
        loc = _Locator(eng, EvidencePool(), layer="verdict", max_calls=None, conf=conf,
                       progress=None)
        loc.a_verdict = "approve"
        with contextlib.suppress(_Stop):  # stochastic after max_step_draws: not wrong
            wrong += run_sync(loc.side("Taxi to the airport, 40", k, "units", 1)) == "hi"
        eng.close()
    assert wrong <= _limit(n, bound), (wrong, n * bound)
    assert wrong >= n * bound / 3  # the simulation is at the stated noise: near the bound


def test_no_crossing_is_wrong_at_most_its_stated_rate():
    from agentverity_props.engine import Engine, EngineConfig, EvidencePool, run_sync
    from agentverity_props.search import BoundaryConfig
    from agentverity_props.search._boundary import alocate

    conf = BoundaryConfig(step_noise=0.3, step_alpha=0.45)  # k = 1, checked at a lead of 3
    r = 0.3 / 0.7
    bound = r ** 3 / (1 + r ** 3)
    n, wrong = 1500, 0
    for seed in range(n):
        # b is truly on the other side: its draws give a's verdict 30% of the time
        eng = Engine(_constant_noisy("manager", "approve", 0.3, seed), EngineConfig())
        loc = run_sync(alocate(eng, EvidencePool(), "Taxi, 40", "Taxi, 4,000",
                               a_verdict="approve", max_calls=12, config=conf))
        wrong += loc.status == "no-crossing"
        eng.close()
    assert wrong <= _limit(n, bound), (wrong, n * bound)
