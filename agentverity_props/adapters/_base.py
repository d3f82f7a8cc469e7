"""The one interface every agent is turned into.

An :class:`Adapter` makes exactly one agent call per ``invoke``/``ainvoke`` and returns an
:class:`~agentverity_props.observation.Observation` (verdict extraction happens later, in the
engine). It raises :class:`~agentverity_props.errors.AgentCallError` for failures, marking
transient ones ``retryable``; any other exception is a non-retryable failure.

Only the engine (``agentverity_props.engine``) calls adapters.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

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
