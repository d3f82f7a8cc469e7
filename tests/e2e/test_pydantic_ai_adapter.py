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
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from typing_extensions import TypedDict

from agentverity_props.adapters import load_agent, load_object
from agentverity_props.adapters._pydantic_ai import PydanticAIAdapter, from_pydantic_ai
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError, BadInput, InvalidArgument

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


# tools, verdict and usage of one call, erroring tools (ModelRetry, ToolFailed):
# test_adapter_conformance.py (every framework)


def test_answer_is_the_structured_output_as_raw_and_its_json_as_text():
    obs = support(seed=1).invoke("I want a refund for order 1001, it arrived broken.")
    assert obs.raw == {"decision": "refund", "reply": "refunded $25.00 for order 1001"}
    assert json.loads(obs.text) == obs.raw


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


def test_a_server_error_is_retried_as_http_5xx():
    # rate limits retried, other errors not, timeouts: test_adapter_conformance.py
    with Engine(from_pydantic_ai(failing(ModelHTTPError(503, "m"))),
                EngineConfig(retries=1, backoff_base_s=0.0, backoff_max_s=0.0)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "http_5xx"
    assert obs.error.attempts == 2


def test_exhausted_output_retries_are_bad_output():
    agent = scripted([answer(decision=3)], output_type=Listed)
    with pytest.raises(AgentCallError) as err:
        from_pydantic_ai(agent).invoke("x")
    assert err.value.kind == "bad_output"


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


# @agent_property, the CLI's run and tools cases, recorded token totals, timeouts,
# as_adapter: test_adapter_conformance.py (every framework)


# ------------------------------------------------------------------ the real CLI


def cli(*args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, check=False)


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


