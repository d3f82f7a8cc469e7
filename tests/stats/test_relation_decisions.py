"""Simulation tests of the relation-candidate decision: each error-rate claim of
``agentverity_props.decide._candidate`` and ``agentverity_props.relations._procedure`` is
checked here, and would fail if its claim were false.

Notation (the module docstring of ``_candidate``): ``r`` is the reference (the modal
verdict of the source's draws), ``v = P(a follow-up draw violates against r)`` and
``u = P(a source re-draw violates against r)``.

1. the violation e-process crosses ``1/alpha`` with probability at most ``alpha`` under
   H0 (``v <= u``), for constant, heterogeneous and adaptively chosen null rounds;
2. ``round_bets`` stays inside the set where every null round has expectation at most one;
3. the pass e-process crosses ``1/beta`` with probability at most ``beta`` under H1
   (``v >= v1``), whatever the noise plug-in used to size the bets;
4. end to end through the engine, a candidate is confirmed on a relation that holds at most
   ``alpha_candidate`` of the time, and a violation that meets the stated alternative is
   dismissed at most ``beta`` of the time;
5. fast versions of the benchmark goals of ``benchmarks/shrink_calls.py``.

Every error-rate assertion allows the nominal rate plus three binomial standard errors of the
simulation, and each simulation is sized so that an excess of twice the nominal rate would
fail it with near certainty. Every random source is seeded (numpy Generators, or an agent's
own ``random.Random``), so the tests are deterministic.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentverity_props import from_callable
from agentverity_props.decide import Alternative, CandidateTest, EvidenceLearner, round_bets
from agentverity_props.engine import Engine, EngineConfig, EvidencePool, Probe
from agentverity_props.relations import Candidate, Relation, RelationDecider, RelationOutcome
from tests.support.noisy_agents import SCENARIOS, agent_property_test, run_property
from tests.support.sim import detects_double, sim_tolerance

pytestmark = pytest.mark.stats


# =========================================================== 1. the violation e-process

ALPHA = 0.1  # large enough that the false-violation rate is measurable
ROUNDS = 200
#: (name, alternative, noise plug-in): the priors that size the first bets. "aggressive"
#: bets nearly everything on a follow-up that violates and a source that does not.
AGGRESSIVE = ("aggressive", Alternative(0.005, "prior"), 0.0)


def _matched(u: float) -> tuple[str, Alternative, float]:
    """A prior that matches the agent's noise ``u`` (as the learner would state it)."""
    return ("matched", Alternative(min(max(1.5 * u, 0.005), 0.5), "prior"), u)


Schedule = Callable[[np.random.Generator, CandidateTest, int], tuple[float, float]]


def _constant(v: float, u: float) -> Schedule:
    return lambda rng, t, j: (v, u)


def _violation_rate(schedule: Schedule, alternative: Alternative, noise: float, *,
                    reps: int, seed: int, rounds: int = ROUNDS,
                    alpha: float = ALPHA) -> float:
    """The share of ``reps`` candidates whose violation e-process crosses ``1/alpha`` within
    ``rounds`` rounds, the round ``j`` outcomes being independent Bernoulli ``(v_j, u_j)``
    given by ``schedule`` (which may look at the test's past: a predictable adversary).

    The rounds are fed with ``settled=False``, so the pass e-process is never fed and the
    violation side is tested alone (``max_draws`` leaves room for every round, so the
    candidate never ends undecided)."""
    rng = np.random.default_rng(seed)
    crossed = 0
    for _ in range(reps):
        t = CandidateTest(alpha=alpha, beta=0.01, alternative=alternative, noise=noise,
                          max_draws=2 * rounds + 2)
        running_max = t.e_violation
        for j in range(rounds):
            v, u = schedule(rng, t, j)
            assert 0.0 <= v <= u <= 1.0, "the schedule must stay in H0"
            f, s = rng.random(2)
            d = t.round(follow_up=bool(f < v), source=bool(s < u), settled=False)
            running_max = max(running_max, t.e_violation)
            if d is not None:
                break
        hit = running_max >= (1 - 1e-9) / alpha
        # the decision is exactly "the running maximum crossed 1/alpha"
        assert hit == (t.decision is not None and t.decision.call == "violation")
        assert t.decision is None or t.decision.call == "violation"
        crossed += hit
    return crossed / reps


