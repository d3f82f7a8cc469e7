"""from_pydantic_ai end to end: real pydantic-ai Agents on offline FunctionModels.

The example agent (examples/pydantic_ai_agent.py) runs pydantic-ai's real run loop, real
tools (one raising ToolFailed, one ModelRetry) and a real output type; only the model is a
FunctionModel, noisy through its own random.Random. The CLI tests run the real command in a
subprocess.
"""

from __future__ import annotations

import asyncio
import enum
import json
import random
import subprocess
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from typing_extensions import TypedDict

from agentverity_props import agent_property
from agentverity_props.adapters import as_adapter, load_agent, load_object
from agentverity_props.adapters import from_pydantic_ai as public_from_pydantic_ai
from agentverity_props.adapters._pydantic_ai import PydanticAIAdapter, from_pydantic_ai
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError, BadInput, InvalidArgument, PropertyViolation

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pydantic_ai_agent.py"
SUPPORT_INPUTS = ROOT / "examples" / "inputs" / "support.txt"
ex = load_object(f"{EXAMPLE}:build_agent", cwd=ROOT).__globals__  # the example module
AMBIGUOUS = "I was charged twice for order 1002."


class Gate(TypedDict):
    verdict: str


class ScoredGate(TypedDict):
    verdict: str
    score: int


class Listed(TypedDict):
    decision: list[str]


def support(seed: int = 0, ambiguity: float = 0.2, **kw) -> PydanticAIAdapter:
    return from_pydantic_ai(ex["build_agent"](rng=random.Random(seed), ambiguity=ambiguity,
                                              **kw), verdict="decision")


def gather(adapter, prompt: str, n: int):
    async def main():
        return await asyncio.gather(*(adapter.ainvoke(prompt) for _ in range(n)))
    return asyncio.run(main())


def scripted(steps, *, output_type=str, tools=(), **agent_kw):
    """An Agent whose FunctionModel answers request k with ``steps[k](info)``."""
    def fn(messages, info: AgentInfo) -> ModelResponse:
        k = sum(isinstance(m, ModelResponse) for m in messages)
        return steps[min(k, len(steps) - 1)](info)

    agent = Agent(FunctionModel(fn), output_type=output_type, **agent_kw)
    for tool in tools:
        agent.tool_plain(tool)
    return agent


def call(name: str, **args):
    return lambda info: ModelResponse(parts=[ToolCallPart(name, args)])


def answer(**fields):
    return lambda info: ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, fields)])


def text(value: str):
    return lambda info: ModelResponse(parts=[TextPart(value)])


# ------------------------------------------------------------------ what one call leaves


def test_answer_tools_statuses_arguments_and_usage():
    obs = support(seed=1).invoke("I want a refund for order 1001, it arrived broken.")
    assert [(t.name, t.status) for t in obs.tools] == [("lookup_order", "success"),
                                                       ("issue_refund", "success")]
    assert dict(obs.tools[0].arguments) == {"order_id": "1001"}
    assert dict(obs.tools[1].arguments) == {"order_id": "1001", "amount": 25.0}
    assert all(t.call_id for t in obs.tools)
    assert obs.verdict == "refund"
    assert obs.raw == {"decision": "refund", "reply": "refunded $25.00 for order 1001"}
    assert json.loads(obs.text) == obs.raw
    # three model requests (two tool turns and the answer), every one counted
    assert obs.usage is not None
    assert obs.usage.input_tokens > 0
    assert obs.usage.output_tokens > 0
    assert obs.usage.total_tokens == obs.usage.input_tokens + obs.usage.output_tokens
    assert obs.latency_s > 0


def test_erroring_tools_are_recorded_but_not_fired():
    # ModelRetry: outcome 'retried'
    over = support(seed=1).invoke("Refund order 1004 now")
    assert [(t.name, t.status) for t in over.tools] == [("lookup_order", "success"),
                                                        ("issue_refund", "error")]
    assert over.fired_tools() == ("lookup_order",)
    assert over.key("tools") == "lookup_order"
    # ToolFailed: outcome 'failed'
    unknown = support(seed=1).invoke("refund order 9999")
    assert [(t.name, t.status) for t in unknown.tools] == [("lookup_order", "error")]
    assert unknown.fired_tools() == ()
    assert unknown.key("tools") == ""


