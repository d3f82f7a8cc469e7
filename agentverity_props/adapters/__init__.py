"""Adapters: turn any agent into something the engine can call.

``from_callable`` is always available; ``from_strands`` (extra ``strands``) and ``from_http``
(extra ``http``) import their dependencies only when called.
"""

from __future__ import annotations

from typing import Any

from ._base import Adapter
from ._callable import CallableAdapter, from_callable

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "Adapter",
    "from_callable",
    "from_http",
    "from_langgraph",
    "from_openai_agents",
    "from_pydantic_ai",
    "from_strands",
    "load_agent",
]


def __getattr__(name: str) -> Any:
    # StrandsAdapter lives with the Strands glue; importing it does not import strands
    if name == "StrandsAdapter":
        from ._strands import StrandsAdapter
        return StrandsAdapter
    if name == "LangGraphAdapter":
        from ._langgraph import LangGraphAdapter
        return LangGraphAdapter
    if name == "OpenAIAgentsAdapter":
        from ._openai_agents import OpenAIAgentsAdapter
        return OpenAIAgentsAdapter
    if name == "PydanticAIAdapter":
        from ._pydantic_ai import PydanticAIAdapter
        return PydanticAIAdapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_object(ref: str, **kwargs: Any) -> Any:
    """Resolve ``module:attr`` / ``file.py:attr`` to the object it names."""
    from ._refs import load_object as _impl
    return _impl(ref, **kwargs)


def redact(text: str, secrets: Any) -> str:
    """Replace every secret of 6+ characters in ``text`` with ``***`` (longest first)."""
    from ._http import redact as _impl
    return _impl(text, secrets)


def load_agent(ref: str, **kwargs: Any) -> Adapter:
    """Resolve ``module:attr`` / ``file.py:attr`` to an adapter (see docs/agents.md)."""
    from ._refs import load_agent as _impl
    return _impl(ref, **kwargs)


def from_strands(factory: Any, **kwargs: Any) -> Any:
    """Adapter over a zero-argument factory building a fresh ``strands.Agent`` per call."""
    from ._strands import from_strands as _impl
    return _impl(factory, **kwargs)


def strands_tool_calls(messages: list[Any], *, structured_output_model: Any = None) -> Any:
    """The tool calls (with status) in a Strands agent's ``messages``, leaving out the tool
    Strands registers for ``structured_output_model`` (imports nothing from Strands unless
    a model is given)."""
    from ._strands import structured_tool_name, tool_calls
    return tool_calls(messages, skip=structured_tool_name(structured_output_model))


def from_langgraph(graph_or_factory: Any, **kwargs: Any) -> Any:
    """Adapter over a compiled LangGraph graph, or a factory of them (extra ``langgraph``)."""
    from ._langgraph import from_langgraph as _impl
    return _impl(graph_or_factory, **kwargs)


def from_openai_agents(agent_or_factory: Any, **kwargs: Any) -> Any:
    """Adapter over an OpenAI Agents SDK ``Agent`` or a factory of them (extra
    ``openai-agents``)."""
    from ._openai_agents import from_openai_agents as _impl
    return _impl(agent_or_factory, **kwargs)


def from_pydantic_ai(agent_or_factory: Any, **kwargs: Any) -> Any:
    """Adapter over a ``pydantic_ai.Agent`` or a factory of them (extra ``pydantic-ai``)."""
    from ._pydantic_ai import from_pydantic_ai as _impl
    return _impl(agent_or_factory, **kwargs)


def from_http(url: str, **kwargs: Any) -> Any:
    """Adapter over an HTTP endpoint (httpx, async)."""
    from ._http import from_http as _impl
    return _impl(url, **kwargs)


def as_adapter(agent: Any) -> Adapter:
    """Accept an adapter as is; wrap a plain callable with :func:`from_callable`."""
    if isinstance(agent, Adapter):
        return agent
    from ._registry import framework_of
    framework = framework_of(agent)
    # a reusable agent object (a compiled graph, an SDK Agent: no history between runs) is
    # wrapped as it is; any other callable is taken to be fn(prompt)
    if framework is not None and framework.reusable:
        return framework.wrap(agent)
    if callable(agent):
        return from_callable(agent)
    from ..errors import InvalidArgument
    raise InvalidArgument(
        f"expected an agent adapter or a callable taking the prompt, got {type(agent).__name__}; "
        "wrap it with from_callable(), from_strands() or from_http()")
