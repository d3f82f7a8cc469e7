"""Simulation tests of the paired comparison and of the snapshot check's drift test.

Each claim would fail if false: observed error rates must stay within the nominal rate plus
three binomial standard errors of the simulation (or, for the end-to-end runs of the real
``compare``, the rate must not be shown above alpha by a one-sided 95% Clopper-Pearson
bound). Fake agents use their own seeded ``random.Random`` / numpy Generators; the statistic
is the product's own ``sign_log_e`` / ``PooledSign`` / ``compare_agents``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from agentverity_props.bench import PooledSign, difference_interval, runs_needed, sign_log_e
from agentverity_props.bench._compare import CompareConfig, alpha_split, compare_agents
from agentverity_props.bench._load import parse_benchmark
from agentverity_props.decide import clopper_pearson
from agentverity_props.snapshot._check import confirmation_plan
from tests.support.compare_agents import identical_pair
from tests.support.sim import sim_tolerance

pytestmark = pytest.mark.stats

ALPHA = 0.05


def _rounds(rng, reps, rounds, p_a, p_b):
    """Cumulative wins/losses of A at each round end; tasks are the last axis."""
    p_a, p_b = np.asarray(p_a), np.asarray(p_b)
    a = rng.random((reps, rounds, len(p_a))) < p_a
    b = rng.random((reps, rounds, len(p_b))) < p_b
    w = np.cumsum((a & ~b).sum(axis=2), axis=1)
    l = np.cumsum((~a & b).sum(axis=2), axis=1)  # noqa: E741
    return w, l


def _first_crossing(w, l, alpha):  # noqa: E741
    crossed = (sign_log_e(w, l) >= math.log(1 / alpha)) & (w != l)
    ever = crossed.any(axis=1)
    first = np.where(ever, crossed.argmax(axis=1), -1)
    return ever, first


@pytest.mark.parametrize(("p_a", "p_b"), [
    ([0.7], [0.7]),                       # one task, equal agents
    ([0.5, 0.8, 0.95], [0.5, 0.8, 0.95]),  # several tasks, equal agents
    ([0.9, 0.6], [0.6, 0.9]),             # tasks favour different agents, equal mean
])
def test_false_better_at_most_alpha_under_continuous_monitoring(p_a, p_b):
    rng = np.random.default_rng(11)
    reps = 4000
    w, l = _rounds(rng, reps, 300, p_a, p_b)  # noqa: E741
    ever, _ = _first_crossing(w, l, ALPHA)
    assert ever.mean() <= sim_tolerance(ALPHA, reps)


def test_pooled_sign_matches_the_vectorised_statistic():
    rng = np.random.default_rng(5)
    w, l = _rounds(rng, 30, 80, [0.8, 0.6], [0.7, 0.6])  # noqa: E741
    ever, first = _first_crossing(w, l, ALPHA)
    for r in range(30):
        s = PooledSign(ALPHA)
        prev_w = prev_l = 0
        for k in range(80):
            dw, dl = int(w[r, k]) - prev_w, int(l[r, k]) - prev_l
            prev_w, prev_l = int(w[r, k]), int(l[r, k])
            for _ in range(dw):
                s.add(+1)
            for _ in range(dl):
                s.add(-1)
            s.end_round()
        assert (s.decision is not None) == bool(ever[r])
        if ever[r]:
            assert s.decided_at_round == first[r] + 1


def test_080_vs_070_gets_decided():
    rng = np.random.default_rng(7)
    reps = 400
    w, l = _rounds(rng, reps, 3000, [0.8], [0.7])  # noqa: E741
    ever, first = _first_crossing(w, l, ALPHA)
    a_better = ever & (w[np.arange(reps), first] > l[np.arange(reps), first])
    assert a_better.mean() >= 0.9
    median = float(np.median(first[ever] + 1))
    assert 150 <= median <= 600  # anchors.md: a median of ~300 paired runs


def test_drop_100_to_91_is_flagged_and_10_to_8_is_inconclusive():
    assert math.exp(sign_log_e(9, 0)) == pytest.approx(51.2)
    assert math.exp(sign_log_e(2, 0)) == pytest.approx(4 / 3)
    s = PooledSign(ALPHA)
    for i in range(100):  # 100/100 vs 91/100: nine discordant runs, all won by A
        s.add(+1 if i % 11 == 0 and i < 99 else 0)
        s.end_round()
    assert (s.wins, s.losses, s.decision) == (9, 0, "first")
    assert s.e_value == pytest.approx(51.2)
    s = PooledSign(ALPHA)
    for i in range(10):  # 10/10 vs 8/10
        s.add(+1 if i in (2, 6) else 0)
        s.end_round()
    assert s.decision is None
    assert s.e_value == pytest.approx(4 / 3)
    # and through the real comparison, with deterministic agents
    b = parse_benchmark('version: "1"\nname: x\ntasks:\n'
                        "  - {id: t, prompt: q, evaluation: {type: exact_match, expected: ok}}\n")
    calls = {"n": 0}

    def worse(p):
        calls["n"] += 1
        return "no" if (calls["n"] - 1) in {5, 16, 27, 38, 49, 60, 71, 82, 93} else "ok"
    res = compare_agents([lambda p: "ok", worse], b,
                         config=CompareConfig(max_runs=100, warmup=0))
    assert res.verdict(0, 1) == "A better"


def test_difference_interval_covers_at_every_round():
    rng = np.random.default_rng(3)
    p_a, p_b = np.array([0.9, 0.5, 0.7]), np.array([0.7, 0.6, 0.7])
    true = float((p_a - p_b).mean())
    reps, rounds = 300, 60
    a = rng.random((reps, rounds, 3)) < p_a
    b = rng.random((reps, rounds, 3)) < p_b
    w = np.cumsum((a & ~b).sum(axis=2), axis=1)
    l = np.cumsum((~a & b).sum(axis=2), axis=1)  # noqa: E741
    misses = 0
    for r in range(reps):
        for k in range(4, rounds, 5):
            n = 3 * (k + 1)
            lo, hi = difference_interval(n, int(w[r, k] + l[r, k]), int(w[r, k]), ALPHA)
            if not lo <= true <= hi:
                misses += 1
                break
    assert misses / reps <= sim_tolerance(ALPHA, reps)


def test_runs_needed_is_calibrated():
    wins, losses, items = 4, 1, 30
    est = runs_needed(wins, losses, items, alpha=ALPHA, items_per_round=1)
    m = est["items"]
    assert m is not None
    assert est["rounds"] == m
    # simulate with the rates the estimate assumes (half-count shrinkage)
    pi = (wins + losses + 0.5) / (items + 1)
    q = (wins + 0.5) / (wins + losses + 1)
    rng = np.random.default_rng(9)
    reps = 3000
    disc = rng.random((reps, m)) < pi
    win = rng.random((reps, m)) < q
    w = wins + np.cumsum(disc & win, axis=1)
    l = losses + np.cumsum(disc & ~win, axis=1)  # noqa: E741
    decided = (sign_log_e(w, l) >= math.log(1 / ALPHA)).any(axis=1).mean()
    assert 0.74 <= decided <= 0.88
    assert runs_needed(3, 3, 40, alpha=ALPHA, items_per_round=2)["rounds"] is None


@pytest.mark.parametrize(("tol", "inputs"), [(0.10, 20), (0.2, 50), (0.04, 5)])
def test_check_false_drift_at_most_alpha(tol, inputs):
    """Every input drawn off-reference at exactly the tolerance: no drift may be reported
    in more than alpha of checks (screen mismatch, then the curtailed binomial test)."""
    k, c = confirmation_plan(tol, ALPHA / inputs)
    # the exact probability of at least one false drift over the inputs
    p_input = tol * stats.binom.sf(c - 1, k, tol)
    exact = 1 - (1 - p_input) ** inputs
    assert exact <= ALPHA
    rng = np.random.default_rng(2)
    reps = 20000
    screen = rng.random((reps, inputs)) < tol
    confirm = rng.binomial(k, tol, size=(reps, inputs)) >= c
    assert (screen & confirm).any(axis=1).mean() <= sim_tolerance(ALPHA, reps)


# ------------------------------------------------------------------ compare's latency design


def _latency_signs(rng, reps, rounds, tasks, *, order_effect, margin, randomised):
    """Signs (+1 A wins, -1 B wins, 0 tie) of identical agents whose call in the first slot
    of a pair takes ``1 + order_effect`` times as long (a cold cache, a shared serial
    backend); latencies lognormal with sd 0.3 on the log scale."""
    lat = np.exp(rng.normal(0.0, 0.3, size=(2, reps, rounds, tasks)))
    first, second = lat[0] * (1.0 + order_effect), lat[1]
    a_first = rng.random((reps, rounds, tasks)) < 0.5 if randomised else \
        np.ones((reps, rounds, tasks), dtype=bool)
    a = np.where(a_first, first, second)
    b = np.where(a_first, second, first)
    return (b > (1 + margin) * a).astype(int) - (a > (1 + margin) * b).astype(int)


@pytest.mark.parametrize("order_effect", [0.0, 0.3, 2.0])
def test_random_order_keeps_false_latency_winners_at_most_alpha(order_effect):
    """Identical agents, an order effect of any size: with the order of each pair drawn at
    random, the latency sign test names a winner in at most alpha of runs; with a fixed
    order (version 1) the same agents get a winner in most runs once the effect is real."""
    rng = np.random.default_rng(17)
    reps, rounds, tasks = 4000, 60, 3
    for margin in (0.0, 0.1):
        s = _latency_signs(rng, reps, rounds, tasks, order_effect=order_effect, margin=margin,
                           randomised=True)
        w = np.cumsum((s > 0).sum(axis=2), axis=1)
        l = np.cumsum((s < 0).sum(axis=2), axis=1)  # noqa: E741
        ever, _ = _first_crossing(w, l, ALPHA)
        assert ever.mean() <= sim_tolerance(ALPHA, reps), (order_effect, margin, ever.mean())
    if order_effect >= 0.3:
        s = _latency_signs(rng, 400, rounds, tasks, order_effect=order_effect, margin=0.1,
                           randomised=False)
        w = np.cumsum((s > 0).sum(axis=2), axis=1)
        l = np.cumsum((s < 0).sum(axis=2), axis=1)  # noqa: E741
        fixed, _ = _first_crossing(w, l, ALPHA)
        assert fixed.mean() > 0.5  # the design the random order replaces would fail here


def test_latency_margin_decides_a_practical_difference_and_ignores_a_small_one():
    """A 30% slower agent is named slower; a 3% slower one (within the 10% margin) is named
    in at most alpha of runs even though it is slower on every call's median."""
    rng = np.random.default_rng(23)
    reps, rounds, tasks = 2000, 80, 3
    for ratio, expect_decided in ((1.3, True), (1.03, False)):
        la = np.exp(rng.normal(0.0, 0.02, size=(reps, rounds, tasks)))
        lb = ratio * np.exp(rng.normal(0.0, 0.02, size=(reps, rounds, tasks)))
        s = (lb > 1.1 * la).astype(int) - (la > 1.1 * lb).astype(int)
        w = np.cumsum((s > 0).sum(axis=2), axis=1)
        l = np.cumsum((s < 0).sum(axis=2), axis=1)  # noqa: E741
        ever, _ = _first_crossing(w, l, ALPHA)
        if expect_decided:
            assert ever.mean() >= 0.99
        else:
            assert ever.mean() <= sim_tolerance(ALPHA, reps)


