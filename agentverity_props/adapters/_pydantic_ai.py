"""pydantic-ai agents as agents under test: :func:`from_pydantic_ai`.

A ``pydantic_ai.Agent`` keeps no conversation between runs: history exists only when a run
is handed ``message_history`` (or a ``conversation``), and the adapter never passes one. So
one Agent may serve every call, concurrently, on the engine's own event loop
(``Agent.run``). A zero-argument *factory* returning an Agent is accepted too (called once
per call), and so are ``deps`` — one value for every run, or ``deps_factory`` building fresh
dependencies per call when they hold state.

What one call leaves behind (an :class:`~agentverity_props.observation.Observation`), all
read from the run's own result (``AgentRunResult``):

* ``text`` — the output when it is a string (an enum: its value); otherwise its JSON;
* ``raw`` — the structured output as a dict (a pydantic model, dataclass or TypedDict), so
  ``--verdict-key`` reaches its fields; ``{"output": value}`` for other non-string outputs;
  ``None`` for text output (the engine's extractor then reads the text);
* ``verdict`` — the value at the ``verdict`` path when one is given (absent: the call fails
  with ``bad_output`` naming the fields that are there); by default the output's
  ``verdict`` field when it has one, else ``None`` (the engine's extractor decides);
* ``tools`` — every function ``ToolCallPart`` of the run's messages, in order, with the
  outcome of its ``ToolReturnPart``: ``success`` fired; ``retried`` (the tool raised
  ``ModelRetry`` or its arguments failed validation), ``failed`` (``ToolFailed``),
  ``denied``, ``interrupted``, a deprecated ``RetryPromptPart`` or no return at all did not,
  and are ``error``. Output tools (``final_result``...) are how the agent formats its
  answer, not actions, and are left out;
* ``usage`` — the run's ``RunUsage`` (input, output and total tokens of every request).

A tool that raises any other exception aborts the pydantic-ai run: the call fails (kind
``error``), which is incomplete evidence, never a verdict.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from .._internal.introspect import has_class, qualname
from .._internal.jsonpath import MISSING, lookup, parse_path
from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation, ToolCall, Usage
from ._base import FrameworkAdapter
from ._errors import (
    ErrorRule,
    call_factory,
    check_factory,
    guarded,
    is_throttled,
    is_timeout,
    map_error,
    named,
    status_code,
)

__all__ = ["PydanticAIAdapter", "from_pydantic_ai", "is_pydantic_ai_agent"]

_DEFAULT_OUTPUT_TOOL = "final_result"  # pydantic-ai's DEFAULT_OUTPUT_TOOL_NAME


def is_pydantic_ai_agent(obj: Any) -> bool:
    """True for a ``pydantic_ai`` agent instance (checked without importing pydantic-ai)."""
    return has_class(obj, "AbstractAgent", "pydantic_ai")



class PydanticAIAdapter(FrameworkAdapter):
    """Adapter over a pydantic-ai Agent or a factory of them (see :func:`from_pydantic_ai`).

    Attributes:
        tool_source: ``"messages"`` — tool calls come from the run's own message parts, so
            the ``tools`` runner reads them as they are instead of waiting for spans.
    """

    tool_source = "messages"

    def __init__(self, source: Any, *, factory: bool, identity: str, verdict: str | None,
                 deps: Any, deps_factory: Callable[[], Any] | None,
                 exclude_tools: tuple[str, ...],
                 run_kwargs: Mapping[str, Any] | None) -> None:
        super().__init__(source, factory=factory, identity=identity, verdict=verdict)
        self._deps = deps
        self._deps_factory = deps_factory
        self.exclude_tools = exclude_tools
        self.run_kwargs = dict(run_kwargs or {})

    def __repr__(self) -> str:
        return f"from_pydantic_ai({self.identity.removeprefix('pydantic-ai:')})"

    # -------------------------------------------------------------- calls

    async def ainvoke(self, prompt: str) -> Observation:
        """One run with no message history; its result becomes an Observation."""
        t0 = time.perf_counter()
        agent = self._agent()
        kwargs = dict(self.run_kwargs)
        if self._deps_factory is not None:
            kwargs["deps"] = call_factory(self._deps_factory, "deps_factory")
        elif self._deps is not None:
            kwargs["deps"] = self._deps
        result = await guarded(lambda: agent.run(prompt, **kwargs), _map_error)
        latency = time.perf_counter() - t0
        return self._observe(agent, result, latency)

    def _agent(self) -> Any:
        return self._made("agent factory", is_expected=is_pydantic_ai_agent,
                          expected="a pydantic_ai.Agent", fix="; return Agent(...) from it")

    # -------------------------------------------------------------- result -> Observation

    def _observe(self, agent: Any, result: Any, latency: float) -> Observation:
        output = result.output
        raw = _jsonable(output)
        if isinstance(output, str):
            text, raw = output, None
        elif isinstance(raw, Mapping):
            text = json.dumps(raw, ensure_ascii=False, sort_keys=True)
        else:  # a scalar, enum or list output: its own text, kept under "output"
            text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
            raw = {"output": raw}
        verdict = self._verdict_of(raw, output)
        exclude = {*self.exclude_tools, *_output_tool_names(agent, result)}
        return Observation(text=text, verdict=verdict,
                           tools=tool_calls(result.new_messages(), exclude=exclude),
                           raw=raw, latency_s=latency, usage=_usage(result))

    def _verdict_of(self, raw: Any, output: Any) -> str | None:
        if self._verdict_parts is None:  # default: a `verdict` field when the output has one
            if isinstance(raw, Mapping) and raw.get("verdict") is not None:
                return str(raw["verdict"])
            return None
        value = lookup(raw, self._verdict_parts) if isinstance(raw, Mapping) else MISSING
        if value is MISSING or value is None:
            if isinstance(raw, Mapping):
                fields = ", ".join(sorted(str(k) for k in raw)[:12]) or "none"
                seen = f"{type(output).__name__} with fields {fields}"
            else:
                seen = "text" if isinstance(output, str) else type(output).__name__
            raise AgentCallError(
                f"{self.identity}: the output has no verdict field {self.verdict!r}; it is "
                f"{seen} (pass verdict= naming one of them, or set the agent's output_type)",
                kind="bad_output")
        if isinstance(value, (str, int, float, bool)):
            return str(value)
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


# ------------------------------------------------------------------ readers


def _jsonable(value: Any) -> Any:
    """An output (pydantic model, dataclass, TypedDict, enum, scalar...) as JSON-ready data."""
    return json.loads(json.dumps(value, default=_default, ensure_ascii=False))


def _default(value: Any) -> Any:
    """``json.dumps`` fallback for what JSON does not know."""
    if isinstance(value, enum.Enum):
        return value.value
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def _output_tool_names(agent: Any, result: Any) -> set[str]:
    """Names of the output tools this agent offers (the model "calls" them to answer).

    pydantic-ai keeps them on its output schema; read defensively so a layout change only
    falls back to the default name, never breaks observation.
    """
    names = {_DEFAULT_OUTPUT_TOOL}
    used = getattr(result, "_output_tool_name", None)
    if isinstance(used, str):
        names.add(used)
    toolset = getattr(getattr(agent, "_output_schema", None), "toolset", None)
    processors = getattr(toolset, "processors", None)
    if isinstance(processors, Mapping):
        names.update(str(k) for k in processors)
    return names


def tool_calls(messages: Any, *, exclude: set[str] | frozenset[str] = frozenset()
               ) -> tuple[ToolCall, ...]:
    """The function-tool calls of pydantic-ai ``messages`` in order, with their status.

    Parts are read by their ``part_kind`` so both the 1.x ``RetryPromptPart`` and the
    ``ToolReturnPart.outcome`` of later versions are understood.
    """
    calls: list[tuple[str, str, dict[str, Any]]] = []
    status: dict[str, str] = {}
    for message in messages:
        for part in getattr(message, "parts", ()):
            kind = getattr(part, "part_kind", None)
            if kind == "tool-call":
                if part.tool_name in exclude:
                    continue
                calls.append((str(part.tool_call_id), str(part.tool_name), _arguments(part)))
            elif kind == "tool-return":
                outcome = getattr(part, "outcome", "success")
                status[str(part.tool_call_id)] = "success" if outcome == "success" else "error"
            elif kind == "retry-prompt" and getattr(part, "tool_name", None):
                status[str(part.tool_call_id)] = "error"
    # a call without a return never ran to completion (deferred, interrupted): not fired
    return tuple(ToolCall(name, args, status.get(cid, "error"), cid) for cid, name, args in calls)


def _arguments(part: Any) -> dict[str, Any]:
    try:
        args = part.args_as_dict()
    except Exception:  # malformed JSON arguments from the model
        return {"input": part.args}
    return dict(args) if isinstance(args, Mapping) else {"input": args}


def _usage(result: Any) -> Usage | None:
    usage = getattr(result, "usage", None)
    if usage is not None and not hasattr(usage, "input_tokens"):
        usage = usage()  # pydantic-ai 1.x: a method; 2.x: a property
    if usage is None:
        return None
    inp = getattr(usage, "input_tokens", None)
    out = getattr(usage, "output_tokens", None)
    total = getattr(usage, "total_tokens", None)
    if not isinstance(total, int):
        total = (inp or 0) + (out or 0) if (inp is not None or out is not None) else None
    return Usage(input_tokens=inp, output_tokens=out, total_tokens=total)


_SERVER_ERRORS = ("ModelServerError", "ModelUnavailableError", "ModelConnectionError")

#: how pydantic-ai's exception types (matched by name) map to the toolkit's kinds
_ERRORS = (
    ErrorRule("rate_limit", lambda e: named("ModelRateLimitError")(e) or status_code(e) == 429
              or is_throttled(e), retryable=True),
    ErrorRule("timeout", lambda e: is_timeout(e)
              or named("ModelTimeoutError", "ModelRequestTimeout")(e), retryable=True),
    ErrorRule("http_5xx", lambda e: isinstance(status := status_code(e), int)
              and (status >= 500 or named(*_SERVER_ERRORS)(e)), retryable=True),
    ErrorRule("unavailable", named(*_SERVER_ERRORS), retryable=True),
    # e.g. output validation retries exhausted
    ErrorRule("bad_output", named("UnexpectedModelBehavior")),
)


def _map_error(exc: BaseException) -> AgentCallError:
    """Classify a failed run by pydantic-ai's exception types (matched by name)."""
    return map_error(exc, _ERRORS)


