"""Example: a customer-support agent that routes requests to tools (real Strands agent).

Tools (real ``@tool`` functions with deterministic bodies): ``lookup_order``,
``issue_refund``, ``escalate_to_human``, ``search_faq``.

Routing (the documented behaviour tests check):

* refund words (``refund``, ``money back``, ``reimburse``...) -> ``lookup_order`` then
  ``issue_refund`` with the amount the lookup returned (an unknown or missing order id makes
  ``lookup_order`` fail, status ``error``, and no refund is issued);
* angry or legal words (``lawyer``, ``sue``, ``furious``, ``unacceptable``...) ->
  ``escalate_to_human``;
* anything else -> ``search_faq``.

Ambiguous requests — refund *and* angry words, or only a weak refund hint (``return``,
``charged``) — take the alternative route with probability ``ambiguity`` (default 0.2), drawn
from the model's own ``random.Random``. Clear requests are deterministic.

The answer is ``{"verdict": <first tool name>, "reply": ...}``; ``agent`` asks for it as
structured output (:class:`SupportOutcome`), so its verdict is the first tool's name.

Module-level references: ``make_agent`` (factory), ``agent`` (adapter).
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from strands import Agent, tool

from ..adapters import StrandsAdapter, from_strands
from ._offline_model import (
    Action,
    OfflineModel,
    Policy,
    call_tool,
    final,
    first_user_text,
    tool_results,
)

__all__ = [
    "ORDERS",
    "SupportOutcome",
    "agent",
    "build_support_agent",
    "escalate_to_human",
    "issue_refund",
    "lookup_order",
    "make_agent",
    "route",
    "search_faq",
    "support_adapter",
    "support_factory",
    "support_policy",
]

ORDERS: dict[str, float] = {"1001": 25.00, "1002": 120.00, "1003": 9.99, "1004": 640.00,
                            "1005": 54.50}
REFUND_WORDS = ("refund", "money back", "reimburse", "reimbursement", "chargeback")
WEAK_REFUND_WORDS = ("return", "charged", "charge")
ANGRY_WORDS = ("lawyer", "legal", "sue", "lawsuit", "furious", "angry", "unacceptable",
               "ridiculous", "complaint", "worst")
FAQ = {
    "shipping": "Standard shipping takes 3-5 business days.",
    "password": "Reset your password from the sign-in page.",
    "return": "Items can be returned within 30 days.",
    "hours": "Support is open 9am-6pm, Monday to Friday.",
    "invoice": "Invoices are in Account > Orders.",
}
_ORDER_ID = re.compile(r"#?\b(\d{4})\b")


class SupportOutcome(BaseModel):
    """Structured answer of the support agent."""

    verdict: str
    reply: str = ""


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up by its id.

    Args:
        order_id: the four-digit order number.
    """
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id!r}")
    return json.dumps({"order_id": order_id, "status": "delivered", "amount": ORDERS[order_id]})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order.

    Args:
        order_id: the order to refund.
        amount: the amount in dollars.
    """
    if amount > 500:
        raise ValueError("refunds over $500 need a supervisor")
    return f"refunded ${amount:.2f} for order {order_id}"


@tool
def escalate_to_human(reason: str) -> str:
    """Open a ticket for a human agent.

    Args:
        reason: why the customer needs a human.
    """
    return f"ticket ESC-{zlib.crc32(reason.encode('utf-8')) % 100000:05d} opened"


@tool
def search_faq(query: str) -> str:
    """Search the FAQ.

    Args:
        query: the customer's question.
    """
    q = query.lower()
    for key, answer in FAQ.items():
        if key in q:
            return answer
    return "no FAQ entry matched"


def _has(text: str, words: Sequence[str]) -> bool:
    return any(re.search(rf"\b{re.escape(w)}", text) for w in words)


def route(prompt: str) -> tuple[str, str | None]:
    """``(primary route, alternative or None)`` for ``prompt``; routes: refund/escalate/faq."""
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


def support_policy(*, ambiguity: float = 0.2) -> Policy:
    """The support agent's rules, as an :class:`OfflineModel` policy."""

    def policy(messages: Sequence[Mapping[str, Any]], tool_specs: Sequence[Mapping[str, Any]],
               rng: random.Random) -> Action:
        prompt = first_user_text(messages)
        done = tool_results(messages)
        m = _ORDER_ID.search(prompt)
        order_id = m.group(1) if m else "unknown"
        if not done:
            primary, alternative = route(prompt)
            chosen = primary
            if alternative is not None and ambiguity > 0 and rng.random() < ambiguity:
                chosen = alternative
            if chosen == "refund":
                return call_tool("lookup_order", order_id=order_id)
            if chosen == "escalate":
                return call_tool("escalate_to_human", reason=prompt[:120])
            return call_tool("search_faq", query=prompt[:120])
        first = done[0][0]
        last_name, last_status, last_text = done[-1]
        if last_name == "lookup_order" and last_status == "success":
            amount = json.loads(last_text)["amount"]
            return call_tool("issue_refund", order_id=order_id, amount=amount)
        if last_name == "lookup_order":
            reply = "I could not find that order; please send the four-digit order number."
        elif last_status == "error":
            reply = "I could not complete that; a supervisor will follow up."
        else:
            reply = last_text
        return final(json.dumps({"verdict": first, "reply": reply}))

    return policy


def build_support_agent(*, rng: random.Random, ambiguity: float = 0.2) -> Agent:
    """A fresh support ``Agent`` drawing from ``rng``."""
    model = OfflineModel(support_policy(ambiguity=ambiguity), rng=rng, model_id="offline-support")
    return Agent(model=model, tools=[lookup_order, issue_refund, escalate_to_human, search_faq],
                 system_prompt="You are a support agent. Use the tools, then answer in JSON.",
                 callback_handler=None, retry_strategy=None, name="support-agent")


def support_factory(*, seed: int = 0, ambiguity: float = 0.2) -> Callable[[], Agent]:
    """A zero-argument factory of fresh support agents sharing one ``Random(seed)``."""
    if not 0.0 <= ambiguity <= 1.0:
        raise ValueError(f"ambiguity must be in [0, 1], got {ambiguity}")
    rng = random.Random(seed)

    def make_agent() -> Agent:
        return build_support_agent(rng=rng, ambiguity=ambiguity)

    return make_agent


def support_adapter(*, seed: int = 0, ambiguity: float = 0.2,
                    identity: str | None = None) -> StrandsAdapter:
    """An adapter over fresh support agents, verdict = first tool name."""
    return from_strands(support_factory(seed=seed, ambiguity=ambiguity),
                        structured_output_model=SupportOutcome,
                        identity=identity or f"strands:examples.support(seed={seed},"
                                             f"ambiguity={ambiguity})")


make_agent = support_factory(seed=1234)
agent = from_strands(make_agent, structured_output_model=SupportOutcome,
                     identity="strands:examples.support_agent:agent")
