"""The deterministic path (relations/_screen.py ``screen_once``): one follow-up draw a pair
on the meter's certificate of a deterministic verdict.

Its stated guarantee: a pair whose follow-up's verdict differs from its source's on every
draw is flagged with probability at least ``1 - 2 r`` (``r``: the meter's bound on a draw's
flip rate). A noisy agent behind a response cache, which looks deterministic to repeats
close together, must not take the path: the audit's later re-draws refuse it.
"""

from __future__ import annotations

import random
from collections import deque

import pytest

from agentverity_props import from_callable, run
from agentverity_props.relations import builtin_relations
from agentverity_props.runner import RunConfig

pytestmark = pytest.mark.stats

PROMPTS = [f"please check the order number {i} for the customer account" for i in range(30)]


def _index(p: str) -> int:
    return next(int(w) for w in p.split() if w.isdigit())


def gate(noise: float, seed: int):
    """A near-deterministic gate (``noise`` per draw) whose upper-cased prompts flip the
    verdict on every third input: those pairs violate on every draw."""
    rng = random.Random(f"gate:{seed}")  # its own generator: Hypothesis reseeds global random

    def agent(p: str) -> str:
        v = "block" if _index(p) % 2 else "allow"
        if p.isupper() and _index(p) % 3 == 0:
            v = "allow" if v == "block" else "block"
        if rng.random() < noise:
            v = "allow" if v == "block" else "block"
        return v
    return agent


def test_a_deterministic_flip_is_flagged_at_the_stated_rate() -> None:
    flipped = missed = taken = 0
    stated: list[float] = []
    for seed in range(16):
        res = run(from_callable(gate(0.004, seed), identity=f"gate-{seed}"), PROMPTS,
                  builtin_relations("case"),
                  config=RunConfig(seed=seed, max_workers=1, profile="quick",
                                   edits_per_input=1))
        (rel,) = res.relations
        pi = (rel.effect or {}).get("per_input") or {}
        if pi.get("path") != "deterministic":
            continue
        taken += 1
        stated.append(1.0 - pi["power"])
        for o in rel.outcomes:
            truly = o.edit in ("upper", "swapped") and _index(res.inputs[o.fp]) % 3 == 0
            if truly:
                flipped += 1
                missed += o.status == "clean"  # cleared by the one-draw screen
    # the path is taken on most runs of a quiet agent (its strict audit refuses it when any
    # of its ~50 re-draws differs: at 0.4% noise, about one run in five)
    assert taken >= 8, taken
    assert flipped >= 30
    # the stated miss rate is at most 2 r; the observed one may not exceed it beyond chance
    # (a binomial upper tail at 0.001 on the flipped pairs)
    from scipy.stats import binom
    bound = max(stated)
    assert binom.sf(missed - 1, flipped, bound) > 0.001, (missed, flipped, bound)


class TTLCache:
    """A 15%-noisy gate behind a response cache: a prompt asked again within ``ttl`` calls
    of the call that filled its entry gets the stored answer."""

    def __init__(self, seed: int, ttl: int = 30) -> None:
        self.rng = random.Random(f"cache:{seed}")
        self.ttl, self.calls = ttl, 0
        self.store: dict[str, tuple[int, str]] = {}
        self.recent: deque[str] = deque()

    def __call__(self, p: str) -> str:
        self.calls += 1
        hit = self.store.get(p)
        if hit is not None and self.calls - hit[0] <= self.ttl:
            return hit[1]
        v = "block" if _index(p) % 2 else "allow"
        if self.rng.random() < 0.15:
            v = "allow" if v == "block" else "block"
        self.store[p] = (self.calls, v)
        return v


def test_a_cached_noisy_agent_never_takes_the_deterministic_path() -> None:
    for seed in range(6):
        res = run(from_callable(TTLCache(seed), identity=f"ttl-{seed}"), PROMPTS,
                  builtin_relations("case", "whitespace"),
                  config=RunConfig(seed=seed, max_workers=1, profile="quick"))
        for rel in res.relations:
            pi = (rel.effect or {}).get("per_input") or {}
            assert pi.get("path") != "deterministic", (seed, res.meter.call)


def test_upper_scores_hold_falsely_at_most_beta() -> None:
    """The path's one draw a pair decides HOLDS through ``EffectTest.feed_upper``: at an
    effect equal to the tolerance (inputs' violation rates of mean 0.1, spread unevenly),
    the test says HOLDS with probability at most its beta (0.05); the exact rate here is
    ``prod (1 - p_i)``, about 0.04."""
    import numpy as np

    from agentverity_props.decide import EffectTest

    rng = np.random.default_rng(7)
    p = np.array([0.0] * 15 + [0.2] * 15)   # mean 0.1 = the tolerance
    runs, held = 4000, 0
    for _ in range(runs):
        t = EffectTest(tolerance=0.1, alpha=0.01, beta=0.05, sides=1, prior_var=0.002)
        held += t.feed_upper([(rng.random(30) < p).astype(float).tolist()]) == "holds"
    assert held / runs <= 0.05 + 3 * (0.05 * 0.95 / runs) ** 0.5


def test_a_deterministic_agent_holds_on_one_draw_a_pair_and_says_which_path() -> None:
    """On a deterministic agent the path decides every relation without an epoch of its own,
    and the run names the audit as the spaced look at its 'deterministic' call."""
    res = run(from_callable(gate(0.0, 0), identity="det-gate"), PROMPTS,
              builtin_relations("whitespace", "punctuation"),
              config=RunConfig(seed=0, max_workers=4))
    for r in res.relations:
        assert str(r.status) == "HOLDS", r.statement()
        assert r.effect["upper_scores"][0] >= 30
        assert r.effect["epochs"] == 0
        assert r.effect["per_input"]["path"] == "deterministic"
    doc = res.to_dict()
    assert doc["dependence"]["calls"] == 0
    assert "audit" in doc["dependence"]["stood_in"]
