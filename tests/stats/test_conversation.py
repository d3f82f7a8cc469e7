"""Simulation tests of conversation decisions (``agentverity_props.conversation``).

1. *False violations*: an invariant that fails on exactly ``allowed_rate`` of a conversation's
   replays (H0 at its boundary) is confirmed on at most ``alpha_candidate`` of conversations;
   so is a conversation relation whose edit leaves the last turn's (noisy) verdict
   distribution unchanged;
2. *False passes*: once a violation is confirmed, a conversation whose invariant fails on 85%
   of replays (15% turn noise: the learned alternative) is dismissed at most ``beta`` of the
   time;
3. fast versions of the goals of ``benchmarks/conversation_calls.py``: on the support agent
   with 15% noise on every turn, the planted bug is reported as the 3-turn conversation, the
   fixed agent passes, with conversation relations too, and Hypothesis never sees ``Flaky``.

Each error-rate assertion allows the nominal rate plus three binomial standard errors; every
random source is seeded (the agents' own ``random.Random``, Hypothesis's ``@seed``), so the
tests are deterministic.
"""

from __future__ import annotations

import random

import pytest

from agentverity_props._internal.outcome import CandidateStatus
from agentverity_props.conversation import Invariant, from_history, never_before
from agentverity_props.conversation._run import ConversationRun
from agentverity_props.errors import PropertyViolation
from agentverity_props.examples.support_conversation import support_machine
from tests.support.sim import sim_tolerance

pytestmark = pytest.mark.stats


def _refund_agent(p_violate: float, *, seed: int, noise: float = 0.15):
    """A history agent whose last turn refunds without a lookup with probability
    ``p_violate``; its verdicts flip with probability ``noise`` (turn noise)."""
    rng = random.Random(seed)

    def agent(messages):
        bad = rng.random() < p_violate
        flip = rng.random() < noise
        tools = [{"name": "issue_refund"}] if bad else [{"name": "lookup_order"},
                                                         {"name": "issue_refund"}]
        if "refund" not in messages[-1]["content"]:
            tools = []  # only refund turns refund
        return {"text": "ok", "verdict": "b" if flip else "a", "tools": tools}
    return from_history(agent, identity=f"refund-agent-{p_violate}-{seed}")


def _run(agent, *, alpha: float, beta: float = 0.01) -> ConversationRun:
    """A run whose every candidate is tested at ``alpha`` (no family quota)."""
    run = ConversationRun(agent=agent, test="sim", alpha=alpha, beta=beta, budget=None,
                          max_turns=3, max_candidates=1, max_workers=1, timeout_s=None, seed=7)
    run.record.max_candidates = 10**6
    return run


INV = never_before("issue_refund", required="lookup_order")


def test_invariant_at_its_allowed_rate_is_confirmed_at_most_alpha():
    tol, alpha, n = 0.2, 0.1, 150
    inv = Invariant("refund_after_lookup", INV.fn, allowed_rate=tol)
    run = _run(_refund_agent(tol, seed=1), alpha=alpha)
    try:
        outs = [run.invariant(("order 1002", f"refund please {i}"), inv) for i in range(n)]
    finally:
        run.close()
    confirmed = sum(o.status == CandidateStatus.CONFIRMED for o in outs)
    decided = sum(o.status in (CandidateStatus.CONFIRMED, CandidateStatus.PASS) for o in outs)
    assert decided >= n * 0.8, "most candidates must be decided for the rate to mean anything"
    assert confirmed / n <= sim_tolerance(alpha, n), (confirmed, n)


def test_a_violation_as_reliable_as_the_learned_alternative_is_dismissed_at_most_beta():
    beta, n = 0.05, 150
    run = _run(_refund_agent(0.85, seed=2), alpha=0.01, beta=beta)
    try:
        # before any confirmation a quiet invariant is dismissed on one clean screen (the
        # stated prior alternative); the claim under test is about what follows one
        firsts = [run.invariant(("order 1002", f"refund first {i}"), INV).status for i in range(10)]
        assert CandidateStatus.CONFIRMED in firsts
        outs = [run.invariant(("order 1002", f"refund please {i}"), INV) for i in range(n)]
    finally:
        run.close()
    passed = sum(o.status == CandidateStatus.PASS for o in outs)
    assert passed / n <= sim_tolerance(beta, n), (passed, n)


