"""Every input's own evidence: the per-input screen's stated power, checked by simulation.

The screen (relations/_screen.py) promises that an input whose follow-up violates on
``r + 0.5 (1 - r)`` of its draws (``r`` its own noise) is flagged with probability at least
``1 - 2/3 beta``. Here the screen's own rule (:func:`judge`) is driven draw by draw exactly as
``screen`` drives it, on binary inputs with their own generators; each check is a one-sided
binomial test at the claim (p < 0.001), so a false claim fails the test. Through ``run``: a
coin-flip bug on one input of a quiet gate is VIOLATED.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binomtest

from agentverity_props import RunConfig, from_callable, run
from agentverity_props.relations import Relation
from agentverity_props.relations._screen import SCREEN_BETA_SHARE, SCREEN_SIZE, judge

pytestmark = pytest.mark.stats

BETA = 0.05
CASE = Relation("case", "invariant", str.upper)


class _Pool:
    def __init__(self, draws: dict[str, list[str]]) -> None:
        self.draws = draws

    def get(self, fp: str) -> SimpleNamespace:
        return SimpleNamespace(keys=lambda layer: self.draws[fp])


def screen_one(r: float, v: float, rng: np.random.Generator, *, sources: int = 2,
               follow_ups: int = 2, reverse: bool = False) -> str:
    """One input: sources off the modal verdict with probability ``r``, follow-ups with
    ``v`` (``reverse``: the follow-up quiet and the source off it with ``v``)."""
    def draw(p: float, n: int) -> list[str]:
        return ["b" if x else "a" for x in rng.random(n) < p]

    ps, pf = (v, 0.0) if reverse else (r, v)
    pool = _Pool({"s": draw(ps, sources), "f": draw(pf, follow_ups)})
    c = SimpleNamespace(relation=CASE, source=SimpleNamespace(fp="s"),
                        follow_up=SimpleNamespace(fp="f"))
    while True:
        state, more_s, more_f = judge(c, True, pool, beta=BETA * SCREEN_BETA_SHARE,
                                      prior=0.0 if reverse else r)
        if state != "more":
            return state
        pool.draws["s"] += draw(ps, more_s)
        pool.draws["f"] += draw(pf, more_f)


def power_claim_holds(missed: int, n: int) -> bool:
    return binomtest(missed, n, BETA * SCREEN_BETA_SHARE, alternative="greater").pvalue > 0.001


@pytest.mark.parametrize("r", [0.0, 0.05, 0.15])
def test_a_violation_of_the_stated_size_is_flagged(r: float) -> None:
    rng = np.random.default_rng(int(r * 100) + 1)
    n = 1000
    v = r + SCREEN_SIZE * (1 - r)
    missed = sum(screen_one(r, v, rng) != "flagged" for _ in range(n))
    assert power_claim_holds(missed, n), (missed, n)


def test_a_follow_up_made_fully_decided_is_flagged() -> None:
    """Reverse side: the follow-up always the modal verdict, the source off it half the
    time (the stated size against a quiet follow-up)."""
    rng = np.random.default_rng(7)
    n = 1000
    missed = sum(screen_one(0.0, SCREEN_SIZE, rng, reverse=True) != "flagged"
                 for _ in range(n))
    assert power_claim_holds(missed, n), (missed, n)


def test_false_flags_stay_a_minority_at_15_percent_noise() -> None:
    """A flag costs calls, never alpha; at 15% noise with the relation holding, at most a
    fifth of inputs are flagged (the cost the docs state, about 12%)."""
    rng = np.random.default_rng(9)
    n = 1000
    flagged = sum(screen_one(0.15, 0.15, rng, sources=10, follow_ups=10) == "flagged"
                  for _ in range(n))
    assert flagged / n <= 0.2, flagged


def _one_bug(n_inputs: int, seed: int):
    rng = np.random.default_rng(seed)

    def agent(prompt: str) -> str:
        i = int(prompt.rsplit(maxsplit=1)[-1].lower())
        if i == 0 and prompt.isupper():
            return "allow" if rng.random() < 0.5 else "block"
        return "allow"

    return agent


def test_run_finds_a_coin_flip_bug_on_one_input_of_a_quiet_gate() -> None:
    seeds = range(10)
    found = 0
    for seed in seeds:
        inputs = [f"question number {i}" for i in range(30)]
        res = run(from_callable(_one_bug(30, seed), identity=f"one-bug-{seed}"), inputs,
                  [CASE], config=RunConfig(seed=seed, max_workers=2))
        found += str(res.relations[0].status) == "VIOLATED"
    # the claim: found with probability >= 0.95; 10 runs, fail when <= 7 (p < 0.012)
    assert found >= 8, found
