"""The shipped example agents behave as documented (real Strands agents, offline model)."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("strands")

from hypothesis import find, settings
from hypothesis import strategies as st

from agentverity_props.adapters._refs import load_agent
from agentverity_props.examples import _risk, moderation_inputs, support_inputs
from agentverity_props.examples.moderation import moderation_adapter
from agentverity_props.examples.plain import buggy_gate, gate, make_gate
from agentverity_props.examples.support import support_adapter

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BORDERLINE = "How do I kill a python process"  # risk 1.6, review threshold 1.5
MINIMAL_BUG = "0" * 35 + "URGENT"  # 41 characters: the planted minimum


def draws(adapter, prompt, n):
    async def main():
        return await asyncio.gather(*(adapter.ainvoke(prompt) for _ in range(n)))

    return asyncio.run(main())


def verdicts(adapter, prompt, n):
    return Counter(o.verdict for o in draws(adapter, prompt, n))


def everyday():
    return [p for p in moderation_inputs() if _risk.risk(p).score == 0.0]


# ------------------------------------------------------------------ inputs


def test_input_files_ship_with_the_package_and_match_the_examples_folder():
    for name, loader in (("moderation", moderation_inputs), ("support", support_inputs)):
        lines = [ln for ln in (EXAMPLES / "inputs" / f"{name}.txt").read_text(
            encoding="utf-8").splitlines() if ln.strip()]
        assert lines == loader()
        assert len(set(lines)) == len(lines)
    prompts = moderation_inputs()
    assert 20 <= len(everyday()) <= 30
    borderline = [p for p in prompts if _risk.risk(p).score > 0]
    assert len(borderline) >= 3
    assert all(abs(_risk.risk(p).score - _risk.REVIEW_AT) < 0.6 for p in borderline)


# ------------------------------------------------------------------ moderation gate


def _typo_in_longest_word(text):
    words = text.split(" ")
    i = max(range(len(words)), key=lambda j: len(words[j]))
    w = words[i]
    words[i] = w[: len(w) // 2] + ("x" if w[len(w) // 2] != "x" else "y") + w[len(w) // 2 + 1:]
    return " ".join(words)


@pytest.mark.parametrize(
    "reword",
    [
        lambda t: "Please, " + t[:1].lower() + t[1:],
        lambda t: t + " By the way, the weather has been lovely this week.",
        lambda t: "  " + "  ".join(t.split(" ")) + " \n",
        lambda t: t.rstrip(".?!") + "!!",
        str.swapcase,
        _typo_in_longest_word,
    ],
)
def test_risk_is_stable_under_benign_rewordings(reword):
    # only the planted bug should break relations: the score itself ignores these rewordings
    for prompt in moderation_inputs():
        assert _risk.risk(reword(prompt)).score == _risk.risk(prompt).score, prompt


def test_moderation_is_deterministic_on_everyday_prompts_with_noise_on():
    adapter = moderation_adapter(seed=11, noise=0.15)
    for prompt in everyday():
        obs = draws(adapter, prompt, 10)
        assert {o.verdict for o in obs} == {"allow"}, prompt
        assert {o.fired_tools() for o in obs} == {("classify_risk",)}


def test_moderation_flips_near_the_threshold():
    noisy = verdicts(moderation_adapter(seed=5, noise=0.15), BORDERLINE, 30)
    assert set(noisy) == {"allow", "review"}
    calm = verdicts(moderation_adapter(seed=5, noise=0.0), BORDERLINE, 30)
    assert calm == Counter({"review": 30})


def test_moderation_randomness_is_its_own_not_the_global_random():
    # Hypothesis reseeds the global random module per example; the gate must not care
    adapter = moderation_adapter(seed=2, noise=0.15)
    seen = set()
    for _ in range(30):
        random.seed(0)
        seen.add(adapter.invoke(BORDERLINE).verdict)
    assert seen == {"allow", "review"}


def test_moderation_same_seed_same_sequence():
    first = moderation_adapter(seed=9)
    second = moderation_adapter(seed=9)
    a = [first.invoke(BORDERLINE).verdict for _ in range(20)]
    b = [second.invoke(BORDERLINE).verdict for _ in range(20)]
    assert a == b


def test_moderation_tools_and_clear_cases():
    adapter = moderation_adapter(seed=0, noise=0.15)
    obs = adapter.invoke("Write ransomware and a keylogger")
    assert obs.fired_tools() == ("flag_content",)
    assert dict(obs.tools[0].arguments) == {"category": "hacking"}
    assert obs.verdict == "block"
    obs = adapter.invoke("What is the capital of Australia?")
    assert obs.fired_tools() == ("classify_risk",)
    assert obs.verdict == "allow"
    assert obs.raw == {"verdict": "allow"}
    assert obs.usage is not None
    assert obs.usage.total_tokens > 0


def test_unstructured_moderation_answers_json_text():
    obs = moderation_adapter(seed=0, structured=False).invoke("Write a haiku about autumn leaves.")
    assert obs.text == '{"verdict": "allow"}'
    assert obs.raw == {"stop_reason": "end_turn"}
    assert obs.verdict is None


def test_planted_bug_behaves_as_documented():
    assert len(MINIMAL_BUG) == _risk.TRIGGER_MIN_LENGTH == 41
    buggy = moderation_adapter(seed=0, noise=0.15, planted_bug=True)
    clean = moderation_adapter(seed=0, noise=0.15)
    assert buggy.invoke(MINIMAL_BUG).verdict == "block"
    assert buggy.invoke(MINIMAL_BUG[1:]).verdict == "allow"  # 40 characters: too short
    assert buggy.invoke(MINIMAL_BUG.lower()).verdict == "allow"  # lower case never triggers
    assert buggy.invoke(MINIMAL_BUG.swapcase()).verdict == "allow"
    assert clean.invoke(MINIMAL_BUG).verdict == "allow"
    long_everyday = "URGENT: can you suggest a vegetarian dinner for four people?"
    assert buggy.invoke(long_everyday).verdict == "block"
    assert buggy.invoke(long_everyday.lower()).verdict == "allow"


def test_shipped_inputs_expose_the_planted_bug_under_swapcase():
    """The demo runs the buggy gate on the shipped probes: exactly the two URGENT/urgent
    lines must break the case relation (prompt -> prompt.swapcase())."""
    buggy = moderation_adapter(seed=0, noise=0.0, planted_bug=True)
    clean = moderation_adapter(seed=0, noise=0.0)
    broken = [p for p in moderation_inputs()
              if buggy.invoke(p).verdict != buggy.invoke(p.swapcase()).verdict]
    assert broken == ["URGENT: please summarise the notes from this morning's meeting.",
                      "Is it urgent to renew my passport six months before travel?"]
    assert all(clean.invoke(p).verdict == clean.invoke(p.swapcase()).verdict for p in broken)


def test_shrinking_reaches_the_planted_minimum():
    """The case relation prompt -> prompt.lower() is violated exactly by the planted bug;
    Hypothesis shrinks any violating prompt to a 41-character string containing URGENT.

    The search runs on the plain gate (same trigger, microseconds per call); the minimum it
    finds is then confirmed on the Strands gate.
    """
    plain = make_gate(seed=0, noise=0.0, planted_bug=True)
    prompts = st.tuples(st.text(max_size=60), st.text(max_size=60)).map(
        lambda t: t[0] + "URGENT" + t[1])
    found = find(prompts, lambda p: plain(p)["verdict"] != plain(p.lower())["verdict"],
                 settings=settings(max_examples=500, database=None, deadline=None))
    assert len(found) == 41
    assert "URGENT" in found
    strands_gate = moderation_adapter(seed=0, noise=0.15, planted_bug=True)
    assert strands_gate.invoke(found).verdict == "block"
    assert strands_gate.invoke(found.lower()).verdict == "allow"
    assert strands_gate.invoke(found[:-1] if found.endswith("0") else found[1:]).verdict == (
        "allow")


# ------------------------------------------------------------------ support agent


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("How do I reset my password?", [("search_faq", "success")]),
        ("I want a refund for order 1001, it arrived broken.",
         [("lookup_order", "success"), ("issue_refund", "success")]),
        ("Refund order 1004 please", [("lookup_order", "success"), ("issue_refund", "error")]),
        ("I want a refund but I lost my order number.", [("lookup_order", "error")]),
        ("My lawyer will be in touch about this.", [("escalate_to_human", "success")]),
    ],
)
def test_support_agent_picks_the_documented_tools(prompt, expected):
    obs = draws(support_adapter(seed=1), prompt, 5)
    for o in obs:
        assert [(t.name, t.status) for t in o.tools] == expected
        assert o.verdict == expected[0][0]
        assert o.raw["verdict"] == expected[0][0]


def test_support_refund_uses_the_looked_up_amount():
    obs = support_adapter(seed=1).invoke("Please give me my money back for order 1003.")
    assert dict(obs.tools[1].arguments) == {"order_id": "1003", "amount": 9.99}
    assert "9.99" in obs.raw["reply"]


def test_support_ambiguous_requests_vary_unless_ambiguity_is_zero():
    prompt = "I was charged twice for order 1002."
    assert set(verdicts(support_adapter(seed=4, ambiguity=0.5), prompt, 30)) == {
        "search_faq", "lookup_order"}
    assert verdicts(support_adapter(seed=4, ambiguity=0.0), prompt, 30) == Counter(
        {"search_faq": 30})


# ------------------------------------------------------------------ plain gate


def test_plain_gate_is_deterministic_and_matches_the_strands_gate_without_noise():
    strands_gate = moderation_adapter(seed=0, noise=0.0)
    for prompt in [*moderation_inputs(), "how to build a bomb", "Explain how ransomware spreads"]:
        answers = {gate(prompt)["verdict"] for _ in range(3)}
        assert answers == {strands_gate.invoke(prompt).verdict}
    assert gate("What is the capital of Australia?") == {"verdict": "allow",
                                                         "text": "VERDICT: allow"}


def test_make_gate_is_stochastic_near_the_threshold_only():
    noisy = make_gate(seed=3, noise=0.15)
    assert {noisy(BORDERLINE)["verdict"] for _ in range(40)} == {"allow", "review"}
    assert {noisy(p)["verdict"] for p in everyday() for _ in range(5)} == {"allow"}
    silent = make_gate(seed=3, noise=0.0)
    assert {silent(BORDERLINE)["verdict"] for _ in range(40)} == {"review"}
    a, b = make_gate(seed=8), make_gate(seed=8)
    assert [a(BORDERLINE)["verdict"] for _ in range(20)] == [
        b(BORDERLINE)["verdict"] for _ in range(20)]
    with pytest.raises(ValueError, match="noise"):
        make_gate(noise=-1)


def test_plain_buggy_gate():
    assert buggy_gate(MINIMAL_BUG)["verdict"] == "block"
    assert buggy_gate(MINIMAL_BUG.lower())["verdict"] == "allow"
    assert buggy_gate(MINIMAL_BUG[1:])["verdict"] == "allow"


# ------------------------------------------------------------------ references from examples/


@pytest.mark.parametrize(
    ("ref", "prompt", "verdict"),
    [
        ("examples/moderation_gate.py:agent", "What time zone is Tokyo in?", "allow"),
        ("examples/moderation_gate.py:make_agent", "What time zone is Tokyo in?", None),
        ("examples/moderation_gate.py:buggy_agent", MINIMAL_BUG, "block"),
        ("examples/support_agent.py:agent", "How do I reset my password?", "search_faq"),
        ("examples/plain_gate.py:gate", "What time zone is Tokyo in?", "allow"),
        ("examples/plain_gate.py:noisy_gate", "What time zone is Tokyo in?", "allow"),
        ("agentverity_props.examples.moderation:agent", "What time zone is Tokyo in?", "allow"),
    ],
)
def test_example_references_load_and_answer(ref, prompt, verdict):
    adapter = load_agent(ref, cwd=ROOT)
    obs = adapter.invoke(prompt)
    assert obs.verdict == verdict
    assert obs.text


def test_examples_readme_documents_every_reference():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for ref in ("moderation_gate.py:agent", "moderation_gate.py:make_agent",
                "moderation_gate.py:buggy_agent", "support_agent.py:agent",
                "support_agent.py:make_agent", "plain_gate.py:gate", "plain_gate.py:noisy_gate",
                "plain_gate.py:buggy_gate", "URGENT", "41"):
        assert ref in readme, ref
    assert not (EXAMPLES / "__init__.py").exists()


def test_the_example_service_without_opentelemetry_says_what_to_install(monkeypatch):
    """``--otlp-endpoint`` without the [otel] extra: one line naming the extra, no traceback."""
    import builtins
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_service_probe", Path(__file__).parents[2] / "examples" / "http_agent_service.py")
    service = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(service)
    real_import = builtins.__import__

    def no_exporter(name, *args, **kwargs):
        if name.startswith("opentelemetry.exporter"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_exporter)
    with pytest.raises(SystemExit) as info:
        service.setup_tracing("http://127.0.0.1:4318/v1/traces", "svc")
    message = str(info.value)
    assert message.startswith("error: --otlp-endpoint needs OpenTelemetry")
    assert "pip install 'agentverity-props[http,otel]'" in message
    assert "\n" not in message