# ------------------------------------------------------------------ compare end to end

NULL_BENCH = parse_benchmark('version: "1"\nname: identical\ntasks:\n' + "".join(
    f"  - {{id: t{i}, prompt: 'q{i}', evaluation: {{type: exact_match, expected: '4'}}}}\n"
    for i in range(3)))


def test_identical_agents_through_compare_get_a_winner_in_at_most_alpha_of_runs():
    """The real compare on identical agents (instant, sleeping, sharing a serial backend,
    sync and async): any printed verdict naming a better agent, on any metric overall or per
    task, counts as an error. 400 runs (100 per kind) at alpha 0.2, so that an excess is
    visible; the full-size version (400 runs per kind, alpha 0.05 and 0.2) is
    benchmarks/compare_null.py."""
    alpha, reps = 0.2, 100
    errors = n = 0
    for kind in ("instant", "sleeping", "serial", "async-serial"):
        for rep in range(reps):
            a, b = identical_pair(kind, rep)
            res = compare_agents([a, b], NULL_BENCH, config=CompareConfig(
                max_runs=15, alpha=alpha, seed=1000 + rep))
            assert res.rounds <= 15
            errors += bool(res.winners)
            n += 1
    # fail when the runs show the false-winner rate above alpha (95% one-sided)
    print(f"identical agents through compare: {errors}/{n} runs with a winner")
    assert clopper_pearson(errors, n, alpha=0.05, side="lower")[0] <= alpha, (errors, n)
    assert errors / n <= alpha


