"""from_openai_agents against the real OpenAI Agents SDK (Runner, function tools, tracing)
driven by offline ``Model`` implementations; no network (every test runs with
OPENAI_API_KEY unset, and the CLI runs under a socket guard that records any connection)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import textwrap
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, function_tool, set_trace_processors
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import BaseModel

from agentverity_props import agent_property
from agentverity_props.adapters import as_adapter, from_openai_agents, load_agent
from agentverity_props.adapters._openai_agents import OpenAIAgentsAdapter, is_openai_agent
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError, InvalidArgument, PropertyViolation
from agentverity_props.observation import by_key

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "openai_agents_agent.py"


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """No API key, no upload processor, and any connection attempt recorded and refused."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # the adapter registers its own local processor again on its next call
    set_trace_processors([])
    attempts: list[object] = []

    def deny(*args, **kwargs):
        attempts.append(args[1:] if args else kwargs)
        raise OSError("network access denied by the test")

    monkeypatch.setattr(socket.socket, "connect", deny)
    monkeypatch.setattr(socket.socket, "connect_ex", deny)
    monkeypatch.setattr(socket, "getaddrinfo", deny)
    yield
    assert attempts == []


# ------------------------------------------------------------------ an offline model


def _call(name: str, call_id: str, **arguments: Any) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(id=f"fc_{call_id}", call_id=call_id, type="function_call",
                                    name=name, arguments=json.dumps(arguments))


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="msg", type="message", role="assistant",
                                 status="completed",
                                 content=[ResponseOutputText(text=text, type="output_text",
                                                             annotations=[])])


