"""Example: the support agent as a *conversation*, with a planted multi-turn bug.

The agent answers each user turn knowing the whole conversation (a ``from_history`` agent:
``fn(messages) -> dict``), with the routing of :mod:`agentverity_props.examples.support`:

* a refund request with an order number in it: ``lookup_order`` then ``issue_refund``;
* a refund request without one, when an earlier turn gave the order number: the same (the
  agent remembers the number);
* a refund request with no known order: ask for the number (no tool);
* a turn that only gives an order number: acknowledge it (``noted``, no tool);
* angry words: ``escalate_to_human``; anything else: ``search_faq`` (small talk: ``chat``).

**The planted bug** (``bug=True``): when the order number was given *two or more turns
earlier*, a refund request skips the lookup and calls ``issue_refund`` straight away. The
shortest conversation that shows it has three turns: the order number, any turn, the refund.

**Noise** (``noise=q``): on every turn, with probability ``q`` the agent takes another action
than its rule says (one of ask / noted / faq / escalate, never a refund), drawn from the
agent's own ``random.Random``. So a correct agent never refunds without a lookup, and the bug
shows on about ``1 - q`` of the draws that reach it. The verdict is the first tool called, or
``ask_order`` / ``noted`` / ``chat`` when there is none.

>>> fn = support_conversation(seed=0, noise=0.0, bug=True)
>>> turns = ["my order is 1002", "thanks", "I want a refund"]
>>> msgs = []
>>> for t in turns:
...     msgs.append({"role": "user", "content": t})
...     out = fn(msgs)
...     msgs.append({"role": "assistant", "content": out["text"]})
>>> out["verdict"], [t["name"] for t in out["tools"]]
('issue_refund', ['issue_refund'])
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .support import ORDERS, route

__all__ = [
    "FILLERS",
    "PARAPHRASES",
    "TURNS",
    "noisy_support",
    "strands_support_factory",
    "support_conversation",
    "support_machine",
]

_ORDER_ID = re.compile(r"#?\b(\d{4})\b")
_BENIGN = ("ask_order", "noted", "faq", "escalate")

#: User turns, simplest first (Hypothesis's sampled_from shrinks toward the first entries).
TURNS: tuple[str, ...] = (
    "hi",
    "my order is 1002",
    "I want a refund",
    "thanks",
    "how long does shipping take?",
    "refund order 1003 please",
    "my order number is 1004",
    "can I get my money back?",
    "I forgot my password",
    "this is unacceptable, I will call my lawyer",
    "ok",
    "order #1005 arrived broken",
)
#: Small talk for the "irrelevant turn" relation.
FILLERS: tuple[str, ...] = ("thanks", "ok", "hi")
#: Paraphrases for the "paraphrased turn" relation.
PARAPHRASES: dict[str, tuple[str, ...]] = {
    "my order is 1002": ("order number 1002", "it's order 1002"),
    "I want a refund": ("please refund me", "I would like my money back"),
    "thanks": ("thank you",),
    "hi": ("hello",),
}


def _decide(user_turns: Sequence[str], *, bug: bool) -> tuple[str, str | None]:
    """(action, order id) the rule says for the last user turn."""
    last = user_turns[-1]
    now = _ORDER_ID.search(last)
    earlier = [(i, m.group(1)) for i, t in enumerate(user_turns[:-1])
               for m in [_ORDER_ID.search(t)] if m]
    primary, _ = route(last)
    if primary == "refund":
        if now:
            return "lookup_refund", now.group(1)
        if earlier:
            i, oid = earlier[-1]
            gap = len(user_turns) - 1 - i
            if bug and gap >= 2:
                return "refund_direct", oid  # the planted bug: the lookup is skipped
            return "lookup_refund", oid
        return "ask_order", None
    if primary == "escalate":
        return "escalate", None
    if now:
        return "noted", now.group(1)
    if len(last.split()) <= 2:
        return "chat", None
    return "faq", None


def _act(action: str, oid: str | None, text: str) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    if action == "lookup_refund":
        assert oid is not None
        ok = oid in ORDERS
        tools.append({"name": "lookup_order", "arguments": {"order_id": oid},
                      "status": "success" if ok else "error"})
        if ok:
            tools.append({"name": "issue_refund",
                          "arguments": {"order_id": oid, "amount": ORDERS[oid]}})
        reply = f"Refunded order {oid}." if ok else "I could not find that order."
    elif action == "refund_direct":
        tools.append({"name": "issue_refund",
                      "arguments": {"order_id": oid, "amount": ORDERS.get(oid or "", 0.0)}})
        reply = f"Refunded order {oid}."
    elif action == "escalate":
        tools.append({"name": "escalate_to_human", "arguments": {"reason": text[:120]}})
        reply = "A human will contact you."
    elif action == "faq":
        tools.append({"name": "search_faq", "arguments": {"query": text[:120]}})
        reply = "Here is what our FAQ says."
    elif action == "noted":
        reply = f"Noted, order {oid}. How can I help?"
    elif action == "ask_order":
        reply = "Please send your four-digit order number."
    else:
        reply = "Happy to help."
    verdict = tools[0]["name"] if tools else action
    return {"text": reply, "verdict": verdict, "tools": tools}


def support_conversation(*, seed: int = 0, noise: float = 0.0, bug: bool = True
                         ) -> Callable[[list[Mapping[str, str]]], dict[str, Any]]:
    """The support agent as ``fn(messages) -> dict`` (wrap with ``from_history``).

    Args:
        seed: seeds the agent's own ``random.Random`` (Hypothesis reseeds the global one).
        noise: the per-turn probability of a different, benign action.
        bug: plant the multi-turn bug (refund without lookup when the order number came two or
            more turns earlier).
    """
    if not 0.0 <= noise < 1.0:
        raise ValueError(f"noise must be in [0, 1), got {noise}")
    rng = random.Random(seed)
    lock = threading.Lock()  # the engine may call from several threads at once

    def agent(messages: list[Mapping[str, str]]) -> dict[str, Any]:
        user_turns = [m["content"] for m in messages if m.get("role") == "user"]
        if not user_turns:
            raise ValueError("the conversation has no user turn")
        action, oid = _decide(user_turns, bug=bug)
        with lock:
            if noise and rng.random() < noise:
                action = rng.choice([a for a in _BENIGN if a != action])
        return _act(action, oid, user_turns[-1])

    agent.__qualname__ = f"support_conversation(seed={seed}, noise={noise}, bug={bug})"
    return agent


def noisy_support(*, seed: int = 0, bug: bool = True) -> Callable[[list[Mapping[str, str]]],
                                                                  dict[str, Any]]:
    """The goal's agent: 15% noise on every turn."""
    return support_conversation(seed=seed, noise=0.15, bug=bug)