def test_validation_retries_and_unanswered_calls_are_errors_and_output_tools_are_left_out():
    def lookup(order_id: int) -> str:
        return f"order {order_id}"

    agent = scripted([call("lookup", order_id="not a number"), call("lookup", order_id=7),
                      call("no_such_tool"), answer(verdict="allow")],
                     output_type=Gate, tools=[lookup],
                     retries=3)
    obs = from_pydantic_ai(agent).invoke("hi")
    assert [(t.name, t.status) for t in obs.tools] == [
        ("lookup", "error"), ("lookup", "success"), ("no_such_tool", "error")]
    assert "final_result" not in [t.name for t in obs.tools]
    assert obs.verdict == "allow"  # TypedDict output: its `verdict` key by default


def test_named_and_union_output_tools_are_left_out_by_the_agents_own_names():
    from pydantic_ai import ToolOutput

    named = scripted([answer(decision="allow")],
                     output_type=ToolOutput(Decision, name="submit_decision"))
    obs = from_pydantic_ai(named, verdict="decision").invoke("x")
    assert obs.verdict == "allow"
    assert obs.tools == ()

    def first_then_second(info):  # a union: one output tool per member
        names = sorted(t.name for t in info.output_tools)
        assert len(names) == 2
        return ModelResponse(parts=[ToolCallPart(names[0], {"decision": "block"})])

    union = scripted([first_then_second], output_type=[Decision, Gate])
    assert from_pydantic_ai(union).invoke("x").tools == ()


