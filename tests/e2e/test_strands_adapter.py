"""from_strands against real Strands Agents running on the offline rule-driven model."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

pytest.importorskip("strands")

from pydantic import BaseModel
from strands import Agent, tool
from strands.types.exceptions import ModelThrottledException

from agentverity_props.adapters import Adapter
from agentverity_props.adapters import from_strands as public_from_strands
from agentverity_props.adapters._strands import StrandsAdapter, from_strands
from agentverity_props.errors import AgentCallError, InvalidArgument
from agentverity_props.examples._offline_model import (
    OfflineModel,
    call_tool,
    final,
    first_user_text,
    tool_results,
)

pytestmark = pytest.mark.e2e


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend.
        b: second addend.
    """
    return a + b


@tool
def explode(reason: str) -> str:
    """A tool that always fails.

    Args:
        reason: why.
    """
    raise RuntimeError(f"tool failed: {reason}")


class Verdict(BaseModel):
    verdict: str


def two_tools_then_answer(messages, tool_specs, rng):
    done = tool_results(messages)
    if not done:
        return call_tool("add", a=2, b=3)
    if len(done) == 1:
        return call_tool("explode", reason="on purpose")
    statuses = ",".join(status for _, status, _ in done)
    return final(json.dumps({"verdict": "allow", "statuses": statuses}))


def echo(messages, tool_specs, rng):
    return final("echo: " + first_user_text(messages))


class Recorder:
    """A factory that keeps every agent it builds, to inspect their messages afterwards."""

    def __init__(self, policy, tools=(), seed=0):
        self.policy = policy
        self.tools = list(tools)
        self.rng = random.Random(seed)
        self.built: list[Agent] = []

    def __call__(self) -> Agent:
        agent = Agent(model=OfflineModel(self.policy, rng=self.rng), tools=self.tools,
                      callback_handler=None, retry_strategy=None)
        self.built.append(agent)
        return agent


def test_text_tools_statuses_and_usage():
    factory = Recorder(two_tools_then_answer, [add, explode])
    adapter = from_strands(factory)
    obs = adapter.invoke("add some numbers")
    assert obs.ok
    assert json.loads(obs.text) == {"verdict": "allow", "statuses": "success,error"}
    assert [(t.name, t.status) for t in obs.tools] == [("add", "success"), ("explode", "error")]
    assert dict(obs.tools[0].arguments) == {"a": 2, "b": 3}
    assert obs.tools[0].call_id
    assert obs.tools[0].call_id != obs.tools[1].call_id
    assert obs.fired_tools() == ("add",)
    assert obs.raw == {"stop_reason": "end_turn"}
    assert obs.verdict is None  # left to the engine's extractor
    assert obs.usage is not None
    assert obs.usage.input_tokens > 0
    assert obs.usage.output_tokens > 0
    assert obs.usage.total_tokens == obs.usage.input_tokens + obs.usage.output_tokens
    assert obs.latency_s > 0
    assert adapter.is_async is True
    assert isinstance(adapter, Adapter)


def test_structured_output_is_raw_and_verdict_and_its_tool_is_hidden():
    factory = Recorder(two_tools_then_answer, [add, explode])
    adapter = from_strands(factory, structured_output_model=Verdict)
    obs = adapter.invoke("add some numbers")
    assert obs.raw == {"verdict": "allow"}
    assert obs.verdict == "allow"
    assert [t.name for t in obs.tools] == ["add", "explode"]
    # the structured-output tool really ran in the conversation, it is only left out of tools
    used = [b["toolUse"]["name"] for m in factory.built[0].messages for b in m["content"]
            if "toolUse" in b]
    assert used == ["add", "explode", "Verdict"]
    assert json.loads(obs.text)["verdict"] == "allow"


def test_fresh_agent_per_call_no_history_growth():
    factory = Recorder(echo)
    adapter = from_strands(factory)
    first = adapter.invoke("first prompt")
    second = adapter.invoke("second prompt")
    assert first.text == "echo: first prompt"
    assert second.text == "echo: second prompt"
    assert len(factory.built) == 2
    assert factory.built[0] is not factory.built[1]
    texts = [b.get("text") for m in factory.built[1].messages for b in m["content"]]
    assert "first prompt" not in texts
    assert len(factory.built[1].messages) == len(factory.built[0].messages) == 2


def test_concurrent_ainvoke_uses_separate_agents():
    factory = Recorder(echo)
    adapter = from_strands(factory)

    async def main():
        return await asyncio.gather(*(adapter.ainvoke(f"prompt {i}") for i in range(8)))

    results = asyncio.run(main())
    assert [o.text for o in results] == [f"echo: prompt {i}" for i in range(8)]
    assert len({id(a) for a in factory.built}) == 8


def test_sync_invoke_works_inside_a_running_loop():
    adapter = from_strands(Recorder(echo))

    async def main():
        return adapter.invoke("from a coroutine")

    assert asyncio.run(main()).text == "echo: from a coroutine"


