"""The conversation package: the session protocol, refusals, replays through the engine, the
cache that keeps Hypothesis away from Flaky, and the records."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import seed
from hypothesis import strategies as st

from agentverity_props import from_callable
from agentverity_props._internal.aio import run_sync
from agentverity_props.conversation import (
    RECORDS,
    AgentStateMachine,
    ConversationRelation,
    Invariant,
    TurnContext,
    conversation_machine,
    conversation_report,
    conversational,
    from_chat,
    from_history,
    insert_irrelevant,
    never_before,
    paraphrase_turn,
    repeat_turn,
    run_conversation_test,
)
from agentverity_props.conversation._draws import LINEAGE, ConversationDraws
from agentverity_props.engine import Engine, EngineConfig
from agentverity_props.errors import Inconclusive, InvalidArgument, PropertyViolation
from agentverity_props.examples.support_conversation import TURNS, support_conversation
from agentverity_props.observation import Observation, ToolCall
from agentverity_props.report import dumps, render_conversation_junit, render_conversation_text

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schemas/conversation.schema.json")
                    .read_text())
REFUND = never_before("issue_refund", required="lookup_order")


def _counting(fn):
    calls = []

    def agent(messages):
        calls.append([m["content"] for m in messages if m["role"] == "user"])
        return fn(messages)
    return agent, calls


# -- sessions ----------------------------------------------------------------------------


def test_history_session_keeps_the_conversation_and_forks_independently():
    conv = from_history(lambda msgs: {"text": str(len(msgs)), "verdict": "v"})
    s = conv.open()
    assert run_sync(s.send("a")).text == "1"
    assert run_sync(s.send("b")).text == "3"
    f = s.fork()
    assert run_sync(f.send("c")).text == "5"
    assert run_sync(s.send("c2")).text == "5"       # the fork did not touch the original
    assert [m["content"] for m in f.history if m["role"] == "user"] == ["a", "b", "c"]


def test_history_session_does_not_keep_a_failed_turn():
    state = {"fail": True}

    def agent(msgs):
        if state.pop("fail", False):
            raise RuntimeError("boom")
        return str(len(msgs))
    s = from_history(agent).open()
    with pytest.raises(RuntimeError):
        run_sync(s.send("a"))
    assert run_sync(s.send("a")).text == "1"        # a retry sees the same past


def test_chat_session_is_one_object_per_conversation_and_breaks_after_a_failure():
    made = []

    class Chat:
        def __init__(self):
            self.n = 0
            made.append(self)

        def send(self, message):
            self.n += 1
            if message == "bad":
                raise ValueError("no")
            return {"text": f"{self.n}", "verdict": "ok"}
    conv = from_chat(Chat)
    s = conv.open()
    assert [run_sync(s.send(m)).text for m in ("a", "b")] == ["1", "2"]
    assert s.fork() is None
    assert len(made) == 1
    with pytest.raises(ValueError):
        run_sync(s.send("bad"))
    with pytest.raises(Exception, match="earlier turn of this conversation failed"):
        run_sync(s.send("c"))


@pytest.mark.parametrize(("agent", "words"), [
    (from_callable(lambda p: "x"), "holds no conversation"),
    (lambda p: "x", "say which"),
    (42, "cannot hold a conversation"),
])
def test_single_call_agents_are_refused_in_one_line(agent, words):
    with pytest.raises(InvalidArgument, match=words) as err:
        conversational(agent)
    assert "\n" not in str(err.value)


def test_http_adapter_is_refused_in_one_line():
    from agentverity_props.adapters import from_http
    with pytest.raises(InvalidArgument, match=r"HTTP adapter .* holds no conversation"):
        conversational(from_http("http://127.0.0.1:9/agent"))


# -- checks ------------------------------------------------------------------------------


def test_never_before_reads_earlier_turns_and_only_successful_calls():
    ok_lookup = Observation(tools=(ToolCall("lookup_order"),))
    failed_lookup = Observation(tools=(ToolCall("lookup_order", status="error"),))
    refund = Observation(tools=(ToolCall("issue_refund"),))
    assert REFUND.holds(TurnContext(("a", "b"), (ok_lookup, refund)))
    assert not REFUND.holds(TurnContext(("a", "b"), (failed_lookup, refund)))
    # a violation at an earlier turn is that turn's, not this one's
    assert REFUND.holds(TurnContext(("a", "b"), (refund, Observation())))


def test_relations_edit_an_earlier_turn_only():
    turns = ("order 1002", "hi", "refund")
    assert insert_irrelevant(["ok"]).apply(turns, 1, "ok") == ("order 1002", "ok", "hi", "refund")
    assert insert_irrelevant(["ok"]).apply(turns, 2, "ok")[2:] == ("ok", "refund")
    assert repeat_turn().apply(turns, 0, turns[0])[:2] == ("order 1002", "order 1002")
    para = paraphrase_turn({"hi": ["hello"]})
    assert para.options(turns, 1) == ["hello"]
    assert para.apply(turns, 1, "hello") == ("order 1002", "hello", "refund")
    with pytest.raises(InvalidArgument, match="earlier turn"):
        repeat_turn().apply(turns, 2, "refund")
    with pytest.raises(InvalidArgument):
        ConversationRelation("x", "insert")
    with pytest.raises(InvalidArgument, match="allowed_rate"):
        Invariant("x", lambda ctx: True, allowed_rate=0.7)


def test_invariant_tolerance_is_the_deprecated_name_of_allowed_rate():
    with pytest.warns(DeprecationWarning, match="use allowed_rate="):
        old = Invariant("x", lambda ctx: True, tolerance=0.2)
    assert old.allowed_rate == 0.2
    assert old.key() == Invariant("x", old.fn, allowed_rate=0.2).key()  # same draws
    assert old.to_dict()["tolerance"] == 0.2  # the published result field keeps its name
    with pytest.warns(DeprecationWarning, match="allowed_rate"):
        assert old.tolerance == 0.2
    with pytest.raises(InvalidArgument, match="give allowed_rate= only"):
        Invariant("x", lambda ctx: True, allowed_rate=0.1, tolerance=0.1)
    assert Invariant("x", old.fn, 0.1).allowed_rate == 0.1  # positional: the same place


# -- replays through the engine ----------------------------------------------------------


def test_the_lineage_continues_the_shorter_conversation_and_others_start_fresh():
    agent, calls = _counting(lambda msgs: {"text": "ok", "verdict": "v"})
    conv = from_history(agent)
    from agentverity_props.conversation import SessionAdapter
    with Engine(SessionAdapter(conv), EngineConfig(budget=100)) as eng:
        draws = ConversationDraws(eng, conv)
        run_sync(draws.replay(("a",), LINEAGE))
        run_sync(draws.replay(("a", "b"), LINEAGE))
        run_sync(draws.replay(("a", "b", "c"), LINEAGE))
        assert eng.ledger.calls == 3                  # one new turn per step
        run_sync(draws.replay(("a", "b", "c"), 1))
        assert eng.ledger.calls == 6                  # a fresh replay: every turn again
        run_sync(draws.replay(("a", "b", "c"), 1))
        assert eng.ledger.calls == 6                  # made once
    assert calls[-1] == ["a", "b", "c"]


def test_every_turn_is_counted_by_the_budget():
    conv = from_history(lambda msgs: "ok")
    from agentverity_props.conversation import SessionAdapter
    with Engine(SessionAdapter(conv), EngineConfig(budget=2)) as eng:
        draws = ConversationDraws(eng, conv, max_turns=3)
        assert not draws.can_afford(1)                # a 3-turn replay would not fit
        with pytest.raises(Exception, match="budget"):
            run_sync(draws.replay(("a", "b", "c"), 1))
        assert eng.ledger.calls == 2


# -- the machine -------------------------------------------------------------------------


def _machine(fn, **kw):
    kw.setdefault("invariants", [REFUND])
    return seed(3)(conversation_machine(agent=from_history(fn), turns=st.sampled_from(TURNS),
                                        max_workers=1, **kw))


def test_machine_reports_the_planted_three_turn_conversation_with_its_evidence():
    m = _machine(support_conversation(seed=3, noise=0.0, bug=True))
    with pytest.raises(PropertyViolation, match="violated at turn 3 of a 3-turn"):
        run_conversation_test(m, max_examples=60)
    rec = RECORDS[-1]
    ce = rec.minimal[REFUND.name]
    assert [t.verdict for t in ce.turns][-1] == "issue_refund"
    assert ce.calls_at_confirmation <= rec.calls
    assert rec.status == "failed"
    assert rec.blob
    assert rec.blob.startswith("@reproduce_failure(")
    doc = conversation_report([rec])
    assert doc["schema"] == "agentverity_props.conversation/1"
    text = json.dumps(doc)
    assert "my order is" not in text                 # fingerprints unless asked
    assert "my order is" in json.dumps(conversation_report([rec], include_inputs=True))
    for inputs in (False, True):
        jsonschema.validate(json.loads(dumps(conversation_report([rec], include_inputs=inputs))),
                            SCHEMA)
    text = render_conversation_text(conversation_report([rec], include_inputs=True))
    assert "1. user: 'my order is" in text
    assert "reproduce: @reproduce_failure(" in text
    assert "fp " in render_conversation_text(doc)     # a file's dict shows fingerprints
    assert "<failure" in render_conversation_junit(doc)
    from agentverity_props.report import render_html
    page = render_html(conversation_report([rec], include_inputs=True))
    assert "Minimal conversation: 3 turns" in page
    assert "my order is 1002" in page
    assert "could not read this file" not in page     # the conversation view, not the tree


def test_decisions_are_cached_per_conversation_and_check():
    fn, calls = _counting(support_conversation(seed=1, noise=0.15, bug=False))
    m = _machine(fn)
    rec = run_conversation_test(m, max_examples=20)
    assert rec.status == "passed"
    # each distinct (conversation, check) was decided once, however often Hypothesis ran it
    assert rec.candidates == len(set(_prefixes(calls)))


def _prefixes(calls):
    out = []
    for c in calls:
        out.append(tuple(c))
    return out


def test_machine_runs_only_inside_run_conversation_test():
    m = _machine(support_conversation())
    with pytest.raises(InvalidArgument, match="TestCase or run_conversation_test"):
        m()


def test_machine_test_case_runs_the_conversation_test():
    m = _machine(support_conversation(seed=0, noise=0.0, bug=False), max_turns=3)
    m.TestCase.settings = None
    m.TestCase("runTest").runTest()
    assert RECORDS[-1].status == "passed"


def test_bad_arguments_are_refused_eagerly():
    with pytest.raises(InvalidArgument, match="needs invariants"):
        conversation_machine(agent=from_history(len), turns=st.just("x"))
    with pytest.raises(InvalidArgument, match="strategy"):
        conversation_machine(agent=from_history(len), turns=["x"], invariants=[REFUND])
    with pytest.raises(InvalidArgument, match="alpha"):
        conversation_machine(agent=from_history(len), turns=st.just("x"),
                             invariants=[REFUND], alpha=0.9)
    with pytest.raises(InvalidArgument, match="holds no conversation"):
        conversation_machine(agent=from_callable(len), turns=st.just("x"), invariants=[REFUND])

    class NoAgent(AgentStateMachine):
        pass
    with pytest.raises(InvalidArgument, match="agent is not set"):
        run_conversation_test(NoAgent)


def test_a_spent_budget_is_inconclusive_not_a_pass():
    m = _machine(support_conversation(seed=0, noise=0.15, bug=False), budget=30)
    with pytest.raises(Inconclusive, match="budget"):
        run_conversation_test(m, max_examples=20)
    assert RECORDS[-1].status == "inconclusive"
    assert RECORDS[-1].calls <= 30


def test_an_agent_that_always_fails_is_inconclusive():
    def broken(msgs):
        raise RuntimeError("down")
    m = _machine(broken, budget=200)
    with pytest.raises(Inconclusive):
        run_conversation_test(m, max_examples=5)


def test_the_reproduce_failure_line_replays_the_minimal_conversation():
    from hypothesis import reproduce_failure

    m = _machine(support_conversation(seed=5, noise=0.0, bug=True))
    with pytest.raises(PropertyViolation):
        run_conversation_test(m, max_examples=60)
    first = RECORDS[-1]
    import ast
    version, blob = ast.literal_eval(first.blob.split("@reproduce_failure", 1)[1]
                                     .split(" as ")[0])
    again = reproduce_failure(version, blob)(
        _machine(support_conversation(seed=6, noise=0.0, bug=True)))
    with pytest.raises(PropertyViolation):
        run_conversation_test(again, max_examples=60)
    replayed = RECORDS[-1].minimal[REFUND.name]
    assert [t.text for t in replayed.turns] == [t.text for t in first.minimal[REFUND.name].turns]
    assert RECORDS[-1].examples <= 2                   # straight to the conversation


def test_turn_noise_counts_each_draw_once():
    import random as _random
    rng = _random.Random(0)
    conv = from_history(lambda msgs: {"text": "", "verdict": "b" if rng.random() < 0.3 else "a"})
    from agentverity_props.conversation import SessionAdapter
    with Engine(SessionAdapter(conv), EngineConfig(budget=None)) as eng:
        draws = ConversationDraws(eng, conv)
        turns: tuple[str, ...] = ()
        for t in range(30):                      # one long lineage: every prefix drawn once
            turns = (*turns, f"t{t}")
            run_sync(draws.replay(turns, LINEAGE))
        assert draws.turn_noise(prior=0.0) == 0.0  # no prefix was drawn twice: no evidence
        for r in range(200):
            run_sync(draws.replay(("t0",), r))
        assert 0.2 < draws.turn_noise(prior=0.0) < 0.4


def test_user_settings_keep_their_health_checks_and_the_explicit_max_examples_wins():
    from hypothesis import HealthCheck, settings

    m = _machine(support_conversation(seed=0, noise=0.0, bug=False), max_turns=2)
    rec = run_conversation_test(m, settings=settings(max_examples=50, suppress_health_check=[
        HealthCheck.differing_executors]), max_examples=3)
    assert rec.status == "passed"
    assert rec.max_candidates == 3 * (2 + 1) + 200