def _check_violation(rate: float, reps: int, label: str) -> None:
    assert detects_double(ALPHA, reps)
    tol = sim_tolerance(ALPHA, reps)
    print(f"\n[violation e-process] {label}: P(cross 1/alpha) = {rate:.4f} "
          f"(alpha {ALPHA}, tolerance {tol:.4f}, {reps} reps)")
    assert rate <= tol, f"{label}: false-violation rate {rate:.4f} > {tol:.4f}"


@pytest.mark.parametrize("prior", ["aggressive", "matched"])
@pytest.mark.parametrize("u", [0.05, 0.2, 0.5])
def test_violation_e_process_at_v_equal_u(u, prior):
    name, alt, noise = AGGRESSIVE if prior == "aggressive" else _matched(u)
    reps = 600
    rate = _violation_rate(_constant(u, u), alt, noise, reps=reps,
                           seed=int(1000 * u) + (prior == "matched"))
    _check_violation(rate, reps, f"v = u = {u}, {name} prior")


@pytest.mark.parametrize(("v", "u"), [(0.1, 0.3), (0.0, 0.2), (0.3, 0.5)])
def test_violation_e_process_below_null_boundary(v, u):
    reps = 500
    _, alt, noise = AGGRESSIVE
    rate = _violation_rate(_constant(v, u), alt, noise, reps=reps, seed=int(100 * (v + u)))
    _check_violation(rate, reps, f"v = {v} < u = {u}, aggressive prior")


def _loud_first(rng, t, j):
    p = 0.5 if j < 20 else 0.05
    return p, p


def _quiet_first(rng, t, j):
    p = 0.02 if j < 50 else 0.5
    return p, p


def _alternating(rng, t, j):
    p = 0.5 if j % 2 else 0.03
    return p, p


def _random_on_boundary(rng, t, j):
    p = float(rng.uniform(0.0, 0.5))
    return p, p


def _random_below(rng, t, j):
    u = float(rng.uniform(0.0, 0.6))
    return float(rng.uniform(0.0, u)), u


def _adaptive(rng, t, j):
    """A predictable adversary: it reads the bets of the coming round (fixed before the
    round is drawn) and picks the null point whose factor has the larger mean, preferring
    v = u = 1/2 (the riskiest one) on ties: fair bets are played at maximum variance."""
    a, b, c = t._round_bets()
    half = (a + b) / 4 + c / 2  # mean factor at v = u = 1/2
    if half >= max(b, c) - 1e-12:
        return 0.5, 0.5
    return (0.0, 1.0) if b >= c else (0.0, 0.0)


SCHEDULES = {"loud-first": _loud_first, "quiet-first": _quiet_first,
             "alternating": _alternating, "random-on-boundary": _random_on_boundary,
             "random-below": _random_below, "adaptive": _adaptive}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_violation_e_process_heterogeneous_rounds(name):
    """v_j <= u_j varying by round (still independent Bernoulli given the past), with the
    aggressive prior, so the bets adapt to rigged early rounds."""
    reps = 600
    _, alt, noise = AGGRESSIVE
    rate = _violation_rate(SCHEDULES[name], alt, noise, reps=reps,
                           seed=7 + list(SCHEDULES).index(name))
    _check_violation(rate, reps, f"heterogeneous rounds '{name}', aggressive prior")


# =========================================================== 2. the round bets

_p = st.floats(0.0, 1.0, allow_nan=False, allow_infinity=False)
_GRID = np.linspace(0.0, 1.0, 201)
_V, _U = np.meshgrid(_GRID, _GRID, indexing="ij")
_NULL = _V <= _U