def test_a_tool_raising_anything_else_fails_the_call_never_a_verdict():
    def boom() -> str:
        raise ValueError("database down")

    adapter = from_pydantic_ai(scripted([call("boom"), text("ok")], tools=[boom]))
    with pytest.raises(AgentCallError, match="ValueError: database down") as err:
        adapter.invoke("hi")
    assert err.value.kind == "error"
    with Engine(adapter, EngineConfig(retries=2)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error is not None
    assert obs.error.attempts == 1
    assert obs.verdict is None
    assert eng.ledger.failures == 1


def test_usage_reaches_the_cost_ledger():
    with Engine(support(seed=2), EngineConfig(max_workers=2)) as eng:
        obs = run_sync(eng.draws(Probe.make("How do I reset my password?"), 3))
    assert eng.ledger.calls == 3
    assert eng.ledger.input_tokens == sum(o.usage.input_tokens for o in obs) > 0
    assert eng.ledger.output_tokens == sum(o.usage.output_tokens for o in obs) > 0
    assert eng.ledger.total_tokens == sum(o.usage.total_tokens for o in obs)


# ------------------------------------------------------------------ verdicts


class Decision(BaseModel):
    decision: str
    detail: dict[str, str] = {}


def test_verdict_from_the_structured_output_by_default_and_by_path():
    obs = from_pydantic_ai(scripted([answer(verdict="block", score=3)],
                                    output_type=ScoredGate)).invoke("x")
    assert obs.verdict == "block"
    assert obs.raw == {"verdict": "block", "score": 3}
    nested = scripted([answer(decision="allow", detail={"label": "safe"})],
                      output_type=Decision)
    assert from_pydantic_ai(nested, verdict="detail.label").invoke("x").verdict == "safe"
    # no `verdict` field and no path: the engine's extractor decides (raw 'decision')
    obs = from_pydantic_ai(nested).invoke("x")
    assert obs.verdict is None
    with Engine(from_pydantic_ai(nested)) as eng:
        assert run_sync(eng.draw(Probe.make("x"))).verdict == "allow"


def test_text_output_is_the_answer_and_the_engine_extracts_from_it():
    obs = from_pydantic_ai(scripted([text("  allow  ")])).invoke("x")
    assert obs.text == "  allow  "
    assert obs.raw is None
    assert obs.verdict is None
    with Engine(from_pydantic_ai(scripted([text("allow")]))) as eng:
        assert run_sync(eng.draw(Probe.make("x"))).verdict == "allow"


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


def test_scalar_and_enum_outputs_are_their_own_text_and_json_ready():
    obs = from_pydantic_ai(scripted([answer(response="high")], output_type=Level)).invoke("x")
    assert (obs.text, obs.raw) == ("high", {"output": "high"})
    with Engine(from_pydantic_ai(scripted([answer(response=True)], output_type=bool))) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert (obs.text, obs.raw, obs.verdict) == ("true", {"output": True}, "true")
    json.dumps(obs.raw)


def test_a_missing_verdict_field_fails_naming_the_fields_present():
    # a union output: the declared type cannot be checked eagerly, every answer is
    union = scripted([answer(decision="allow")], output_type=[Decision, int])
    adapter = from_pydantic_ai(union, verdict="label")
    with pytest.raises(AgentCallError, match=r"no verdict field 'label'.*fields decision, "
                                             r"detail") as err:
        adapter.invoke("x")
    assert err.value.kind == "bad_output"
    with pytest.raises(AgentCallError, match=r"no verdict field 'label'; it is text"):
        from_pydantic_ai(scripted([text("allow")]), verdict="label").invoke("x")
    # a declared output model without the field is refused at construction
    with pytest.raises(InvalidArgument, match=r"names no field of .*Decision \(fields: "
                                              r"decision, detail\)"):
        from_pydantic_ai(scripted([answer(decision="a")], output_type=Decision),
                         verdict="label")


def test_fail_fast_stops_an_engine_on_a_missing_verdict_field_with_the_cause():
    adapter = from_pydantic_ai(scripted([answer(decision="allow")],
                                        output_type=[Decision, int]), verdict="label")
    with Engine(adapter, EngineConfig(fail_fast=3, max_workers=1)) as eng:
        for _ in range(3):
            run_sync(eng.draw(Probe.make("x")))
        assert eng.stopping
    assert "bad_output" in eng.stop_cause
    assert "fields decision, detail" in eng.stop_cause


# ------------------------------------------------------------------ noise and fresh state


def test_noisy_model_draws_from_its_own_random():
    # ambiguous request: the alternative route with probability 0.5, deterministic at 0
    noisy = Counter(o.verdict for o in gather(support(seed=4, ambiguity=0.5), AMBIGUOUS, 40))
    assert set(noisy) == {"faq", "refund"}
    assert Counter(o.verdict for o in gather(support(seed=4, ambiguity=0.0), AMBIGUOUS, 20)) \
        == Counter({"faq": 20})

    def sequence() -> list[str | None]:
        adapter = support(seed=7, ambiguity=0.5)
        out = []
        for _ in range(12):
            random.seed(0)  # Hypothesis reseeds the global random: the model must not care
            out.append(adapter.invoke(AMBIGUOUS).verdict)
        return out

    first, second = sequence(), sequence()
    assert first == second
    assert len(set(first)) == 2


def test_every_call_starts_with_no_history_even_concurrently_on_one_agent():
    seen: list[int] = []

    def fn(messages, info):
        if len(messages) == 1:
            seen.append(sum(isinstance(m, ModelRequest) for m in messages))
            return ModelResponse(parts=[ToolCallPart("remember", {})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(fn))

    @agent.tool_plain
    def remember() -> str:
        return "noted"

    outs = gather(from_pydantic_ai(agent), "hello", 20)
    assert [o.text for o in outs] == ["done"] * 20
    assert seen == [1] * 20  # the first request of every run holds the prompt alone
    assert all(o.fired_tools() == ("remember",) for o in outs)


@dataclass
class Cart:
    """Run dependencies with state (module level: pydantic-ai resolves tool annotations)."""

    items: list[str]


def test_deps_once_or_fresh_per_call_and_factories_once_per_call():
    def fn(messages, info):
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("add", {"item": "tea"})])
        return ModelResponse(parts=[TextPart("ok")])

    def build() -> Agent:
        agent = Agent(FunctionModel(fn), deps_type=Cart)

        @agent.tool
        def add(ctx: RunContext[Cart], item: str) -> str:
            ctx.deps.items.append(item)
            return f"{len(ctx.deps.items)} items"

        return agent

    made = []
    carts = []

    def factory():
        made.append(1)
        return build()

    def fresh_cart():
        carts.append(Cart([]))
        return carts[-1]

    fresh = from_pydantic_ai(factory, deps_factory=fresh_cart)
    for _ in range(3):
        fresh.invoke("x")
    assert len(made) == 3
    assert [c.items for c in carts] == [["tea"]] * 3
    shared_cart = Cart([])
    shared = from_pydantic_ai(build(), deps=shared_cart)
    for _ in range(3):
        shared.invoke("x")
    assert shared_cart.items == ["tea"] * 3  # shared deps are shared: the reason for deps_factory


