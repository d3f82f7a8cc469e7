"""A support-triage agent on the OpenAI Agents SDK, running offline.

A real ``agents.Agent`` with four ``@function_tool`` tools and a structured ``output_type``;
the real ``Runner`` runs the real tools. Only the model is replaced: :class:`TriageModel`
implements the SDK's ``Model`` interface (``get_response`` / ``stream_response``) with
keyword rules, and is stochastic only through its own ``random.Random``.

    pip install 'agentverity-props[openai-agents]'
    agentverity-props run --agent examples/openai_agents_agent.py:make_agent \\
        --inputs examples/inputs/support.txt

Routes (the verdict is the structured output's ``verdict`` field):

* refund words (``refund``, ``money back``, ``reimburse``) -> ``lookup_order`` then
  ``issue_refund``; verdict ``refund``. An unknown order makes ``lookup_order`` raise and a
  refund over $500 (order 1004) makes ``issue_refund`` raise: the SDK hands the model an
  error message instead, the tool's status is ``error`` and the verdict ``escalate``.
* angry or legal words (``lawyer``, ``furious``, ``unacceptable``...) -> ``escalate_to_human``;
  verdict ``escalate``.
* anything else -> ``search_faq``; verdict ``faq``.
* ambiguous requests (refund *and* angry words, or only ``return`` / ``charged``) take the
  other route with probability ``ambiguity`` (default 0.2, drawn from the model's own
  ``random.Random``); everything else is deterministic.
* planted bug (``make_buggy_agent``): a prompt over 40 characters containing ``URGENT`` in
  upper case is escalated whatever it says (lower-case ``urgent`` never is), so the case
  relation ``prompt -> prompt.upper()`` breaks; its shortest violations have 41 characters.

Keyword rules are brittle to typos (``money bakc`` is no longer a refund request): on
``examples/inputs/support.txt`` ``run`` reports the typo relation violated on one input, the
clean agent's only finding.

Tracing stays on this machine: the SDK's default processor, which uploads traces to OpenAI,
is removed below; the adapter registers its own local processor to read tool statuses.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import AsyncIterator
from typing import Any, Literal

from agents import Agent, function_tool, set_trace_processors
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import BaseModel

from agentverity_props.adapters import from_openai_agents

# no upload of traces to OpenAI from an offline example (the adapter adds a local processor)
set_trace_processors([])

ORDERS = {"1001": 42.0, "1002": 18.5, "1003": 129.99, "1004": 740.0, "1005": 12.0}
REFUND_LIMIT = 500.0
REFUND_WORDS = ("refund", "money back", "reimburse")
ANGRY_WORDS = ("lawyer", "sue", "furious", "unacceptable", "ridiculous", "manager")
AMBIGUOUS_WORDS = ("return", "charged")
TOOL_ERROR = "An error occurred while running the tool. Please try again."
_RNG = random.Random(20250601)  # shared by the agents make_agent builds, never the global one


class Triage(BaseModel):
    """The agent's structured answer."""

    verdict: Literal["refund", "escalate", "faq"]
    reply: str


