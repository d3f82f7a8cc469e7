"""What every framework adapter does, checked once for each (see _frameworks.py): one call's
tools, verdict and usage; failing tools; usage in the cost ledger; noise from the model's own
random; retries and timeouts; ``as_adapter`` and the public wrapper; ``@agent_property``
finding and shrinking the planted bug and holding on the clean agent; the real CLI's ``run``
and ``tools``; recorded token totals.

Each framework runs its real object (a compiled graph, a pydantic-ai Agent) on an offline
model; what only one framework has stays in its own suite (test_<framework>_adapter.py).
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from _frameworks import FRAMEWORKS, Framework
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from agentverity_props import agent_property
from agentverity_props.adapters import as_adapter
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import PropertyViolation

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_INPUTS = ROOT / "examples" / "inputs" / "support.txt"
AMBIGUOUS = "I was charged twice for order 1002."
REFUND = "I want a refund for order 1001, it arrived broken."


@pytest.fixture(params=sorted(FRAMEWORKS))
def fw(request: pytest.FixtureRequest) -> Framework:
    return FRAMEWORKS[request.param]()


def gather(adapter, prompt: str, n: int):
    async def main():
        return await asyncio.gather(*(adapter.ainvoke(prompt) for _ in range(n)))
    return asyncio.run(main())


# ------------------------------------------------------------------ what one call leaves


def test_answer_tools_statuses_arguments_and_usage(fw):
    obs = fw.support(seed=1).invoke(REFUND)
    assert [(t.name, t.status) for t in obs.tools] == [("lookup_order", "success"),
                                                       ("issue_refund", "success")]
    assert dict(obs.tools[0].arguments) == {"order_id": "1001"}
    assert dict(obs.tools[1].arguments) == {"order_id": "1001", "amount": 25.0}
    assert all(t.call_id for t in obs.tools)
    assert obs.verdict == "refund"
    # every model request of the run counted
    assert obs.usage is not None
    assert obs.usage.input_tokens > 0
    assert obs.usage.output_tokens > 0
    assert obs.usage.total_tokens == obs.usage.input_tokens + obs.usage.output_tokens
    assert obs.latency_s > 0


def test_a_tool_that_errors_is_recorded_but_not_fired(fw):
    over = fw.support(seed=1).invoke(fw.over_limit)
    assert [(t.name, t.status) for t in over.tools] == [("lookup_order", "success"),
                                                        ("issue_refund", "error")]
    assert over.fired_tools() == ("lookup_order",)
    assert over.key("tools") == "lookup_order"
    lost = fw.support(seed=1).invoke(fw.no_order)
    assert [(t.name, t.status) for t in lost.tools] == [("lookup_order", "error")]
    assert lost.fired_tools() == ()
    assert lost.key("tools") == ""


def test_usage_reaches_the_cost_ledger(fw):
    with Engine(fw.support(seed=2), EngineConfig(max_workers=2)) as eng:
        obs = run_sync(eng.draws(Probe.make("How do I reset my password?"), 3))
    assert eng.ledger.calls == 3
    assert eng.ledger.input_tokens == sum(o.usage.input_tokens for o in obs) > 0
    assert eng.ledger.output_tokens == sum(o.usage.output_tokens for o in obs) > 0
    assert eng.ledger.total_tokens == sum(o.usage.total_tokens for o in obs)


def test_noisy_model_draws_from_its_own_random(fw):
    # ambiguous request: the alternative route with probability 0.5, deterministic at 0
    noisy = Counter(o.verdict for o in gather(fw.support(seed=4, ambiguity=0.5), AMBIGUOUS, 40))
    assert set(noisy) == {"faq", "refund"}
    assert Counter(o.verdict for o in gather(fw.support(seed=4, ambiguity=0.0), AMBIGUOUS, 30)) \
        == Counter({"faq": 30})

    def sequence() -> list[str | None]:
        adapter = fw.support(seed=7, ambiguity=0.5)
        out = []
        for _ in range(12):
            random.seed(0)  # Hypothesis reseeds the global random: the model must not care
            out.append(adapter.invoke(AMBIGUOUS).verdict)
        return out

    first, second = sequence(), sequence()
    assert first == second
    assert len(set(first)) == 2


# ------------------------------------------------------------------ failures, timeouts


def test_rate_limits_are_retried_other_errors_are_not(fw):
    with Engine(fw.failing(fw.rate_limited()),
                EngineConfig(retries=2, backoff_base_s=0.0, backoff_max_s=0.0)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "rate_limit"
    assert obs.error.attempts == 3
    with Engine(fw.failing(ValueError("broken node")), EngineConfig(retries=2)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "error"
    assert obs.error.attempts == 1
    assert "ValueError: broken node" in obs.error.message


def test_engine_timeout_cancels_the_call_on_its_loop(fw):
    with Engine(fw.failing(sleep_s=30), EngineConfig(timeout_s=0.3, retries=0)) as eng:
        obs = run_sync(eng.draw(Probe.make("hi")))
    assert obs.error.kind == "timeout"
    assert obs.error.attempts == 1


# ------------------------------------------------------------------ entry points


def test_as_adapter_and_the_public_wrapper(fw):
    obj = fw.bare()
    assert isinstance(as_adapter(obj), fw.adapter)
    adapter = fw.public(obj, identity=f"{fw.prefix}:x", **fw.public_kwargs)
    assert isinstance(adapter, fw.adapter)
    assert adapter.identity == f"{fw.prefix}:x"
    assert adapter.tool_source == "messages"  # tools from the run's own messages
    obs = adapter.invoke("hello")  # it answers (a verdict, or text the engine extracts from)
    assert obs.error is None
    assert obs.verdict or obs.text


# ------------------------------------------------------------------ @agent_property

WORDS = ["hello", "please", "charged", "urgent", "order", "refund"]
# n filler words then one word: the planted bug needs URGENT and more than 40 characters,
# so the shrink-order minimum is six "hello" then "urgent" (42 characters)
PLANTED_MINIMUM = "hello hello hello hello hello hello urgent"
PROMPTS = st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 12),
                    st.sampled_from(WORDS))


def test_agent_property_shrinks_the_planted_bug_to_its_minimum(fw):
    from agentverity_props.property import RECORDS

    buggy = fw.support(seed=11, ambiguity=0.2, planted_bug=True)

    @agent_property(agent=buggy, budget=6000)
    @seed(3)
    @settings(database=None, max_examples=30, suppress_health_check=list(HealthCheck))
    @given(prompt=PROMPTS)
    def test_case_invariance(check, prompt):
        check.invariant(prompt, prompt.upper(), name="case")

    with pytest.raises(PropertyViolation):
        test_case_invariance()
    assert RECORDS[-1].minimal is not None
    assert RECORDS[-1].minimal.source == PLANTED_MINIMUM


def test_agent_property_holds_on_the_clean_noisy_agent(fw):
    @agent_property(agent=fw.clean(), budget=4000)
    @seed(3)
    @settings(database=None, max_examples=15, suppress_health_check=list(HealthCheck))
    @given(prompt=PROMPTS)
    def test_case_invariance(check, prompt):
        check.invariant(prompt, prompt.upper(), name="case")

    test_case_invariance()


# ------------------------------------------------------------------ the real CLI


def cli(*args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_cli_run_on_the_example_agent(fw, tmp_path):
    out = tmp_path / "run.json"
    proc = cli("run", "--agent", fw.ref, "--inputs", str(SUPPORT_INPUTS), "--format", "json",
               "--output", str(out), "--no-progress", "--budget", str(fw.budget))
    assert proc.returncode in (0, 1, 2), proc.stderr
    data = json.loads(out.read_text())
    module, factory = Path(fw.ref.split(":")[0]).stem, fw.ref.split(":")[1]
    assert data["agent"] == f"{fw.prefix}:{module}.{factory}"
    assert data["ledger"]["failures"] == 0
    assert data["ledger"]["input_tokens"] > 0
    assert data["meter"]["call"] in ("verdict-stochastic", "verdict-deterministic", "undecided")
    assert data["ledger"]["calls"] <= fw.budget
    assert "Traceback" not in proc.stderr


def test_cli_run_with_an_absent_verdict_key_stops_fast_with_the_keys(fw):
    proc = cli("run", "--agent", fw.ref, "--inputs", str(SUPPORT_INPUTS), "--verdict-key",
               fw.absent_key, "--no-progress")
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    for said in fw.absent_says:
        assert said in out
    assert "Traceback" not in proc.stderr


def test_cli_tools_cases_on_the_example_agent(fw, tmp_path):
    cases = tmp_path / "cases.yaml"
    cases.write_text(textwrap.dedent(f"""
        cases:
          - name: refund looks the order up, then refunds
            agent: {fw.tools_ref}
            prompt: "I want a refund for order 1002"
            runs: 3
            tool_sequence: [lookup_order, issue_refund]
            tool_args:
              - {{tool: issue_refund, arg: amount, equals: 120.0}}
          - name: FAQ, never a refund
            agent: {fw.tools_ref}
            prompt: "How do I reset my password?"
            runs: 2
            required_tools: [search_faq]
            forbidden_tools: [issue_refund]
          - name: a refund over the limit does not fire
            agent: {fw.tools_ref}
            prompt: "Refund order 1004 now"
            runs: 2
            required_tools: [lookup_order, issue_refund]
    """))
    out = tmp_path / "tools.json"
    proc = cli("tools", "--config", str(cases), "--format", "json", "--output", str(out),
               "--no-progress", cwd=ROOT / "examples")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["span_sources"] == ["the agent framework's own messages"]  # no OTel needed
    status = {c["name"]: c["status"] for c in report["cases"]}
    assert status == {"refund looks the order up, then refunds": "pass",
                      "FAQ, never a refund": "pass",
                      "a refund over the limit does not fire": "fail"}
    over = next(c for c in report["cases"] if c["name"].startswith("a refund over"))
    run = over["runs"][0]
    assert [(t["name"], t["status"]) for t in run["tools"]] == [("lookup_order", "success"),
                                                                ("issue_refund", "error")]
    assert any("issue_refund" in r for r in run["reasons"])


# ------------------------------------------------------------------ recorded tokens


def test_a_recorded_runs_token_totals_are_the_adapters_own_sums(fw, tmp_path):
    from _recorded_tokens import check_recorded_tokens

    check_recorded_tokens(fw.support(seed=4), list(fw.token_prompts), tmp_path)
