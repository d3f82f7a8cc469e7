"""``@agent_property`` finds a bug that makes a few generated examples *more decided*.

A sampled-model stand-in (its own ``random.Random``): each prompt has its own mix of three
verdicts, and a planted bug answers ``block`` whenever the raw text holds an all-caps word of
four or more letters. Most case changes make no such word; where one does, a 30/47/23-like
mix becomes 100% ``block``: the follow-up never leaves the source's modal verdict when that
is ``block``, so only the reverse direction (the follow-up more decided than its source) sees
the bug. Goal: found (and shrunk to an example with such a word) in at least 2 of 3 seeds;
the clean gate never fails.
"""

from __future__ import annotations

import hashlib
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hseed

from agentverity_props import agent_property, from_callable
from agentverity_props.errors import Inconclusive, PropertyViolation
from agentverity_props.strategies import case_changes, follow_ups, from_pack

pytestmark = pytest.mark.stats

LABELS = ["allow", "block", "unclear"]
SHOUT = re.compile(r"\b[A-Z]{4,}\b")


def mix_of(prompt: str) -> list[float]:
    r = random.Random(int(hashlib.sha256(prompt.lower().encode()).hexdigest(), 16))
    w = [r.random() ** 1.5 for _ in LABELS]
    w[1] += 0.3 * r.random()
    t = sum(w)
    return [x / t for x in w]


class SampledGate:
    def __init__(self, seed: int, bug: bool) -> None:
        self.rng, self.bug = random.Random(f"sampled:{seed}"), bug

    def __call__(self, prompt: str) -> str:
        if self.bug and SHOUT.search(prompt):
            return "block"
        return self.rng.choices(LABELS, weights=mix_of(prompt))[0]


def outcome(seed: int, bug: bool) -> tuple[str, str]:
    @agent_property(agent=from_callable(SampledGate(seed, bug), identity=f"md-{seed}-{bug}"))
    @hseed(seed)
    @settings(database=None, max_examples=20, suppress_health_check=list(HealthCheck))
    @given(t=follow_ups(from_pack("moderation"), case_changes()))
    def test_case(check, t) -> None:  # type: ignore[no-untyped-def]
        src, _, fu = t
        check.invariant(src, fu, name="case")

    try:
        test_case()
    except PropertyViolation as exc:
        return "failed", str(exc)
    except Inconclusive as exc:
        return "inconclusive", str(exc)
    return "passed", ""


def test_a_follow_up_made_more_decided_is_found_and_the_clean_gate_passes() -> None:
    found = 0
    for seed in range(3):
        got, msg = outcome(seed, bug=True)
        if got == "failed":
            # the counterexample holds the all-caps word on one side (in the follow-up: made
            # more decided; in the source: the lower-cased follow-up less decided)
            pair = [msg.split(f"{side}: ", 1)[1].splitlines()[0]
                    for side in ("source", "follow-up")]
            assert any(SHOUT.search(t) for t in pair), msg
            found += 1
    assert found >= 2, found
    for seed in range(3):
        got, msg = outcome(seed, bug=False)
        assert got == "passed", msg


def test_a_pooled_violation_is_localised_and_its_example_shrunk_across_seeds() -> None:
    """Over twelve seeds of the buggy gate the test ends failed or Inconclusive only (never an
    error such as Hypothesis's FlakyFailure), and in at least ten the failure names a confirmed
    example holding the all-caps word: a pooled violation is followed to one of its examples,
    decided in full and shrunk, not left diffuse (measured: 12 of 12). The code before this
    test raised FlakyFailure in some seeds: an example screened as valid (undecided, scored by
    the pooled effect) was rejected when the shrinker replayed it after a confirmation."""
    found = 0
    for seed in range(12):
        got, msg = outcome(seed, bug=True)
        assert got in ("failed", "inconclusive"), (seed, got, msg)
        if got == "failed" and "violated beyond the agent's noise" in msg:
            pair = [msg.split(f"{side}: ", 1)[1].splitlines()[0].strip()
                    for side in ("\n  source", "\n  follow-up")]
            if any(SHOUT.search(t) for t in pair):
                found += 1
    assert found >= 10, found
