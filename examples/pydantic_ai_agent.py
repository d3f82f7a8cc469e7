"""Customer-support triage agent built with pydantic-ai, on an offline model.

Needs the ``pydantic-ai`` extra: ``pip install "agentverity-props[pydantic-ai]"``.

The agent is a real ``pydantic_ai.Agent``: real ``@agent.tool_plain`` functions, a
structured output type (:class:`Triage`, returned through pydantic-ai's output tool), and
pydantic-ai's own run loop. Only the model is offline: a ``FunctionModel`` whose function
(:class:`TriageModel`) follows routing rules and draws its noise from its own
``random.Random``, so everything runs without a network or an API key.

Routing (:func:`route`): refund words -> ``lookup_order`` then ``issue_refund`` with the
amount found; an unknown order id makes ``lookup_order`` raise ``ToolFailed`` (outcome
``failed``), an amount over $500 makes ``issue_refund`` raise ``ModelRetry`` (outcome
``retried``): both have status ``error`` and did not fire. Angry or legal words ->
``escalate_to_human``; anything else -> ``search_faq``. Ambiguous requests (refund *and*
angry words, or only a weak refund hint such as ``charged``) take the alternative route with
probability ``ambiguity``. The verdict is the route, in the output's ``decision`` field:
``refund``, ``escalate`` or ``faq``.

Planted bug (``make_buggy_agent``): a prompt longer than 40 characters containing ``URGENT``
in upper case is escalated, whatever it says; a case relation (``prompt -> prompt.upper()``)
exposes it.

CLI references (probes in ``examples/inputs/support.txt``)::

    agentverity-props run --agent examples/pydantic_ai_agent.py:make_agent \\
        --inputs examples/inputs/support.txt

References:
    make_agent        zero-argument factory -> an Agent (one shared noise source, seed 1234)
    make_buggy_agent  the same with the planted bug
    agent             ``from_pydantic_ai(make_agent, verdict="decision")``: an adapter
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Literal

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentverity_props.adapters import from_pydantic_ai

__all__ = ["ORDERS", "Triage", "TriageModel", "agent", "build_agent", "make_agent",
           "make_buggy_agent", "route"]

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


class Triage(BaseModel):
    """The agent's structured answer: the route it took, and its reply."""

    decision: Literal["refund", "escalate", "faq"]
    reply: str = ""


def _has(text: str, words: tuple[str, ...]) -> bool:
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


class TriageModel:
    """The ``FunctionModel`` function: rule-driven, noisy only through its own ``rng``.

    First request: pick the route (the alternative with probability ``ambiguity``) and call
    its first tool. Later requests read the tool returns of the run so far: a found order is
    refunded for its amount; otherwise the model answers through the output tool.
    """

    def __init__(self, *, rng: random.Random, ambiguity: float = 0.2,
                 planted_bug: bool = False) -> None:
        self.rng = rng
        self.ambiguity = ambiguity
        self.planted_bug = planted_bug

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = _prompt(messages)
        calls = [p for m in messages if isinstance(m, ModelResponse) for p in m.parts
                 if isinstance(p, ToolCallPart)]
        returns = {p.tool_call_id: p for m in messages if isinstance(m, ModelRequest)
                   for p in m.parts if isinstance(p, ToolReturnPart)}
        if not calls:
            primary, alternative = route(prompt, planted_bug=self.planted_bug)
            chosen = primary
            if alternative is not None and self.rng.random() < self.ambiguity:
                chosen = alternative
            return ModelResponse(parts=[self._first_call(chosen, prompt)])
        decision = ROUTE_OF_TOOL.get(calls[0].tool_name, "faq")
        last = calls[-1]
        done = returns.get(last.tool_call_id)
        if last.tool_name == "lookup_order" and done is not None and done.outcome == "success":
            found = json.loads(str(done.content))
            return ModelResponse(parts=[ToolCallPart(
                "issue_refund", {"order_id": found["order_id"], "amount": found["amount"]})])
        reply = str(done.content) if done is not None else ""
        output_tool = info.output_tools[0].name
        return ModelResponse(parts=[
            TextPart(f"Routing this request to {decision}."),
            ToolCallPart(output_tool, {"decision": decision, "reply": reply[:120]})])

    @staticmethod
    def _first_call(chosen: str, prompt: str) -> ToolCallPart:
        if chosen == "refund":
            m = _ORDER_ID.search(prompt)
            if m is None:
                return ToolCallPart("escalate_to_human", {"reason": "refund without an order id"})
            return ToolCallPart("lookup_order", {"order_id": m.group(1)})
        if chosen == "escalate":
            return ToolCallPart("escalate_to_human", {"reason": prompt[:60]})
        return ToolCallPart("search_faq", {"query": prompt})


def _prompt(messages: list[ModelMessage]) -> str:
    for message in messages:
        for part in getattr(message, "parts", ()):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""


def build_agent(*, rng: random.Random, ambiguity: float = 0.2,
                planted_bug: bool = False) -> Agent[None, Triage]:
    """A support-triage ``Agent`` whose offline model draws from ``rng``."""
    model = FunctionModel(TriageModel(rng=rng, ambiguity=ambiguity, planted_bug=planted_bug),
                          model_name="offline-triage")
    agent: Agent[None, Triage] = Agent(model, output_type=Triage, name="support_triage",
                                       instructions="Triage customer-support requests.")

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """Look an order up by its four-digit id."""
        if order_id not in ORDERS:
            raise ToolFailed(f"no order {order_id!r}")
        return json.dumps({"order_id": order_id, "status": "delivered",
                           "amount": ORDERS[order_id]})

    @agent.tool_plain
    def issue_refund(order_id: str, amount: float) -> str:
        """Refund ``amount`` dollars for an order."""
        if amount > 500:
            raise ModelRetry("refunds over $500 need a supervisor")
        return f"refunded ${amount:.2f} for order {order_id}"

    @agent.tool_plain
    def escalate_to_human(reason: str) -> str:
        """Open a ticket for a human agent."""
        return f"ticket opened: {reason[:40]}"

    @agent.tool_plain
    def search_faq(query: str) -> str:
        """Search the FAQ."""
        q = query.lower()
        return next((answer for key, answer in FAQ.items() if key in q), "no FAQ entry matched")

    return agent


# one noise source per reference, created once: a factory building a new Random(1234) per
# call would replay the same draws on every call and hide the agent's noise
_RNG = random.Random(1234)
_BUGGY_RNG = random.Random(1234)
_AGENT = build_agent(rng=_RNG)
_BUGGY = build_agent(rng=_BUGGY_RNG, planted_bug=True)


def make_agent() -> Agent[None, Triage]:
    """The support-triage agent (a pydantic-ai Agent keeps no history between runs)."""
    return _AGENT


def make_buggy_agent() -> Agent[None, Triage]:
    """The agent with the planted ``URGENT`` bug."""
    return _BUGGY


agent: Any = from_pydantic_ai(make_agent, verdict="decision")