def _null_means(a: float, b: float, c: float) -> np.ndarray:
    """The mean of one round's factor at every (v, u) grid point with v <= u."""
    v, u = _V[_NULL], _U[_NULL]
    return v * (1 - u) * a + u * (1 - v) * b + ((1 - v) * (1 - u) + u * v) * c


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(_p, _p, _p)
@example(1.0, 0.0, 0.0)
@example(0.0, 1.0, 0.0)
@example(0.0, 0.0, 1.0)
@example(0.5, 0.5, 0.0)
@example(0.25, 0.25, 0.5)
@example(0.9, 0.05, 0.05)
@example(0.2, 0.1, 0.7)
@example(0.98, 0.02, 0.02)
@example(1e-300, 1e-300, 1e-300)
def test_round_bets_stay_in_the_null_safe_set(p_plus, p_minus, p_conc):
    if p_plus + p_minus + p_conc <= 0:
        return  # round_bets needs a positive total
    a, b, c = round_bets(p_plus, p_minus, p_conc)
    for x in (a, b, c):
        assert math.isfinite(x)
        assert x >= 0.0
    assert b <= 1.0 + 1e-12
    assert c <= 1.0 + 1e-12
    assert a + b + 2 * c <= 4.0 + 1e-9
    assert float(_null_means(a, b, c).max()) <= 1.0 + 1e-9


def test_null_grid_has_the_critical_points():
    """The grid holds the vertices of H0 and the diagonal's midpoint, where the constraints
    are tight (so the grid check of the test above cannot miss them)."""
    pts = set(zip(_V[_NULL].round(9), _U[_NULL].round(9), strict=True))
    assert {(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.5, 0.5)} <= pts
    # and an infeasible bet is caught by it: A + B + 2c = 4.4 breaks v = u = 1/2
    assert _null_means(2.4, 0.0, 1.0).max() > 1.0 + 1e-9


# =========================================================== 3. the pass e-process

BETA = 0.1  # large enough that the false-pass rate is measurable


@pytest.mark.parametrize("noise", [0.0, 0.1, 0.3])
@pytest.mark.parametrize("miss", [0.005, 0.05, 0.2])
def test_pass_e_process_under_the_alternative(miss, noise):
    """Only follow-up draws (the screen, then follow-ups), each violating with probability
    exactly v1 and v1 + 0.05: the candidate passes with probability at most beta."""
    alt = Alternative(miss, "prior")
    reps = 3000
    assert detects_double(BETA, reps)
    rng = np.random.default_rng([int(1000 * miss), int(10 * noise)])
    tol = sim_tolerance(BETA, reps)
    for v in (alt.v1, min(1.0, alt.v1 + 0.05)):
        passes = undecided = 0
        for _ in range(reps):
            t = CandidateTest(alpha=0.01, beta=BETA, alternative=alt, noise=noise)
            draws = rng.random(t.max_draws) < v
            d = t.screen(bool(draws[0]))
            j = 1
            while d is None:
                d = t.follow_up(bool(draws[j]))
                j += 1
            assert d.call in ("pass", "undecided")  # no round: never a violation
            passes += d.call == "pass"
            undecided += d.call == "undecided"
        rate = passes / reps
        print(f"\n[pass e-process] miss {miss}, noise {noise}, v {v:.3f}: "
              f"P(pass) = {rate:.4f}, undecided {undecided / reps:.3f} "
              f"(beta {BETA}, tolerance {tol:.4f}, {reps} reps)")
        assert rate <= tol, f"false-pass rate {rate:.4f} > {tol:.4f} at v = {v}"


# =========================================================== 4. end to end, through the engine

LABELS = ("allow", "review", "block")
FOLLOW = " [follow-up]"
CASE = Relation("tagged", "invariant", lambda s: s + FOLLOW)
ALPHA_CANDIDATE = 0.05
BETA_CANDIDATE = 0.05


def _fake_agent(spec: dict[str, tuple[str, float]], violating: bool, seed: int):
    """An async fake agent. A source answers its base label, or (with its own noise ``q``)
    a uniformly random other label. A follow-up (the source plus ``FOLLOW``) answers like
    its source (H0), or, when ``violating``, a fixed other label with probability ``1 - q``
    (else the base label). Each prompt has its own ``random.Random``, so the answers do not
    depend on how the engine interleaves calls (and never touch the global ``random``)."""
    rngs: dict[str, random.Random] = {}

    async def agent(prompt: str) -> str:
        follow = prompt.endswith(FOLLOW)
        base, q = spec[prompt.removesuffix(FOLLOW)]
        rng = rngs.setdefault(prompt, random.Random(f"{seed}|{prompt}"))
        if follow and violating:
            return base if rng.random() < q else LABELS[(LABELS.index(base) + 1) % 3]
        if rng.random() < q:
            return rng.choice([lab for lab in LABELS if lab != base])
        return base

    return agent