class ScriptModel(Model):
    """Plays ``script(turn, input_items, rng)`` -> output items; records every input."""

    def __init__(self, script, *, rng: random.Random | None = None) -> None:
        self.script = script
        self.rng = rng or random.Random(0)
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, *, previous_response_id,
                           conversation_id, prompt):
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        turn = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call")
        out = self.script(turn, items, self.rng)
        if isinstance(out, Exception):
            raise out
        return ModelResponse(output=list(out), response_id=None,
                             usage=Usage(requests=1, input_tokens=10, output_tokens=3,
                                         total_tokens=13))

    async def stream_response(self, *args, **kwargs):  # pragma: no cover - not used here
        raise NotImplementedError
        yield


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend.
        b: second addend.
    """
    return a + b


@function_tool
def explode(reason: str) -> str:
    """Always fails.

    Args:
        reason: why.
    """
    raise RuntimeError(f"tool failed: {reason}")


@function_tool(failure_error_function=lambda ctx, exc: "the service is busy, try later")
def flaky_service(query: str) -> str:
    """Fails with a custom message for the model.

    Args:
        query: what to ask.
    """
    raise ConnectionError("backend down")


class Verdict(BaseModel):
    verdict: str
    note: str = ""


class Label(BaseModel):
    label: str
    reason: str


def add_then_explode(turn, items, rng):
    if turn == 0:
        return [_call("add", "c1", a=2, b=3), _call("explode", "c2", reason="on purpose")]
    return [_message(json.dumps({"verdict": "allow", "note": "done"}))]


def make(script, *, tools=(add, explode), output_type=Verdict, rng=None) -> Agent:
    return Agent(name="t", instructions="test", model=ScriptModel(script, rng=rng),
                 tools=list(tools), output_type=output_type)


# ------------------------------------------------------------------ observation


def test_tools_in_order_an_erroring_tool_does_not_fire_verdict_and_usage():
    agent = make(add_then_explode)
    obs = from_openai_agents(agent).invoke("go")
    assert [(t.name, dict(t.arguments), t.status, t.call_id) for t in obs.tools] == [
        ("add", {"a": 2, "b": 3}, "success", "c1"),
        ("explode", {"reason": "on purpose"}, "error", "c2")]
    assert obs.fired_tools() == ("add",)
    assert obs.key("tools") == "add"
    assert obs.verdict == "allow"
    assert obs.raw == {"verdict": "allow", "note": "done"}
    assert json.loads(obs.text) == {"verdict": "allow", "note": "done"}
    # two model calls of 10 + 3 tokens each, summed from raw_responses
    assert (obs.usage.input_tokens, obs.usage.output_tokens, obs.usage.total_tokens) == (
        20, 6, 26)


def test_a_custom_failure_message_is_an_error_through_the_function_span():
    def script(turn, items, rng):
        if turn == 0:
            return [_call("flaky_service", "c1", query="x")]
        return [_message(json.dumps({"verdict": "review"}))]

    agent = make(script, tools=[flaky_service])
    obs = from_openai_agents(agent).invoke("go")
    assert [(t.name, t.status) for t in obs.tools] == [("flaky_service", "error")]
    assert obs.fired_tools() == ()
    # the model saw the custom message, so only the span can tell it was a failure
    last_input = agent.model.inputs[-1]
    outputs = [i["output"] for i in last_input if i.get("type") == "function_call_output"]
    assert outputs == ["the service is busy, try later"]


def test_without_tracing_only_the_default_failure_message_marks_an_error():
    """Documented fallback: with tracing disabled no span arrives, so the default message is
    recognised and a custom one is not."""
    def script(turn, items, rng):
        if turn == 0:
            return [_call("explode", "c1", reason="x"), _call("flaky_service", "c2", query="y")]
        return [_message(json.dumps({"verdict": "allow"}))]

    agent = make(script, tools=[explode, flaky_service])
    adapter = from_openai_agents(agent, run_config=RunConfig(tracing_disabled=True))
    obs = adapter.invoke("go")
    assert [(t.name, t.status) for t in obs.tools] == [("explode", "error"),
                                                       ("flaky_service", "success")]


def test_the_processor_comes_back_after_set_trace_processors_drops_it():
    def script(turn, items, rng):
        if turn == 0:
            return [_call("flaky_service", "c1", query="x")]
        return [_message(json.dumps({"verdict": "review"}))]

    adapter = from_openai_agents(make(script, tools=[flaky_service]))
    assert adapter.invoke("a").tools[0].status == "error"
    set_trace_processors([])  # a user's code replacing the processors after the first call
    assert adapter.invoke("b").tools[0].status == "error"


def test_missing_verdict_field_fails_naming_the_fields_present():
    def script(turn, items, rng):
        return [_message(json.dumps({"label": "block", "reason": "r"}))]

    agent = make(script, tools=[], output_type=Label)
    with pytest.raises(AgentCallError, match=r"no 'decision' \(its fields: label, reason\)") as e:
        from_openai_agents(agent, verdict="decision").invoke("x")
    assert e.value.kind == "bad_output"
    assert not e.value.retryable
    assert from_openai_agents(agent, verdict="label").invoke("x").verdict == "block"
    # by default a structured output without a verdict field leaves the choice to the
    # engine's extractor (--verdict-key), as does verdict=None
    for adapter in (from_openai_agents(agent), from_openai_agents(agent, verdict=None)):
        obs = adapter.invoke("x")
        assert obs.verdict is None
        assert obs.raw == {"label": "block", "reason": "r"}
        with Engine(adapter, EngineConfig(extractor=by_key("label"))) as eng:
            assert run_sync(eng.draw(Probe.make("x"))).verdict == "block"
        with Engine(adapter, EngineConfig(extractor=by_key("verdict"))) as eng:
            missing = run_sync(eng.draw(Probe.make("x")))
        assert missing.verdict is None
        assert "keys label, reason" in missing.no_decision.reason


def test_a_null_verdict_field_fails_even_by_default():
    agent = make(lambda turn, items, rng: [_message(json.dumps({"verdict": None}))],
                 tools=[], output_type=Optional)
    with pytest.raises(AgentCallError, match="'verdict' = None") as e:
        from_openai_agents(agent).invoke("x")
    assert e.value.kind == "bad_output"


class Optional(BaseModel):
    verdict: str | None


def test_a_failed_verdict_field_through_the_engine_is_a_failure_never_a_verdict():
    def script(turn, items, rng):
        return [_message(json.dumps({"label": "block", "reason": "r"}))]

    with Engine(from_openai_agents(make(script, tools=[], output_type=Label), verdict="kind"),
                EngineConfig(retries=0)) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.verdict is None
    assert obs.error is not None
    assert obs.error.kind == "bad_output"
    assert "label, reason" in obs.error.message


def test_text_output_is_the_answer_and_the_extractor_decides():
    agent = make(lambda turn, items, rng: [_message("  block  ")], tools=[], output_type=None)
    obs = from_openai_agents(agent).invoke("x")
    assert (obs.text, obs.raw, obs.verdict, obs.tools) == ("block", None, None, ())
    with Engine(from_openai_agents(agent)) as eng:
        assert run_sync(eng.draw(Probe.make("x"))).verdict == "block"


def test_tools_of_an_agent_used_as_a_tool_are_not_the_outer_agents():
    inner = make(lambda turn, items, rng: (
        [_call("explode", "i1", reason="inner")] if turn == 0 else [_message("inner done")]),
        tools=[explode], output_type=None)
    helper = inner.as_tool(tool_name="helper", tool_description="an inner agent")

    def outer_script(turn, items, rng):
        if turn == 0:
            return [_call("helper", "o1", input="help me")]
        return [_message(json.dumps({"verdict": "allow"}))]

    obs = from_openai_agents(make(outer_script, tools=[helper])).invoke("go")
    assert [(t.name, t.status) for t in obs.tools] == [("helper", "success")]


def test_span_readers_see_the_same_tools_and_an_agent_without_tools_still_has_spans():
    pytest.importorskip("opentelemetry.sdk")
    from agentverity_props.otel import TracedAdapter

    traced = TracedAdapter(from_openai_agents(make(add_then_explode)), span_timeout_s=5)
    obs = traced.invoke("go")
    assert [(t.name, dict(t.arguments), t.status) for t in obs.tools] == [
        ("add", {"a": 2, "b": 3}, "success"), ("explode", {"reason": "on purpose"}, "error")]
    quiet = make(lambda turn, items, rng: [_message(json.dumps({"verdict": "a"}))], tools=[])
    obs = TracedAdapter(from_openai_agents(quiet), span_timeout_s=5).invoke("go")
    assert obs.tools == ()
    assert obs.verdict == "a"


def test_the_example_model_streams_too():
    ex = _example()

    async def main():
        run = Runner.run_streamed(ex.make_agent(rng=random.Random(0)), "Do you ship to Canada?")
        async for _ in run.stream_events():
            pass
        return run.final_output

    assert asyncio.run(main()).verdict == "faq"


# ------------------------------------------------------------------ noise and fresh state


def coin_script(turn, items, rng):
    return [_message(json.dumps({"verdict": rng.choice(["allow", "block"])}))]


def _verdicts(adapter, n):
    async def main():
        return await asyncio.gather(*(adapter.ainvoke(f"p{i}") for i in range(n)))

    return [o.verdict for o in asyncio.run(main())]


def test_a_noisy_model_is_random_through_its_own_generator_only():
    def adapter(seed_):
        rng = random.Random(seed_)
        return from_openai_agents(lambda: make(coin_script, tools=[], rng=rng))

    random.seed(1)
    first = _verdicts(adapter(7), 40)
    random.seed(2)  # reseeding the global generator (as Hypothesis does) changes nothing
    second = _verdicts(adapter(7), 40)
    assert first == second
    assert set(Counter(first)) == {"allow", "block"}
    assert _verdicts(adapter(8), 40) != first


def test_every_call_starts_from_an_empty_conversation():
    model = ScriptModel(lambda turn, items, rng: [_message(json.dumps({"verdict": "a"}))])
    agent = Agent(name="t", model=model, output_type=Verdict)
    adapter = from_openai_agents(agent)
    for prompt in ("one", "two", "three"):
        adapter.invoke(prompt)
    assert [len(i) for i in model.inputs] == [1, 1, 1]
    assert [i[0]["content"] for i in model.inputs] == ["one", "two", "three"]


def test_factories_run_per_call_and_sessions_are_fresh():
    from agents import SQLiteSession

    built, sessions = [], []

    def factory():
        agent = make(lambda turn, items, rng: [_message(json.dumps({"verdict": "a"}))],
                     tools=[])
        built.append(agent)
        return agent

    def session():
        sessions.append(SQLiteSession(f"s{len(sessions)}"))
        return sessions[-1]

    adapter = from_openai_agents(factory, session_factory=session,
                                 context_factory=lambda: {"calls": 0})
    for prompt in ("one", "two"):
        adapter.invoke(prompt)
    assert len(built) == 2
    assert len(sessions) == 2
    # each session saw only its own call: the second model input holds one user message
    assert [len(a.model.inputs[0]) for a in built] == [1, 1]


def test_concurrent_calls_share_an_agent_instance_safely():
    agent = make(add_then_explode)
    adapter = from_openai_agents(agent)

    async def main():
        return await asyncio.gather(*(adapter.ainvoke(f"p{i}") for i in range(12)))

    for obs in asyncio.run(main()):
        assert [(t.name, t.status) for t in obs.tools] == [("add", "success"),
                                                           ("explode", "error")]


# ------------------------------------------------------------------ failures and validation


class RateLimitError(Exception):
    """Stands in for openai.RateLimitError: classified by class name and module."""


RateLimitError.__module__ = "openai._exceptions"


def test_provider_throttling_is_retryable_other_errors_are_not():
    agent = make(lambda turn, items, rng: RateLimitError("slow down"), tools=[])
    with pytest.raises(AgentCallError) as e:
        from_openai_agents(agent).invoke("x")
    assert (e.value.kind, e.value.retryable) == ("rate_limit", True)

    bad_json = make(lambda turn, items, rng: [_message("not json")], tools=[])
    with pytest.raises(AgentCallError) as e:
        from_openai_agents(bad_json).invoke("x")
    assert (e.value.kind, e.value.retryable) == ("bad_output", False)
    assert "ModelBehaviorError" in str(e.value)

    loop = make(lambda turn, items, rng: [_call("add", f"c{turn}", a=1, b=1)])
    with pytest.raises(AgentCallError, match="MaxTurnsExceeded") as e:
        from_openai_agents(loop, max_turns=2).invoke("x")
    assert not e.value.retryable


def test_the_engine_timeout_cancels_the_run_and_leaves_no_trace_state():
    from agentverity_props.adapters import _openai_agents_trace as trace_mod

    class SlowModel(ScriptModel):
        async def get_response(self, *args, **kwargs):
            await asyncio.sleep(30)

    slow = Agent(name="slow", model=SlowModel(None), output_type=Verdict)
    with Engine(from_openai_agents(slow), EngineConfig(timeout_s=0.3, retries=0)) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.error is not None
    assert obs.error.kind == "timeout"
    with Engine(from_openai_agents(make(add_then_explode)), EngineConfig()) as eng:
        for i in range(20):
            assert run_sync(eng.draw(Probe.make(f"p{i}"))).fired_tools() == ("add",)
    assert trace_mod._processor is not None
    assert trace_mod._processor._watches == {}  # memory stays flat over many calls


def test_factory_problems_are_call_errors():
    with pytest.raises(AgentCallError, match=r"returned str, not an agents\.Agent"):
        from_openai_agents(lambda: "agent").invoke("x")

    def boom():
        raise ValueError("no config")

    with pytest.raises(AgentCallError, match="raised ValueError: no config"):
        from_openai_agents(boom).invoke("x")


def test_eager_validation():
    with pytest.raises(InvalidArgument, match="the class Agent"):
        from_openai_agents(Agent)
    with pytest.raises(InvalidArgument, match="requires arguments"):
        from_openai_agents(lambda name: make(add_then_explode))
    with pytest.raises(InvalidArgument, match="zero-argument callable"):
        from_openai_agents(42)
    with pytest.raises(InvalidArgument, match="verdict"):
        from_openai_agents(make(add_then_explode), verdict="a..b")
    with pytest.raises(InvalidArgument, match="RunConfig"):
        from_openai_agents(make(add_then_explode), run_config={"tracing_disabled": True})
    with pytest.raises(InvalidArgument, match="max_turns"):
        from_openai_agents(make(add_then_explode), max_turns=0)


def test_detection_by_module_and_sdk_without_importing(monkeypatch):
    agent = make(add_then_explode)
    assert is_openai_agent(agent)
    assert not is_openai_agent(Agent)
    assert not is_openai_agent(42)
    mine = types.new_class("Agent")
    mine.__module__ = "agents.mine"
    assert is_openai_agent(mine())  # the SDK is loaded and the class lives under agents.
    monkeypatch.setitem(sys.modules, "agents", types.ModuleType("agents"))
    assert not is_openai_agent(mine())  # a user's own package named agents is not the SDK
    assert not is_openai_agent(agent)


def test_as_adapter_and_identity():
    agent = make(add_then_explode)
    adapter = as_adapter(agent)
    assert isinstance(adapter, OpenAIAgentsAdapter)
    assert adapter.identity == "openai-agents:t"
    assert from_openai_agents(add_then_explode_factory).identity == (
        f"openai-agents:{__name__}.add_then_explode_factory")
    assert from_openai_agents(agent, identity="mine").identity == "mine"


def add_then_explode_factory() -> Agent:
    return make(add_then_explode)


# ------------------------------------------------------------------ references and the example


def test_references_detect_an_agent_and_a_factory(tmp_path):
    path = tmp_path / "oa_ref.py"
    path.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(EXAMPLE.parent)!r})
        from openai_agents_agent import make_agent as make_agent
        agent = make_agent()
        def not_an_agent():
            return 3
    """))
    by_factory = load_agent(f"{path}:make_agent")
    by_instance = load_agent(f"{path}:agent")
    assert by_factory.identity.startswith("openai-agents:")
    assert by_factory._is_factory
    assert not by_instance._is_factory
    for adapter in (by_factory, by_instance):
        obs = adapter.invoke("Refund order 1002 please, wrong size.")
        assert obs.verdict == "refund"
        assert [(t.name, t.status) for t in obs.tools] == [("lookup_order", "success"),
                                                           ("issue_refund", "success")]


