"""The changed-agent check (decide.ChangeTest, diagnose check_change, snapshot's rule
``unchanged-agent``): false alarms at most alpha on stationary agents (however uneven their
noise, and with the meter's own early stopping), and a model swapped after the meter found.

Every simulation uses its own ``random.Random`` (Hypothesis reseeds the global one).
"""

from __future__ import annotations

import math
import random

import pytest

from agentverity_props import create_snapshot, from_callable, run
from agentverity_props.decide import (
    BernoulliSPRT,
    ChangeTest,
    early_upper_bound,
    pair_disagreement,
)
from agentverity_props.diagnose._change import CHANGE_MAX_TRIALS, CHANGE_MIN_TRIALS
from agentverity_props.runner import RunConfig
from tests.support.sim import sim_tolerance

pytestmark = pytest.mark.stats

#: Per-input probability of the minority label: most inputs steady, some noisy, two coin
#: flips (uneven noise is no change). Pair disagreement 2 q (1 - q) averages ~0.07.
UNEVEN = [0.0] * 12 + [0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5, 0.5]
ALPHA = 0.2  # large, so that a false-alarm rate above it shows in a few hundred seeds
SEEDS = 600


def _draw(rng: random.Random, q: float) -> str:
    return "b" if rng.random() < q else "a"


def _meter(rng: random.Random, qs: list[float]) -> tuple[int, int]:
    """The meter's design: uniform input, two fresh draws, an SPRT that stops early (the
    selection that makes a 'deterministic' call's pairs agree more than the agent does)."""
    sprt = BernoulliSPRT(0.025, 0.1, alpha=0.05)
    pairs = dis = 0
    while pairs < 300:
        q = qs[rng.randrange(len(qs))]
        d = _draw(rng, q) != _draw(rng, q)
        pairs += 1
        dis += d
        if sprt.update(d) is not None:
            break
    return pairs, dis


def _late_trials(rng: random.Random, qs: list[float], t: ChangeTest, *,
                 bound: float | None = None) -> bool:
    """check_change's loop on a fake agent (3 draws of a random input per trial)."""
    est = t.early_disagreements / t.early_pairs
    while t.trials < CHANGE_MAX_TRIALS and not t.fired:
        q = qs[rng.randrange(len(qs))]
        t.update(pair_disagreement([_draw(rng, q) for _ in range(3)]))
        mean = t.late_mean or 0.0
        if t.trials >= CHANGE_MIN_TRIALS and mean <= est + (t.bound - est) / 2:
            break
    return t.fired


@pytest.mark.parametrize("qs", [UNEVEN, [0.02] * 20, [0.5] * 4 + [0.0] * 16],
                         ids=["uneven", "near-epsilon", "coin-flips"])
def test_stationary_agent_fires_at_most_alpha(qs):
    fired = 0
    for seed in range(SEEDS):
        rng = random.Random(seed)
        pairs, dis = _meter(rng, qs)
        fired += _late_trials(rng, qs, ChangeTest(alpha=ALPHA, early_pairs=pairs,
                                                  early_disagreements=dis))
    se = math.sqrt(ALPHA * (1 - ALPHA) / SEEDS)
    assert fired / SEEDS <= ALPHA + 3 * se


def test_the_simulation_would_see_an_invalid_bound():
    """Negative control: betting against the meter's point estimate instead of its
    confidence bound (what a naive early-vs-late comparison does) is fooled by the meter's
    early stop (a 'deterministic' call's pairs agree more than the agent does) on a steady
    agent near the meter's boundary, many times more often than the check itself."""
    qs = [0.01] * 20
    naive = valid = 0
    for seed in range(SEEDS):
        for fake in (True, False):
            rng = random.Random(seed)
            pairs, dis = _meter(rng, qs)
            t = ChangeTest(alpha=ALPHA, early_pairs=pairs, early_disagreements=dis)
            if fake:
                t.bound = max(dis / pairs, 1e-3)
                naive += _late_trials(rng, qs, t)
            else:
                valid += _late_trials(rng, qs, t)
    assert naive / SEEDS > 0.05
    assert naive > 10 * max(valid, 1)


def test_calibration_round_fires_at_most_alpha():
    """A round (every input once, six draws each, as snapshot calibration) is a valid step."""
    fired = 0
    for seed in range(SEEDS):
        rng = random.Random(seed)
        pairs, dis = _meter(rng, UNEVEN)
        t = ChangeTest(alpha=ALPHA, early_pairs=pairs, early_disagreements=dis)
        t.update_round([pair_disagreement([_draw(rng, q) for _ in range(6)]) for q in UNEVEN])
        fired += t.fired
    se = math.sqrt(ALPHA * (1 - ALPHA) / SEEDS)
    assert fired / SEEDS <= ALPHA + 3 * se