def test_a_relation_the_agent_satisfies_under_noise_is_confirmed_at_most_alpha():
    """H0 at its boundary: the last turn's verdict has the same distribution (15% noise)
    with and without the inserted turn."""
    from agentverity_props.conversation import insert_irrelevant

    rng = random.Random(3)

    def agent(messages):
        return {"text": "", "verdict": "b" if rng.random() < 0.15 else "a"}
    alpha, n = 0.1, 120
    run = _run(from_history(agent, identity="noise-only"), alpha=alpha)
    rel = insert_irrelevant(["ok"])
    try:
        outs = [run.relation((f"q{i}", "refund"), rel, (f"q{i}", "ok", "refund"))
                for i in range(n)]
    finally:
        run.close()
    confirmed = sum(o.status == CandidateStatus.CONFIRMED for o in outs)
    assert confirmed / n <= sim_tolerance(alpha, n), (confirmed, n)


def _outcome(seed: int, *, bug: bool, relations: bool = False, invariants: bool = True):
    from agentverity_props.conversation import RECORDS, run_conversation_test

    machine = support_machine(seed=seed, noise=0.15, bug=bug, relations=relations,
                              invariants=invariants)
    try:
        run_conversation_test(machine, max_examples=100)
        status = "passed"
    except PropertyViolation:
        status = "failed"
    rec = RECORDS[-1]
    return status, min((ce.n_turns for ce in rec.minimal.values()), default=None), rec


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_bug_on_the_noisy_agent_shrinks_to_three_turns(seed):
    status, turns, rec = _outcome(seed, bug=True)
    assert status == "failed"
    assert turns == 3, rec.to_dict(include_inputs=True)
    ce = rec.minimal["issue_refund_after_lookup_order"]
    assert ce.turns[-1].verdict == "issue_refund"  # the evidence shows the violating replay
    assert ce.decision["e_violation"] >= 1 / rec.alpha_candidate


@pytest.mark.parametrize("seed", [0, 1])
def test_fixed_agent_with_the_same_noise_passes(seed):
    status, _, rec = _outcome(seed, bug=False)
    assert status == "passed"
    assert rec.confirmed == 0


@pytest.mark.parametrize("seed", [0])
def test_fixed_agent_passes_the_conversation_relations_under_noise(seed):
    status, _, rec = _outcome(seed, bug=False, relations=True)
    assert status == "passed", rec.to_dict(include_inputs=True)
    assert rec.candidates > rec.examples  # relations were really decided, not skipped


def test_an_inserted_irrelevant_turn_exposes_the_bug_on_every_two_turn_conversation():
    """Power of the relation on the noisy buggy agent: inserting a turn right before the
    refund changes its verdict (lookup_order -> issue_refund) on 85% of replays; every such
    (conversation, edit) candidate must be confirmed."""
    from agentverity_props.conversation import insert_irrelevant
    from agentverity_props.examples.support_conversation import FILLERS, support_conversation

    run = _run(from_history(support_conversation(seed=4, noise=0.15, bug=True),
                            identity="support-noisy"), alpha=0.001)
    rel = insert_irrelevant(FILLERS)
    orders = ("my order is 1002", "my order number is 1004", "order #1005 arrived broken")
    refunds = ("I want a refund", "can I get my money back?")
    try:
        outs = [run.relation((o, r), rel, (o, f, r))
                for o in orders for r in refunds for f in FILLERS]
    finally:
        run.close()
    statuses = [o.status for o in outs]
    assert statuses.count(CandidateStatus.CONFIRMED) == len(outs), statuses
    assert {o.source for o in outs} == {"lookup_order"}   # the reference: the modal verdict
