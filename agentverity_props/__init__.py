"""agentverity-props: property-based testing for non-deterministic LLM agents.

Measure first, then test:

- :func:`measure` — is the agent's categorical verdict stable enough to test against?
- :func:`run` — meter, blindness health check and noise-calibrated metamorphic relations.
- :func:`agent_property` — relations as Hypothesis properties, shrunk to minimal
  counterexamples.

The top level holds the entry points, the building blocks and three errors (docs/api.md);
every other public name is imported from its sub-module. Names are imported lazily
(PEP 562) so ``import agentverity_props`` stays light: numpy, scipy, Hypothesis and every
optional integration load only when first used.
"""

from __future__ import annotations

from ._internal.lazy import lazy_exports, stub_exports
from ._internal.version import __version__

#: name -> the module defining it, read from ``__init__.pyi``: the one list of public names
#: (type checkers read the same stub; docs/api.md describes each name)
_EXPORTS: dict[str, str] = stub_exports(__file__)

__all__ = ["__version__", *sorted(_EXPORTS)]  # noqa: PLE0604 (strings: the stub's names)

#: names that left the top level (issue 48: a front door of about twenty names) -> their
#: home; each still resolves for one release, with a DeprecationWarning naming the import
_MOVED: dict[str, str] = {
    **dict.fromkeys(("from_http", "from_langgraph", "from_openai_agents", "from_pydantic_ai",
                     "from_strands"), "agentverity_props.adapters"),
    **dict.fromkeys(("ConversationConfig", "run_conversation_test"),
                    "agentverity_props.conversation"),
    **dict.fromkeys(("PRESETS", "BlindnessResult", "MeterConfig", "MeterResult"),
                    "agentverity_props.diagnose"),
    **dict.fromkeys(("RunConfig", "RunResult", "TokensPerCall", "arun"),
                    "agentverity_props.runner"),
    **dict.fromkeys(("EngineConfig", "Price"), "agentverity_props.engine"),
    **dict.fromkeys(("AgentCallError", "AgentHealthWarning", "BadInput", "BudgetExhausted",
                     "EvidenceExhausted", "InvalidArgument", "ReplayMiss"),
                    "agentverity_props.errors"),
    **dict.fromkeys(("ToolCall", "Usage"), "agentverity_props.observation"),
    **dict.fromkeys(("AgentCheck", "PropertyConfig", "counterexample_report"),
                    "agentverity_props.property"),
    **dict.fromkeys(("CheckResult", "SnapshotResult"), "agentverity_props.snapshot"),
    **dict.fromkeys(("BoundaryConfig", "BoundaryLocation", "EnlargeConfig", "EnlargeResult"),
                    "agentverity_props.search"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals(), _MOVED)
