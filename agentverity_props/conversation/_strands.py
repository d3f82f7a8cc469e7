"""Strands agents as conversations: a fresh ``Agent`` per conversation, its messages kept
across turns.

A turn's Observation holds that turn only: the tool calls in the messages the turn added, the
last assistant text, the structured output's ``verdict`` when a model is given. A failed turn
restores the messages as they were before it, so the engine may retry it. Forking copies the
messages into a new ``Agent`` from the same factory.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation

__all__ = ["StrandsConversation", "from_strands_adapter", "from_strands_conversation"]


class _StrandsSession:
    def __init__(self, owner: StrandsConversation, messages: list[Any] | None = None) -> None:
        self._owner = owner
        self._agent: Any = None
        self._messages = messages

    def _get(self) -> Any:
        if self._agent is None:
            try:
                agent = self._owner.factory()
            except Exception as exc:
                raise AgentCallError(f"agent factory raised {type(exc).__name__}: {exc}",
                                     kind="error") from exc
            if not any(c.__name__ == "Agent" and c.__module__.startswith("strands.")
                       for c in type(agent).__mro__):
                raise AgentCallError(f"the factory returned {type(agent).__name__}, not a "
                                     "strands.Agent", kind="error")
            if self._messages is not None:
                agent.messages = copy.deepcopy(self._messages)
            self._agent = agent
        return self._agent

    async def send(self, message: str) -> Observation:
        agent = self._get()
        before = copy.deepcopy(list(agent.messages))
        kwargs: dict[str, Any] = {}
        model = self._owner.structured_output_model
        if model is not None:
            kwargs["structured_output_model"] = model
        t0 = time.perf_counter()
        try:
            result = await agent.invoke_async(message, **kwargs)
        except BaseException as exc:
            agent.messages = before  # a retry sees the conversation as it was
            if isinstance(exc, Exception):
                raise AgentCallError(f"{type(exc).__name__}: {exc}", kind="error") from exc
            raise
        added = list(agent.messages)[len(before):]
        return self._owner.observe(added, result, time.perf_counter() - t0)

    def fork(self) -> _StrandsSession:
        msgs = copy.deepcopy(list(self._agent.messages)) if self._agent is not None \
            else copy.deepcopy(self._messages)
        return _StrandsSession(self._owner, msgs)

    def close(self) -> None:
        self._agent = None


class StrandsConversation:
    """Conversations with fresh Strands agents (see :func:`from_strands_conversation`)."""

    def __init__(self, factory: Callable[[], Any], *, identity: str,
                 structured_output_model: type[Any] | None = None) -> None:
        self.factory = factory
        self.identity = identity
        self.structured_output_model = structured_output_model

    def open(self) -> _StrandsSession:
        return _StrandsSession(self)

    def observe(self, added: list[Any], result: Any, latency: float) -> Observation:
        from ..adapters import strands_tool_calls

        text = ""
        for message in added:
            if message.get("role") == "assistant":
                for block in message.get("content", ()):
                    if "text" in block:
                        text = str(block["text"]).strip() or text
        verdict = None
        raw: Any = {"stop_reason": str(getattr(result, "stop_reason", ""))}
        structured = getattr(result, "structured_output", None)
        if self.structured_output_model is not None and structured is not None:
            raw = structured.model_dump(mode="json")
            if isinstance(raw, dict) and raw.get("verdict") is not None:
                verdict = str(raw["verdict"])
        tools = strands_tool_calls(added, structured_output_model=self.structured_output_model)
        return Observation(text=text, verdict=verdict, tools=tools, raw=raw, latency_s=latency)

    def __repr__(self) -> str:
        return f"from_strands_conversation({self.identity})"


def from_strands_conversation(factory: Callable[[], Any], *, identity: str | None = None,
                              structured_output_model: type[Any] | None = None
                              ) -> StrandsConversation:
    """Conversations with Strands agents: ``factory()`` builds a fresh ``Agent`` for every
    conversation, and its messages carry the conversation from turn to turn.

    Raises:
        InvalidArgument: ``factory`` is an ``Agent`` instance (one agent would carry every
            conversation's history) or not callable.
    """
    if any(c.__name__ == "Agent" and c.__module__.startswith("strands.")
           for c in type(factory).__mro__):
        raise InvalidArgument("from_strands_conversation got a strands.Agent instance; pass a "
                              "factory (lambda: Agent(...)) so each conversation starts fresh")
    if not callable(factory):
        raise InvalidArgument(f"from_strands_conversation expects a zero-argument factory, got "
                              f"{type(factory).__name__}")
    name = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return StrandsConversation(
        factory, identity=identity or f"strands:{getattr(factory, '__module__', '?')}.{name}",
        structured_output_model=structured_output_model)


def from_strands_adapter(adapter: Any) -> StrandsConversation:
    """The conversational form of a ``from_strands`` adapter (same factory and model)."""
    factory = getattr(adapter, "_factory", None)
    if factory is None:
        raise InvalidArgument("this Strands adapter exposes no factory; use "
                              "conversation.from_strands_conversation(factory)")
    return StrandsConversation(factory, identity=str(adapter.identity),
                               structured_output_model=getattr(
                                   adapter, "structured_output_model", None))