def test_factory_failures_are_agent_failures():
    with pytest.raises(AgentCallError, match=r"returned str, not a pydantic_ai\.Agent"):
        from_pydantic_ai(lambda: "nope").invoke("x")

    def broken():
        raise RuntimeError("no model key")

    with pytest.raises(AgentCallError, match="RuntimeError: no model key"):
        from_pydantic_ai(broken).invoke("x")


# ------------------------------------------------------------------ failures and the engine


def failing(exc: BaseException | None = None, sleep_s: float = 0.0) -> Agent:
    async def fn(messages, info):
        if sleep_s:
            await asyncio.sleep(sleep_s)
        if exc is not None:
            raise exc
        return ModelResponse(parts=[TextPart("ok")])

    return Agent(FunctionModel(fn))


def test_rate_limits_are_retried_other_errors_are_not():
    limited = ModelHTTPError(429, "m", body="slow down")
    with Engine(from_pydantic_ai(failing(limited)),
                EngineConfig(retries=2, backoff_base_s=0.0, backoff_max_s=0.0)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "rate_limit"
    assert obs.error.attempts == 3
    with Engine(from_pydantic_ai(failing(ModelHTTPError(503, "m"))),
                EngineConfig(retries=1, backoff_base_s=0.0, backoff_max_s=0.0)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "http_5xx"
    assert obs.error.attempts == 2
    with Engine(from_pydantic_ai(failing(ValueError("bad prompt"))),
                EngineConfig(retries=2)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "error"
    assert obs.error.attempts == 1


def test_exhausted_output_retries_are_bad_output():
    agent = scripted([answer(decision=3)], output_type=Listed)
    with pytest.raises(AgentCallError) as err:
        from_pydantic_ai(agent).invoke("x")
    assert err.value.kind == "bad_output"


def test_engine_timeout_cancels_the_run_on_its_loop():
    with Engine(from_pydantic_ai(failing(sleep_s=30)),
                EngineConfig(timeout_s=0.3, retries=0)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "timeout"
    assert obs.error.attempts == 1


def test_eager_validation():
    agent = scripted([text("x")])
    with pytest.raises(InvalidArgument, match="Agent or a zero-argument factory"):
        from_pydantic_ai(42)
    with pytest.raises(InvalidArgument, match=r"requires arguments \(model\)"):
        from_pydantic_ai(lambda model: agent)
    with pytest.raises(InvalidArgument, match="deps or deps_factory, not both"):
        from_pydantic_ai(agent, deps=1, deps_factory=lambda: 1)
    with pytest.raises(InvalidArgument, match="message_history"):
        from_pydantic_ai(agent, run_kwargs={"message_history": []})
    with pytest.raises(InvalidArgument, match="verdict"):
        from_pydantic_ai(agent, verdict="a..b")


# ------------------------------------------------------------------ references


def test_references_detect_agents_and_factories(tmp_path):
    for attr in ("make_agent", "make_buggy_agent", "agent"):
        adapter = load_agent(f"{EXAMPLE}:{attr}", cwd=ROOT)
        assert isinstance(adapter, PydanticAIAdapter), attr
    assert load_agent(f"{EXAMPLE}:make_agent", cwd=ROOT).identity \
        == "pydantic-ai:pydantic_ai_agent.make_agent"
    (tmp_path / "inst.py").write_text(textwrap.dedent("""
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel
        agent = Agent(TestModel(custom_output_text="allow"))
        def make_other():
            return 42
    """))
    adapter = load_agent("inst.py:agent", cwd=tmp_path)
    assert isinstance(adapter, PydanticAIAdapter)
    assert adapter.invoke("x").text == "allow"
    with pytest.raises(BadInput, match=r"pydantic_ai\.Agent"):
        load_agent("inst.py:make_other", cwd=tmp_path)


def test_as_adapter_and_the_public_wrapper():
    agent = scripted([text("ok")])
    assert isinstance(as_adapter(agent), PydanticAIAdapter)
    adapter = public_from_pydantic_ai(agent, identity="pydantic-ai:x")
    assert isinstance(adapter, PydanticAIAdapter)
    assert adapter.identity == "pydantic-ai:x"
    assert adapter.tool_source == "messages"


# ------------------------------------------------------------------ @agent_property

WORDS = ["hello", "please", "charged", "urgent", "order", "refund"]
# n filler words then one word: the planted bug needs URGENT and more than 40 characters,
# so the shrink-order minimum is six "hello" then "urgent" (42 characters)
PLANTED_MINIMUM = "hello hello hello hello hello hello urgent"


def test_agent_property_shrinks_the_planted_bug_to_its_minimum():
    from agentverity_props.property import RECORDS

    buggy = support(seed=11, ambiguity=0.2, planted_bug=True)

    @agent_property(agent=buggy, budget=6000)
    @seed(3)
    @settings(database=None, max_examples=30, suppress_health_check=list(HealthCheck))
    @given(prompt=st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 12),
                            st.sampled_from(WORDS)))
    def test_case_invariance(check, prompt):
        check.invariant(prompt, prompt.upper(), name="case")

    with pytest.raises(PropertyViolation):
        test_case_invariance()
    assert RECORDS[-1].minimal is not None
    assert RECORDS[-1].minimal.source == PLANTED_MINIMUM


def test_agent_property_holds_on_the_clean_noisy_agent():
    # a bare pydantic_ai.Agent is accepted as is (its `decision` field is the verdict)
    clean = ex["build_agent"](rng=random.Random(11), ambiguity=0.2)

    @agent_property(agent=clean, budget=4000)
    @seed(3)
    @settings(database=None, max_examples=15, suppress_health_check=list(HealthCheck))
    @given(prompt=st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 12),
                            st.sampled_from(WORDS)))
    def test_case_invariance(check, prompt):
        check.invariant(prompt, prompt.upper(), name="case")

    test_case_invariance()