def test_the_split_alphas_are_what_compare_uses():
    s = alpha_split(0.05, 1, 3)
    res = compare_agents([lambda p: "4", lambda p: "4"], NULL_BENCH,
                         config=CompareConfig(max_runs=1))
    p = res.pairs[0]
    assert {m: p.overall[m].alpha for m in ("pass_rate", "error_rate", "latency")} == \
        {m: s[m] for m in ("pass_rate", "error_rate", "latency")}
    assert all(t[m].alpha == s["per_task"] for t in p.per_task for m in t)
    assert p.equivalence is not None
    assert p.equivalence.alpha == s["equivalence"]


# ------------------------------------------------------------------ equivalence


def _false_equivalence(rng, reps: int, rounds: int, p_a, p_b, *, alpha: float,
                       margin: float) -> tuple[int, int]:
    """(runs the product's ``PooledEquivalence`` called equivalent, runs simulated): paired
    items of fake agents passing task t with p_a[t] / p_b[t], fed a round at a time."""
    from agentverity_props.decide import PooledEquivalence

    p_a, p_b = np.asarray(p_a), np.asarray(p_b)
    a = rng.random((reps, rounds, len(p_a))) < p_a
    b = rng.random((reps, rounds, len(p_b))) < p_b
    x = a.astype(int) - b.astype(int)
    called = 0
    for r in range(reps):
        eq = PooledEquivalence(alpha=alpha, margin=margin)
        for k in range(rounds):
            eq.end_round([int(v) for v in x[r, k]])
            if eq.decision is not None:
                called += 1
                break
    return called, reps


