"""Customer-support triage agent built with LangGraph, on an offline chat model.

Needs the ``langgraph`` extra: ``pip install "agentverity-props[langgraph]"``.

The graph is a real ``StateGraph``: an ``agent`` node (a chat model with tools bound), a
``ToolNode`` running real ``@tool`` functions (errors become ``ToolMessage`` with
``status="error"``), and a ``respond`` node asking the same model for structured output
(:class:`Triage`) through ``with_structured_output`` — the state key ``structured_response``
that ``from_langgraph`` reads the verdict from. The chat model is :class:`OfflineChatModel`, a
``BaseChatModel`` that emits tool calls by rules and draws its noise from its own
``random.Random``, so everything runs offline.

Routing (``route``): refund words -> ``lookup_order`` then ``issue_refund`` with the amount
found (an unknown order id makes ``lookup_order`` fail, an amount over $500 makes
``issue_refund`` fail: status ``error``, not fired); angry or legal words ->
``escalate_to_human``; anything else -> ``search_faq``. Ambiguous requests (refund *and*
angry words, or only a weak refund hint such as ``charged``) take the alternative route with
probability ``ambiguity``. The verdict is the route: ``refund``, ``escalate`` or ``faq``.

Planted bug (``make_buggy_agent``): a prompt longer than 40 characters containing ``URGENT``
in upper case is escalated, whatever it says; a case relation (``prompt -> prompt.upper()``)
exposes it. Multi-turn planted bug (``make_multiturn_buggy_agent``): once a conversation was
escalated, a later refund request skips ``lookup_order`` and refunds at once; the invariant
``never_before("issue_refund", required="lookup_order")`` over a conversation (one
``thread_id``, ``from_langgraph(...).conversation()``) exposes it in two turns.

CLI references (probes in ``examples/inputs/support.txt``)::

    agentverity-props run --agent examples/langgraph_agent.py:make_agent \\
        --inputs examples/inputs/support.txt

References:
    make_agent        zero-argument factory -> a compiled graph (seed 1234, ambiguity 0.2)
    make_buggy_agent  the same with the planted bug
    make_multiturn_buggy_agent  the same with the multi-turn planted bug
    agent             ``from_langgraph(make_agent)``: an adapter to pass to the library
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from agentverity_props.adapters import from_langgraph

__all__ = [
    "ORDERS",
    "OfflineChatModel",
    "SupportState",
    "Triage",
    "agent",
    "build_graph",
    "graph_factory",
    "make_agent",
    "make_buggy_agent",
    "make_multiturn_buggy_agent",
    "route",
]

ORDERS: dict[str, float] = {"1001": 25.00, "1002": 120.00, "1003": 9.99, "1004": 640.00,
                            "1005": 54.50}
REFUND_WORDS = ("refund", "money back", "reimburse", "chargeback")
WEAK_REFUND_WORDS = ("return", "charged", "charge")
ANGRY_WORDS = ("lawyer", "legal", "sue", "lawsuit", "furious", "angry", "unacceptable",
               "ridiculous", "complaint", "worst")
FAQ = {"shipping": "Standard shipping takes 3-5 business days.",
       "password": "Reset your password from the sign-in page.",
       "return": "Items can be returned within 30 days.",
       "hours": "Support is open 9am-6pm, Monday to Friday.",
       "invoice": "Invoices are in Account > Orders."}
ROUTE_OF_TOOL = {"lookup_order": "refund", "issue_refund": "refund",
                 "escalate_to_human": "escalate", "search_faq": "faq"}
_ORDER_ID = re.compile(r"#?\b(\d{4})\b")


# ------------------------------------------------------------------ tools


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up by its four-digit id."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id!r}")
    return json.dumps({"order_id": order_id, "status": "delivered", "amount": ORDERS[order_id]})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund ``amount`` dollars for an order."""
    if amount > 500:
        raise ValueError("refunds over $500 need a supervisor")
    return f"refunded ${amount:.2f} for order {order_id}"


@tool
def escalate_to_human(reason: str) -> str:
    """Open a ticket for a human agent."""
    return f"ticket opened: {reason[:40]}"


@tool
def search_faq(query: str) -> str:
    """Search the FAQ."""
    q = query.lower()
    return next((answer for key, answer in FAQ.items() if key in q), "no FAQ entry matched")


TOOLS = [lookup_order, issue_refund, escalate_to_human, search_faq]


# ------------------------------------------------------------------ structured output, state


class Triage(BaseModel):
    """The agent's structured answer: which route it took, and its reply."""

    verdict: Literal["refund", "escalate", "faq"]
    reply: str = ""


class SupportState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    structured_response: Triage


# ------------------------------------------------------------------ the offline model


def _has(text: str, words: Sequence[str]) -> bool:
    return any(re.search(rf"\b{re.escape(w)}", text) for w in words)


def route(prompt: str, *, planted_bug: bool = False) -> tuple[str, str | None]:
    """``(primary route, alternative or None)`` for ``prompt``."""
    if planted_bug and "URGENT" in prompt and len(prompt) > 40:
        return "escalate", None
    text = prompt.lower()
    refund, weak, angry = (_has(text, REFUND_WORDS), _has(text, WEAK_REFUND_WORDS),
                           _has(text, ANGRY_WORDS))
    if refund and angry:
        return "escalate", "refund"
    if refund:
        return "refund", None
    if angry:
        return "escalate", None
    if weak:
        return "faq", "refund"
    return "faq", None


