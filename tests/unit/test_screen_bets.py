"""The per-input screen's bets are predictable: each term is bet on with what was known
before its draws were asked for (relations/_screen.py, decide/_clearing.py)."""

from __future__ import annotations

import random

from agentverity_props.decide import Clearing
from agentverity_props.engine import EvidencePool, Probe
from agentverity_props.observation import Observation
from agentverity_props.relations import Relation
from agentverity_props.relations._model import RelationOutcome
from agentverity_props.relations._procedure import Candidate
from agentverity_props.relations._screen import PairScreen


def test_a_later_prior_never_changes_the_bets_on_earlier_terms():
    rng = random.Random(3)
    terms = [rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0]) for _ in range(12)]
    priors = [0.3] * 6 + [0.05] * 6
    whole = Clearing(0.5, 0.0).run(terms, priors)
    first = Clearing(0.5, 0.0).run(terms[:6], priors[:6])
    # the first six terms' wealth path is the same whatever came after
    assert whole.trail[:6] == first.trail
    # re-betting the early terms with the later prior (what a replay with one prior does)
    # gives another path: the per-term priors matter
    assert Clearing(0.5, 0.05).run(terms[:6]).trail != first.trail
    # one prior for every term is the constant-prior process
    assert Clearing(0.5, 0.2).run(terms, [0.2] * 12).trail == Clearing(0.5, 0.2).run(terms).trail


def _obs(v: str) -> Observation:
    return Observation(text=v, verdict=v)


def test_the_screen_bets_each_round_s_terms_with_the_prior_of_the_round_that_asked():
    rel = Relation("shout", "invariant", str.upper)
    src, fu = Probe.make("hello there"), Probe.make("HELLO THERE")
    pool = EvidencePool()
    ps = PairScreen(Candidate(rel, src, fu, RelationOutcome(src.fp, fu.fp)), two=False, n_s0=3)
    for i in range(3):
        pool.add(src.fp, i, _obs("allow"))
    ps.evaluate(pool, 0.05, 0.3)           # reads the reference, asks for draws at 0.3
    for i in range(3, 5):
        pool.add(src.fp, i, _obs("allow"))
    for i in range(2):
        pool.add(fu.fp, i, _obs("allow"))
    ps.evaluate(pool, 0.05, 0.02)          # these terms were asked for under 0.3
    assert ps.fside.priors
    assert set(ps.fside.priors) == {0.3}
    before = list(ps.fwd.trail)
    for i in range(5, 7):
        pool.add(src.fp, i, _obs("allow"))
    for i in range(2, 4):
        pool.add(fu.fp, i, _obs("allow"))
    ps.evaluate(pool, 0.05, 0.4)           # the next ones under 0.02; nothing re-bet
    assert ps.fside.priors[len(before):] == [0.02] * (len(ps.fside.priors) - len(before))
    assert ps.fwd.trail[:len(before)] == before
