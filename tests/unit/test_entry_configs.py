"""One configuration shape: every entry point takes ``config=XConfig(engine=EngineConfig(...))``.

Each entry point must honour engine settings it could not take before (``retries``,
``fail_fast``): an agent that fails every call counts its own invocations (the only count
that matters to whoever pays), so a setting that is dropped on the way shows as a wrong
count. Keywords given explicitly override ``config=``; bad fields are one-line
``InvalidArgument``s naming the fix.
"""

from __future__ import annotations

import random
import sys
import threading
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentverity_props import agent_property, conversation_machine, enlarge, from_callable, measure
from agentverity_props.conversation import (
    ConversationConfig,
    from_history,
    machine_config,
    never_before,
    run_conversation_test,
)
from agentverity_props.diagnose import MeterConfig
from agentverity_props.engine import ENGINE_FIELDS, UNSET, EngineConfig, configured, engine_with
from agentverity_props.errors import AgentCallError, Inconclusive, InvalidArgument
from agentverity_props.property import PropertyConfig
from agentverity_props.runner import RunConfig
from agentverity_props.search import EnlargeConfig
from agentverity_props.tools import ToolsConfig, load_suite, run_suite

#: no backoff sleeps, no timeout thread, one call at a time (exact counts)
FAST: dict[str, Any] = {"backoff_base_s": 0.0, "backoff_max_s": 0.0, "timeout_s": None,
                        "max_workers": 1}

#: (retries, fail_fast) -> the calls a persistently failing agent gets: each of the first
#: ``fail_fast`` draws costs ``1 + retries`` attempts, then the engine stops
CASES = [((0, 1), 1), ((2, 1), 3), ((0, 3), 3)]
#: enough distinct inputs for ``fail_fast`` draws before an entry point runs out of its own
PROMPTS = ["hello", "book a table", "what time is it", "refund order 1001", "hi there",
           "cancel my plan"]


class FlakyAgent:
    """Fails with probability ``fail`` (a retryable rate limit), else answers a verdict drawn
    from its own ``random.Random``; counts every invocation (thread-safe). It takes a prompt
    or a conversation's messages alike."""

    def __init__(self, fail: float = 1.0, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.fail = fail
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, prompt: Any) -> Any:
        with self.lock:
            self.calls += 1
            u, v = self.rng.random(), self.rng.random()
        if u < self.fail:
            raise AgentCallError("planted rate limit", kind="rate_limit", retryable=True)
        return {"verdict": "allow" if v < 0.5 else "block", "text": "ok", "tools": []}


def _engine(retries: int, fail_fast: int, **kw: Any) -> EngineConfig:
    return EngineConfig(retries=retries, fail_fast=fail_fast, **FAST, **kw)


# -- every entry point honours the nested engine --------------------------------------------


@pytest.mark.parametrize(("settings_", "calls"), CASES)
def test_measure_honours_retries_and_fail_fast(settings_: tuple[int, int], calls: int) -> None:
    agent = FlakyAgent()
    m = measure(from_callable(agent), ["a"], config=MeterConfig(engine=_engine(*settings_)))
    assert agent.calls == calls
    assert m.call == "undecided"


@pytest.mark.parametrize(("settings_", "inputs", "calls"), [
    ((0, 1), ["a"], 1), ((2, 1), ["a"], 3),
    # enlarge stops by itself when its baseline gets no verdict: three inputs, three draws
    ((0, 3), ["a", "b", "c"], 3)])
def test_enlarge_honours_retries_and_fail_fast(settings_: tuple[int, int], inputs: list[str],
                                               calls: int) -> None:
    agent = FlakyAgent()
    r = enlarge(from_callable(agent), inputs, strategy="moderation",
                config=EnlargeConfig(engine=_engine(*settings_, budget=60)))
    assert agent.calls == calls
    assert not r.complete
    assert "failed" in (r.cause or "")