@function_tool
def lookup_order(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: the order number, e.g. "1001".
    """
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id!r}")
    return json.dumps({"order_id": order_id, "amount": ORDERS[order_id]})


@function_tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order.

    Args:
        order_id: the order number.
        amount: the amount to refund, in dollars.
    """
    if amount > REFUND_LIMIT:
        raise PermissionError(f"refunds over ${REFUND_LIMIT:.0f} need a human")
    return f"refunded ${amount:.2f} for order {order_id}"


@function_tool
def escalate_to_human(reason: str) -> str:
    """Hand the conversation to a human agent.

    Args:
        reason: why.
    """
    return "a human agent will reply within 24 hours"


@function_tool
def search_faq(query: str) -> str:
    """Search the FAQ.

    Args:
        query: what to look for.
    """
    return "Standard shipping takes 3-5 business days."


def _route(prompt: str, rng: random.Random, ambiguity: float, planted_bug: bool) -> str:
    if planted_bug and "URGENT" in prompt and len(prompt) > 40:
        return "escalate"
    low = " ".join(prompt.lower().split())
    refund = any(w in low for w in REFUND_WORDS)
    angry = any(re.search(rf"\b{w}\b", low) for w in ANGRY_WORDS)
    if refund and angry:
        return "escalate" if rng.random() < ambiguity else "refund"
    if refund:
        return "refund"
    if angry:
        return "escalate"
    if any(w in low for w in AMBIGUOUS_WORDS):
        return "refund" if rng.random() < ambiguity else "faq"
    return "faq"


def _user_text(items: list[Any]) -> str:
    for item in items:
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return " ".join(str(p.get("text", "")) for p in content or () if isinstance(p, dict))
    return ""


class TriageModel(Model):
    """Rule-driven offline model: the next step is read from the conversation so far.

    Stateless between calls (one instance may serve concurrent runs); random only through
    ``rng``, drawn once per run, on its first turn.
    """

    def __init__(self, *, rng: random.Random, ambiguity: float = 0.2,
                 planted_bug: bool = False) -> None:
        self.rng = rng
        self.ambiguity = ambiguity
        self.planted_bug = planted_bug

    async def get_response(self, system_instructions: str | None, input: Any,
                           model_settings: Any, tools: Any, output_schema: Any,
                           handoffs: Any, tracing: Any, *, previous_response_id: str | None,
                           conversation_id: str | None, prompt: Any) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        output = self._step(items, output_schema)
        words_in = sum(len(json.dumps(i, default=str).split()) for i in items)
        words_out = sum(len(o.model_dump_json().split()) for o in output)
        return ModelResponse(output=output, response_id=None, usage=Usage(
            requests=1, input_tokens=words_in, output_tokens=words_out,
            total_tokens=words_in + words_out))

    async def stream_response(self, system_instructions: str | None, input: Any,
                              model_settings: Any, tools: Any, output_schema: Any,
                              handoffs: Any, tracing: Any, *,
                              previous_response_id: str | None, conversation_id: str | None,
                              prompt: Any) -> AsyncIterator[Any]:
        response = await self.get_response(
            system_instructions, input, model_settings, tools, output_schema, handoffs,
            tracing, previous_response_id=previous_response_id,
            conversation_id=conversation_id, prompt=prompt)
        yield ResponseCompletedEvent(
            type="response.completed", sequence_number=0,
            response=Response(id="offline", created_at=0, model="offline-triage",
                              object="response", output=response.output, tool_choice="auto",
                              tools=[], parallel_tool_calls=False, status="completed"))

    def _step(self, items: list[Any], output_schema: Any) -> list[Any]:
        calls = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call"]
        outputs = {i["call_id"]: i.get("output") for i in items
                   if isinstance(i, dict) and i.get("type") == "function_call_output"}
        text = _user_text(items)
        n = len(calls)
        if not calls:
            route = _route(text, self.rng, self.ambiguity, self.planted_bug)
            if route == "refund":
                found = re.search(r"\b(\d{4})\b", text)
                return [_call("lookup_order", n, order_id=found.group(1) if found else "")]
            if route == "escalate":
                return [_call("escalate_to_human", n, reason=text[:80])]
            return [_call("search_faq", n, query=text[:80])]
        last = calls[-1]
        last_out = str(outputs.get(last["call_id"]))
        if last["name"] == "lookup_order" and last_out != TOOL_ERROR:
            order = json.loads(last_out)
            return [_call("issue_refund", n, order_id=order["order_id"],
                          amount=order["amount"])]
        failed = any(str(o) == TOOL_ERROR for o in outputs.values())
        if last["name"] == "issue_refund" and not failed:
            answer = Triage(verdict="refund", reply=last_out)
        elif last["name"] == "search_faq":
            answer = Triage(verdict="faq", reply=last_out)
        else:
            answer = Triage(verdict="escalate", reply="A colleague will get back to you.")
        plain = output_schema is None or output_schema.is_plain_text()
        return [_message(f"{answer.verdict}: {answer.reply}" if plain
                         else answer.model_dump_json())]


def _call(name: str, index: int, **arguments: Any) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(id=f"fc_{index}", call_id=f"call_{index}",
                                    type="function_call", name=name,
                                    arguments=json.dumps(arguments))


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_final", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])])


def make_agent(*, rng: random.Random | None = None, ambiguity: float = 0.2,
               planted_bug: bool = False) -> Agent[Any]:
    """A fresh triage agent (the CLI wraps this factory with ``from_openai_agents``)."""
    model = TriageModel(rng=rng if rng is not None else _RNG, ambiguity=ambiguity,
                        planted_bug=planted_bug)
    return Agent(name="support-triage",
                 instructions="Triage the customer's request with the tools, then answer.",
                 model=model, tools=[lookup_order, issue_refund, escalate_to_human, search_faq],
                 output_type=Triage)


def make_buggy_agent() -> Agent[Any]:
    """The triage agent with the planted case bug."""
    return make_agent(planted_bug=True)


#: adapters: the verdict is the structured output's ``verdict`` field
agent = from_openai_agents(make_agent)
buggy_agent = from_openai_agents(make_buggy_agent)
