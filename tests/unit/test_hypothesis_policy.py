"""Hypothesis through its public API: the agent profiles and their one merge policy, the
``inner_test`` hook, health findings as warnings, and the single compatibility shim that
touches Hypothesis's private attributes."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from agentverity_props import agent_property, from_callable
from agentverity_props._internal import hypothesis_shim
from agentverity_props._internal.agent_settings import (
    CONVERSATION_PROFILE,
    agent_profile,
    agent_settings,
)
from agentverity_props.errors import AgentHealthWarning
from agentverity_props.property import RECORDS

ROOT = Path(__file__).parents[2]


def test_no_private_hypothesis_name_outside_the_shim() -> None:
    shim = ROOT / "agentverity_props/_internal/hypothesis_shim.py"
    sources = [*sorted((ROOT / "agentverity_props").rglob("*.py")),
               ROOT / "agentverity_props_pytest.py"]
    users = [p.relative_to(ROOT).as_posix() for p in sources
             if p != shim and "_hypothesis_internal" in p.read_text(encoding="utf-8")]
    assert users == []
    assert "_hypothesis_internal" in shim.read_text(encoding="utf-8")


def test_the_shim_names_the_attributes_this_hypothesis_uses() -> None:
    @given(st.integers())
    def plain(x: int) -> None:
        pass

    assert not hypothesis_shim.settings_applied(plain)
    assert hypothesis_shim.seed_of(plain) is None
    decorated = seed(7)(settings(max_examples=3)(plain))
    assert hypothesis_shim.settings_applied(decorated)
    assert hypothesis_shim.settings_of(decorated).max_examples == 3
    assert hypothesis_shim.seed_of(decorated) == 7
    hypothesis_shim.use_settings(decorated, settings(max_examples=2))
    calls: list[int] = []

    def count(x: int) -> None:
        calls.append(x)

    decorated.hypothesis.inner_test = count  # the documented hook
    decorated()
    assert 1 <= len(calls) <= 2  # the settings written through the shim are the ones used


def test_agent_defaults_fill_what_the_user_did_not_change() -> None:
    s = agent_settings(None)
    assert s.max_examples == 25
    assert s.deadline is None
    assert Phase.explain not in s.phases
    assert HealthCheck.filter_too_much in s.suppress_health_check
    mine = agent_settings(settings(max_examples=7, deadline=500,
                                   suppress_health_check=[HealthCheck.differing_executors]))
    assert (mine.max_examples, mine.deadline.total_seconds()) == (7, 0.5)
    assert {HealthCheck.differing_executors, HealthCheck.too_slow} <= set(
        mine.suppress_health_check)
    conv = agent_settings(None, profile=CONVERSATION_PROFILE, stateful_step_count=3)
    assert (conv.max_examples, conv.stateful_step_count, conv.deadline) == (100, 3, None)
    assert agent_settings(settings(stateful_step_count=9), profile=CONVERSATION_PROFILE,
                          stateful_step_count=3).stateful_step_count == 9


def test_a_store_derandomizes_and_drops_the_database_unless_the_user_set_them() -> None:
    s = agent_settings(None, replayable=True)
    assert (s.derandomize, s.database) == (True, None)
    assert agent_settings(settings(derandomize=False), replayable=False).derandomize is False
    # without a store: the loaded profile's database (Hypothesis's own; its "ci" profile,
    # loaded under CI=true, keeps none)
    loaded = settings.get_profile(settings.get_current_profile_name())
    assert (agent_settings(None).database is None) == (loaded.database is None)


def test_a_loaded_profile_is_the_users_choice() -> None:
    settings.register_profile("agentverity-test-heavy", max_examples=60)
    before = settings.get_current_profile_name()
    settings.load_profile("agentverity-test-heavy")
    try:
        assert agent_settings(None).max_examples == 60
    finally:
        settings.load_profile(before)
    assert agent_profile().max_examples == 25


gate = from_callable(lambda p: "allow", identity="always-allow")
SOURCES = st.integers(0, 10**6).map(lambda i: f"request number {i}")


def _blind_test() -> object:
    @agent_property(agent=gate, budget=5000)
    @settings(max_examples=90, database=None, derandomize=True)
    @given(prompt=SOURCES)
    def test_blind(check: object, prompt: str) -> None:
        check.invariant(prompt, prompt + "!", name="bang")  # type: ignore[attr-defined]

    return test_blind


def test_health_findings_are_warnings_users_can_filter_or_make_errors() -> None:
    test = _blind_test()
    with pytest.warns(AgentHealthWarning, match=r"blind: 100% of \d+ generated sources"):
        test()  # type: ignore[operator]
    assert RECORDS[-1].status == "passed"
    assert RECORDS[-1].warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", AgentHealthWarning)
        with pytest.raises(AgentHealthWarning):
            test()  # type: ignore[operator]
    assert RECORDS[-1].status == "failed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgentHealthWarning)
        test()  # type: ignore[operator]
    assert RECORDS[-1].status == "passed"


def test_the_example_line_comes_from_the_inner_test_hook() -> None:
    flip = from_callable(lambda p: "block" if p.isupper() else "allow", identity="upper")

    @agent_property(agent=flip, budget=3000)
    @settings(max_examples=10, database=None, derandomize=True)
    @given(prompt=st.sampled_from(["hello", "hi there"]), n=st.just(3))
    def test_upper(check: object, prompt: str, n: int) -> None:
        check.invariant(prompt, prompt.upper(), name="upper")  # type: ignore[attr-defined]

    with pytest.raises(AssertionError, match=r"reproduce: @example\(prompt='h"):
        test_upper()
    literal = RECORDS[-1].minimal.example_literal()  # type: ignore[union-attr]
    assert re.fullmatch(r"@example\(prompt='(hello|hi there)', n=3\)", literal), literal
