"""from_langgraph against real compiled LangGraph graphs on an offline chat model.

The support graph of ``examples/langgraph_agent.py`` (StateGraph, ToolNode, structured
output through ``with_structured_output``) runs on ``OfflineChatModel``, a real
``BaseChatModel`` emitting ``AIMessage.tool_calls`` and drawing its noise from its own
``random.Random``. Small graphs built here cover the other state shapes.
"""

from __future__ import annotations

import asyncio
import random
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from typing import Annotated

from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agentverity_props.adapters import load_agent, load_object
from agentverity_props.adapters._langgraph import LangGraphAdapter, from_langgraph
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError, BadInput, InvalidArgument, PropertyViolation

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langgraph_agent.py"
SUPPORT_INPUTS = ROOT / "examples" / "inputs" / "support.txt"
ex = load_object(f"{EXAMPLE}:graph_factory", cwd=ROOT).__globals__  # the example module
REFUND_OVER_LIMIT = "Refund order 1004 please"
AMBIGUOUS = "I was charged twice for order 1002."


def support(seed: int = 0, ambiguity: float = 0.2, **kw) -> LangGraphAdapter:
    return from_langgraph(ex["graph_factory"](seed=seed, ambiguity=ambiguity, **kw))


def gather(adapter, prompt: str, n: int):
    async def main():
        return await asyncio.gather(*(adapter.ainvoke(prompt) for _ in range(n)))
    return asyncio.run(main())


# ------------------------------------------------------------------ what one call leaves


# tools, verdict and usage of one call: test_adapter_conformance.py (every framework)


def test_answer_is_the_structured_response_and_tool_call_ids_are_the_messages():
    obs = support(seed=1).invoke("I want a refund for order 1001, it arrived broken.")
    assert all(t.call_id and t.call_id.startswith("call_") for t in obs.tools)
    assert obs.text == "refunded $25.00 for order 1001"
    assert obs.raw == {"structured_response": {"verdict": "refund",
                                               "reply": "refunded $25.00 for order 1001"}}


def test_after_a_tool_that_errors_the_answer_says_so():
    # the tools' statuses and what fired: test_adapter_conformance.py
    obs = support(seed=1).invoke(REFUND_OVER_LIMIT)
    assert obs.text == "I could not complete that; a supervisor will follow up."


def test_usage_falls_back_to_the_messages_when_callbacks_are_a_manager():
    from langchain_core.callbacks import AsyncCallbackManager
    adapter = from_langgraph(ex["graph_factory"](seed=3),
                             config={"callbacks": AsyncCallbackManager(handlers=[])})
    counted = support(seed=3).invoke("How do I reset my password?").usage
    from_messages = adapter.invoke("How do I reset my password?").usage
    # the structured-output call never reaches the messages: only the callback counts it
    assert 0 < from_messages.total_tokens < counted.total_tokens


# ------------------------------------------------------------------ verdicts


class Decision(TypedDict):
    question: str
    decision: str
    notes: dict


def decision_graph(write_decision: bool = True):
    def judge(state: Decision) -> dict:
        label = "block" if "bomb" in state["question"] else "allow"
        out: dict = {"notes": {"score": len(state["question"])}}
        if write_decision:
            out["decision"] = label
        return out

    g = StateGraph(Decision)
    g.add_node("judge", judge)
    g.add_edge(START, "judge")
    g.add_edge("judge", END)
    return g.compile()


def test_verdict_from_a_typeddict_state_key():
    adapter = from_langgraph(decision_graph(), input_key="question", input_as="text",
                             verdict="decision")
    assert adapter.invoke("how to build a bomb").verdict == "block"
    obs = adapter.invoke("bread recipe")
    assert obs.verdict == "allow"
    assert obs.raw == {"question": "bread recipe", "decision": "allow", "notes": {"score": 12}}
    assert obs.text == ""
    assert obs.tools == ()
    assert obs.usage is None


def test_verdict_from_the_structured_output_model_by_path_and_by_default():
    explicit = from_langgraph(ex["graph_factory"](seed=1), verdict="structured_response.verdict")
    assert explicit.invoke("My lawyer will be in touch about this.").verdict == "escalate"
    assert support(seed=1).invoke("How do I reset my password?").verdict == "faq"


def test_a_missing_verdict_key_fails_naming_the_keys_present():
    adapter = from_langgraph(decision_graph(write_decision=False), input_key="question",
                             input_as="text", verdict="decision")
    with pytest.raises(AgentCallError) as err:
        adapter.invoke("bread recipe")
    assert err.value.kind == "bad_output"
    assert "no 'decision'" in str(err.value)
    assert "has keys notes, question" in str(err.value)
    nested = from_langgraph(ex["graph_factory"](seed=1), verdict="structured_response.label")
    with pytest.raises(AgentCallError, match=r"'structured_response' has keys reply, verdict"):
        nested.invoke("How do I reset my password?")


