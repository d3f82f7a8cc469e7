"""LangGraph graphs as agents under test: :func:`from_langgraph`.

A compiled graph (``StateGraph(...).compile()``, anything built on ``Pregel``) holds no
conversation between calls except in its checkpointer, and that is keyed by ``thread_id``:
every call gets a fresh ``thread_id`` (and, with a checkpoint saver, the thread is deleted
once the answer is read), so draws stay independent and the engine may run them
concurrently on its own event loop (``graph.ainvoke``). A zero-argument *factory* returning
a compiled graph is called once per call instead, for graphs that keep state elsewhere.

What one call leaves behind (an :class:`~agentverity_props.observation.Observation`), all
read from the graph's final state:

* ``text`` — the text of the last ``AIMessage`` in the messages channel;
* ``raw`` — every other state key, JSON-ready (a pydantic model, dataclass or TypedDict
  becomes a dict), so ``--verdict-key structured_response.verdict`` reaches a
  ``response_format`` model and ``--verdict-key verdict`` a plain state key;
* ``verdict`` — the value at the ``verdict`` path when one is given (absent: the call fails
  with ``bad_output`` naming the keys that are there); by default the ``verdict`` field of
  ``structured_response`` when it has one, else ``None`` (the engine's extractor decides);
* ``tools`` — every ``AIMessage.tool_calls`` entry in order, with the ``status`` of its
  ``ToolMessage`` (``success`` / ``error``); a call with no ``ToolMessage`` never ran to
  completion and an ``invalid_tool_calls`` entry never ran at all: both are ``error``;
* ``usage`` — the ``usage_metadata`` of every chat-model call of the run, summed (counted
  by a LangChain callback, so calls whose message never reaches the state — a
  ``with_structured_output`` call — count too; without callbacks, the ``AIMessage`` s of the
  state).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._internal.introspect import has_class, qualname
from .._internal.jsonpath import MISSING, lookup, parse_path
from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation, ToolCall, Usage
from ._base import FrameworkAdapter
from ._errors import (
    ErrorRule,
    check_factory,
    describe,
    guarded,
    is_timeout,
    map_error,
    named,
)

__all__ = ["LangGraphAdapter", "from_langgraph", "is_langgraph_graph"]

_INTERRUPT = "__interrupt__"
_INPUT_FORMS = ("messages", "text")


def is_langgraph_graph(obj: Any) -> bool:
    """True for a compiled LangGraph graph (a ``Pregel``), checked without importing it."""
    return has_class(obj, "Pregel", "langgraph")



class LangGraphAdapter(FrameworkAdapter):
    """Adapter over a compiled LangGraph graph or a factory of them (see :func:`from_langgraph`).

    Attributes:
        tool_source: ``"messages"`` — tool calls come from the graph's own messages, so the
            ``tools`` runner reads them as they are instead of waiting for OpenTelemetry spans.
    """

    tool_source = "messages"

    def __init__(self, source: Any, *, factory: bool, identity: str, verdict: str | None,
                 input_key: str, input_as: str, messages_key: str,
                 config: Mapping[str, Any] | None,
                 invoke_kwargs: Mapping[str, Any] | None) -> None:
        super().__init__(source, factory=factory, identity=identity, verdict=verdict)
        self.input_key = input_key
        self.input_as = input_as
        self.messages_key = messages_key
        self.config = dict(config or {})
        self.invoke_kwargs = dict(invoke_kwargs or {})

    def __repr__(self) -> str:
        return f"from_langgraph({self.identity.removeprefix('langgraph:')})"

    # -------------------------------------------------------------- calls

    async def ainvoke(self, prompt: str) -> Observation:
        """One call on a fresh thread: run the graph, turn its final state into an Observation."""
        t0 = time.perf_counter()
        graph = self._graph()
        thread_id = f"agentverity-{uuid.uuid4().hex}"
        counter = _usage_counter()
        try:
            state = await self._run(graph, self._input(prompt), thread_id, counter)
        finally:
            await _forget(graph, thread_id)
        obs = self.observe(state, latency=time.perf_counter() - t0)
        if counter.seen:  # every model call of the run, structured-output calls included
            obs = replace(obs, usage=counter.usage())
        return obs

    async def _run(self, graph: Any, payload: Any, thread_id: str, counter: Any) -> Any:
        config = self._config({"thread_id": thread_id}, counter)
        state = await guarded(
            lambda: graph.ainvoke(payload, config=config, **self.invoke_kwargs), _map_error)
        interrupted = isinstance(state, Mapping) and bool(state.get(_INTERRUPT))
        return self._check_state(state, interrupted=interrupted)

    def _config(self, configurable: Mapping[str, Any], counter: Any) -> dict[str, Any]:
        """The call's ``RunnableConfig``: the user's, this thread, the usage counter."""
        config = dict(self.config)
        config["configurable"] = {**(config.get("configurable") or {}), **configurable}
        callbacks = config.get("callbacks")
        if callbacks is None or isinstance(callbacks, (list, tuple)):
            config["callbacks"] = [*(callbacks or ()), counter]
        return config

    @staticmethod
    def _check_state(state: Any, *, interrupted: bool) -> Mapping[str, Any]:
        if interrupted:
            raise AgentCallError(
                "the graph paused at an interrupt() (human-in-the-loop) and gave no answer; "
                "test a graph that runs to the end, or compile it without interrupts",
                kind="bad_output")
        if not isinstance(state, Mapping):
            raise AgentCallError(
                f"the graph returned {type(state).__name__}, not its state; compile a "
                "StateGraph whose state is a TypedDict, dataclass or pydantic model",
                kind="bad_output")
        return state

    @staticmethod
    def _new_counter() -> Any:
        return _usage_counter()

    @staticmethod
    def _failure(exc: BaseException) -> AgentCallError:
        return _map_error(exc)

    def conversation(self) -> Any:
        """This graph as a conversational agent: one ``thread_id`` per conversation, kept
        across its turns (for :mod:`agentverity_props.conversation`).

        Returns:
            a ``LangGraphConversation``: ``open()`` a session, ``await session.send(text)``
            per user turn (each turn's Observation holds that turn only), ``fork()``,
            ``close()``.
        """
        from ._langgraph_conversation import LangGraphConversation
        return LangGraphConversation(self)

    def _graph(self) -> Any:
        return self._made(
            "graph factory", is_expected=is_langgraph_graph,
            expected="a compiled LangGraph graph",
            fix=lambda graph: (" (an uncompiled StateGraph: return graph.compile())"
                               if type(graph).__name__ == "StateGraph" else ""))

    def _input(self, prompt: str) -> dict[str, Any]:
        if self.input_as == "text":
            return {self.input_key: prompt}
        return {self.input_key: [{"role": "user", "content": prompt}]}

    # -------------------------------------------------------------- state -> Observation

    def observe(self, state: Mapping[str, Any], *, latency: float = 0.0,
                since: int = 0) -> Observation:
        """The Observation of a final ``state``; ``since`` skips earlier turns' messages."""
        messages = list(state.get(self.messages_key) or ())
        new = messages[since:]
        raw = {str(k): _jsonable(v) for k, v in state.items() if k != self.messages_key}
        return Observation(text=_final_text(new), verdict=self._verdict_of(raw),
                           tools=_tool_calls(new), raw=raw, latency_s=latency,
                           usage=_usage(new))

    def _verdict_of(self, raw: dict[str, Any]) -> str | None:
        if self._verdict_parts is None:
            structured = raw.get("structured_response")
            if isinstance(structured, Mapping) and structured.get("verdict") is not None:
                return str(structured["verdict"])
            return None
        found = lookup(raw, self._verdict_parts)
        if found is MISSING or found is None:
            raise AgentCallError(
                f"the graph's final state has no {self.verdict!r}: "
                f"{_present(raw, self._verdict_parts)}; name the state key or structured-output "
                "field with verdict= (e.g. 'structured_response.verdict')", kind="bad_output")
        return str(found)


def _present(raw: Mapping[str, Any], parts: list[Any]) -> str:
    """Name the keys at the level where ``parts`` stops matching."""
    cur: Any = raw
    where = "the state"
    for part in parts:
        if isinstance(cur, Mapping) and part in cur and cur[part] is not None:
            cur = cur[part]
            where = repr(part) if where == "the state" else f"{where}.{part}"
            continue
        break
    if isinstance(cur, Mapping):
        keys = ", ".join(sorted(str(k) for k in cur)[:12]) or "none"
        return f"{where} has keys {keys}"
    return f"{where} is {type(cur).__name__ if cur is not None else 'null'}"


async def _forget(graph: Any, thread_id: str) -> None:
    """Delete the call's thread from the graph's checkpoint saver, so memory stays flat."""
    saver = getattr(graph, "checkpointer", None)
    delete = getattr(saver, "adelete_thread", None)
    if delete is None:
        return
    # a saver that cannot delete keeps a thread nobody will use again
    with contextlib.suppress(Exception):
        await delete(thread_id)


def _jsonable(value: Any) -> Any:
    """State values as JSON data: models, dataclasses and messages become dicts."""
    import dataclasses
    import enum

    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return dump(mode="json")
        except Exception:  # a model with unserialisable fields: fall back to its fields
            return {k: _jsonable(v) for k, v in dict(value).items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return repr(value)


def _is_ai(message: Any) -> bool:
    return getattr(message, "type", None) in ("ai", "AIMessageChunk")


def _final_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if _is_ai(message):
            text = str(message.text).strip()
            if text:
                return text
    return ""


def _tool_calls(messages: list[Any]) -> tuple[ToolCall, ...]:
    calls: list[tuple[str | None, str, dict[str, Any], bool]] = []
    status: dict[str, str] = {}
    for message in messages:
        if _is_ai(message):
            for call in getattr(message, "tool_calls", None) or ():
                args = call.get("args")
                calls.append((call.get("id"), str(call.get("name")),
                              dict(args) if isinstance(args, Mapping) else {"input": args},
                              True))
            for bad in getattr(message, "invalid_tool_calls", None) or ():
                calls.append((bad.get("id"), str(bad.get("name")),
                              {"input": bad.get("args")}, False))
        elif getattr(message, "type", None) == "tool":
            status[str(message.tool_call_id)] = str(getattr(message, "status", "success"))
    return tuple(
        ToolCall(name, args, status.get(str(cid), "error") if valid else "error", cid)
        for cid, name, args, valid in calls)


def _usage(messages: list[Any]) -> Usage | None:
    totals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    seen = False
    for message in messages:
        meta = getattr(message, "usage_metadata", None) if _is_ai(message) else None
        if not meta:
            continue
        seen = True
        for key in totals:
            totals[key] += int(meta.get(key) or 0)
    return Usage(**totals) if seen else None


_COUNTER_CLASS: Any = None


def _usage_counter() -> Any:
    """A LangChain callback handler summing ``usage_metadata`` over every model call."""
    global _COUNTER_CLASS
    if _COUNTER_CLASS is None:
        from langchain_core.callbacks import BaseCallbackHandler

        class UsageCounter(BaseCallbackHandler):
            run_inline = True  # a few additions: no executor hop per model call

            def __init__(self) -> None:
                super().__init__()
                self._lock = threading.Lock()
                self.totals = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
                self.seen = False

            def on_llm_end(self, response: Any, **kwargs: Any) -> None:
                for generations in response.generations:
                    for generation in generations:
                        message = getattr(generation, "message", None)
                        meta = getattr(message, "usage_metadata", None)
                        if not meta:
                            continue
                        with self._lock:
                            self.seen = True
                            for key in self.totals:
                                self.totals[key] += int(meta.get(key) or 0)

            def usage(self) -> Usage:
                return Usage(**self.totals)

        _COUNTER_CLASS = UsageCounter
    return _COUNTER_CLASS()


#: how a graph run's errors map to the toolkit's kinds (after the rate-limit names)
_ERRORS = (
    ErrorRule("timeout", is_timeout, retryable=True),
    ErrorRule("error", named("GraphRecursionError", exact=True),
              hint=" (the graph looped; raise recursion_limit through "
                   "from_langgraph(config={'recursion_limit': N}) or fix the loop)"),
)


def _map_error(exc: BaseException) -> AgentCallError:
    """Classify a failed graph run (the model's, a tool's or the graph's own error)."""
    # a graph's errors can quote its whole state: messages are cut at 320 characters
    return map_error(exc, _ERRORS, limit=320, throttle_first=True)


def _describe(exc: BaseException) -> str:
    return describe(exc, limit=320)  # a graph's errors can quote its whole state


def from_langgraph(
    graph_or_factory: Any,
    *,
    verdict: str | None = None,
    input_key: str = "messages",
    input_as: str = "messages",
    messages_key: str = "messages",
    config: Mapping[str, Any] | None = None,
    invoke_kwargs: Mapping[str, Any] | None = None,
    identity: str | None = None,
) -> LangGraphAdapter:
    """Adapter over a compiled LangGraph graph, or a zero-argument factory returning one.

    Args:
        graph_or_factory: a compiled graph (reused: every call gets a fresh ``thread_id``),
            or a factory (called once per call, for graphs that keep state outside their
            checkpointer).
        verdict: path of the verdict in the final state, e.g. ``"structured_response.verdict"``
            (a ``response_format`` model's field) or ``"decision"`` (a state key); a call
            whose state lacks it fails (``bad_output``) naming the keys present. Default: the
            ``verdict`` field of ``structured_response`` if there is one.
        input_key: the state key the prompt goes into.
        input_as: ``"messages"`` sends ``[{"role": "user", "content": prompt}]`` (for a
            ``messages`` channel with the ``add_messages`` reducer); ``"text"`` sends the
            prompt string itself.
        messages_key: the state key holding the conversation (answer text, tools, usage).
        config: extra ``RunnableConfig`` for every call (``recursion_limit``, other
            ``configurable`` keys); ``thread_id`` is set per call.
        invoke_kwargs: extra keyword arguments for ``graph.ainvoke`` (e.g. ``context=``).
        identity: stable name used in record/replay keys (default
            ``"langgraph:" + module.qualname`` of the factory, or the graph's name).

    Raises:
        InvalidArgument: not a graph or a zero-argument factory; an uncompiled
            ``StateGraph``; a malformed ``verdict`` path or an unknown ``input_as``.

    Example:
        >>> from langgraph.graph import END, START, StateGraph
        >>> from typing_extensions import TypedDict
        >>> class S(TypedDict):
        ...     question: str
        ...     verdict: str
        >>> g = StateGraph(S)
        >>> _ = g.add_node("judge", lambda s: {"verdict": "block" if "bomb" in s["question"]
        ...                                     else "allow"})
        >>> _ = g.add_edge(START, "judge").add_edge("judge", END)
        >>> adapter = from_langgraph(g.compile(), input_key="question", input_as="text",
        ...                          verdict="verdict", identity="langgraph:doc")
        >>> adapter.invoke("how to bake bread").verdict
        'allow'
    """
    if type(graph_or_factory).__name__ == "StateGraph":
        raise InvalidArgument("from_langgraph got an uncompiled StateGraph; pass "
                              "graph.compile() or a factory returning it")
    is_graph = is_langgraph_graph(graph_or_factory)
    if not is_graph:
        check_factory(graph_or_factory, who="from_langgraph",
                      expects="a compiled graph or a zero-argument factory returning one",
                      fix="pass a zero-argument factory: lambda: builder.compile()")
    if verdict is not None:
        if not isinstance(verdict, str) or not verdict.strip():
            raise InvalidArgument(f"verdict must be a non-empty path string, got {verdict!r}")
        try:
            parse_path(verdict)
        except ValueError as exc:
            raise InvalidArgument(f"verdict path: {exc}") from None
    if input_as not in _INPUT_FORMS:
        raise InvalidArgument(f"input_as must be one of {', '.join(_INPUT_FORMS)}, "
                              f"got {input_as!r}")
    for name, value in (("input_key", input_key), ("messages_key", messages_key)):
        if not isinstance(value, str) or not value:
            raise InvalidArgument(f"{name} must be a non-empty string, got {value!r}")
    for name, mapping in (("config", config), ("invoke_kwargs", invoke_kwargs)):
        if mapping is not None and not isinstance(mapping, Mapping):
            raise InvalidArgument(f"{name} must be a mapping, got {type(mapping).__name__}")
    if invoke_kwargs and "config" in invoke_kwargs:
        raise InvalidArgument("pass config to from_langgraph(config=...), not inside "
                              "invoke_kwargs")
    if identity is None:
        if is_graph:
            identity = "langgraph:" + str(getattr(graph_or_factory, "name", None) or "graph")
        else:
            identity = "langgraph:" + qualname(graph_or_factory)
    return LangGraphAdapter(graph_or_factory, factory=not is_graph, identity=identity,
                            verdict=verdict, input_key=input_key, input_as=input_as,
                            messages_key=messages_key, config=config,
                            invoke_kwargs=invoke_kwargs)