def test_invoke_kwargs_reach_the_agent():
    seen = []

    def policy(messages, tool_specs, rng):
        return final("ok")

    class Probe(Recorder):
        def __call__(self):
            agent = super().__call__()
            original = agent.invoke_async

            async def spy(prompt, **kwargs):
                seen.append(kwargs)
                return await original(prompt, **kwargs)

            agent.invoke_async = spy
            return agent

    state = {"user": "u1"}
    adapter = from_strands(Probe(policy), invoke_kwargs={"invocation_state": state})
    assert adapter.invoke("x").text == "ok"
    assert adapter.invoke("y").text == "ok"
    assert [kw["invocation_state"]["user"] for kw in seen] == ["u1", "u1"]
    # Strands writes into invocation_state; each call gets its own copy, the user's is intact
    assert seen[0]["invocation_state"] is not seen[1]["invocation_state"]
    assert state == {"user": "u1"}


def _raising(exc):
    def policy(messages, tool_specs, rng):
        raise exc

    return policy


def test_throttling_is_a_retryable_rate_limit():
    adapter = from_strands(Recorder(_raising(ModelThrottledException("slow down"))))
    with pytest.raises(AgentCallError) as info:
        adapter.invoke("hi")
    assert info.value.kind == "rate_limit"
    assert info.value.retryable is True
    assert "slow down" in str(info.value)
    assert isinstance(info.value.__cause__, ModelThrottledException)


def test_other_model_errors_are_not_retryable():
    adapter = from_strands(Recorder(_raising(ValueError("model broke"))))
    with pytest.raises(AgentCallError) as info:
        adapter.invoke("hi")
    assert info.value.kind == "error"
    assert info.value.retryable is False
    assert str(info.value) == "ValueError: model broke"


def test_factory_returning_the_same_agent_twice_is_an_error():
    shared = Recorder(echo)()
    adapter = from_strands(lambda: shared)
    assert adapter.invoke("one").text == "echo: one"
    with pytest.raises(AgentCallError, match="already used"):
        adapter.invoke("two")


def test_preloaded_few_shot_messages_are_allowed():
    def factory():
        return Agent(model=OfflineModel(echo), callback_handler=None,
                     messages=[{"role": "user", "content": [{"text": "example question"}]},
                               {"role": "assistant", "content": [{"text": "example answer"}]}])

    assert from_strands(factory).invoke("real question").text == "echo: example question"


def test_offline_model_structured_output_method():
    model = OfflineModel(two_tools_then_answer, seed=0)
    messages = [{"role": "user", "content": [{"text": "q"}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success",
                                                             "content": [{"text": "5"}]}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "t2", "status": "error",
                                                             "content": [{"text": "x"}]}}]}]

    async def main():
        return [event async for event in model.structured_output(Verdict, messages)]

    assert asyncio.run(main()) == [{"output": Verdict(verdict="allow")}]
    assert model.get_config()["model_id"] == "offline-rules"
    model.update_config(model_id="renamed")
    assert model.get_config()["model_id"] == "renamed"


def test_factory_returning_something_else_is_an_error():
    adapter = from_strands(lambda: "not an agent")
    with pytest.raises(AgentCallError, match=r"not a strands\.Agent"):
        adapter.invoke("x")


def test_factory_raising_is_an_error():
    def factory():
        raise OSError("no config")

    adapter = from_strands(factory)
    with pytest.raises(AgentCallError, match="raised OSError: no config"):
        adapter.invoke("x")


def test_eager_validation():
    agent = Recorder(echo)()
    with pytest.raises(InvalidArgument, match=r"pass a factory: lambda: Agent\(\.\.\.\)"):
        from_strands(agent)
    with pytest.raises(InvalidArgument, match="zero-argument factory"):
        from_strands(42)
    with pytest.raises(InvalidArgument, match="requires arguments"):
        from_strands(lambda prompt: agent)
    with pytest.raises(InvalidArgument, match="pydantic BaseModel"):
        from_strands(Recorder(echo), structured_output_model=dict)
    with pytest.raises(InvalidArgument, match="mapping"):
        from_strands(Recorder(echo), invoke_kwargs=[("a", 1)])
    with pytest.raises(InvalidArgument, match="not inside invoke_kwargs"):
        from_strands(Recorder(echo), invoke_kwargs={"structured_output_model": Verdict})


def make_echo_agent() -> Agent:
    return Agent(model=OfflineModel(echo), callback_handler=None)


def test_identity_default_and_explicit():
    assert from_strands(make_echo_agent).identity == (
        f"strands:{__name__}.make_echo_agent")
    assert from_strands(make_echo_agent, identity="mine").identity == "mine"
    assert repr(from_strands(make_echo_agent, identity="strands:x")) == "from_strands(x)"


def test_public_wrapper_builds_the_same_adapter():
    adapter = public_from_strands(make_echo_agent, structured_output_model=None)
    assert isinstance(adapter, StrandsAdapter)
    assert adapter.invoke("hi").text == "echo: hi"


def test_a_recorded_runs_token_totals_are_the_adapters_own_sums(tmp_path):
    from _recorded_tokens import check_recorded_tokens

    check_recorded_tokens(from_strands(Recorder(two_tools_then_answer, [add, explode])),
                          ["add some numbers", "add more numbers", "sum these"], tmp_path)