async def _decide_run(seed: int, *, n_sources: int, batches: int, violating: bool,
                      beta: float, max_draws: int | None = None, noise_max: float = 0.3,
                      learner: EvidenceLearner | None = None
                      ) -> list[tuple[float, RelationOutcome]]:
    """One run: ``n_sources`` sources with noise from 0 to ``noise_max`` (a quarter
    noise-free; with three labels the base label stays modal up to 2/3), one
    candidate each, decided in ``batches`` successive ``decide`` calls sharing one learner
    (so later candidates start with a learned alternative). Returns (noise, outcome)."""
    rng = random.Random(seed)
    spec = {f"ticket {seed}-{i}": (rng.choice(LABELS), 0.0 if i % 4 == 0 else
                                   rng.uniform(0.0, noise_max)) for i in range(n_sources)}
    agent = from_callable(_fake_agent(spec, violating, seed), identity=f"fake-{seed}")
    out: list[tuple[float, RelationOutcome]] = []
    async with Engine(agent, EngineConfig(max_workers=4, retries=0)) as eng:
        decider = RelationDecider(eng, EvidencePool(), alpha_candidate=ALPHA_CANDIDATE,
                                  candidate_beta=beta, learner=learner, max_draws=max_draws)
        ids = list(spec)
        for b in range(batches):
            jobs = []
            for sid in ids[b::batches]:
                src, fu = Probe.make(sid), Probe.make(CASE.apply(sid))
                jobs.append(Candidate(CASE, src, fu,
                                      RelationOutcome(fp=src.fp, follow_up_fp=fu.fp)))
            await decider.decide(jobs)
            out += [(spec[c.source.text][1], c.outcome) for c in jobs]
    return out


def _runs(seeds: range, **kw) -> list[tuple[float, RelationOutcome]]:
    found: list[tuple[float, RelationOutcome]] = []
    for s in seeds:
        found += asyncio.run(_decide_run(s, **kw))
    return found


@pytest.mark.parametrize("pace", ["default", "slow-pass"])
def test_end_to_end_no_false_confirmations(pace):
    """Follow-ups with the same verdict distribution as their source (H0 against every
    reference): the share of candidates confirmed is at most alpha_candidate. "slow-pass"
    makes dismissals expensive (a tiny beta, a noisy prior, noise up to 0.5, a longer
    allowance), so the violation e-process gets many more rounds per candidate."""
    if pace == "default":
        found = _runs(range(12), n_sources=400, batches=8, violating=False,
                      beta=BETA_CANDIDATE)
    else:
        # one batch: every candidate starts from the prior (noise 0.45, so miss = 0.5)
        found = _runs(range(100, 106), n_sources=200, batches=1, violating=False,
                      beta=1e-4, max_draws=160, noise_max=0.5,
                      learner=EvidenceLearner(prior_noise=0.45))
    n = len(found)
    status = [o.status for _, o in found]
    assert not {"incomplete", "pending"} & set(status)
    confirmed = status.count("confirmed")
    rate, tol = confirmed / n, sim_tolerance(ALPHA_CANDIDATE, n)
    rounds = sum(o.decision["rounds"] for _, o in found) / n
    assert detects_double(ALPHA_CANDIDATE, n)
    print(f"\n[end to end, H0, {pace}] confirmed {confirmed}/{n} = {rate:.4f} "
          f"(alpha_candidate {ALPHA_CANDIDATE}, tolerance {tol:.4f}); pass "
          f"{status.count('pass')}, undecided {status.count('undecided')}; "
          f"mean rounds {rounds:.1f}")
    assert rate <= tol


