"""An agent that fails persistently is stopped fast, with the cause, in every command."""

from __future__ import annotations

import asyncio

import pytest

from agentverity_props import from_callable
from agentverity_props.engine import Engine, EngineConfig, Probe
from agentverity_props.errors import DrawStopped, InvalidArgument


def _draw_many(eng: Engine, n: int) -> list[object]:
    async def go() -> list[object]:
        out: list[object] = []
        for i in range(n):
            try:
                out.append(await eng.draw(Probe.make(f"prompt {i}")))
            except DrawStopped as exc:
                out.append(exc)
        return out
    return asyncio.run(go())


def _raises(prompt: str) -> str:
    raise RuntimeError("model API key missing")


@pytest.mark.parametrize(("agent", "cause"), [
    (_raises, "RuntimeError: model API key missing"),
    (lambda p: None, "agent returned NoneType"),
    (lambda p: {"score": 0.2}, "no verdict"),
])
def test_a_persistently_failing_agent_stops_the_engine_with_the_cause(agent, cause) -> None:
    calls = []

    def counted(prompt: str) -> object:
        calls.append(prompt)
        return agent(prompt)

    eng = Engine(from_callable(counted), EngineConfig(max_workers=1, retries=0))
    got = _draw_many(eng, 40)
    assert len(calls) == 5
    assert eng.stopping
    assert eng.stop_cause is not None
    assert cause in eng.stop_cause
    assert eng.ledger.to_dict()["stop_cause"] == eng.stop_cause
    assert all(isinstance(g, DrawStopped) for g in got[5:])


def test_one_usable_answer_first_means_later_failures_are_evidence_not_a_stop() -> None:
    state = {"n": 0}

    def flaky(prompt: str) -> str:
        state["n"] += 1
        if state["n"] == 1:
            return "allow"
        raise RuntimeError("boom")

    eng = Engine(from_callable(flaky), EngineConfig(max_workers=1, retries=0))
    _draw_many(eng, 12)
    assert state["n"] == 12
    assert eng.stop_cause is None


def test_fail_fast_can_be_turned_off_and_is_validated() -> None:
    eng = Engine(from_callable(_raises), EngineConfig(max_workers=1, retries=0, fail_fast=None))
    _draw_many(eng, 8)
    assert eng.ledger.calls == 8
    assert eng.stop_cause is None
    with pytest.raises(InvalidArgument):
        EngineConfig(fail_fast=0)