def support_machine(*, seed: int = 0, noise: float = 0.15, bug: bool = True,
                    relations: bool = False, invariants: bool = True, max_turns: int = 6,
                    max_workers: int = 1, budget: int | None = 50_000) -> Any:
    """The goal's state machine: user turns from :data:`TURNS`, the invariant "never
    ``issue_refund`` before ``lookup_order``" (unless ``invariants=False``), and
    (``relations=True``) the three conversation relations; Hypothesis seeded with ``seed``
    (the agent's ``random.Random`` too)."""
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    from ..conversation import (
        conversation_machine,
        from_history,
        insert_irrelevant,
        never_before,
        paraphrase_turn,
        repeat_turn,
    )

    machine = conversation_machine(
        agent=from_history(support_conversation(seed=seed, noise=noise, bug=bug)),
        turns=st.sampled_from(TURNS),
        invariants=[never_before("issue_refund", required="lookup_order")] if invariants else (),
        relations=[insert_irrelevant(FILLERS), repeat_turn(), paraphrase_turn(PARAPHRASES)]
        if relations else (),
        max_turns=max_turns, max_workers=max_workers, budget=budget,
        name="SupportConversation")
    return hypothesis_seed(seed)(machine)


# ------------------------------------------------------------------ the Strands version


def _conversation_policy(*, noise: float, bug: bool) -> Any:
    """An :class:`OfflineModel` policy playing :func:`support_conversation` over a Strands
    agent's messages: the user's *text* messages are the conversation; the tool calls since
    the last of them are this turn's."""
    import json

    from ._offline_model import Action, call_tool, final

    def split(messages: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[tuple[str, str]]]:
        users: list[str] = []
        done: list[tuple[str, str]] = []
        names: dict[str, str] = {}
        for m in messages:
            blocks = m.get("content", ())
            texts = [b["text"] for b in blocks if "text" in b]
            if m.get("role") == "user" and texts:
                users.append("".join(texts))
                done = []
            for b in blocks:
                if "toolUse" in b:
                    names[b["toolUse"]["toolUseId"]] = b["toolUse"]["name"]
                elif "toolResult" in b:
                    res = b["toolResult"]
                    done.append((names.get(res["toolUseId"], "?"), res.get("status", "success")))
        return users, done

    def policy(messages: Sequence[Mapping[str, Any]], tool_specs: Sequence[Mapping[str, Any]],
               rng: random.Random) -> Action:
        users, done = split(messages)
        action, oid = _decide(users, bug=bug)
        if not done and noise and rng.random() < noise:
            action = rng.choice([a for a in _BENIGN if a != action])
        if not done:
            if action in ("lookup_refund",):
                return call_tool("lookup_order", order_id=oid)
            if action == "refund_direct":
                return call_tool("issue_refund", order_id=oid, amount=ORDERS.get(oid or "", 0.0))
            if action == "escalate":
                return call_tool("escalate_to_human", reason=users[-1][:120])
            if action == "faq":
                return call_tool("search_faq", query=users[-1][:120])
            return final(json.dumps({"verdict": action, "reply": "ok"}))
        last_name, last_status = done[-1]
        if last_name == "lookup_order" and last_status == "success" and len(done) == 1:
            return call_tool("issue_refund", order_id=oid, amount=ORDERS[oid or ""])
        return final(json.dumps({"verdict": done[0][0], "reply": "done"}))

    return policy


def strands_support_factory(*, seed: int = 0, noise: float = 0.15, bug: bool = True) -> Any:
    """A zero-argument factory of fresh Strands support agents playing the conversation
    agent (real ``@tool`` functions of :mod:`.support`, offline model, own ``Random``)."""
    from strands import Agent

    from ._offline_model import OfflineModel
    from .support import escalate_to_human, issue_refund, lookup_order, search_faq

    rng = random.Random(seed)
    policy = _conversation_policy(noise=noise, bug=bug)

    def make_agent() -> Any:
        model = OfflineModel(policy, rng=rng, model_id="offline-support-conversation")
        return Agent(model=model, tools=[lookup_order, issue_refund, escalate_to_human,
                                         search_faq],
                     system_prompt="You are a support agent. Use the tools, then answer in JSON.",
                     callback_handler=None, retry_strategy=None, name="support-conversation")

    return make_agent