@pytest.mark.parametrize(("settings_", "calls"), CASES)
def test_agent_property_honours_retries_and_fail_fast(settings_: tuple[int, int],
                                                      calls: int) -> None:
    agent = FlakyAgent()

    @agent_property(agent=from_callable(agent), config=PropertyConfig(engine=_engine(*settings_)))
    @settings(max_examples=10, database=None)
    @given(prompt=st.sampled_from(PROMPTS))
    def prop(check: Any, prompt: str) -> None:
        check.invariant(prompt, prompt.upper(), name="case")

    with pytest.raises(Inconclusive, match="failed"):
        prop()
    assert agent.calls == calls


@pytest.mark.parametrize(("settings_", "calls"), CASES)
def test_conversation_machine_honours_retries_and_fail_fast(settings_: tuple[int, int],
                                                            calls: int) -> None:
    agent = FlakyAgent()
    machine = conversation_machine(
        agent=from_history(agent), turns=st.sampled_from(PROMPTS),
        invariants=[never_before("issue_refund", required="lookup_order")],
        config=ConversationConfig(max_turns=2, engine=_engine(*settings_)))
    with pytest.raises(Inconclusive):
        run_conversation_test(machine, max_examples=10)
    assert agent.calls == calls


TOOLS_AGENT = FlakyAgent()