def test_end_to_end_violations_are_rarely_dismissed():
    """Follow-ups that truly violate (another label with probability 1 - noise): among the
    candidates whose violation meets their stated alternative (v = 1 - noise >= v1, read from
    the outcome), the share dismissed as "pass" is at most beta."""
    found = _runs(range(1000, 1012), n_sources=400, batches=8, violating=True,
                  beta=BETA_CANDIDATE)
    assert not {"incomplete", "pending"} & {o.status for _, o in found}
    meets = [o for q, o in found if 1.0 - q >= o.decision["alternative"]["v1"] - 1e-12]
    others = [o for q, o in found if 1.0 - q < o.decision["alternative"]["v1"] - 1e-12]
    n = len(meets)
    assert n >= 1000, "too few candidates meet their alternative to measure beta"
    passed = sum(o.status == "pass" for o in meets)
    rate, tol = passed / n, sim_tolerance(BETA_CANDIDATE, n)
    confirmed = sum(o.status == "confirmed" for o in meets)
    print(f"\n[end to end, H1] meets its alternative: {n}/{len(found)}; dismissed {passed} "
          f"= {rate:.4f} (beta {BETA_CANDIDATE}, tolerance {tol:.4f}); confirmed "
          f"{confirmed / n:.3f}; below the alternative: {len(others)}, of them passed "
          f"{sum(o.status == 'pass' for o in others)}, confirmed "
          f"{sum(o.status == 'confirmed' for o in others)}")
    assert detects_double(BETA_CANDIDATE, n)
    assert rate <= tol


# =========================================================== 5. the benchmark goals, fast

SEEDS = range(8)


@pytest.mark.parametrize("name", ["text-no-bug", "refund-no-bug", "triage-no-bug"])
def test_no_bug_agents_pass_at_15_percent_noise(name):
    kinds = [run_property(agent_property_test(SCENARIOS[name], s, 0.15)).kind for s in SEEDS]
    print(f"\n[goal] {name}, 15% noise: {kinds}")
    assert kinds == ["nothing"] * len(SEEDS)


def test_refund_reaches_the_exact_minimum_at_15_percent_noise():
    kinds = [run_property(agent_property_test(SCENARIOS["refund"], s, 0.15)).kind
             for s in SEEDS]
    print(f"\n[goal] refund, 15% noise: {kinds}")
    assert kinds.count("minimum") >= 7


def test_triage_bug_is_caught_at_10_percent_noise():
    kinds = [run_property(agent_property_test(SCENARIOS["triage"], s, 0.10)).kind
             for s in range(20)]
    print(f"\n[goal] triage, 10% noise: {kinds}")
    assert all(k in ("minimum", "planted") for k in kinds)


def test_the_family_quota_counts_every_candidate_that_gets_a_round():
    """@agent_property's Bonferroni family: at most ``max_candidates`` candidates may feed
    their violation e-process (rounds), each counted before its first round — including
    the candidates whose screen is itself a round (before the noise estimate is warmed up).
    A candidate past the quota is undecided and never drawn as a round."""
    quota = 5
    spec = {f"ticket q-{i}": ("billing", 0.2) for i in range(40)}
    agent = from_callable(_fake_agent(spec, True, 7), identity="fake-quota")
    counted: list[int] = []

    def may_test() -> bool:
        if len(counted) >= quota:
            return False
        counted.append(1)
        return True

    async def go() -> list[Candidate]:
        async with Engine(agent, EngineConfig(max_workers=4, retries=0)) as eng:
            decider = RelationDecider(eng, EvidencePool(), alpha_candidate=ALPHA_CANDIDATE,
                                      candidate_beta=BETA_CANDIDATE, may_test=may_test)
            assert not decider.learner.warmed_up  # every screen here is a round
            jobs = []
            for sid in spec:
                src, fu = Probe.make(sid), Probe.make(CASE.apply(sid))
                jobs.append(Candidate(CASE, src, fu,
                                      RelationOutcome(fp=src.fp, follow_up_fp=fu.fp)))
            await decider.decide(jobs)
            return jobs

    jobs = asyncio.run(go())
    with_rounds = [c for c in jobs if c.test is not None and c.test.rounds > 0]
    assert len(counted) == quota
    assert len(with_rounds) <= quota
    assert sum(c.outcome.status == "undecided" for c in jobs) >= len(jobs) - quota
