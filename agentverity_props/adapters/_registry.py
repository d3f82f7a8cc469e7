"""The one registry of agent frameworks: how to recognise an agent object of each, and how to
wrap it. ``as_adapter`` (an agent passed in Python) and ``load_agent`` (an agent named by a
``module:attr`` reference) both read it, so a framework is added in one place.

A framework's agent object is either *reusable* (a configuration that keeps no history
between runs: an SDK ``Agent``, a compiled graph; wrapped as it is) or not (a Strands
``Agent`` keeps its conversation and refuses concurrent calls: only a factory of them is
accepted). ``wrap(obj, **kwargs)`` takes the object, or a zero-argument factory returning one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._base import Adapter
from ._langgraph import from_langgraph, is_langgraph_graph
from ._openai_agents import from_openai_agents, is_openai_agent
from ._pydantic_ai import from_pydantic_ai, is_pydantic_ai_agent
from ._strands import is_strands_agent

__all__ = ["FRAMEWORKS", "Framework", "framework_of", "register"]


def _from_strands(factory: Any, **kwargs: Any) -> Adapter:
    from ._strands import from_strands
    return from_strands(factory, **kwargs)


@dataclass(frozen=True)
class Framework:
    """One agent framework the adapters recognise.

    Attributes:
        name: the prefix of the adapter's identity in record/replay keys (``langgraph``).
        detects: True for an agent object of the framework (checked without importing it).
        wrap: ``wrap(obj_or_factory, identity=...)`` -> the framework's adapter.
        kind: the agent object as messages name it (``strands.Agent``).
        reusable: whether one agent object may serve every call (else a factory is needed).
    """

    name: str
    detects: Callable[[Any], bool]
    wrap: Callable[..., Adapter]
    kind: str = "agent"
    reusable: bool = True


#: every framework, in the order they are tried (the first that recognises an object wins)
FRAMEWORKS: list[Framework] = [
    Framework("strands", is_strands_agent, _from_strands, "strands.Agent", reusable=False),
    Framework("langgraph", is_langgraph_graph, from_langgraph, "compiled LangGraph graph"),
    Framework("openai-agents", is_openai_agent, from_openai_agents, "agents.Agent"),
    Framework("pydantic-ai", is_pydantic_ai_agent, from_pydantic_ai, "pydantic_ai.Agent"),
]


def framework_of(obj: Any) -> Framework | None:
    """The framework whose agent ``obj`` is, or None (a plain callable, an adapter...)."""
    return next((fw for fw in FRAMEWORKS if fw.detects(obj)), None)


def register(framework: Framework) -> Callable[[], None]:
    """Add ``framework`` (tried after the built-in ones); returns a function removing it.

    >>> undo = register(Framework("echo", lambda o: o == "echo", lambda o, **kw: o))
    >>> framework_of("echo").name
    'echo'
    >>> undo(); framework_of("echo") is None
    True
    """
    if any(fw.name == framework.name for fw in FRAMEWORKS):
        from ..errors import InvalidArgument
        raise InvalidArgument(f"a framework named {framework.name!r} is already registered; "
                              "give it another name")
    FRAMEWORKS.append(framework)
    return lambda: FRAMEWORKS.remove(framework)