def _call(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args,
                                              "id": f"call_{uuid.uuid4().hex[:12]}",
                                              "type": "tool_call"}])


class OfflineChatModel(BaseChatModel):
    """A chat model that follows the routing rules; noise from its own ``random.Random``.

    It emits real ``AIMessage.tool_calls``, reports ``usage_metadata`` (words as tokens)
    and answers ``with_structured_output(Triage)`` by calling the schema as a tool, the way
    function-calling models do.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rng: random.Random = Field(default_factory=random.Random)
    ambiguity: float = 0.2
    planted_bug: bool = False
    multiturn_bug: bool = False

    @property
    def _llm_type(self) -> str:
        return "offline-support"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None,
                   **kwargs: Any) -> Any:
        specs = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=specs, tool_choice=tool_choice, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        message = self._decide(messages, kwargs.get("tools") or (), kwargs.get("tool_choice"))
        words_in = sum(len(str(m.content).split()) for m in messages)
        words_out = len(str(message.content).split()) + 8 * len(message.tool_calls)
        message.usage_metadata = {"input_tokens": words_in, "output_tokens": words_out,
                                  "total_tokens": words_in + words_out}
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return self._generate(messages, stop, **kwargs)  # pure CPU: stay on the loop

    def _decide(self, messages: list[BaseMessage], tools: Sequence[Any],
                tool_choice: Any) -> AIMessage:
        # this turn only: a conversation (same thread_id) carries the earlier turns too
        start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        prompt, turn = str(messages[start].content), messages[start + 1:]
        results = [m for m in turn if isinstance(m, ToolMessage)]
        calls = [c for m in turn if isinstance(m, AIMessage) for c in m.tool_calls]
        if tool_choice == "any" and len(tools) == 1:  # with_structured_output(Triage)
            first = calls[0]["name"] if calls else "search_faq"
            final = next((str(m.content) for m in reversed(turn)
                          if isinstance(m, AIMessage) and m.content), "")
            name = tools[0]["function"]["name"]
            return _call(name, verdict=ROUTE_OF_TOOL.get(first, "faq"), reply=final)
        m = _ORDER_ID.search(prompt)
        order_id = m.group(1) if m else "unknown"
        if not results:
            primary, alternative = route(prompt, planted_bug=self.planted_bug)
            chosen = primary
            if alternative is not None and self.rng.random() < self.ambiguity:
                chosen = alternative
            if chosen == "refund":
                if self.multiturn_bug and any(
                        c["name"] == "escalate_to_human" for m in messages[:start]
                        if isinstance(m, AIMessage) for c in m.tool_calls):
                    # planted: once escalated, refunds skip the order lookup
                    return _call("issue_refund", order_id=order_id,
                                 amount=ORDERS.get(order_id, 0.0))
                return _call("lookup_order", order_id=order_id)
            if chosen == "escalate":
                return _call("escalate_to_human", reason=prompt[:120])
            return _call("search_faq", query=prompt[:120])
        last = results[-1]
        name = calls[len(results) - 1]["name"]
        if name == "lookup_order" and last.status == "success":
            amount = json.loads(str(last.content))["amount"]
            return _call("issue_refund", order_id=order_id, amount=amount)
        if name == "lookup_order":
            return AIMessage(content="I could not find that order; please send the "
                                     "four-digit order number.")
        if last.status == "error":
            return AIMessage(content="I could not complete that; a supervisor will follow up.")
        return AIMessage(content=str(last.content))


# ------------------------------------------------------------------ the graph


def build_graph(model: OfflineChatModel, *, checkpointer: Any = None) -> Any:
    """Compile the support graph around ``model`` (with ``checkpointer``, if given)."""
    with_tools = model.bind_tools(TOOLS)
    structured = model.with_structured_output(Triage)

    async def agent_node(state: SupportState) -> dict[str, Any]:
        return {"messages": [await with_tools.ainvoke(state["messages"])]}

    async def respond(state: SupportState) -> dict[str, Any]:
        return {"structured_response": await structured.ainvoke(state["messages"])}

    builder = StateGraph(SupportState)
    builder.add_node("agent", agent_node)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    builder.add_node("respond", respond)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "respond"})
    builder.add_edge("tools", "agent")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="support-triage")


def graph_factory(*, seed: int | None = 0, ambiguity: float = 0.2, planted_bug: bool = False,
                  multiturn_bug: bool = False) -> Callable[[], Any]:
    """A zero-argument factory of the compiled graph around a model with one
    ``random.Random(seed)``. The graph is compiled on the first call and returned on every
    later one: compiled without a checkpointer it keeps nothing between runs (each call's
    state starts from its input), and compiling it again per call cost as much as the run."""
    if not 0.0 <= ambiguity <= 1.0:
        raise ValueError(f"ambiguity must be in [0, 1], got {ambiguity}")
    rng = random.Random(seed)
    built: list[Any] = []

    def make_agent() -> Any:
        if not built:
            built.append(build_graph(OfflineChatModel(rng=rng, ambiguity=ambiguity,
                                                      planted_bug=planted_bug,
                                                      multiturn_bug=multiturn_bug)))
        return built[0]

    return make_agent


make_agent = graph_factory(seed=1234)
make_buggy_agent = graph_factory(seed=1234, planted_bug=True)
make_multiturn_buggy_agent = graph_factory(seed=1234, multiturn_bug=True)
agent = from_langgraph(make_agent, identity="langgraph:examples/langgraph_agent.py:agent")
