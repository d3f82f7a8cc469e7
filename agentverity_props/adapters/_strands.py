"""Strands Agents as agents under test: :func:`from_strands`.

A Strands ``Agent`` keeps its conversation history between calls and refuses concurrent
calls (``ConcurrencyException``), so the adapter takes a zero-argument *factory* and builds a
fresh agent for every call: draws stay independent and the engine may run them concurrently.

What one call leaves behind (an :class:`~agentverity_props.observation.Observation`):

* ``text`` — the last assistant text of the conversation;
* ``raw`` — the structured output as a dict when ``structured_output_model`` is set,
  otherwise ``{"stop_reason": ...}``;
* ``verdict`` — the structured output's ``verdict`` field when it has one, else ``None``
  (the engine's extractor decides);
* ``tools`` — every ``toolUse`` in order, with the status of its ``toolResult``; the
  temporary structured-output tool is left out;
* ``usage`` — the agent's accumulated input/output/total tokens.

Strands' own retry strategy sleeps for seconds on throttling; build agents with
``retry_strategy=None`` so the engine's retry policy (and its call budget) is the only one.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from .._internal.introspect import has_class, qualname
from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation, ToolCall, Usage
from ._base import AsyncAdapter
from ._errors import ErrorRule, call_factory, check_factory, guarded, is_timeout, map_error, named

__all__ = ["StrandsAdapter", "from_strands", "is_strands_agent"]

_WRAPPERS = frozenset({"EventLoopException"})


def is_strands_agent(obj: Any) -> bool:
    """True for a ``strands.Agent`` instance (checked without importing Strands)."""
    return has_class(obj, "Agent", "strands")



class StrandsAdapter(AsyncAdapter):
    """Adapter building a fresh ``strands.Agent`` per call (see :func:`from_strands`)."""


    def __init__(self, factory: Callable[[], Any], *, identity: str,
                 structured_output_model: type[Any] | None = None,
                 invoke_kwargs: Mapping[str, Any] | None = None) -> None:
        self._factory = factory
        self.identity = identity
        self.structured_output_model = structured_output_model
        self.invoke_kwargs = dict(invoke_kwargs or {})
        # agents already handed out: a factory returning the same one twice would leak history
        self._seen: weakref.WeakSet[Any] = weakref.WeakSet()

    def __repr__(self) -> str:
        return f"from_strands({self.identity.removeprefix('strands:')})"

    # -------------------------------------------------------------- calls

    async def ainvoke(self, prompt: str) -> Observation:
        """One call: build a fresh agent, run it, turn the result into an Observation."""
        t0 = time.perf_counter()
        agent = self._new_agent()
        # Strands writes into dict arguments (invocation_state): copy them for every call
        kwargs = {k: dict(v) if isinstance(v, dict) else v for k, v in self.invoke_kwargs.items()}
        if self.structured_output_model is not None:
            kwargs["structured_output_model"] = self.structured_output_model
        result = await guarded(lambda: agent.invoke_async(prompt, **kwargs), _map_error)
        latency = time.perf_counter() - t0
        return self._observe(agent, result, latency)

    def _new_agent(self) -> Any:
        agent = call_factory(self._factory, "agent factory", is_expected=is_strands_agent,
                             expected="a strands.Agent", fix="; return Agent(...) from it")
        # identity, not emptiness: a factory may legitimately pre-load few-shot messages
        if agent in self._seen:
            raise AgentCallError(
                f"agent factory {qualname(self._factory)} returned an Agent that was already "
                "used (its history would leak into this call); build a new Agent on every call",
                kind="error")
        self._seen.add(agent)
        return agent

    # -------------------------------------------------------------- result -> Observation

    def _structured_tool_name(self) -> str | None:
        return structured_tool_name(self.structured_output_model)

    def _observe(self, agent: Any, result: Any, latency: float) -> Observation:
        messages = list(agent.messages)
        raw: Any
        verdict = None
        structured = getattr(result, "structured_output", None)
        if self.structured_output_model is not None and structured is not None:
            raw = structured.model_dump(mode="json")
            if isinstance(raw, dict) and raw.get("verdict") is not None:
                verdict = str(raw["verdict"])
        else:
            raw = {"stop_reason": str(result.stop_reason)}
        return Observation(
            text=_final_text(result, messages),
            verdict=verdict,
            tools=tool_calls(messages, skip=self._structured_tool_name()),
            raw=raw,
            latency_s=latency,
            usage=_usage(result),
        )


def _final_text(result: Any, messages: list[Any]) -> str:
    """The answer text: the result message's text, else the last assistant text."""
    candidates = [getattr(result, "message", None) or {}, *reversed(messages)]
    for message in candidates:
        if message.get("role", "assistant") != "assistant":
            continue
        texts = [b["text"] for b in message.get("content", ()) if "text" in b]
        if texts:
            return "".join(texts).strip()
    return ""


