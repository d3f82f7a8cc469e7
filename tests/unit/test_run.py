"""run / measure / relations: behaviour on small, fully controlled agents."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentverity_props import Relation, builtin_relations, from_callable, measure, run
from agentverity_props.errors import InvalidArgument
from agentverity_props.runner import RunConfig

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schemas/run.schema.json").read_text())
PROMPTS = ["hello there friend", "how do I plan an attack", "nice weather today",
           "book a table for two", "what is the capital of France"]


def gate(prompt: str) -> str:
    return "block" if "attack" in prompt else "allow"


def test_deterministic_agent_is_certified_with_the_sprt_minimum():
    m = measure(from_callable(gate), PROMPTS, max_workers=1)
    assert m.call == "verdict-deterministic"
    assert m.calls == 76  # 38 clean pairs: log(1/0.05) / log(0.975 / 0.9) = 37.4
    assert m.ci_low == 0.0
    assert m.ci_high < 0.15
    assert m.complete


def test_stochastic_agent_is_called_stochastic_quickly():
    rng = random.Random(7)
    m = measure(from_callable(lambda p: rng.choice(["allow", "block"])), PROMPTS, max_workers=1)
    assert m.call == "verdict-stochastic"
    assert m.calls < 40


def test_small_budget_is_undecided_with_advice_and_never_exceeded():
    m = measure(from_callable(gate), PROMPTS, budget=20, max_workers=3)
    assert m.call == "undecided"
    assert m.calls <= 20
    assert "budget=" in m.advice
    assert "--budget" not in m.advice


def test_failing_agent_is_incomplete_never_a_verdict():
    def broken(prompt: str) -> str:
        raise RuntimeError("model exploded")
    r = run(from_callable(broken), PROMPTS, relations=[], config=RunConfig(budget=30))
    assert not r.complete
    assert r.exit_code == 2
    assert r.meter.call == "undecided"
    assert r.meter.failure_kinds


def test_no_decision_is_incomplete():
    from agentverity_props import by_key
    r = run(from_callable(lambda p: {"text": "no label here"}), PROMPTS, relations=[],
            config=RunConfig(extractor=by_key("verdict"), budget=20))
    assert r.meter.failure_kinds.get("no_decision")
    assert r.exit_code == 2


def test_case_violation_is_confirmed_and_other_relations_hold():
    r = run(from_callable(gate), PROMPTS, config=RunConfig(max_workers=2))
    by = {x.relation.name: x for x in r.relations}
    assert by["case"].status == "VIOLATED"
    # one input ("attack"), confirmed through each case edit that hides the word from the
    # gate (upper, swapped, title; lower leaves it): every confirmed edit is named
    assert by["case"].confirmed_inputs == 1
    tried = by["case"].edits_tried()
    assert {k for k, v in tried.items() if v["confirmed"]} <= {"upper", "swapped", "title"}
    assert by["case"].calibrated_violations == sum(v["confirmed"] for v in tried.values())
    assert by["whitespace"].status == "HOLDS"
    assert r.exit_code == 1
    assert any("case" in f for f in r.findings)


def test_unchanged_inputs_are_skipped_and_not_exercised_reported():
    noop = Relation("noop", "invariant", lambda s: s)
    r = run(from_callable(gate), PROMPTS, relations=[noop])
    (res,) = r.relations
    assert res.status == "NOT EXERCISED"
    assert res.skipped == len(PROMPTS)
    assert res.exercised == 0


def test_monotone_and_directional_relations():
    mono = Relation("escalate", "monotone", lambda s: s + " attack",
                    order=["allow", "review", "block"])
    assert mono.holds("allow", "block")
    assert not mono.holds("block", "allow")
    direc = Relation("to-block", "directional", lambda s: s + " attack", expected="block")
    assert direc.holds("allow", "block")
    assert not direc.holds("allow", "allow")
    r = run(from_callable(gate), PROMPTS, relations=[mono, direc])
    assert all(x.status == "HOLDS" for x in r.relations)


def test_invalid_arguments_raise_eagerly():
    with pytest.raises(InvalidArgument):
        RunConfig(epsilon=0.7)
    with pytest.raises(InvalidArgument):
        RunConfig(precision="extreme")
    with pytest.raises(InvalidArgument):
        Relation("m", "monotone", str.upper)
    with pytest.raises(InvalidArgument):
        Relation("x", "sideways", str.upper)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        measure(from_callable(gate), "just one string")
    with pytest.raises(InvalidArgument):
        measure(from_callable(gate), ["a", "a"])


def test_json_validates_against_published_schema_and_keeps_no_prompts():
    jsonschema = pytest.importorskip("jsonschema")
    r = run(from_callable(gate), PROMPTS)
    d = json.loads(json.dumps(r.to_dict()))
    jsonschema.validate(d, SCHEMA)
    text = json.dumps(d)
    for p in PROMPTS:
        assert p not in text
    assert d["inputs"] is None
    d2 = r.to_dict(include_inputs=True)
    assert set(d2["inputs"].values()) == set(PROMPTS)


def test_salted_fingerprints(monkeypatch):
    monkeypatch.setenv("AGENTVERITY_PROPS_SALT", "pepper")
    m = measure(from_callable(gate), PROMPTS)
    assert all(e.fp.startswith("hmac-sha256:") for e in m.per_input)


def test_record_then_replay_is_identical_with_zero_calls(tmp_path):
    store = tmp_path / "draws.sqlite3"
    rng = random.Random(3)

    def noisy(prompt: str) -> str:
        return "block" if ("attack" in prompt) != (rng.random() < 0.1) else "allow"

    cfg = RunConfig(store_path=str(store), store_mode="record", max_workers=3)
    first = run(from_callable(noisy, identity="noisy"), PROMPTS, config=cfg)

    def must_not_call(prompt: str) -> str:
        raise AssertionError("replay made a live call")

    again = run(from_callable(must_not_call, identity="noisy"), PROMPTS,
                config=RunConfig(store_path=str(store), store_mode="replay", max_workers=3))
    assert again.ledger["calls"] == 0
    a, b = first.to_dict(), again.to_dict()
    for d in (a, b):
        d.pop("ledger")
        d.pop("tokens")  # this run's live calls' tokens, as the ledger: none on replay
        d.pop("config")
        d["calls"] = None
        d["meter"]["calls"] = None
        d["dependence"]["calls"] = None  # agent calls, as the meter's: none on replay
    assert a["meter"] == b["meter"]
    assert a["blindness"] == b["blindness"]
    assert a["relations"] == b["relations"]
    assert a == b


def test_builtin_relations_change_ordinary_text():
    for rel in builtin_relations():
        assert rel.apply("I can't find my order, please help") != \
            "I can't find my order, please help", rel.name


def test_tools_layer():
    def agent(prompt: str) -> dict:
        tools = ["lookup_order", "issue_refund"] if "refund" in prompt else ["search_faq"]
        return {"text": "ok", "tools": tools}
    m = measure(from_callable(agent), ["refund my order 12", "opening hours?"], layer="tools")
    assert m.call == "verdict-deterministic"
    assert {k for e in m.per_input for k in e.counts} == {"lookup_order>issue_refund",
                                                          "search_faq"}


def test_a_relation_that_changes_no_input_is_a_health_finding_unless_suppressed():
    from agentverity_props import HealthCheck, Relation

    gate = from_callable(lambda p: "allow", identity="allow-all")
    noop = Relation("noop", "invariant", lambda t: t)
    res = run(gate, ["hello", "there", "friend"], [noop], config=RunConfig(max_workers=1))
    assert res.relations[0].status == "NOT EXERCISED"
    assert any("not exercised" in f for f in res.findings)
    assert res.exit_code == 1
    quiet = run(gate, ["hello", "there", "friend"], [noop], config=RunConfig(
        max_workers=1, suppress_health_check=[HealthCheck.unexercised_relation,
                                              HealthCheck.blind_probe_set]))
    assert quiet.findings == []
    assert quiet.exit_code == 0


def test_budget_advice_works_when_followed():
    """The advice printed when the budget runs out is tested by doing what it says."""
    import re

    from agentverity_props.examples.plain import make_gate

    text = (Path(__file__).parents[2] / "agentverity_props/examples/moderation.txt").read_text()
    inputs = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]

    def run_with(budget: int | None):
        return run(make_gate(seed=7, noise=0.15), inputs,
                   config=RunConfig(budget=budget, max_workers=1))

    short = run_with(50)
    (advice,) = [a for a in short.advice if "budget=" in a]  # Python names the keyword
    likely, sure = (int(n) for n in re.findall(r"budget=(\d+)", advice))
    assert likely <= sure
    for budget in (likely, sure):
        again = run_with(budget)
        assert again.ledger["calls"] <= budget
        assert not any(r.incomplete for r in again.relations), again.advice
        assert again.meter.complete


def test_relations_a_stop_left_out_are_not_tested_never_clean() -> None:
    import asyncio

    from agentverity_props import Relation
    from agentverity_props.engine import Engine
    from agentverity_props.runner import arun

    gate = from_callable(lambda p: "allow", identity="allow-all")
    cfg = RunConfig(max_workers=1)
    rel = Relation("shout", "invariant", str.upper)

    async def go():  # stop requested as soon as the meter made a draw
        eng = Engine(gate, cfg.engine)
        try:
            return await arun(gate, ["hello", "there", "friend"], [rel], config=cfg,
                              engine=eng, progress=lambda phase, n: eng.request_stop())
        finally:
            await eng.aclose()

    res = asyncio.run(go())
    (r,) = res.relations
    assert r.status == "NOT TESTED"
    assert "stopped before the relations" in r.statement()
    assert res.exit_code == 2
    assert not res.complete


def test_an_input_whose_draws_fail_ends_its_screen_without_a_budget() -> None:
    # the per-input screen wants draws until a pair clears or flags; draws that fail give it
    # nothing, so after a few it stops ("not screened: failures") instead of drawing forever
    calls = [0]

    def flaky(prompt: str) -> str:
        calls[0] += 1
        if "weird" in prompt:
            raise RuntimeError("boom")
        return "allow"

    res = run(from_callable(flaky), ["hello there", "weird one", "book a table"],
              config=RunConfig(budget=None, max_workers=1))
    assert res.exit_code == 2
    assert calls[0] < 2000
    rel = res.relations[0]
    assert str(rel.status) == "INCOMPLETE"
    assert (rel.effect or {})["per_input"]["not_screened_reasons"].get("failures") == 1