def _example():
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import openai_agents_agent
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    return openai_agents_agent


@pytest.mark.parametrize(
    ("prompt", "verdict", "tools"),
    [
        ("How do I reset my password?", "faq", [("search_faq", "success")]),
        ("I want a refund for order 1001, it arrived broken.", "refund",
         [("lookup_order", "success"), ("issue_refund", "success")]),
        ("Refund order 1004 please", "escalate",
         [("lookup_order", "success"), ("issue_refund", "error")]),
        ("I want a refund but I lost my order number.", "escalate", [("lookup_order", "error")]),
        ("My lawyer will be in touch about this.", "escalate", [("escalate_to_human", "success")]),
    ],
)
def test_example_routes_as_documented(prompt, verdict, tools):
    ex = _example()
    obs = from_openai_agents(lambda: ex.make_agent(rng=random.Random(0))).invoke(prompt)
    assert obs.verdict == verdict
    assert [(t.name, t.status) for t in obs.tools] == tools


def test_example_is_noisy_only_on_ambiguous_requests():
    ex = _example()
    rng = random.Random(3)
    adapter = from_openai_agents(lambda: ex.make_agent(rng=rng))
    ambiguous = Counter(_same(adapter, "This is ridiculous, refund order 1003 now.", 60))
    assert set(ambiguous) == {"refund", "escalate"}
    assert 0.05 < ambiguous["escalate"] / 60 < 0.45
    assert set(_same(adapter, "Do you ship to Canada?", 30)) == {"faq"}
    calm = from_openai_agents(lambda: ex.make_agent(rng=rng, ambiguity=0.0))
    assert set(_same(calm, "This is ridiculous, refund order 1003 now.", 30)) == {"refund"}