@pytest.mark.parametrize(("settings_", "calls"), CASES)
def test_tools_run_honours_retries_and_fail_fast(settings_: tuple[int, int], calls: int,
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("opentelemetry.sdk")
    monkeypatch.setattr(TOOLS_AGENT, "calls", 0)
    monkeypatch.setitem(sys.modules, "avp_tools_fake", sys.modules[__name__])
    path = tmp_path / "cases.yaml"
    path.write_text("config: {span_timeout_s: 0.05}\ncases:\n"
                    '  - {name: a, agent: "avp_tools_fake:TOOLS_AGENT", prompt: "hi", '
                    "required_tools: [lookup_order], runs: 5}\n")
    report = run_suite(load_suite(path), config=ToolsConfig(engine=_engine(*settings_)))
    assert TOOLS_AGENT.calls == calls
    (case,) = report.cases
    assert case.status == "error"
    assert "failed" in (case.message or "")


def test_tools_without_engine_keeps_the_files_settings(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``engine=None``: the file's retries (here 0) and its own stop after three errors."""
    pytest.importorskip("opentelemetry.sdk")
    monkeypatch.setattr(TOOLS_AGENT, "calls", 0)
    monkeypatch.setitem(sys.modules, "avp_tools_fake", sys.modules[__name__])
    path = tmp_path / "cases.yaml"
    path.write_text("config: {span_timeout_s: 0.05, retries: 0}\ncases:\n"
                    '  - {name: a, agent: "avp_tools_fake:TOOLS_AGENT", prompt: "hi", '
                    "required_tools: [lookup_order], runs: 5}\n")
    report = run_suite(load_suite(path), config=ToolsConfig())
    assert TOOLS_AGENT.calls == 3
    assert (report.cases[0].message or "").startswith("stopped after 3 failed calls in a row")


# -- config= and keywords -------------------------------------------------------------------


def test_flat_keywords_and_config_are_one_setting() -> None:
    agent = from_callable(lambda p: "allow")
    flat = measure(agent, ["a", "b", "c"], max_workers=1, budget=20)
    nested = measure(agent, ["a", "b", "c"],
                     config=MeterConfig(engine=EngineConfig(max_workers=1, budget=20)))
    assert (flat.call, flat.calls) == (nested.call, nested.calls) == ("undecided", 20)
    # a keyword given explicitly overrides the config; one left out takes the config's value
    over = measure(agent, ["a", "b", "c"], budget=30,
                   config=MeterConfig(alpha=0.1, engine=EngineConfig(max_workers=1, budget=20)))
    assert over.calls == 30
    assert over.alpha == 0.1


def test_flat_engine_keywords_reach_every_engine_field() -> None:
    agent = FlakyAgent()
    measure(from_callable(agent), ["a", "b"], retries=0, fail_fast=1, **{
        k: v for k, v in FAST.items() if k != "max_workers"}, max_workers=1)
    assert agent.calls == 1
    conf = configured(PropertyConfig, None, {"fail_fast": 2, "alpha": UNSET}, where="x")
    assert (conf.engine.fail_fast, conf.engine.budget, conf.alpha) == (2, 4000, 0.05)
    assert set(ENGINE_FIELDS) == set(EngineConfig.__dataclass_fields__)
    assert RunConfig(fail_fast=1, store_runner="ci").engine.store_runner == "ci"


def test_enlarge_keeps_its_old_engine_keyword_rule() -> None:
    """``engine=`` (before ``config=``): ``budget`` and ``max_workers`` applied over it."""
    gate = from_callable(lambda p: "block" if "kill" in p.lower() else "allow")
    r = enlarge(gate, ["hi", "hello"], strategy="moderation",
                engine=EngineConfig(retries=0, max_workers=2))
    assert r.budget == 600
    r = enlarge(gate, ["hi", "hello"], strategy="moderation",
                config=EnlargeConfig(engine=EngineConfig(budget=30)))
    assert r.budget == 30
    assert r.calls <= 30


def test_conversation_attributes_override_the_config_below_it() -> None:
    machine = conversation_machine(
        agent=from_history(lambda msgs: "ok"), turns=st.just("hi"),
        invariants=[never_before("b", required="a")], budget=500,
        config=ConversationConfig(alpha=0.1, engine=EngineConfig(budget=100, retries=0)))
    conf = machine_config(machine)
    assert (conf.alpha, conf.engine.budget, conf.engine.retries) == (0.1, 500, 0)
    assert machine.budget == 500  # the flat attributes mirror the config

    class Cheaper(machine):  # type: ignore[valid-type,misc]
        budget = 50

    assert machine_config(Cheaper).engine.budget == 50

    class Reconfigured(machine):  # type: ignore[valid-type,misc]
        config = ConversationConfig(engine=EngineConfig(budget=70))

    assert machine_config(Reconfigured).engine.budget == 70  # not the parent's 500
    assert machine_config(Reconfigured).alpha == 0.05


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(("build", "names"), [
    (lambda: MeterConfig(alpha=0.7), "alpha"),
    (lambda: MeterConfig(layer="words"), "layer"),
    (lambda: MeterConfig(engine=EngineConfig(budget=1)), "budget"),
    (lambda: EnlargeConfig(engine=EngineConfig()), "budget"),
    (lambda: EnlargeConfig(margin=0.5), "margin"),
    (lambda: PropertyConfig(beta=0.0), "beta"),
    (lambda: PropertyConfig(suppress_health_check=["no_such_check"]), "health check"),
    (lambda: PropertyConfig(engine=EngineConfig(error_policy="raise")), "error_policy"),
    (lambda: ConversationConfig(max_turns=0), "max_turns"),
    (lambda: ConversationConfig(engine="draws.db"), "EngineConfig"),  # type: ignore[arg-type]
    (lambda: ToolsConfig(runs=0), "runs"),
    (lambda: ToolsConfig(embedder="bert"), "embedder"),
    (lambda: measure(from_callable(str), ["a"], retry=0), "retries"),
    (lambda: agent_property(agent=from_callable(str), fail_fast=0), "fail_fast"),
    (lambda: enlarge(from_callable(str), ["a"], config=MeterConfig()), "EnlargeConfig"),
    (lambda: engine_with(None, {"timeout": 3}, where="demo"), "timeout_s"),
])
def test_bad_settings_are_one_line_naming_the_fix(build: Any, names: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        build()
    msg = str(info.value)
    assert "\n" not in msg
    assert names in msg
    assert any(w in msg for w in ("; ", " e.g. ", " use ", " pass ")), msg


def test_configs_are_frozen_keyword_only_and_keep_each_entry_points_defaults() -> None:
    for cls in (MeterConfig, EnlargeConfig, PropertyConfig, ConversationConfig, ToolsConfig):
        with pytest.raises(TypeError):
            cls(0.1)
        with pytest.raises(FrozenInstanceError):
            cls().runs = 3  # type: ignore[misc,attr-defined]
    assert MeterConfig().engine == EngineConfig()
    assert EnlargeConfig().engine.budget == 600
    assert PropertyConfig().engine.budget == 4000
    assert ConversationConfig().engine.budget == 20_000
    assert ToolsConfig().engine is None  # the case file's own settings