def test_early_bound_covers_at_its_level():
    """P(theta > bound) <= alpha at the SPRT's stopping time."""
    miss = 0
    for seed in range(SEEDS):
        rng = random.Random(seed)
        pairs, dis = _meter(rng, [0.02] * 20)
        miss += early_upper_bound(dis, pairs, ALPHA) < 2 * 0.02 * 0.98
    assert miss / SEEDS <= sim_tolerance(ALPHA, SEEDS)


def test_swap_after_the_meter_is_found_by_the_bare_test():
    """A deterministic meter, then 30% of answers on the other label: >= 95% of seeds."""
    fired = 0
    for seed in range(200):
        rng = random.Random(seed)
        t = ChangeTest(alpha=0.05 * 0.125, early_pairs=38, early_disagreements=0)
        fired += _late_trials(rng, [0.3] * 20, t)
    assert fired >= 0.95 * 200


# ------------------------------------------------------------------ through run / snapshot

INPUTS = [f"attack plan {i}" for i in range(10)] + [f"hello friend {i}" for i in range(10)]


def _swapped(seed: int, swap_at: int | None = 80, noise: float = 0.3):
    rng, calls = random.Random(seed), [0]

    def agent(prompt: str) -> str:
        calls[0] += 1
        label = "block" if "attack" in prompt else "allow"
        if swap_at is not None and calls[0] > swap_at and rng.random() < noise:
            return "allow" if label == "block" else "block"
        return label
    return agent


def test_run_names_a_swap_and_exits_1():
    hits = 0
    for seed in range(8):
        r = run(from_callable(_swapped(seed)), INPUTS, relations=[],
                config=RunConfig(seed=seed, max_workers=1))
        if r.change.fired:
            hits += 1
            assert r.exit_code == 1
            text = r.summary()
            assert "changed during the run" in text
            assert "after call 76 (the end of the meter)" in text
            d = r.to_dict()
            assert d["stationarity"]["status"] == "changed"
            assert any("changed during the run" in f for f in d["findings"])
    assert hits >= 7


def test_stationary_run_pays_few_calls_and_passes():
    for seed in range(4):
        r = run(from_callable(_swapped(seed, swap_at=None)), INPUTS, relations=[],
                config=RunConfig(seed=seed, max_workers=1))
        assert r.change.status == "not detected"
        assert r.phase_calls["stationarity"] == 3 * CHANGE_MIN_TRIALS
        assert r.exit_code == 0
        assert "the change check tests that it did not become noisier" in r.guarantee()


def test_suppressed_change_check_says_untested():
    r = run(from_callable(_swapped(0, swap_at=None)), INPUTS, relations=[],
            config=RunConfig(max_workers=1, suppress_health_check=["changed_agent"]))
    assert r.change.status == "suppressed"
    assert r.phase_calls["stationarity"] == 0
    assert "not tested in this run" in r.guarantee()


def test_snapshot_refuses_a_swap_and_admits_a_steady_agent():
    refused = 0
    for seed in range(6):
        res = create_snapshot(_swapped(seed), INPUTS, accept_reference=True,
                              config=RunConfig(seed=seed, max_workers=1))
        rules = [x.rule for x in res.refusals]
        refused += "unchanged-agent" in rules
        assert res.document["stationarity"]["status"] in ("changed", "not detected")
    assert refused >= 5
    steady = create_snapshot(_swapped(0, swap_at=None), INPUTS, accept_reference=True,
                             config=RunConfig(max_workers=1))
    assert steady.admitted
    assert steady.document["calls"]["change"] == 0


# ------------------------------------------------------------------ missing verdicts


def test_missing_verdicts_tied_to_one_label_stand_beside_the_call():
    """90% of the 'block' answers carry no verdict (a parser failing on one label): the
    call may still read 'verdict-deterministic' over the pairs that have both verdicts, but
    never without the incompleteness beside it, in the result, its guarantee and the text."""
    from agentverity_props import by_key, measure
    from agentverity_props.report import render_run_text

    calls = []
    for seed in range(20):
        rng = random.Random(seed)

        def agent(prompt: str, rng: random.Random = rng) -> dict[str, str]:
            label = "block" if "attack" in prompt else "allow"
            if rng.random() < 0.05:
                label = "allow" if label == "block" else "block"
            if label == "block" and rng.random() < 0.9:
                return {"text": "unparsed"}
            return {"verdict": label}

        m = measure(from_callable(agent), INPUTS, seed=seed, max_workers=1,
                    extractor=by_key("verdict"))
        calls.append(m.call)
        assert m.caveat.startswith(f"incomplete: {m.failures} draw(s) without a verdict")
        assert m.call_text.startswith(f"{m.call} (incomplete: ")
        assert m.guarantee().startswith("incomplete: ")
        assert m.to_dict()["caveat"] == m.caveat
    assert "verdict-deterministic" in calls  # the biased call this guards happens
    r = run(from_callable(lambda p: {"text": "x"} if "attack" in p else {"verdict": "allow"}),
            INPUTS, relations=[], config=RunConfig(max_workers=1, extractor=by_key("verdict"),
                                                   budget=120))
    text = render_run_text(r.to_dict())
    line = next(x for x in text.splitlines() if x.strip().startswith("Meter"))
    assert "incomplete:" in line
    assert "only if a verdict is missing independently" in text