def _same(adapter, prompt, n):
    async def main():
        return await asyncio.gather(*(adapter.ainvoke(prompt) for _ in range(n)))

    return [o.verdict for o in asyncio.run(main())]


WORDS = ["hello", "please", "help", "urgent", "order", "return", "now"]
PLANTED_MINIMUM = "hello hello hello hello hello hello urgent"  # 42 characters


def test_agent_property_shrinks_the_planted_case_bug_to_its_minimum():
    """The buggy example escalates an upper-case URGENT in prompts over 40 characters; the
    case relation prompt -> prompt.upper() shrinks to the shortest such prompt the strategy
    can build, while 'return' keeps the agent noisy (faq/refund) on both sides."""
    ex = _example()
    rng = random.Random(11)
    adapter = from_openai_agents(lambda: ex.make_agent(rng=rng, planted_bug=True),
                                 identity="openai-agents:buggy-triage")
    prompts = st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 15),
                        st.sampled_from(WORDS))

    @agent_property(agent=adapter)
    @seed(5)
    @settings(database=None, max_examples=60, suppress_health_check=list(HealthCheck))
    @given(prompt=prompts)
    def test_case_invariance(check, prompt):
        check.invariant(prompt, prompt.upper(), name="case")

    with pytest.raises(PropertyViolation):
        test_case_invariance()
    from agentverity_props.property._records import RECORDS
    assert RECORDS[-1].minimal is not None
    assert RECORDS[-1].minimal.source == PLANTED_MINIMUM


