"""An example ``@agent_property`` screened as valid stays valid when Hypothesis replays it.

Before any confirmation an undecided example is one the pooled effect scores (the test goes
on); once a violation is confirmed, an undecided step is rejected so that the shrinker does not
read it as a pass. An example met in the first phase and replayed while shrinking must keep
its first status: Hypothesis raises ``FlakyFailure`` ("Inconsistent results from replaying a
test case") when a replay turns a valid example invalid.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentverity_props import agent_property, from_callable
from agentverity_props.errors import PropertyViolation

NOISY, BROKEN = "is this noisy", "is this broken"


class Gate:
    """``NOISY`` and its follow-up answer coin flips (undecided within the screen's draws);
    ``BROKEN``'s follow-up always gets the other verdict (a certain violation)."""

    def __init__(self) -> None:
        self.rng = random.Random("replay-consistency")

    def __call__(self, prompt: str) -> str:
        if prompt.lower() == NOISY:
            return self.rng.choice(["allow", "block"])
        if prompt == BROKEN.upper():
            return "block"
        return "allow"


def test_an_example_screened_valid_is_not_rejected_when_shrinking_replays_it() -> None:
    @agent_property(agent=from_callable(Gate(), identity="replay-consistency"))
    @settings(database=None, max_examples=10, suppress_health_check=list(HealthCheck))
    @given(p=st.sampled_from([NOISY, BROKEN]))
    def test_case(check, p) -> None:  # type: ignore[no-untyped-def]
        check.invariant(p, p.upper(), name="case")

    try:
        test_case()
    except PropertyViolation as exc:  # the broken example, not a FlakyFailure
        assert repr(BROKEN) in str(exc), str(exc)
    else:
        raise AssertionError("the certain violation was not found")