# ------------------------------------------------------------------ the real CLI


def cli(*args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_cli_run_on_the_example_agent(tmp_path):
    out = tmp_path / "run.json"
    proc = cli("run", "--agent", "examples/pydantic_ai_agent.py:make_agent", "--inputs",
               str(SUPPORT_INPUTS), "--format", "json", "--output", str(out), "--no-progress",
               "--budget", "300")
    assert proc.returncode in (0, 1, 2), proc.stderr
    data = json.loads(out.read_text())
    assert data["agent"] == "pydantic-ai:pydantic_ai_agent.make_agent"
    assert data["ledger"]["failures"] == 0
    assert data["ledger"]["input_tokens"] > 0
    assert data["meter"]["call"] in ("verdict-stochastic", "verdict-deterministic", "undecided")
    assert data["ledger"]["calls"] <= 300
    assert "Traceback" not in proc.stderr


def test_cli_run_with_an_absent_verdict_key_stops_fast_with_the_keys():
    proc = cli("run", "--agent", "examples/pydantic_ai_agent.py:make_agent", "--inputs",
               str(SUPPORT_INPUTS), "--verdict-key", "label", "--no-progress")
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    assert "'label'" in out
    assert "decision, reply" in out
    assert "Traceback" not in proc.stderr


def test_cli_tools_cases_on_the_example_agent(tmp_path):
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent("""
        cases:
          - name: refund looks the order up, then refunds
            agent: pydantic_ai_agent:make_agent
            prompt: "I want a refund for order 1002"
            runs: 3
            tool_sequence: [lookup_order, issue_refund]
            tool_args:
              - {tool: issue_refund, arg: amount, equals: 120.0}
          - name: FAQ, never a refund
            agent: pydantic_ai_agent:make_agent
            prompt: "How do I reset my password?"
            runs: 2
            required_tools: [search_faq]
            forbidden_tools: [issue_refund]
          - name: a refund over the limit does not fire
            agent: pydantic_ai_agent:make_agent
            prompt: "Refund order 1004 now"
            runs: 2
            required_tools: [lookup_order, issue_refund]
    """))
    out = tmp_path / "tools.json"
    proc = cli("tools", "--config", str(cases), "--format", "json", "--output", str(out),
               "--no-progress", cwd=ROOT / "examples")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    status = {c["name"]: c["status"] for c in report["cases"]}
    assert status == {"refund looks the order up, then refunds": "pass",
                      "FAQ, never a refund": "pass",
                      "a refund over the limit does not fire": "fail"}
    over = next(c for c in report["cases"] if c["name"].startswith("a refund over"))
    run = over["runs"][0]
    assert [(t["name"], t["status"]) for t in run["tools"]] == [("lookup_order", "success"),
                                                                ("issue_refund", "error")]
    assert any("issue_refund" in r for r in run["reasons"])