# ------------------------------------------------------------------ the CLI, offline

GUARD = textwrap.dedent("""
    import os, socket, sys
    log = os.environ["NETWORK_LOG"]
    def deny(*args, **kwargs):
        with open(log, "a") as f:
            f.write(repr(args[1:] if args else kwargs) + "\\n")
        raise OSError("network access denied by the test")
    socket.socket.connect = deny
    socket.socket.connect_ex = deny
    socket.create_connection = deny
    socket.getaddrinfo = deny
    from agentverity_props.cli import main
    sys.argv = ["agentverity-props", *sys.argv[1:]]
    main()
""")


def _cli(args, tmp_path, timeout=240):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["NETWORK_LOG"] = str(tmp_path / "network.log")
    proc = subprocess.run([sys.executable, "-c", GUARD, *args], cwd=ROOT, env=env, check=False,
                          capture_output=True, text=True, timeout=timeout)
    attempts = Path(env["NETWORK_LOG"])
    assert not attempts.exists(), attempts.read_text()
    return proc


def test_cli_run_on_the_example_factory_offline(tmp_path):
    # six of the shipped inputs and two relations: every phase of a run (meter, blindness,
    # dependence, screen, pooled effects, the change check) goes through the SDK offline;
    # the whole probe set with every relation is docs/agents.md's command
    # (tests/e2e/test_docs_commands.py runs it)
    out, inputs = tmp_path / "run.json", tmp_path / "support6.txt"
    lines = (ROOT / "examples" / "inputs" / "support.txt").read_text().splitlines()
    inputs.write_text("\n".join([ln for ln in lines if ln.strip()
                                  and not ln.startswith("#")][:6]) + "\n")
    proc = _cli(["run", "--agent", "examples/openai_agents_agent.py:make_agent",
                 "--inputs", str(inputs), "--relations", "case,typo", "--format", "json",
                 "-o", str(out), "--no-progress"], tmp_path)
    # 0 clean, 1 finding (the typo relation, usually), 2 undecided on a noisy input; the
    # ledger below rules out the other meaning of 2 (failed calls, a stop)
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert "Traceback" not in proc.stderr
    assert "error:" not in proc.stderr
    data = json.loads(out.read_text())
    text = json.dumps(data)
    assert "openai-agents:openai_agents_agent.make_agent" in text
    ledger = data.get("ledger") or {}
    assert ledger.get("failures") == 0
    assert ledger.get("stop_cause") is None
    assert not ledger.get("interrupted")
    assert ledger.get("input_tokens", 0) > 0
    assert ledger.get("calls", 0) > 50


