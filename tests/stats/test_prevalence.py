"""A VIOLATED relation's prevalence (relations/_pooled.py ``prevalence``): the share of its
inputs that violate it, with a lower bound from the confirmed inputs (family-wise alpha) and
an upper bound from the inputs the screen did not clear plus its possible misses (95%)."""

from __future__ import annotations

import random

import pytest

from agentverity_props import from_callable, run
from agentverity_props.relations import select_builtins
from agentverity_props.runner import RunConfig

pytestmark = pytest.mark.stats

PROMPTS = [f"Ticket {i}: my order number {100 + i} has a question about billing"
           for i in range(30)]
BAD = frozenset(range(0, 30, 5))   # six inputs: every case edit of them flips the verdict


def agent(seed: int, noise: float):
    rng = random.Random(f"prevalence:{seed}")
    by_lower = {p.lower(): i for i, p in enumerate(PROMPTS)}
    sources = set(PROMPTS)

    def answer(p: str) -> str:
        i = by_lower[p.lower()]
        verdict = "allow" if i % 2 else "block"
        if p not in sources and i in BAD:
            verdict = "block" if verdict == "allow" else "allow"
        if rng.random() < noise:
            verdict = rng.choice(["allow", "block"])
        return verdict

    return answer


def test_the_prevalence_bounds_cover_the_true_share() -> None:
    true = len(BAD) / len(PROMPTS)
    covered = 0
    runs = 10
    for seed in range(runs):
        res = run(from_callable(agent(seed, 0.1), identity=f"prev-{seed}"), PROMPTS,
                  select_builtins(["case"]), config=RunConfig(seed=seed, max_workers=4))
        (rel,) = res.relations
        assert str(rel.status) == "VIOLATED"
        prev = rel.effect["prevalence"]
        assert prev["confirmed"] == rel.confirmed_inputs
        assert prev["lower"] <= prev["estimate"] <= prev["upper"]
        # the lower bound rests on confirmations (family-wise alpha): never above the truth
        assert prev["lower"] <= true
        covered += prev["upper"] >= true
        assert "prevalence" in rel.statement()
    # the upper bound holds with probability >= 0.95: at most one miss in ten is plausible
    assert covered >= runs - 1