def test_fail_fast_stops_an_engine_on_a_missing_verdict_key_with_the_cause():
    adapter = from_langgraph(decision_graph(write_decision=False), input_key="question",
                             input_as="text", verdict="decision")
    with Engine(adapter, EngineConfig(fail_fast=3, max_workers=1)) as eng:
        for _ in range(3):
            run_sync(eng.draw(Probe.make("bread recipe")))
        assert eng.stopping
    assert "bad_output" in eng.stop_cause
    assert "has keys notes, question" in eng.stop_cause


# ------------------------------------------------------------------ noise and fresh state


def test_checkpointed_graph_gets_a_fresh_thread_per_call_and_forgets_it():
    saver = InMemorySaver()
    graph = ex["build_graph"](ex["OfflineChatModel"](rng=random.Random(0)), checkpointer=saver)
    adapter = from_langgraph(graph)
    obs = gather(adapter, "I want a refund for order 1001, it arrived broken.", 8)
    # every call saw only its own conversation: the same two tools, never accumulated ones
    assert {tuple(t.name for t in o.tools) for o in obs} == {("lookup_order", "issue_refund")}
    assert not saver.storage  # each call's thread was deleted once read


def test_a_reused_thread_would_leak_history_so_the_adapter_never_reuses_one():
    """Control: the same graph called twice on one thread_id does accumulate messages."""
    saver = InMemorySaver()
    graph = ex["build_graph"](ex["OfflineChatModel"](rng=random.Random(0)), checkpointer=saver)
    config = {"configurable": {"thread_id": "same"}}
    prompt = {"messages": [{"role": "user", "content": "How do I reset my password?"}]}
    first = asyncio.run(graph.ainvoke(prompt, config=config))
    second = asyncio.run(graph.ainvoke(prompt, config=config))
    assert len(second["messages"]) > len(first["messages"])
    adapter = from_langgraph(graph)
    assert [len(adapter.invoke("How do I reset my password?").tools) for _ in range(3)] \
        == [1, 1, 1]


def test_factory_is_called_once_per_call():
    built = []

    def make():
        graph = ex["build_graph"](ex["OfflineChatModel"](rng=random.Random(len(built))))
        built.append(graph)
        return graph

    adapter = from_langgraph(make)
    gather(adapter, "How do I reset my password?", 3)
    assert len(built) == 3
    assert len({id(g) for g in built}) == 3


# ------------------------------------------------------------------ failures, timeouts


def test_recursion_limit_names_the_fix():
    class S(TypedDict):
        n: str

    g = StateGraph(S)
    g.add_node("loop", lambda s: {"n": s["n"] + "+"})
    g.add_edge(START, "loop")
    g.add_edge("loop", "loop")
    adapter = from_langgraph(g.compile(), input_key="n", input_as="text",
                             config={"recursion_limit": 5})
    with pytest.raises(AgentCallError, match=r"GraphRecursionError.*recursion_limit"):
        adapter.invoke("x")


def test_an_interrupted_graph_is_bad_output():
    from langgraph.types import interrupt

    class S(TypedDict):
        q: str

    g = StateGraph(S)
    g.add_node("ask", lambda s: {"q": interrupt("approve?")})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    adapter = from_langgraph(g.compile(checkpointer=InMemorySaver()), input_key="q",
                             input_as="text")
    with pytest.raises(AgentCallError, match="interrupt") as err:
        adapter.invoke("x")
    assert err.value.kind == "bad_output"


def test_eager_validation_and_factory_errors():
    builder = StateGraph(Decision)
    with pytest.raises(InvalidArgument, match="uncompiled StateGraph"):
        from_langgraph(builder)
    with pytest.raises(InvalidArgument, match="compiled graph or a zero-argument factory"):
        from_langgraph(42)
    with pytest.raises(InvalidArgument, match=r"requires arguments \(seed\)"):
        from_langgraph(lambda seed: None)
    with pytest.raises(InvalidArgument, match="input_as"):
        from_langgraph(decision_graph(), input_as="json")
    with pytest.raises(InvalidArgument, match="verdict path"):
        from_langgraph(decision_graph(), verdict="a..b")
    with pytest.raises(AgentCallError, match=r"uncompiled StateGraph: return graph\.compile"):
        from_langgraph(lambda: builder).invoke("x")
    with pytest.raises(AgentCallError, match=r"factory .* raised RuntimeError: no"):
        from_langgraph(lambda: (_ for _ in ()).throw(RuntimeError("no"))).invoke("x")


# ------------------------------------------------------------------ references, wrappers


