"""The one interface every agent is turned into.

An :class:`Adapter` makes exactly one agent call per ``invoke``/``ainvoke`` and returns an
:class:`~agentverity_props.observation.Observation` (verdict extraction happens later, in the
engine). It raises :class:`~agentverity_props.errors.AgentCallError` for failures, marking
transient ones ``retryable``; any other exception is a non-retryable failure.

Only the engine (``agentverity_props.engine``) calls adapters.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .._internal.jsonpath import parse_path
from ..observation import Observation


@runtime_checkable
class Adapter(Protocol):
    """An agent the engine can call.

    Attributes:
        identity: a stable name for the agent, part of the record/replay key.
        is_async: when true the engine awaits ``ainvoke``; otherwise it runs ``invoke`` in a
            worker thread.
    """

    identity: str
    is_async: bool

    def invoke(self, prompt: str) -> Observation: ...

    async def ainvoke(self, prompt: str) -> Observation: ...


class AsyncAdapter:
    """Base of the adapters whose call is a coroutine (HTTP, Strands, LangGraph, pydantic-ai,
    the OpenAI Agents SDK): the engine awaits :meth:`ainvoke` on its own loop, and
    :meth:`invoke` runs it on a private one for synchronous callers."""

    is_async = True
    identity: str

    def invoke(self, prompt: str) -> Observation:
        """Synchronous call (runs :meth:`ainvoke` on a private event loop)."""
        from .._internal.aio import run_sync
        return run_sync(self.ainvoke(prompt))

    async def ainvoke(self, prompt: str) -> Observation:
        raise NotImplementedError


class FrameworkAdapter(AsyncAdapter):
    """Base of the adapters over one framework object or a zero-argument factory of them
    (LangGraph, pydantic-ai): the source, whether it is a factory, the identity and the
    verdict's path (``verdict``, parsed once)."""

    def __init__(self, source: Any, *, factory: bool, identity: str,
                 verdict: str | None) -> None:
        self._source = source
        self._factory = factory
        self.identity = identity
        self.verdict = verdict
        self._verdict_parts = parse_path(verdict) if verdict is not None else None

    def _made(self, what: str, **checks: Any) -> Any:
        """This call's object: the source itself, or what the factory builds for it
        (:func:`~agentverity_props.adapters._errors.call_factory` with ``checks``)."""
        if not self._factory:
            return self._source
        from ._errors import call_factory
        return call_factory(self._source, what, **checks)
