"""The call budget is a hard cap: no mix of concurrency, retries, failures, relations and
shrinking makes the agent see more calls than the budget allows.

The agent counts its own invocations (the only count that matters to whoever pays for
them) and draws its failures and flips from its own ``random.Random``.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentverity_props import agent_property, from_callable, run
from agentverity_props.errors import AgentCallError, Inconclusive, PropertyViolation
from agentverity_props.relations import BUILTIN_NAMES, select_builtins
from agentverity_props.runner import RunConfig

from .conftest import record


class CountingAgent:
    """A noisy, flaky gate that counts every invocation (thread-safe)."""

    def __init__(self, seed: int, *, retryable: float, fatal: float, no_verdict: float,
                 flip: float) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.calls = 0
        self.p = (retryable, fatal, no_verdict, flip)

    def __call__(self, prompt: str) -> Any:
        with self.lock:
            self.calls += 1
            u = self.rng.random()
            flip = self.rng.random() < self.p[3]
        retryable, fatal, no_verdict, _ = self.p
        if u < retryable:
            raise AgentCallError("planted rate limit", kind="rate_limit", retryable=True)
        if u < retryable + fatal:
            raise RuntimeError("planted crash")
        if u < retryable + fatal + no_verdict:
            return ""  # no verdict
        verdict = "block" if ("ATTACK" in prompt) != flip else "allow"  # a case bug
        return {"verdict": verdict, "text": verdict}


_words = st.sampled_from(["plan", "an", "attack", "book", "a", "table", "hello", "what",
                          "time", "is", "it", "weapon", "please", "now", "Lisbon"])
_prompts = st.lists(_words, min_size=1, max_size=6).map(" ".join)

RUNS: list[tuple[int, int]] = []


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.integers(1, 250), max_workers=st.integers(1, 8), retries=st.integers(0, 3),
       retryable=st.sampled_from([0.0, 0.1, 0.5]), fatal=st.sampled_from([0.0, 0.05, 0.3]),
       no_verdict=st.sampled_from([0.0, 0.1]), flip=st.sampled_from([0.0, 0.1, 0.4]),
       n_relations=st.integers(0, len(BUILTIN_NAMES)), seed=st.integers(0, 2**16),
       inputs=st.lists(_prompts, min_size=1, max_size=6, unique=True))
def test_run_never_exceeds_the_budget(budget: int, max_workers: int, retries: int,
                                      retryable: float, fatal: float, no_verdict: float,
                                      flip: float, n_relations: int, seed: int,
                                      inputs: list[str]) -> None:
    agent = CountingAgent(seed, retryable=retryable, fatal=fatal, no_verdict=no_verdict,
                          flip=flip)
    rels = select_builtins(list(BUILTIN_NAMES[:n_relations]))
    config = RunConfig(budget=budget, max_workers=max_workers, retries=retries,
                       backoff_base_s=0.0, timeout_s=None, seed=seed)
    result = run(from_callable(agent), inputs, rels, config=config)
    assert agent.calls <= budget
    assert result.ledger["calls"] == agent.calls  # every invocation is accounted for
    assert result.ledger["budget_remaining"] == budget - agent.calls
    RUNS.append((agent.calls, budget))


def test_run_budget_counts() -> None:
    if RUNS:
        record("budget", mode="run()", examples=len(RUNS),
               calls=sum(c for c, _ in RUNS), reached_cap=sum(c == b for c, b in RUNS))


@pytest.mark.parametrize(("budget", "max_workers"), [(12, 1), (40, 4), (90, 8), (120, 2)])
def test_agent_property_with_shrinking_never_exceeds_the_budget(budget: int,
                                                                 max_workers: int) -> None:
    """A planted case bug: confirmation and shrinking run until the budget is spent."""
    agent = CountingAgent(budget, retryable=0.1, fatal=0.02, no_verdict=0.0, flip=0.05)

    @agent_property(agent=from_callable(agent), budget=budget, max_workers=max_workers,
                    timeout_s=None)
    @settings(max_examples=30, database=None)
    @given(prompt=_prompts)
    def prop(check: Any, prompt: str) -> None:
        check.invariant(prompt, prompt.upper(), name="case")

    try:
        prop()
        outcome = "passed"
    except (PropertyViolation, Inconclusive) as exc:
        outcome = type(exc).__name__
    assert agent.calls <= budget
    record("budget", mode="@agent_property", budget=budget, max_workers=max_workers,
           calls=agent.calls, outcome=outcome)
