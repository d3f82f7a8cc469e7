"""Simulation and exact tests of ``check``'s drift decision and of the p-values it prints.

The claims (docs/statistics.md, "Snapshots and check"):

- an agent that has not changed since its snapshot is reported as drifted in at most alpha
  of checks, however borderline some inputs are (the issue this guards: one input of twenty
  at 50/50 was "drift" in 14% of admitted snapshots when check tested it against 2 epsilon);
- a changed agent (one input flipped) is reported in most checks;
- the printed p-value accounts for the curtailed stopping rule: P(p <= u) <= u under H0.

End-to-end tests run the real create_snapshot and compare_snapshot (engine, screening SPRT,
confirmations) on a fake agent drawing from its own numpy Generator; exact tests enumerate
the curtailed rule's paths.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from agentverity_props import compare_snapshot, create_snapshot
from agentverity_props.decide import (
    binomial_tail,
    clopper_pearson,
    curtailed_reject_probability,
    drift_p_value,
    drift_plan,
)
from agentverity_props.runner import RunConfig
from tests.support.drift_agents import INPUTS, FakeAgent

pytestmark = pytest.mark.stats

ALPHA = 0.05


def _snapshot_then_check(flip: dict[str, float], reps: int, *, seed0: int = 0,
                         changed: frozenset[str] = frozenset()) -> tuple[int, int, int]:
    """(admitted snapshots, checks reporting drift, checks reporting drift on an input
    other than the changed ones) over ``reps`` independent repetitions."""
    admitted = drift = wrong = 0
    for s in range(seed0, seed0 + reps):
        cfg = RunConfig(seed=s, alpha=ALPHA)
        res = create_snapshot(FakeAgent(flip, s), INPUTS, accept_reference=True, config=cfg)
        if not res.admitted:
            continue
        admitted += 1
        agent = FakeAgent(flip, 10_000 + s, changed)
        chk = compare_snapshot(agent, INPUTS, res.document, config=cfg)
        drift += chk.status == "drift"
        fps = {e["fp"]: e for e in res.document["inputs"]}
        if changed:
            from agentverity_props.engine import Probe
            changed_fps = {Probe.make(p).fp for p in changed}
            wrong += any(fp not in changed_fps for fp in chk.drifted)
        assert set(chk.drifted) <= set(fps)
    return admitted, drift, wrong


@pytest.mark.parametrize(("flip", "reps"), [
    ({}, 120),                                   # all clean
    ({"attack plan 0": 0.5}, 200),               # 1 of 20 at 50/50
    ({"hello friend 4": 0.3}, 200),              # 1 of 20 at 30/70
])
def test_unchanged_agent_reports_drift_in_at_most_alpha_of_checks(flip, reps):
    """Snapshot, then check the same agent: the 95% Clopper-Pearson upper bound on the
    false-drift rate over admitted snapshots stays at or below alpha. (The 2-epsilon design
    this replaces gave 13.9% [12.5, 15.4] at 50/50 and 8.6% at 30/70: at these sizes its
    upper bound would be far above alpha.)"""
    admitted, drift, _ = _snapshot_then_check(flip, reps)
    assert admitted >= 0.8 * reps
    upper = clopper_pearson(drift, admitted, alpha=0.05, side="upper")[1]
    assert upper <= ALPHA, (drift, admitted, upper)


def test_changed_agent_is_flagged_in_most_checks():
    """One input flipped for good (and a 30/70 input elsewhere): drift is reported in most
    checks, and only ever on the flipped input. (Not in all: the cost cap — never more calls
    than a new snapshot — ends a few checks incomplete when the 30/70 input makes the
    screen reject re-admission and the stability meter runs long: 3 of 40 here.)"""
    flip = {"hello friend 4": 0.3}
    admitted, drift, wrong = _snapshot_then_check(flip, 40, seed0=500,
                                                  changed=frozenset({"attack plan 3"}))
    assert admitted >= 30
    lower = clopper_pearson(drift, admitted, alpha=0.05, side="lower")[0]
    assert lower >= 0.75, (drift, admitted)
    assert wrong == 0


# ------------------------------------------------------------------ the test itself, exactly


def _reject_probability(q: float, m: int, tol: float | None, alpha_i: float) -> float:
    """P(the input's confirmation rejects) when its mismatch rate is q then and now:
    calibration a ~ Binomial(m, q), then the curtailed (k, c) plan chosen from a."""
    total = 0.0
    for a in range(m + 1):
        plan = drift_plan(a=a, m=m, tolerance=tol, alpha=alpha_i)
        if plan is None:
            continue
        k, c = plan
        total += stats.binom.pmf(a, m, q) * curtailed_reject_probability(k, c, q)
    return total


@pytest.mark.parametrize(("m", "inputs"), [(6, 20), (4, 20), (6, 5), (10, 50)])
def test_per_input_false_drift_at_most_alpha_over_inputs_for_every_rate(m, inputs):
    """Exact: for every mismatch rate q (a grid over [0, 1]), an unchanged input is confirmed
    as drift with probability at most alpha / inputs; so at most alpha over the family
    (selection by the screen only removes inputs: the confirmation draws are fresh)."""
    alpha_i = ALPHA / inputs
    worst = max(_reject_probability(q, m, 0.1, alpha_i) for q in np.linspace(0, 1, 201))
    assert worst <= alpha_i
    # without the recorded rate (tolerance only, the old design) the same grid breaks it
    k, c = drift_plan(a=0, m=0, tolerance=0.1, alpha=alpha_i)
    assert curtailed_reject_probability(k, c, 0.5) > 10 * alpha_i


def test_curtailment_leaves_the_rejection_probability_unchanged():
    for k, c, q in [(5, 4, 0.1), (8, 7, 0.3), (25, 24, 0.6), (13, 12, 0.05)]:
        assert curtailed_reject_probability(k, c, q) == pytest.approx(binomial_tail(c, k, q),
                                                                      rel=1e-12)


def test_four_of_four_prints_the_curtailed_p_value():
    """The issue's example: (k=5, c=4) at tolerance 0.1, 4 mismatches in 4 draws. As a fixed
    sample that reads 1e-4; under the rule that stops at 4 the probability of rejecting is
    4.6e-4, and that is what is printed."""
    p = drift_p_value(4, a=0, m=0, k=5, tolerance=0.1)
    assert p == pytest.approx(4.6e-4, abs=1e-6)
    assert p == pytest.approx(curtailed_reject_probability(5, 4, 0.1), rel=1e-12)
    assert p > binomial_tail(4, 4, 0.1)


def _stopped_count_distribution(k: int, c: int, q: float) -> dict[int, float]:
    """Distribution of the mismatch count at which the curtailed (k, c) rule stops."""
    live, out = {0: 1.0}, {}
    for done in range(k):
        nxt: dict[int, float] = {}
        for x, pr in live.items():
            if x >= c or x + (k - done) < c:  # settled before this draw
                out[x] = out.get(x, 0.0) + pr
                continue
            nxt[x + 1] = nxt.get(x + 1, 0.0) + pr * q
            nxt[x] = nxt.get(x, 0.0) + pr * (1 - q)
        live = nxt
    for x, pr in live.items():
        out[x] = out.get(x, 0.0) + pr
    return out


@pytest.mark.parametrize("m", [0, 4, 6])
def test_printed_p_value_is_valid_under_the_stopping_rule(m):
    """Exact: P(p <= u) <= u under H0 for several u, with the p-value computed from the
    stopped path as check prints it. H0: the rate now equals the recorded one (m > 0, every
    q on a grid) or equals the tolerance (m = 0, the tolerance-only plan)."""
    tol, alpha_i = 0.1, ALPHA / 20
    us = (1e-4, 5e-4, 0.0025, 0.01, 0.05, 0.2, 0.5)
    qs = [tol] if m == 0 else list(np.linspace(0.0, 1.0, 41))
    for q in qs:
        dist_u = dict.fromkeys(us, 0.0)
        for a in range(m + 1):
            plan = drift_plan(a=a, m=m, tolerance=tol, alpha=alpha_i)
            if plan is None:
                continue
            k, c = plan
            pa = stats.binom.pmf(a, m, q) if m else 1.0
            for x, px in _stopped_count_distribution(k, c, q).items():
                p = drift_p_value(x, a=a, m=m, k=k, tolerance=tol)
                assert (p <= alpha_i) == (x >= c)  # printed p agrees with the decision
                for u in us:
                    if p <= u:
                        dist_u[u] += pa * px
        for u in us:
            assert dist_u[u] <= u * (1 + 1e-9), (q, u, dist_u[u])