def test_a_change_check_cut_by_the_budget_is_incomplete_not_a_pass():
    agent = from_callable(_swapped(0, swap_at=None))
    full = run(agent, INPUTS, relations=[], config=RunConfig(seed=0, max_workers=1))
    before = full.ledger["calls"] - full.phase_calls["stationarity"]
    cut = run(from_callable(_swapped(0, swap_at=None)), INPUTS, relations=[],
              config=RunConfig(seed=0, max_workers=1, budget=before + 2 * 3))
    assert cut.change.status == "incomplete"
    assert cut.change.late_trials == 2
    assert not cut.complete
    assert cut.exit_code == 2
    assert "not fully tested" in cut.guarantee()
    assert any("changed-agent check stopped after 2" in a for a in cut.advice)


# ------------------------------------------------------------------ during a check


def _check_screen(rng: random.Random, ds: list[float], eps: float = 0.05,
                  r: float = 2.0) -> tuple[int, int]:
    """check's screen: uniform input, one draw, mismatch with prob d_i, SPRT p0/p1 (stops)."""
    sprt = BernoulliSPRT(eps / r, eps * r, alpha=0.05)
    n = m = 0
    while n < 300:
        hit = rng.random() < ds[rng.randrange(len(ds))]
        n += 1
        m += hit
        if sprt.update(hit) is not None:
            break
    return n, m


def test_check_change_fires_at_most_alpha_on_a_steady_agent():
    """The check's late trials (one draw of a random input, 1 = differs from its reference)
    bet against the screen's bound: on agents whose mismatch rates do not move, however
    uneven (and with drift already there before the check), it fires in <= alpha."""
    from agentverity_props.diagnose import change_settled
    from agentverity_props.snapshot._check import CHECK_CHANGE_MAX_TRIALS

    for ds in (UNEVEN, [0.0] * 18 + [1.0, 1.0], [0.04] * 20):
        rng = random.Random(11)
        fired = 0
        for _ in range(SEEDS):
            n, m = _check_screen(rng, ds)
            t = ChangeTest(alpha=ALPHA, early_pairs=n, early_disagreements=m)
            while t.trials < CHECK_CHANGE_MAX_TRIALS and not t.fired \
                    and not change_settled(t, m / n):
                t.update(1.0 if rng.random() < ds[rng.randrange(len(ds))] else 0.0)
            fired += t.fired
        se = math.sqrt(ALPHA * (1 - ALPHA) / SEEDS)
        assert fired / SEEDS <= ALPHA + 3 * se, (ds, fired)


def _flip_after(start: int | None):
    """The gate, answering the other label on half the calls once ``start`` calls are made
    (counted from when ``start`` is set: the check's own calls)."""
    rng, state = random.Random(5), {"calls": 0, "start": start}

    def agent(prompt: str) -> str:
        label = "block" if "attack" in prompt else "allow"
        if state["start"] is None:
            return label
        state["calls"] += 1
        if state["calls"] > state["start"] and rng.random() < 0.5:
            return "allow" if label == "block" else "block"
        return label
    return agent, state


def test_check_names_an_agent_that_changed_during_the_check_apart_from_drift(tmp_path):
    from agentverity_props import compare_snapshot

    agent, state = _flip_after(None)
    snap = tmp_path / "s.json"
    made = create_snapshot(agent, INPUTS, accept_reference=True, output=snap,
                           config=RunConfig(max_workers=1))
    assert made.admitted
    steady = compare_snapshot(agent, INPUTS, snap, config=RunConfig(max_workers=1))
    assert steady.status == "clean"
    assert steady.change.status == "not detected"
    assert steady.calls["change"] == CHANGE_MIN_TRIALS
    assert steady.exit_code == 0
    # the screen ends before call 40 on a clean agent: the swap lands after it
    state["start"], state["calls"] = 40, 0
    changed = compare_snapshot(agent, INPUTS, snap, config=RunConfig(max_workers=1))
    assert changed.change.fired
    assert changed.status == "changed"
    assert changed.exit_code == 1
    text = changed.summary()
    assert "changed during the check" in text
    assert "the end of the screen" in text
    assert changed.to_dict()["stationarity"]["status"] == "changed"
