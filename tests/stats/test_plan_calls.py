"""``plan`` against real runs, at the noise figure ``run`` printed.

The real agent is the shipped moderation gate (:mod:`agentverity_props.examples.plain`) made
noisy on every call by :func:`tests.support.noisy_agents.noisy` (a share q of calls flipped to
another label), run on the shipped moderation probe set with every built-in relation but
``typo`` (which the gate truly violates: ``plan`` costs relations that hold), at q = 0.05,
0.10 and 0.15. Each real run prints its pair disagreement over the whole run (JSON
``noise``); ``plan`` is asked at the mean of those printed figures, with its default seeds,
exactly what a user copying the figure from a run does. Single runs spread widely
(sequential tests stop at random times), so the real side is a mean over 20 seeds: a plan
whose mean total is off by more than a quarter fails, and so does a budget that does not
cover the largest of the 20 real runs. It would fail if ``plan`` were given the meter's own
figure read as a flip share, and the noise-free plan checked against the same runs fails
too (about 430 calls against about 4,000).
"""

from __future__ import annotations

import random
import statistics

import pytest

from agentverity_props import from_callable
from agentverity_props.engine import run_sync
from agentverity_props.examples import moderation_inputs, plain
from agentverity_props.relations import builtin_relations
from agentverity_props.runner import RunConfig, arun, plan
from tests.support.noisy_agents import noisy

pytestmark = pytest.mark.stats

NOISES = (0.05, 0.10, 0.15)  # per-call flip shares of the real agent
SEEDS = 20
LABELS = ("allow", "review", "block")


def _gate_agent(q: float, seed: int):
    verdict = noisy(lambda p: plain.gate(p)["verdict"], LABELS, q, random.Random(seed))

    async def agent(prompt: str) -> str:  # the same agent, called without a worker thread
        return verdict(prompt)

    return from_callable(agent)


@pytest.fixture(scope="module")
def runs():
    """Per flip share q: the real runs, the pair disagreement they printed (mean over the
    seeds), and the plan at that printed figure."""
    inputs = moderation_inputs()
    rels = [r for r in builtin_relations() if r.name != "typo"]
    out = {}
    for q in NOISES:
        real = [run_sync(arun(_gate_agent(q, s), inputs, rels, config=RunConfig()))
                for s in range(SEEDS)]
        printed = _mean(r.to_dict()["noise"]["pair_disagreement"] for r in real)
        planned = plan(inputs, rels, noises=(printed,), default_noises=False)
        out[q] = (real, printed, planned.levels[0])
    quiet = plan(inputs, rels, noises=(0.0,), seeds=1, default_noises=False).levels[0]
    return out, quiet


def _mean(values) -> float:
    return statistics.fmean(values)


@pytest.mark.parametrize("q", NOISES)
def test_plan_at_the_printed_noise_is_within_25_percent_of_real_runs(runs, q):
    real, printed, lv = runs[0][q]
    assert all(r.complete for r in real)
    # the figure run printed is a pair disagreement (above the flip share q), not q itself
    assert printed > 1.5 * q
    real_total = _mean(r.ledger["calls"] for r in real)
    assert lv["calls"]["total"]["mean"] == pytest.approx(real_total, rel=0.25), (
        f"q={q}: run printed {printed:.3f}; plan {lv['calls']['total']['mean']:.0f} calls, "
        f"real {real_total:.0f}")
    real_rel = _mean(r.phase_calls["relations"] for r in real)
    assert lv["calls"]["relations"]["mean"] == pytest.approx(real_rel, rel=0.25)
    # the runs it simulated decided what the real ones did: every relation HOLDS
    assert all(r.status == "HOLDS" for x in real for r in x.relations
               if r.relation.name != "tool-selection")
    assert all(set(v["decisions"]) == {"HOLDS"} for k, v in lv["reach"].items()
               if k.startswith("relation:") and k != "relation:tool-selection")
    # the budget plan names covers every real run
    assert lv["reach"]["run"]["budget"] >= max(r.ledger["calls"] for r in real)


def test_the_comparison_tells_a_wrong_noise_apart(runs):
    by_q, quiet = runs
    real, _, _ = by_q[0.15]
    assert quiet["calls"]["total"]["mean"] < 0.8 * _mean(r.ledger["calls"] for r in real)
    # the meter's own figure (it stops early on a run of disagreements) read as a flip
    # share is not within a quarter either: the comparison tells a wrong noise apart
    real, _, _ = by_q[0.10]
    real_total = _mean(r.ledger["calls"] for r in real)
    meter = _mean(r.to_dict()["meter"]["estimate"] for r in real)
    inputs = moderation_inputs()
    rels = [r for r in builtin_relations() if r.name != "typo"]
    wrong = plan(inputs, rels, noises=(min(0.6, 2 * meter - 1.5 * meter ** 2),),
                 default_noises=False).levels[0]
    assert wrong["calls"]["total"]["mean"] > 1.25 * real_total
