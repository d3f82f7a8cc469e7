"""OpenAI Agents SDK agents as agents under test: :func:`from_openai_agents`.

One call is one ``await Runner.run(agent, prompt)`` on the engine's event loop, with nothing
carried over from earlier calls: no session, no ``previous_response_id``, a fresh context
and session when factories for them are given, and a new trace id.

What one call leaves behind (an :class:`~agentverity_props.observation.Observation`):

* ``text`` — ``final_output`` when it is a string; for a structured ``output_type``, the text
  of the last assistant message (the JSON the model answered);
* ``raw`` — the structured output as a JSON-ready dict (pydantic model, dataclass or
  TypedDict), ``None`` for text output;
* ``verdict`` — the structured output's field named by ``verdict=``; a structured output
  without it fails the call, naming the fields it has. By default the ``verdict`` field when
  the output has one, else ``None`` (the engine's extractor decides: ``--verdict-key``...);
* ``tools`` — every ``ToolCallItem`` of ``RunResult.new_items`` in order, with its parsed
  arguments and call id. Status: ``error`` when the SDK attached an error to the tool's
  function span (a tool that raised and whose ``failure_error_function`` turned the
  exception into a message for the model), when no ``ToolCallOutputItem`` answered the
  call, or when a hosted tool reports ``failed``; otherwise ``success``. Spans are read by a
  local tracing processor registered with the SDK on first use (it uploads nothing);
* ``usage`` — input/output/total tokens summed over ``RunResult.raw_responses``.

Spans are read by :mod:`._openai_agents_trace`.

When SDK tracing is disabled (``set_tracing_disabled``, ``OPENAI_AGENTS_DISABLE_TRACING``,
``RunConfig(tracing_disabled=True)``) no span reaches the processor: a tool call is then an
error only when its output is the SDK's default failure message.

While a call runs inside a recording OpenTelemetry span (the ``tools`` command wraps every
in-process agent in one), the processor also emits one GenAI ``execute_tool`` span per tool
call, so span-based tool assertions see the same calls with the same statuses.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from .._internal.introspect import has_class, qualname
from .._internal.jsonpath import MISSING, lookup, parse_path
from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation, ToolCall, Usage
from ._base import AsyncAdapter
from ._errors import ErrorRule, call_factory, check_factory, guarded, is_timeout, map_error, named
from ._openai_agents_trace import ToolSpan, Watch, ensure_processor, otel_parent

__all__ = ["OpenAIAgentsAdapter", "from_openai_agents", "is_openai_agent"]

#: how the SDK's default ``failure_error_function`` message to the model starts when a tool
#: raised (older releases append the error)
DEFAULT_TOOL_ERROR = "An error occurred while running the tool."
_HOSTED_FAILED = frozenset({"failed", "incomplete", "cancelled"})
_AUTO: Any = type("_Auto", (), {"__repr__": lambda self: "'verdict' if present"})()
def _retry_after(value: str | None) -> float | None:
    """Seconds from the client's ``Retry-After`` header (the HTTP adapter's parser)."""
    from ._http import parse_retry_after
    return parse_retry_after(value)


#: how the openai client's errors (and the SDK's own) map to the toolkit's kinds; the
#: client's APITimeoutError subclasses APIConnectionError, so ``timeout`` comes first
_ERRORS = (
    ErrorRule("rate_limit", named("RateLimitError", module="openai"), retryable=True,
              retry_after=_retry_after),
    ErrorRule("timeout", named("APITimeoutError", module="openai"), retryable=True),
    ErrorRule("http_5xx", named("InternalServerError", module="openai"), retryable=True),
    ErrorRule("connection", named("APIConnectionError", module="openai"), retryable=True),
    ErrorRule("timeout", is_timeout, retryable=True),
    ErrorRule("bad_output", named("ModelBehaviorError", exact=True), outer_only=True),
    ErrorRule("guardrail", lambda e: type(e).__name__.endswith("GuardrailTripwireTriggered"),
              outer_only=True),
)


def is_openai_agent(obj: Any) -> bool:
    """True for an ``agents.Agent`` of the OpenAI Agents SDK, checked without importing it.

    ``agents`` is a common package name: the class must come from a module ``agents.*``
    *and* the loaded ``agents`` package must be the SDK (it exports ``Runner``).
    """
    return has_class(obj, "Agent", "agents") and hasattr(sys.modules.get("agents"), "Runner")



# ------------------------------------------------------------------ the adapter


class OpenAIAgentsAdapter(AsyncAdapter):
    """Adapter running an OpenAI Agents SDK agent per call (see :func:`from_openai_agents`).

    Attributes:
        tool_source: ``"messages"`` — tool calls come from the run's own items and the SDK's
            function spans (its own tracing, not OpenTelemetry), so the ``tools`` runner reads
            them as they are: no OpenTelemetry SDK needed.
    """

    tool_source = "messages"

    def __init__(self, source: Any, *, identity: str, verdict: Any = _AUTO,
                 run_config: Any = None, max_turns: int | None = None,
                 context_factory: Callable[[], Any] | None = None,
                 session_factory: Callable[[], Any] | None = None) -> None:
        self._source = source
        self._is_factory = not is_openai_agent(source)
        self.identity = identity
        self.verdict = verdict
        self._auto = verdict is _AUTO  # the default: a verdict field is used if there is one
        path = "verdict" if self._auto else verdict
        self._verdict_path = parse_path(path) if path is not None else None
        self.run_config = run_config
        self.max_turns = max_turns
        self.context_factory = context_factory
        self.session_factory = session_factory

    def __repr__(self) -> str:
        return f"from_openai_agents({self.identity.removeprefix('openai-agents:')})"


    async def ainvoke(self, prompt: str) -> Observation:
        """One call: a fresh run of the agent on ``prompt``, turned into an Observation."""
        from agents import RunConfig, Runner
        from agents.tracing import gen_trace_id

        t0 = time.perf_counter()
        agent = self._agent()
        kwargs: dict[str, Any] = {}
        if self.max_turns is not None:
            kwargs["max_turns"] = self.max_turns
        if self.context_factory is not None:
            kwargs["context"] = call_factory(self.context_factory, "context_factory")
        if self.session_factory is not None:
            kwargs["session"] = call_factory(self.session_factory, "session_factory")
        processor = ensure_processor()
        trace_id = gen_trace_id()  # one trace per call: its spans are this call's tools
        config = (dataclasses.replace(self.run_config, trace_id=trace_id)
                  if self.run_config is not None else RunConfig(trace_id=trace_id))
        watch = processor.watch(trace_id, otel_parent())
        try:
            result = await guarded(
                lambda: Runner.run(agent, prompt, run_config=config, **kwargs), _map_error)
        finally:
            processor.unwatch(trace_id)
        latency = time.perf_counter() - t0
        return self._observe(result, watch, latency)

    def _agent(self) -> Any:
        if not self._is_factory:
            return self._source
        return call_factory(self._source, "agent factory", is_expected=is_openai_agent,
                            expected="an agents.Agent", fix="; return Agent(...) from it")

    # -------------------------------------------------------------- result -> Observation

    def _observe(self, result: Any, watch: Watch, latency: float) -> Observation:
        final = result.final_output
        raw: Any = None
        verdict = None
        if isinstance(final, str):
            text = final
        else:
            raw = _jsonable(final)
            text = _last_message_text(result) or json.dumps(raw, sort_keys=True, default=str)
            if self._verdict_path is not None:
                verdict = self._verdict_of(final, raw)
        return Observation(text=text.strip(), verdict=verdict, raw=raw, latency_s=latency,
                           tools=_tool_calls(result.new_items, watch), usage=_usage(result))

    def _verdict_of(self, final: Any, raw: Any) -> str | None:
        assert self._verdict_path is not None
        value = lookup(raw, self._verdict_path) if isinstance(raw, Mapping) else MISSING
        if self._auto and value is MISSING:
            return None  # no verdict field: the engine's extractor decides
        name = type(final).__name__
        key = "verdict" if self._auto else self.verdict
        if value is None:
            raise AgentCallError(f"the structured output {name} has {key!r} = None, not a "
                                 "label", kind="bad_output")
        if value is MISSING:
            fields = ", ".join(sorted(str(k) for k in raw)) if isinstance(raw, Mapping) else ""
            have = f"its fields: {fields}" if fields else "it has no fields"
            raise AgentCallError(
                f"the structured output {name} has no {key!r} ({have}); name the verdict "
                "field with from_openai_agents(..., verdict='<field>'), or verdict=None to "
                "choose it with --verdict-key / by_key()", kind="bad_output")
        return str(value)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.loads(json.dumps(value, default=str))


def _last_message_text(result: Any) -> str:
    from agents.items import ItemHelpers

    for item in reversed(result.new_items):
        if getattr(item, "type", None) == "message_output_item":
            return str(ItemHelpers.text_message_output(item))
    return ""


def _get(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, Mapping) else getattr(raw, key, None)


def _arguments(text: Any) -> dict[str, Any]:
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"input": text}
    return dict(parsed) if isinstance(parsed, Mapping) else {"input": parsed}


def _tool_calls(items: list[Any], watch: Watch) -> tuple[ToolCall, ...]:
    calls: list[tuple[str | None, str, dict[str, Any], str | None]] = []
    outputs: dict[str, Any] = {}
    for item in items:
        kind = getattr(item, "type", None)
        raw = getattr(item, "raw_item", None)
        if kind == "tool_call_item":
            typ = str(_get(raw, "type") or "tool")
            if typ == "function_call":
                calls.append((_get(raw, "call_id"), str(_get(raw, "name")),
                              _arguments(_get(raw, "arguments")), None))
            else:  # hosted or local built-in tools: the item carries its own status
                status = str(_get(raw, "status") or "")
                failed = status in _HOSTED_FAILED or bool(_get(raw, "error"))
                name = str(_get(raw, "name") or typ)
                calls.append((_get(raw, "call_id") or _get(raw, "id"), name,
                              _arguments(_get(raw, "arguments")),
                              "error" if failed else "success"))
        elif kind == "tool_call_output_item":
            outputs[str(_get(raw, "call_id"))] = getattr(item, "output", None)
    with_spans = watch.seen
    spans: dict[str, list[ToolSpan]] = {}
    for _, span in sorted(watch.spans, key=lambda pair: pair[0]):
        spans.setdefault(span.name, []).append(span)
    out: list[ToolCall] = []
    for call_id, name, args, known in calls:
        if known is not None:
            out.append(ToolCall(name, args, known, call_id))
            continue
        if call_id is None or str(call_id) not in outputs:
            status = "error"  # the call never got an answer: it did not run to completion
        else:
            queue = spans.get(name) or next(
                (v for k, v in spans.items() if k.endswith("." + name) and v), None)
            if with_spans and queue:
                status = "error" if queue.pop(0).error else "success"
            else:  # no tracing: only the SDK's default failure message is recognisable
                said = str(outputs[str(call_id)])
                status = "error" if said.startswith(DEFAULT_TOOL_ERROR) else "success"
        out.append(ToolCall(name, args, status, str(call_id) if call_id is not None else None))
    return tuple(out)


def _usage(result: Any) -> Usage | None:
    responses = list(getattr(result, "raw_responses", None) or ())
    if not responses:
        return None
    tin = tout = total = 0
    for response in responses:
        usage = getattr(response, "usage", None)
        tin += int(getattr(usage, "input_tokens", 0) or 0)
        tout += int(getattr(usage, "output_tokens", 0) or 0)
        total += int(getattr(usage, "total_tokens", 0) or 0)
    return Usage(input_tokens=tin, output_tokens=tout, total_tokens=total or tin + tout)


def _map_error(exc: BaseException) -> AgentCallError:
    """Classify a failed run: provider throttling, timeouts and 5xx are retryable."""
    return map_error(exc, _ERRORS)


def _check_factory(fn: Any, what: str) -> None:
    check_factory(fn, who=what, expects="a zero-argument callable",
                  fix="pass a zero-argument callable")


def from_openai_agents(
    agent_or_factory: Any,
    *,
    verdict: str | None = _AUTO,
    identity: str | None = None,
    run_config: Any = None,
    max_turns: int | None = None,
    context_factory: Callable[[], Any] | None = None,
    session_factory: Callable[[], Any] | None = None,
) -> OpenAIAgentsAdapter:
    """Adapter over an OpenAI Agents SDK ``Agent``, or a zero-argument factory of one.

    An ``Agent`` is a configuration: the conversation lives in the run (and in a session,
    when one is passed), so one instance may serve every call. A factory is called once per
    call, for agents whose tools or model keep state of their own.

    Args:
        agent_or_factory: an ``agents.Agent``, or a zero-argument callable returning one.
        verdict: the field of the structured output (``output_type``) that is the verdict; a
            dotted path descends into nested models; an output without it fails the call.
            ``None``: the engine's extractor chooses (``--verdict-key``,
            ``--verdict-regex``). Default: the ``verdict`` field when the output has one,
            else as ``None``.
        identity: stable name used in record/replay keys (default ``"openai-agents:"`` + the
            agent's name, or the factory's ``module.qualname``).
        run_config: an ``agents.RunConfig`` for every call; its ``trace_id`` is replaced by a
            fresh one per call.
        max_turns: ``Runner.run``'s ``max_turns`` (default: the SDK's).
        context_factory: builds the run ``context`` afresh for every call.
        session_factory: builds a fresh ``Session`` for every call (a shared session would
            carry one draw's conversation into the next).

    Raises:
        InvalidArgument: not an Agent nor a zero-argument callable; a malformed ``verdict``
            path; ``run_config`` is not a ``RunConfig``; a factory needing arguments.

    Example:
        >>> from pathlib import Path
        >>> from agentverity_props.adapters import load_object
        >>> examples = Path(__file__).resolve().parents[2] / "examples"
        >>> make_agent = load_object(f"{examples}/openai_agents_agent.py:make_agent")
        >>> obs = from_openai_agents(make_agent).invoke("How do I reset my password?")
        >>> obs.verdict, [(t.name, t.status) for t in obs.tools]
        ('faq', [('search_faq', 'success')])
    """
    if isinstance(agent_or_factory, type):
        raise InvalidArgument(
            f"from_openai_agents got the class {agent_or_factory.__name__}; pass an "
            "agents.Agent or a factory: lambda: Agent(...)")
    instance = is_openai_agent(agent_or_factory)
    if not instance:
        _check_factory(agent_or_factory, "from_openai_agents: the agent factory")
    if verdict is not None and verdict is not _AUTO:
        if not isinstance(verdict, str):
            raise InvalidArgument(f"verdict must be a field name or None, got {verdict!r}")
        try:
            parse_path(verdict)
        except ValueError as exc:
            raise InvalidArgument(f"from_openai_agents verdict: {exc}") from None
    if run_config is not None:
        from agents import RunConfig
        if not isinstance(run_config, RunConfig):
            raise InvalidArgument(f"run_config must be an agents.RunConfig, got "
                                  f"{type(run_config).__name__}")
    if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
        raise InvalidArgument(f"max_turns must be a positive integer, got {max_turns!r}")
    for fn, what in ((context_factory, "context_factory"), (session_factory, "session_factory")):
        if fn is not None:
            _check_factory(fn, what)
    if identity is None:
        identity = "openai-agents:" + (str(agent_or_factory.name) if instance
                                       else qualname(agent_or_factory))
    return OpenAIAgentsAdapter(agent_or_factory, identity=identity, verdict=verdict,
                               run_config=run_config, max_turns=max_turns,
                               context_factory=context_factory,
                               session_factory=session_factory)