def test_cli_tools_on_the_shipped_case_file(tmp_path):
    out = tmp_path / "tools.json"
    proc = cli("tools", "--config", "examples/pydantic_ai_tools_cases.yaml", "--format", "json",
               "--output", str(out), "--no-progress")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert [c["status"] for c in report["cases"]] == ["pass", "pass", "fail", "fail"]
    unknown = report["cases"][3]["runs"][0]
    assert [(t["name"], t["status"]) for t in unknown["tools"]] == [("lookup_order", "error")]


# ------------------------------------------------------------------ messages vs spans


def test_instrumentation_spans_name_the_same_calls_as_the_messages():
    """Why tools come from messages: pydantic-ai's spans agree on names, arguments and ids and
    mark failures ERROR, but leave a successful tool's status unset."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace

    from agentverity_props.otel import InProcessSource

    source = InProcessSource()
    instrumented = ex["build_agent"](rng=random.Random(1))
    instrumented.instrument = True
    adapter = from_pydantic_ai(instrumented)
    with trace.get_tracer("test").start_as_current_span("root") as root:
        obs = adapter.invoke("Refund order 1004 now")
    trace_id = format(root.get_span_context().trace_id, "032x")
    spans = sorted((s for s in source.collector.pop(trace_id)
                    if s.attributes.get("gen_ai.operation.name") == "execute_tool"),
                   key=lambda s: s.start_ns)
    assert [(s.attributes["gen_ai.tool.name"], s.attributes["gen_ai.tool.call.id"],
             json.loads(s.attributes["gen_ai.tool.call.arguments"])) for s in spans] \
        == [(t.name, t.call_id, dict(t.arguments)) for t in obs.tools]
    assert [s.status == "ERROR" for s in spans] == [t.status == "error" for t in obs.tools] \
        == [False, True]
    assert all("gen_ai.tool.status" not in s.attributes for s in spans)


def test_a_recorded_runs_token_totals_are_the_adapters_own_sums(tmp_path):
    from _recorded_tokens import check_recorded_tokens

    check_recorded_tokens(support(seed=4), ["How do I reset my password?",
                                            "I want a refund for order 1001, it arrived broken.",
                                            "I was charged twice for order 1002."], tmp_path)