def from_pydantic_ai(
    agent_or_factory: Any,
    *,
    verdict: str | None = None,
    deps: Any = None,
    deps_factory: Callable[[], Any] | None = None,
    exclude_tools: tuple[str, ...] | list[str] = (),
    run_kwargs: Mapping[str, Any] | None = None,
    identity: str | None = None,
) -> PydanticAIAdapter:
    """Adapter over a ``pydantic_ai.Agent``, or a zero-argument factory returning one.

    Args:
        agent_or_factory: the agent (stateless between runs: reused for every call) or a
            factory called once per call.
        verdict: path to the verdict in the structured output (``decision``,
            ``result.label``: dots descend, ``[n]`` indexes lists), like ``--verdict-key``.
            An output without it fails the call (``bad_output``, naming the fields present).
            Default: the output's ``verdict`` field when it has one, else ``None`` (the
            engine's extractor decides: ``--verdict-key``, ``--verdict-regex``, the text).
        deps: dependencies passed to every run (share them only if they hold no state).
        deps_factory: builds fresh dependencies for each call instead.
        exclude_tools: tool names never reported (besides the agent's output tools).
        run_kwargs: extra keyword arguments for ``Agent.run`` (``model_settings``,
            ``usage_limits``...); ``message_history``, ``conversation`` and ``deps`` are
            refused here.
        identity: stable name used in record/replay keys (default
            ``"pydantic-ai:" + module.qualname`` of the factory, or the agent's name).

    Raises:
        InvalidArgument: not an agent nor a zero-argument callable; both ``deps`` and
            ``deps_factory``; a malformed ``verdict`` path; a ``verdict`` naming no field
            of the agent's declared output model; ``run_kwargs`` carrying history.

    Example:
        >>> from pydantic import BaseModel
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> class Gate(BaseModel):
        ...     decision: str
        >>> model = TestModel(custom_output_args={"decision": "allow"})
        >>> adapter = from_pydantic_ai(Agent(model, output_type=Gate), verdict="decision")
        >>> obs = adapter.invoke("hello")
        >>> obs.verdict, obs.text, obs.tools
        ('allow', '{"decision": "allow"}', ())
    """
    is_agent = is_pydantic_ai_agent(agent_or_factory)
    if not is_agent:
        check_factory(agent_or_factory, who="from_pydantic_ai",
                      expects="a pydantic_ai.Agent or a zero-argument factory returning one",
                      fix="pass a zero-argument factory: lambda: Agent(...)")
    if deps is not None and deps_factory is not None:
        raise InvalidArgument("from_pydantic_ai: pass deps or deps_factory, not both")
    if deps_factory is not None and not callable(deps_factory):
        raise InvalidArgument(
            f"from_pydantic_ai: deps_factory must be callable, got {type(deps_factory).__name__}")
    if verdict is not None:
        try:
            parse_path(verdict)
        except (ValueError, TypeError) as exc:
            raise InvalidArgument(f"from_pydantic_ai: verdict: {exc}") from None
        if is_agent:
            _check_verdict_field(agent_or_factory, verdict)
    if run_kwargs is not None and not isinstance(run_kwargs, Mapping):
        raise InvalidArgument(
            f"from_pydantic_ai: run_kwargs must be a mapping, got {type(run_kwargs).__name__}")
    refused = sorted({"message_history", "conversation", "conversation_id", "deps"}
                     & set(run_kwargs or {}))
    if refused:
        raise InvalidArgument(
            f"from_pydantic_ai: run_kwargs may not carry {', '.join(refused)}: every call "
            "starts with no history (pass deps= or deps_factory= for dependencies)")
    if isinstance(exclude_tools, str) or not all(isinstance(t, str) for t in exclude_tools):
        raise InvalidArgument("from_pydantic_ai: exclude_tools must be a list of tool names")
    if identity is None:
        if is_agent:
            name = getattr(agent_or_factory, "name", None) or type(agent_or_factory).__name__
            identity = f"pydantic-ai:{name}"
        else:
            identity = "pydantic-ai:" + qualname(agent_or_factory)
    return PydanticAIAdapter(agent_or_factory, factory=not is_agent, identity=identity,
                             verdict=verdict, deps=deps, deps_factory=deps_factory,
                             exclude_tools=tuple(exclude_tools), run_kwargs=run_kwargs)


def _check_verdict_field(agent: Any, verdict: str) -> None:
    """Refuse, eagerly, a verdict path whose first field the declared output model lacks."""
    output_type = getattr(agent, "output_type", None)
    fields: list[str] | None = None
    model_fields = getattr(output_type, "model_fields", None)
    if isinstance(output_type, type) and isinstance(model_fields, Mapping):
        fields = list(model_fields)
    elif isinstance(output_type, type) and dataclasses.is_dataclass(output_type):
        fields = [f.name for f in dataclasses.fields(output_type)]
    elif isinstance(output_type, type) and isinstance(
            getattr(output_type, "__annotations__", None), Mapping) \
            and hasattr(output_type, "__total__"):  # a TypedDict
        fields = list(output_type.__annotations__)
    if fields is None:
        return  # text, unions, output functions: checked on each answer instead
    first = parse_path(verdict)[0]
    if isinstance(first, str) and first not in fields:
        raise InvalidArgument(
            f"from_pydantic_ai: verdict {verdict!r} names no field of the agent's output "
            f"type {getattr(output_type, '__name__', output_type)} "
            f"(fields: {', '.join(fields) or 'none'})")