def structured_tool_name(model: Any) -> str | None:
    """The name of the tool Strands registers for a structured-output model (not a tool the
    agent chose to call), or None without a model."""
    if model is None:
        return None
    try:
        from strands.tools.structured_output.structured_output_tool import (
            StructuredOutputTool,
        )
        return str(StructuredOutputTool(model).tool_name)
    except Exception:  # a Strands layout change must not break observation
        return str(model.__name__)


def tool_calls(messages: list[Any], *, skip: str | None) -> tuple[ToolCall, ...]:
    """The tool calls in Strands ``messages``, in order, with the status of their results
    (a ``toolUse`` without a result never ran to completion: ``error``); ``skip`` is the
    structured-output tool's name."""
    uses: list[tuple[str, str, dict[str, Any]]] = []
    status: dict[str, str] = {}
    for message in messages:
        for block in message.get("content", ()):
            if "toolUse" in block:
                use = block["toolUse"]
                if use.get("name") == skip:
                    continue
                args = use.get("input")
                uses.append((str(use.get("toolUseId")), str(use.get("name")),
                             dict(args) if isinstance(args, Mapping) else {"input": args}))
            elif "toolResult" in block:
                res = block["toolResult"]
                status[str(res.get("toolUseId"))] = str(res.get("status", "success"))
    # a toolUse without a result never ran to completion: count it as an error
    return tuple(ToolCall(name, args, status.get(uid, "error"), uid) for uid, name, args in uses)


def _usage(result: Any) -> Usage | None:
    metrics = getattr(result, "metrics", None)
    usage = getattr(metrics, "accumulated_usage", None)
    if not isinstance(usage, Mapping):
        return None
    return Usage(input_tokens=usage.get("inputTokens"), output_tokens=usage.get("outputTokens"),
                 total_tokens=usage.get("totalTokens"))


#: how Strands' errors map to the toolkit's kinds (after the rate-limit names)
_ERRORS = (
    ErrorRule("timeout", is_timeout, retryable=True, shown=True),
    ErrorRule("bad_output", named("StructuredOutputException", exact=True)),
)


def _map_error(exc: BaseException) -> AgentCallError:
    """Classify a failed call; Strands may wrap model errors (``EventLoopException``).

    Only explicit chaining (``__cause__``) is followed: an implicit ``__context__`` can be an
    unrelated error Strands handled internally.
    """
    return map_error(exc, _ERRORS, throttle_first=True, wrappers=_WRAPPERS)


def from_strands(
    factory: Callable[[], Any],
    *,
    identity: str | None = None,
    structured_output_model: type[Any] | None = None,
    invoke_kwargs: Mapping[str, Any] | None = None,
) -> StrandsAdapter:
    """Adapter over ``factory``, a zero-argument callable returning a *new* ``strands.Agent``.

    Args:
        factory: builds the agent; called once per agent call.
        identity: stable name used in record/replay keys (default
            ``"strands:" + module.qualname`` of the factory).
        structured_output_model: a pydantic model; its dump becomes ``raw`` and its
            ``verdict`` field, if any, the verdict.
        invoke_kwargs: extra keyword arguments for ``Agent.invoke_async`` (e.g.
            ``invocation_state``).

    Raises:
        InvalidArgument: ``factory`` is not callable, is an ``Agent`` instance, or needs
            arguments; ``structured_output_model`` is not a pydantic model.

    Example:
        >>> from agentverity_props.examples.moderation import build_moderation_agent
        >>> import random
        >>> rng = random.Random(0)
        >>> adapter = from_strands(lambda: build_moderation_agent(rng=rng))
        >>> adapter.invoke("What is the capital of Australia?").text
        '{"verdict": "allow"}'
    """
    if is_strands_agent(factory):
        raise InvalidArgument(
            "from_strands got a strands.Agent instance, but one Agent accumulates history and "
            "refuses concurrent calls; pass a factory: lambda: Agent(...)")
    check_factory(factory, who="from_strands",
                  expects="a zero-argument factory returning a strands.Agent",
                  fix="pass a zero-argument factory: lambda: Agent(...)")
    if structured_output_model is not None:
        from pydantic import BaseModel
        if not (isinstance(structured_output_model, type)
                and issubclass(structured_output_model, BaseModel)):
            raise InvalidArgument(
                f"structured_output_model must be a pydantic BaseModel subclass, got "
                f"{structured_output_model!r}")
    if invoke_kwargs is not None and not isinstance(invoke_kwargs, Mapping):
        raise InvalidArgument(
            f"invoke_kwargs must be a mapping, got {type(invoke_kwargs).__name__}")
    if invoke_kwargs and "structured_output_model" in invoke_kwargs:
        raise InvalidArgument(
            "pass structured_output_model to from_strands(), not inside invoke_kwargs")
    return StrandsAdapter(factory, identity=identity or "strands:" + qualname(factory),
                          structured_output_model=structured_output_model,
                          invoke_kwargs=invoke_kwargs)