def test_cli_tools_reads_tool_statuses_offline(tmp_path):
    ref = f"{EXAMPLE}:make_agent"
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent(f"""
        cases:
          - name: faq only
            agent: {ref}
            prompt: "How do I reset my password?"
            required_tools: [search_faq]
            forbidden_tools: [issue_refund, lookup_order]
          - name: refund in order with its arguments
            agent: {ref}
            prompt: "I want a refund for order 1001, it arrived broken."
            runs: 3
            tool_sequence: [lookup_order, issue_refund]
            tool_args:
              - {{tool: lookup_order, arg: order_id, equals: "1001"}}
              - {{tool: issue_refund, arg: amount, lt: 500}}
          - name: a refund over the limit does not fire
            agent: {ref}
            prompt: "Refund order 1004 please"
            required_tools: [lookup_order, issue_refund]
    """))
    report = tmp_path / "tools.json"
    proc = _cli(["tools", "--config", str(cases), "--format", "json", "-o", str(report),
                 "--no-progress"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    status = {c["name"]: c["status"] for c in data["cases"]}
    assert status == {"faq only": "pass", "refund in order with its arguments": "pass",
                      "a refund over the limit does not fire": "fail"}
    failed = next(c for c in data["cases"] if c["name"].startswith("a refund"))
    assert "issue_refund" in json.dumps(failed)


def test_a_recorded_runs_token_totals_are_the_adapters_own_sums(tmp_path):
    from _recorded_tokens import check_recorded_tokens

    check_recorded_tokens(from_openai_agents(add_then_explode_factory),
                          ["go", "go on", "go further"], tmp_path)
