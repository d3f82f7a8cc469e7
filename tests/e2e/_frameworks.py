"""The framework adapters the conformance suite (test_adapter_conformance.py) drives: for
each, its example support agent on an offline model, a failing agent, a bare framework
object and the CLI references, so that one test states one property for every framework.

Each framework's support example (examples/<framework>_agent.py) routes the same requests
the same way (``faq``, ``refund``, ``escalate``), draws its noise from its own
``random.Random``, and plants the same bug (``URGENT`` in a prompt over 40 characters), so
the same prompts and the same expectations hold for each. A framework that is not installed
is skipped, never failed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentverity_props.adapters import load_object

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Framework:
    """What the conformance tests need of one framework adapter.

    Attributes:
        name: the pytest id.
        support: ``support(seed, ambiguity, **kw)``, the example agent as an adapter.
        clean: what ``@agent_property(agent=...)`` is given for the clean example (seed 11,
            ambiguity 0.2): an adapter or a bare framework object.
        failing: ``failing(exc=None, sleep_s=0.0)``, an adapter whose call sleeps, then
            raises ``exc``.
        rate_limited: an exception of the framework that means "throttled".
        bare: a framework object, for ``as_adapter``.
        public: the public ``from_<framework>`` (``agentverity_props.adapters``).
        public_kwargs: what ``public`` needs besides the object and ``identity``.
        adapter: the adapter class.
        prefix: the identity's prefix (``"langgraph"``).
        ref: the CLI's ``--agent`` reference to the example factory.
        budget: the CLI run's budget.
        absent_key: a ``--verdict-key`` the example's output does not have.
        absent_says: what the refusal of ``absent_key`` names.
        tools_ref: the example factory's reference from examples/ (tools cases).
        over_limit: a refund over the limit (issue_refund fails after lookup_order).
        no_order: a refund whose lookup fails.
        token_prompts: the prompts of the recorded-tokens check.
    """

    name: str
    support: Callable[..., Any]
    clean: Callable[[], Any]
    failing: Callable[..., Any]
    rate_limited: Callable[[], BaseException]
    bare: Callable[[], Any]
    public: Callable[..., Any]
    public_kwargs: dict[str, Any]
    adapter: type
    prefix: str
    ref: str
    budget: int
    absent_key: str
    absent_says: tuple[str, ...]
    tools_ref: str
    over_limit: str
    no_order: str
    token_prompts: tuple[str, ...]


def _example(path: str, attr: str) -> dict[str, Any]:
    """The example module's globals (loaded the way the CLI loads a reference)."""
    return load_object(f"{ROOT / path}:{attr}", cwd=ROOT).__globals__


def langgraph() -> Framework:
    pytest.importorskip("langgraph")
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from agentverity_props.adapters import from_langgraph as public
    from agentverity_props.adapters._langgraph import LangGraphAdapter, from_langgraph

    ex = _example("examples/langgraph_agent.py", "graph_factory")

    class RateLimitError(Exception):
        pass

    def failing(exc: BaseException | None = None, sleep_s: float = 0.0) -> Any:
        class S(TypedDict):
            messages: list

        async def node(state: S) -> dict:
            if sleep_s:
                await asyncio.sleep(sleep_s)
            if exc is not None:
                raise exc
            return {}

        g = StateGraph(S)
        g.add_node("n", node)
        g.add_edge(START, "n")
        g.add_edge("n", END)
        return from_langgraph(g.compile())

    def bare() -> Any:
        class S(TypedDict):
            question: str
            decision: str

        g = StateGraph(S)
        g.add_node("judge", lambda s: {"decision": "allow"})
        g.add_edge(START, "judge")
        g.add_edge("judge", END)
        return g.compile()

    def support(seed: int = 0, ambiguity: float = 0.2, **kw: Any) -> Any:
        return from_langgraph(ex["graph_factory"](seed=seed, ambiguity=ambiguity, **kw))

    return Framework(
        name="langgraph", support=support, clean=lambda: support(seed=11, ambiguity=0.2),
        failing=failing, rate_limited=lambda: RateLimitError("429 slow down"), bare=bare,
        public=public, public_kwargs={"input_key": "question", "input_as": "text",
                                      "verdict": "decision"},
        adapter=LangGraphAdapter, prefix="langgraph",
        ref="examples/langgraph_agent.py:make_agent", budget=400,
        absent_key="structured_response.label", absent_says=("structured_response.label",),
        tools_ref="langgraph_agent:make_agent", over_limit="Refund order 1004 please",
        no_order="I want a refund but I lost my order number.",
        token_prompts=("How do I reset my password?", "Refund order 1001 please",
                       "I was charged twice for order 1002."))


def pydantic_ai() -> Framework:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    from agentverity_props.adapters import from_pydantic_ai as public
    from agentverity_props.adapters._pydantic_ai import PydanticAIAdapter, from_pydantic_ai

    ex = _example("examples/pydantic_ai_agent.py", "build_agent")

    def failing(exc: BaseException | None = None, sleep_s: float = 0.0) -> Any:
        async def fn(messages: Any, info: Any) -> ModelResponse:
            if sleep_s:
                await asyncio.sleep(sleep_s)
            if exc is not None:
                raise exc
            return ModelResponse(parts=[TextPart("ok")])

        return from_pydantic_ai(Agent(FunctionModel(fn)))

    def text_agent() -> Any:
        return Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")])))

    def support(seed: int = 0, ambiguity: float = 0.2, **kw: Any) -> Any:
        return from_pydantic_ai(ex["build_agent"](rng=random.Random(seed), ambiguity=ambiguity,
                                                  **kw), verdict="decision")

    return Framework(
        name="pydantic_ai", support=support,
        # a bare pydantic_ai.Agent is accepted as is (its `decision` field is the verdict)
        clean=lambda: ex["build_agent"](rng=random.Random(11), ambiguity=0.2),
        failing=failing, rate_limited=lambda: ModelHTTPError(429, "m", body="slow down"),
        bare=text_agent, public=public, public_kwargs={},
        adapter=PydanticAIAdapter, prefix="pydantic-ai",
        ref="examples/pydantic_ai_agent.py:make_agent", budget=300,
        absent_key="label", absent_says=("'label'", "decision, reply"),
        tools_ref="pydantic_ai_agent:make_agent", over_limit="Refund order 1004 now",
        no_order="refund order 9999",
        token_prompts=("How do I reset my password?",
                       "I want a refund for order 1001, it arrived broken.",
                       "I was charged twice for order 1002."))


FRAMEWORKS: dict[str, Callable[[], Framework]] = {"langgraph": langgraph,
                                                   "pydantic_ai": pydantic_ai}
