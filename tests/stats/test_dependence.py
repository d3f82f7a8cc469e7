"""The dependent-draws health check: its false-alarm rate on independent agents stays at or
below its alpha, it fires on a response cache and on round-robin replicas, no violation or
'deterministic' call is reported for them without its warning, and the spread scheduling of
the meter and the relations stays reproducible."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from agentverity_props import from_callable, run
from agentverity_props.decide import DependenceTest, block_e_value, clopper_pearson
from agentverity_props.diagnose._health import PAIRS
from agentverity_props.runner import RunConfig
from agentverity_props.runner._run import ALPHA_SHARES
from tests.support.noisy_agents import (
    binary_noise_agent,
    gate_replicas,
    round_robin,
    sticky,
    text_planted_agent,
)
from tests.support.sim import sim_tolerance

pytestmark = pytest.mark.stats

ALPHA = 0.05
ALPHA_DEP = ALPHA * ALPHA_SHARES["dependence"]
#: half of the prompts hold "urgent" in a prompt over 40 characters (the gate blocks them)
INPUTS = [f"request number {i} about account {i * 7}"
          + (" and it is urgent, please" if i % 2 else "") for i in range(20)]


def _rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n, alpha=0.05)
    return f"{k}/{n} = {k / n:.3f}, 95% CP [{lo:.3f}, {hi:.3f}]"


@pytest.mark.parametrize("keys", ["aaab", "aabbc", "aaaaaabb", "abcdef", "aaabbbbbbb",
                                  "aabbccdd"])
def test_block_e_value_has_mean_one_over_the_orderings(keys):
    """Under exchangeability every ordering of the multiset is equally likely: the e-value's
    mean over the orderings is exactly one (it is an e-value, not an approximation)."""
    perms = set(itertools.permutations(keys))
    mean = sum(block_e_value(p) for p in perms) / len(perms)
    assert mean == pytest.approx(1.0, abs=1e-9)


def test_false_alarm_at_most_alpha_under_continuous_monitoring():
    """i.i.d. blocks of 10 answers (varied answer distributions, 30 blocks each run, checked
    after every block): the test fires in at most alpha of runs (+3 standard errors)."""
    rng = np.random.default_rng(13)
    reps, alpha = 3000, 0.05
    fired = 0
    for r in range(reps):
        p = rng.dirichlet(np.ones(3) * (0.3 + r % 3))
        test = DependenceTest(alpha=alpha)
        for _ in range(30):
            block = [str(v) for v in rng.choice(3, size=10, p=p)]
            if test.update(block):
                fired += 1
                break
    print("false alarm", _rate(fired, reps))
    assert fired / reps <= sim_tolerance(alpha, reps)


def _runs(make, n: int, *, relations: bool):
    out = []
    for s in range(n):
        agent = make(s)
        r = run(from_callable(agent, identity="sim"), INPUTS, None if relations else [],
                config=RunConfig(seed=s, max_workers=1, alpha=ALPHA))
        out.append(r)
    return out


def test_independent_agents_rarely_trigger_the_check():
    """Independent draws, through the real ``run``: a meter-boundary binary agent and the
    noisy gate with relations. The check fires in at most its alpha (alpha/8) of runs
    (+3 standard errors)."""
    runs = _runs(lambda s: binary_noise_agent(0.1, random.Random(s)), 60, relations=False)
    runs += _runs(lambda s: text_planted_agent(0.15, random.Random(s), bug=False), 6,
                  relations=True)
    fired = sum(r.dependence.fired for r in runs)
    n = len(runs)
    print("independent agents", _rate(fired, n))
    assert fired / n <= sim_tolerance(ALPHA_DEP, n)


def _goal(runs) -> tuple[int, int]:
    """(runs where the check fired, runs that report a violation or 'verdict-deterministic'
    without the check's warning)."""
    fired = sum(r.dependence.fired for r in runs)
    bare = sum(1 for r in runs
               if (r.meter.call == "verdict-deterministic"
                   or any(x.status == "VIOLATED" for x in r.relations))
               and not r.dependence.fired)
    return fired, bare


def test_sticky_cache_fires_and_every_violation_carries_the_warning():
    """A response cache (repeat probability 0.8) over the noisy gate (15% noise, no bug): the
    cache makes relations report false violations; the check fires and names them."""
    runs = _runs(lambda s: sticky(text_planted_agent(0.15, random.Random(s), bug=False), 0.8,
                                  random.Random(s + 10**6)), 8, relations=True)
    fired, bare = _goal(runs)
    print("sticky gate: fired", _rate(fired, len(runs)), "bare findings", bare)
    assert fired >= 7
    assert bare == 0
    fired_run = next(r for r in runs if r.dependence.fired)
    text = fired_run.summary()
    assert "Dependence dependent" in text
    assert "error rates assume independent draws given the input" in text
    d = fired_run.to_dict()
    assert d["dependence"]["status"] == "dependent"
    assert d["dependence"]["warning"] in d["findings"]
    assert "independent given the input" in d["guarantee"]
    # no violation stands on dependent draws: the evidence is incomplete, and every line
    # stating a violation says what it rests on
    assert fired_run.exit_code == 2
    for r in runs:
        if not r.dependence.fired:
            continue
        d = r.to_dict()
        for rel in d["relations"]:
            assert ("dependent_draws" in rel) == (rel["status"] == "VIOLATED")
        violated = [f for f in d["findings"] if f.startswith("relation '")]
        assert all("rests on dependent draws" in f for f in violated)


def test_round_robin_replicas_fire_and_no_false_violation():
    """Two replicas that differ (one blocks where the other asks for review) behind a
    round-robin balancer: randomised source/follow-up order keeps relations clean, and the
    check fires on the alternation."""
    runs = _runs(lambda s: round_robin(gate_replicas(0.05, random.Random(s))), 8,
                 relations=True)
    fired, bare = _goal(runs)
    print("round robin: fired", _rate(fired, len(runs)), "bare findings", bare)
    assert fired >= 7
    assert bare == 0
    assert all(r.dependence.pattern == "alternation" for r in runs if r.dependence.fired)


def test_same_seed_same_calls():
    """The spread schedules (meter waves, relation rounds in random order, dependence
    blocks) request the same prompts in the same order for the same seed."""
    def calls(seed: int) -> list[str]:
        seen: list[str] = []
        inner = text_planted_agent(0.15, random.Random(7), bug=False)

        def agent(p: str) -> str:
            seen.append(p)
            return inner(p)

        run(from_callable(agent, identity="sim"), INPUTS[:6],
            config=RunConfig(seed=seed, max_workers=1, budget=400))
        return seen

    a, b = calls(3), calls(3)
    assert a == b
    assert calls(4) != a


def test_meter_pairs_are_not_back_to_back():
    """With one worker, no meter pair's two draws are consecutive calls (waves of three: the
    three first draws, then the three second draws, the last first draw's partner never
    next), and the order of the second draws varies from wave to wave."""
    seen: list[str] = []

    def agent(p: str) -> str:
        seen.append(p)
        return "allow"

    r = run(from_callable(agent, identity="sim"), INPUTS, [],
            config=RunConfig(seed=1, max_workers=1,
                             suppress_health_check=["dependent_draws"]))
    assert r.meter.calls == 76
    meter = seen[:60]  # waves of three until the SPRT could decide within fewer trials
    waves = [meter[i:i + 6] for i in range(0, len(meter), 6)]
    assert len(waves) >= 10
    assert all(sorted(w[:3]) == sorted(w[3:]) for w in waves)
    distinct = [w for w in waves if len(set(w[:3])) == 3]
    assert all(w[3] != w[2] for w in distinct)
    assert len({tuple(w[:3].index(x) for x in w[3:]) for w in distinct}) > 1


def test_agent_property_failure_on_a_cached_agent_carries_the_warning():
    """@agent_property over a cache in front of a bug-free noisy gate: the cache freezes
    flips into false violations; the failure names the dependence (check run once, on the
    first confirmed violation). One call at a time: the cache and the gate share their
    generators across calls, so with concurrent calls what each seed draws also depends on
    the order calls complete in (a CI run beside two CPU-bound processes once gave a seed
    whose failure carried no warning: 7 of 8)."""
    from hypothesis import HealthCheck as HypothesisHealthCheck
    from hypothesis import given, seed, settings
    from hypothesis import strategies as st

    from agentverity_props import agent_property
    from agentverity_props.errors import Inconclusive, PropertyViolation

    warned = failed = 0
    for s in range(8):
        agent = sticky(text_planted_agent(0.15, random.Random(s), bug=False), 0.8,
                       random.Random(s + 10**6))

        @agent_property(agent=from_callable(agent, identity=f"cached-{s}"), max_workers=1)
        @seed(s)
        @settings(database=None, max_examples=40,
                  suppress_health_check=list(HypothesisHealthCheck))
        @given(prompt=st.sampled_from(INPUTS))
        def test_case(check, prompt):
            check.invariant(prompt, prompt.upper(), name="case")

        try:
            test_case()
        except PropertyViolation as exc:
            failed += 1
            warned += "dependent draws" in str(exc)
        except Inconclusive:
            # the pooled effect over the examples could not be bounded within the budget
            # (cached draws of one input are not independent: no claim is made)
            pass
    print("cached agent under @agent_property: failed", failed, "warned", warned)
    assert failed >= 2
    assert warned == failed


def test_a_snapshot_of_a_cached_agent_is_refused_when_the_check_fires():
    """snapshot admits on a deterministic verdict: a cache in front of a 20%-noise model
    (stickiness 0.8) looks deterministic to the meter, and the dependent-draws check of the
    snapshot's run refuses it (rule ``independent-draws``) instead of admitting references
    frozen by the cache. No run may admit it."""
    from agentverity_props.snapshot import create_snapshot

    rules = []
    for seed in range(4):
        agent = from_callable(sticky(binary_noise_agent(0.2, random.Random(seed)), 0.8,
                                     random.Random(seed + 100)), identity=f"sticky-{seed}")
        res = create_snapshot(agent, INPUTS, config=RunConfig(seed=seed, max_workers=1),
                              accept_reference=True)
        refused = [r.rule for r in res.refusals]
        assert refused, f"seed {seed}: a cached agent was admitted"
        dep = res.run.dependence
        assert dep is not None
        assert ("independent-draws" in refused) == dep.fired
        rules += refused
    assert "independent-draws" in rules


def _seeded_callable(seed: int, draws: int):
    """A plain function with its own module-level style ``random.Random(seed)``, drawing
    ``draws`` numbers per call (the issue's callable): answer from the first draw (a 30%
    minority), a third answer from the second when there is one."""
    rng = random.Random(seed)

    def agent(prompt: str) -> str:
        u = [rng.random() for _ in range(draws)]
        if u[0] >= 0.3:
            return "allow"
        return "review" if draws > 1 and u[1] < 0.5 else "block"

    return agent


@pytest.mark.parametrize("draws", [1, 2, 3])
def test_seeded_prng_callables_false_alarm_at_most_alpha(draws):
    """A plain callable on one seeded ``random.Random`` shared across calls (one, two, three
    draws per call): its answers are a deterministic sequence for a given seed, but over
    seeds that sequence behaves as independent draws, which is the check's null. Blocks of
    BLOCK_SIZE back-to-back calls, the test read after each of 12 blocks, 400 seeds: it
    fires in at most alpha of them (+3 standard errors), so a finding on such a callable is
    the check's alpha, not a pattern in the draws."""
    from agentverity_props.diagnose._health import BLOCK_SIZE

    reps, alpha = 400, 0.05
    fired = 0
    for seed in range(reps):
        agent = _seeded_callable(10_000 * draws + seed, draws)
        test = DependenceTest(alpha=alpha)
        for b in range(12):
            prompt = INPUTS[b % 3]
            if test.update([agent(prompt) for _ in range(BLOCK_SIZE)], source=prompt):
                fired += 1
                break
    print(f"seeded callable, {draws} draw(s) per call:", _rate(fired, reps))
    assert fired / reps <= sim_tolerance(alpha, reps)


def test_seeded_prng_callable_through_run_rarely_fires():
    """The same callable drawing twice per call through the real ``run`` (4 workers, as the
    CLI's default): the check fires in at most its share of alpha (ALPHA_DEP) of 20 seeds
    (+3 standard errors; the falsifiable size is the test above); its calls are counted."""
    runs = []
    for s in range(20):
        r = run(from_callable(_seeded_callable(s, 2), identity="sim"), INPUTS, [],
                config=RunConfig(seed=s, max_workers=4, alpha=ALPHA))
        runs.append(r)
    fired = sum(r.dependence.fired for r in runs)
    print("seeded callable through run", _rate(fired, len(runs)))
    assert fired / len(runs) <= sim_tolerance(ALPHA_DEP, 20)
    assert all(r.phase_calls["dependence"] == r.dependence.calls for r in runs)
    # every block is PAIRS pairs spaced apart (blocks made after it fired are not counted)
    assert all(r.dependence.calls == r.dependence.blocks * 2 * PAIRS for r in runs
               if not r.dependence.fired)


def test_the_warning_names_what_was_seen_not_a_guessed_cause():
    """The finding states the pattern seen (runs or alternation), how many blocks leaned
    each way, and the inputs behind it by fingerprint, and says when it is a false alarm;
    it never asserts a cache or replicas."""
    from agentverity_props.diagnose._health import dependence_result

    sticky_t = DependenceTest(alpha=0.05)
    sticky_t.update(["a"] * 12 + ["b"] * 12, source="fp-sticky-input")
    w = dependence_result(sticky_t, calls=24).warning()
    assert w.startswith("dependent draws: back-to-back draws of one input show fewer "
                        "answer switches than independent draws give (runs of one answer)")
    assert "1 of 1 block(s) with more than one answer had fewer switches" in w
    assert "input fp-sticky-in: 1 switch(es) in 1 block(s) where 12 expected" in w
    assert "Look for state that makes a repeat of an input likely" in w
    assert "false alarm, which happens with probability <= 0.05" in w
    assert "Disable response caches" not in w

    alt = DependenceTest(alpha=0.05)
    alt.update(["a", "b", "a", "b", "b", "a"], source="fp-other")  # 4 switches, 3 expected
    for _ in range(4):
        alt.update(["a", "b"] * 12, source="fp-alt")
    d = dependence_result(alt, calls=102)
    assert d.pattern == "alternation"
    assert d.fired
    assert "more answer switches than independent draws give" in d.warning()
    assert "round-robin balancer, a counter or a cycle kept across calls" in d.warning()
    rows = d.to_dict()["inputs"]
    assert rows[0]["source"] == "fp-alt"  # the input that moved the e-value most first
    assert rows[0]["switches"] == 23 * rows[0]["blocks"]
    assert d.to_dict()["alternating_blocks"] == rows[0]["blocks"] + 1  # and fp-other
    quiet = DependenceTest(alpha=0.05)
    quiet.update(["a", "b", "a", "a", "b", "b"], source="x")
    assert dependence_result(quiet, calls=6).warning() == ""
