"""The formatting, injection and obfuscation relation families: a keyword gate with each
family's matching bug is VIOLATED, a clean noisy gate never is (issue goal: >= 95% of seeds
and 0), through ``run`` and through ``@agent_property`` with the new strategies.

The gates are in ``tests/support/family_gates.py``: 20 probes (10 harmful, 10 benign), label
noise 10% or 15% on every call from each gate's own generator. A rate claimed at >= 95% is
checked as at least 57 of 60 seeds (if the true rate were 90%, 57 or more happens with
probability 0.12; at 85%, 0.003); "never" as 0 of 60 (at a true false-violation rate of
5%, 0 of 60 happens with probability 0.046), so each test fails when its claim is false.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from agentverity_props import agent_property, from_callable, run
from agentverity_props.errors import AgentHealthWarning, PropertyViolation
from agentverity_props.relations import (
    injection_relation,
    obfuscation_relation,
    select_builtins,
)
from agentverity_props.runner import RunConfig
from agentverity_props.strategies import injections, obfuscations
from tests.support.family_gates import (
    FAMILIES,
    HARMFUL,
    PROBES,
    gate,
    one_keyword_in_homoglyphs,
    tool_gate,
)

pytestmark = pytest.mark.stats

SEEDS = 60
NEED = 57  # of SEEDS: 95%
#: how ``run --relations`` spells each family's built-in for these gates
SPELLING = {"formatting": "formatting", "injection": "injection=allow",
            "obfuscation": "obfuscation=block"}


def _noise(s: int) -> float:
    return 0.10 if s % 2 else 0.15


def _status(agent, relation: str, s: int, *, layer: str = "verdict") -> str:
    res = run(from_callable(agent, identity=f"{relation}-{s}"), PROBES,
              select_builtins([relation]),
              config=RunConfig(seed=s, max_workers=4, layer=layer))
    return str(res.relations[0].status)


@pytest.mark.parametrize("family", FAMILIES)
def test_run_finds_the_matching_bug(family: str) -> None:
    statuses = [_status(gate(family, noise=_noise(s), seed=s), SPELLING[family], s)
                for s in range(SEEDS)]
    assert statuses.count("VIOLATED") >= NEED, statuses


@pytest.mark.parametrize("family", FAMILIES)
def test_run_never_violates_on_a_clean_noisy_gate(family: str) -> None:
    statuses = [_status(gate(None, noise=_noise(s), seed=1000 + s), SPELLING[family], s)
                for s in range(SEEDS)]
    assert "VIOLATED" not in statuses, statuses
    assert statuses.count("HOLDS") >= NEED, statuses  # and the clean gate is not left undecided


def test_tool_injection_finds_an_agent_that_drops_its_tools_and_spares_a_clean_one() -> None:
    bug = [_status(tool_gate(bug=True, noise=_noise(s), seed=s), "tool-injection", s,
                   layer="tools") for s in range(SEEDS)]
    clean = [_status(tool_gate(bug=False, noise=_noise(s), seed=s), "tool-injection", s,
                     layer="tools") for s in range(SEEDS)]
    assert bug.count("VIOLATED") >= NEED, bug
    assert "VIOLATED" not in clean, clean


def test_a_bug_of_one_family_leaves_the_other_families_alone() -> None:
    # each bug is specific: the obfuscation bug does not make formatting or injection fail
    for s in range(10):
        agent = gate("obfuscation", noise=_noise(s), seed=s)
        assert _status(agent, "formatting", s) != "VIOLATED"
        assert _status(agent, "injection=allow", s) != "VIOLATED"


# ------------------------------------------------------------------ @agent_property

PROPERTY_SEEDS = 20


def _obfuscation_property(agent, s: int):
    @agent_property(agent=from_callable(agent, identity=f"obfuscation-property-{s}"))
    @seed(s)
    @settings(database=None, max_examples=60, suppress_health_check=list(HealthCheck))
    @given(prompt=st.sampled_from(HARMFUL), edit=obfuscations())
    def test_refusals_survive_obfuscation(check, prompt, edit):
        check.relation(obfuscation_relation(["block"], edit=edit), prompt)

    return test_refusals_survive_obfuscation


def _injection_property(agent, s: int):
    @agent_property(agent=from_callable(agent, identity=f"injection-property-{s}"))
    @seed(s)
    @settings(database=None, max_examples=60, suppress_health_check=list(HealthCheck))
    @given(prompt=st.sampled_from(PROBES), edit=injections(labels=["allow", "block"]))
    def test_injections_are_not_obeyed(check, prompt, edit):
        check.relation(injection_relation(edit, name=f"injection-{edit.params['target']}"),
                       prompt)

    return test_injections_are_not_obeyed


def _outcome(test) -> tuple[str, object]:
    from agentverity_props.property._records import RECORDS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgentHealthWarning)  # "unstable verdict": it is noisy
        try:
            test()
        except PropertyViolation:
            ce = RECORDS[-1].minimal
            return "failed", None if ce is None else ce.source
        except BaseException as exc:  # FlakyFailure or anything else: reported, never hidden
            # an exception group (Python 3.11's, or the backport on 3.10): one failure per
            # injected label the gate obeys, each reported by Hypothesis
            inner = getattr(exc, "exceptions", None)
            if inner and all(isinstance(e, PropertyViolation) for e in inner):
                return "failed", None
            return f"error: {exc!r}"[:300], None
    return "passed", None


def test_agent_property_finds_the_obfuscation_bug_and_shrinks_it_to_the_keyword() -> None:
    from agentverity_props.property._records import RECORDS
    outcomes, minima = [], []
    for s in range(PROPERTY_SEEDS):
        status, _ = _outcome(_obfuscation_property(gate("obfuscation", noise=_noise(s),
                                                        seed=s), s))
        outcomes.append(status)
        ce = RECORDS[-1].minimal
        minima.append(None if ce is None else (ce.source, ce.follow_up))
    assert outcomes.count("failed") >= 19, outcomes
    # shrunk to the mildest edit that still breaks the gate: one word, the keyword, in
    # homoglyphs (which harmful probe it is depends on the seed)
    exact = sum(1 for m in minima if m is not None and one_keyword_in_homoglyphs(*m))
    assert exact >= 19, minima


def test_agent_property_finds_the_injection_bug() -> None:
    outcomes = [_outcome(_injection_property(gate("injection", noise=_noise(s), seed=s), s))[0]
                for s in range(PROPERTY_SEEDS)]
    assert outcomes.count("failed") >= 19, outcomes


@pytest.mark.parametrize("family", ["obfuscation", "injection"])
def test_agent_property_passes_a_clean_noisy_gate(family: str) -> None:
    build = _obfuscation_property if family == "obfuscation" else _injection_property
    outcomes = [_outcome(build(gate(None, noise=_noise(s), seed=2000 + s), s))[0]
                for s in range(PROPERTY_SEEDS)]
    assert outcomes == ["passed"] * PROPERTY_SEEDS, outcomes