@pytest.mark.parametrize(("p_a", "p_b"), [
    ([1.0] * 5, [0.9] * 5),                       # Delta = +margin, B fails 10%: few items
    ([0.6] * 3, [0.5] * 3),                       # Delta = +margin, noisy agents
    ([0.9, 1.0, 0.8, 0.9, 0.9], [1.0] * 5),       # Delta = -margin, uneven tasks
    ([1.0, 0.7], [0.6, 0.8]),                     # Delta = +0.15, tasks favour each agent
])
def test_false_equivalence_at_most_alpha_at_the_margin(p_a, p_b):
    """|Delta| >= margin (at the edge, the hardest case): the pooled two one-sided tests,
    monitored after every round for up to 50 rounds, call the agents equivalent in at most
    alpha of runs (+3 standard errors). alpha 0.05 so an excess would show."""
    rng = np.random.default_rng(sum(int(1000 * v) for v in p_a + p_b))
    called, reps = _false_equivalence(rng, 1000, 50, p_a, p_b, alpha=ALPHA, margin=0.1)
    print(f"false equivalence {p_a} vs {p_b}: {called}/{reps}")
    assert called / reps <= sim_tolerance(ALPHA, reps)


def test_equivalence_has_power_inside_the_margin():
    """Identical noisy agents (Delta = 0, pass rate 0.9 on 5 tasks) are called equivalent
    in most runs within 100 rounds; agents 0.05 apart too, less often; the bets are
    predictable, so this is power, not a leak of the current round."""
    rng = np.random.default_rng(5)
    same, reps = _false_equivalence(rng, 300, 100, [0.9] * 5, [0.9] * 5, alpha=ALPHA,
                                    margin=0.1)
    near, _ = _false_equivalence(rng, 300, 100, [0.95] * 5, [0.9] * 5, alpha=ALPHA,
                                 margin=0.1)
    print(f"equivalent: identical {same}/{reps}, 0.05 apart {near}/{reps}")
    assert same / reps >= 0.8
    assert 0.2 <= near / reps < same / reps


def test_sign_reachable_is_exact_on_small_cases():
    """The futility bound of the sign test against every sequence of remaining items: it
    says reachable exactly when some sequence crosses at some point."""
    import itertools

    from agentverity_props.decide import sign_reachable

    thr = math.log(1 / ALPHA)
    for w0, l0, left in itertools.product(range(4), range(4), range(9)):
        hit = sign_log_e(w0, l0) >= thr and w0 != l0
        for seq in itertools.product((1, -1), repeat=left):
            w, l = w0, l0  # noqa: E741
            for s in seq:
                w, l = w + (s > 0), l + (s < 0)  # noqa: E741
                hit = hit or sign_log_e(w, l) >= thr
            if hit:
                break
        assert sign_reachable(w0, l0, left, ALPHA) == hit, (w0, l0, left)