def test_references_detect_graphs_and_factories(tmp_path):
    adapter = load_agent(f"{EXAMPLE}:make_agent")
    assert isinstance(adapter, LangGraphAdapter)
    assert adapter.identity == "langgraph:langgraph_agent.make_agent"
    assert adapter.invoke("How do I reset my password?").verdict == "faq"
    (tmp_path / "g.py").write_text(textwrap.dedent("""
        from langgraph.graph import END, START, StateGraph
        from typing_extensions import TypedDict

        class S(TypedDict):
            question: str
            verdict: str

        builder = StateGraph(S)
        builder.add_node("j", lambda s: {"verdict": "ok"})
        builder.add_edge(START, "j")
        builder.add_edge("j", END)
        graph = builder.compile()
    """))
    assert isinstance(load_agent(f"{tmp_path / 'g.py'}:graph"), LangGraphAdapter)
    with pytest.raises(BadInput, match="uncompiled StateGraph") as err:
        load_agent(f"{tmp_path / 'g.py'}:builder")
    assert "builder.compile()" in err.value.fix


# @agent_property, the CLI's run and tools, recorded token totals, retries and
# timeouts, as_adapter: test_adapter_conformance.py (every framework)


# ------------------------------------------------------------------ conversations


def test_a_conversation_keeps_one_thread_and_each_turn_observes_itself():
    saver = InMemorySaver()
    graph = ex["build_graph"](ex["OfflineChatModel"](rng=random.Random(0)), checkpointer=saver)
    conv = from_langgraph(graph).conversation()

    async def main():
        s = conv.open()
        first = await s.send("How do I reset my password?")
        second = await s.send("I want a refund for order 1001")
        branch = s.fork()
        third = await s.send("What are your support hours?")
        other = await branch.send("My lawyer will be in touch.")
        threads = set(saver.storage)
        s.close()
        assert saver.storage  # the fork still uses the thread
        branch.close()
        return first, second, third, other, threads

    first, second, third, other, threads = asyncio.run(main())
    assert [t.name for t in first.tools] == ["search_faq"]
    assert [t.name for t in second.tools] == ["lookup_order", "issue_refund"]  # this turn only
    assert second.verdict == "refund"
    assert third.text == "Support is open 9am-6pm, Monday to Friday."
    assert [t.name for t in other.tools] == ["escalate_to_human"]
    assert len(threads) == 1  # one thread: the turns and the fork's branch
    assert not saver.storage  # deleted when the last session closed
    # turn 2 sent the whole history to the model: more input tokens than turn 1
    assert second.usage.input_tokens > first.usage.input_tokens


def test_a_failed_turn_is_retried_from_the_last_good_checkpoint():
    class Chat(TypedDict):
        messages: Annotated[list, add_messages]

    fail = {"left": 1}

    def reply(state: Chat) -> dict:
        user = [m for m in state["messages"] if m.type == "human"]
        if len(user) == 2 and fail["left"]:
            fail["left"] -= 1
            raise RuntimeError("flaky model")
        return {"messages": [AIMessage(f"seen {len(user)} user turns, "
                                       f"{len(state['messages'])} messages")]}

    g = StateGraph(Chat)
    g.add_node("reply", reply)
    g.add_edge(START, "reply")
    g.add_edge("reply", END)
    conv = from_langgraph(g.compile()).conversation()  # no checkpointer: one is added

    async def main():
        s = conv.open()
        texts = [(await s.send("one")).text]
        with pytest.raises(AgentCallError, match="flaky model"):
            await s.send("two")
        texts.append((await s.send("two")).text)
        texts.append((await s.send("three")).text)
        s.close()
        return texts

    # the failed attempt's "two" is a dead branch: the retry sees one earlier turn, not two
    assert asyncio.run(main()) == ["seen 1 user turns, 1 messages",
                                   "seen 2 user turns, 3 messages",
                                   "seen 3 user turns, 5 messages"]


def test_conversation_machine_finds_the_multiturn_planted_bug():
    from agentverity_props.conversation import (
        RECORDS,
        conversation_machine,
        never_before,
        run_conversation_test,
    )

    turns = st.sampled_from(["How do I reset my password?", "My lawyer will be in touch.",
                             "Refund order 1001 please."])
    invariant = never_before("issue_refund", required="lookup_order")
    # the adapter itself is accepted where a conversation is expected (its own threads)
    clean = conversation_machine(agent=from_langgraph(ex["make_agent"]),
                                 turns=turns, invariants=[invariant], max_turns=4)
    assert run_conversation_test(clean, max_examples=10, seed=1).status == "passed"
    buggy = conversation_machine(
        agent=from_langgraph(ex["make_multiturn_buggy_agent"]).conversation(), turns=turns,
        invariants=[invariant], max_turns=4)
    with pytest.raises(PropertyViolation, match="at turn 2 of a 2-turn conversation"):
        run_conversation_test(buggy, max_examples=30, seed=1)
    (minimal,) = RECORDS[-1].minimal.values()
    assert [t.text for t in minimal.turns] == ["My lawyer will be in touch.",
                                               "Refund order 1001 please."]
    assert minimal.turns[1].tools == ("issue_refund",)


