"""agentverity-props: property-based testing for non-deterministic LLM agents.

Measure first, then test:

- :func:`measure` — is the agent's categorical verdict stable enough to test against?
- :func:`run` — meter, blindness health check and noise-calibrated metamorphic relations.
- :func:`agent_property` — relations as Hypothesis properties, shrunk to minimal
  counterexamples.

Names are imported lazily (PEP 562) so ``import agentverity_props`` stays light: numpy,
scipy, Hypothesis and every optional integration load only when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._internal.lazy import lazy_exports
from ._internal.version import __version__

_EXPORTS: dict[str, str] = {
    # results and configuration
    "measure": ".diagnose",
    "run": ".diagnose",
    "plan": ".diagnose",
    "arun": ".diagnose",
    "RunConfig": ".diagnose",
    "MeterConfig": ".diagnose",
    "EngineConfig": ".engine",
    "Price": ".engine",
    "RunResult": ".diagnose",
    "MeterResult": ".diagnose",
    "PRESETS": ".diagnose",
    "HealthCheck": ".diagnose",
    "BlindnessResult": ".diagnose",
    "Relation": ".relations",
    "builtin_relations": ".relations",
    # observations and adapters
    "Observation": ".observation",
    "ToolCall": ".observation",
    "Usage": ".observation",
    "by_key": ".observation",
    "by_regex": ".observation",
    "by_callable": ".observation",
    "from_callable": ".adapters",
    "from_strands": ".adapters",
    "from_http": ".adapters",
    "from_langgraph": ".adapters",
    "from_pydantic_ai": ".adapters",
    "from_openai_agents": ".adapters",
    # property testing
    "agent_property": ".property",
    "AgentCheck": ".property",
    "PropertyConfig": ".property",
    "enlarge": ".strategies",
    "EnlargeConfig": ".strategies",
    "EnlargeResult": ".strategies",
    "locate_boundary": ".strategies",
    "BoundaryConfig": ".strategies",
    "BoundaryLocation": ".strategies",
    "counterexample_report": ".property",
    # multi-turn properties
    "AgentStateMachine": ".conversation",
    "ConversationConfig": ".conversation",
    "conversation_machine": ".conversation",
    "run_conversation_test": ".conversation",
    # regression references
    "create_snapshot": ".snapshot",
    "compare_snapshot": ".snapshot",
    "SnapshotResult": ".snapshot",
    "CheckResult": ".snapshot",
    # errors
    "AgentVerityError": ".errors",
    "AgentCallError": ".errors",
    "AgentHealthWarning": ".errors",
    "BadInput": ".errors",
    "BudgetExhausted": ".errors",
    "EvidenceExhausted": ".errors",
    "Inconclusive": ".errors",
    "InvalidArgument": ".errors",
    "PropertyViolation": ".errors",
    "ReplayMiss": ".errors",
}

__all__ = [
    "PRESETS",
    "AgentCallError",
    "AgentCheck",
    "AgentHealthWarning",
    "AgentStateMachine",
    "AgentVerityError",
    "BadInput",
    "BlindnessResult",
    "BoundaryConfig",
    "BoundaryLocation",
    "BudgetExhausted",
    "CheckResult",
    "ConversationConfig",
    "EngineConfig",
    "EnlargeConfig",
    "EnlargeResult",
    "EvidenceExhausted",
    "HealthCheck",
    "Inconclusive",
    "InvalidArgument",
    "MeterConfig",
    "MeterResult",
    "Observation",
    "Price",
    "PropertyConfig",
    "PropertyViolation",
    "Relation",
    "ReplayMiss",
    "RunConfig",
    "RunResult",
    "SnapshotResult",
    "ToolCall",
    "Usage",
    "__version__",
    "agent_property",
    "arun",
    "builtin_relations",
    "by_callable",
    "by_key",
    "by_regex",
    "compare_snapshot",
    "conversation_machine",
    "counterexample_report",
    "create_snapshot",
    "enlarge",
    "from_callable",
    "from_http",
    "from_langgraph",
    "from_openai_agents",
    "from_pydantic_ai",
    "from_strands",
    "locate_boundary",
    "measure",
    "plan",
    "run",
    "run_conversation_test",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from .adapters import (
        from_callable,
        from_http,
        from_langgraph,
        from_openai_agents,
        from_pydantic_ai,
        from_strands,
    )
    from .conversation import (
        AgentStateMachine,
        ConversationConfig,
        conversation_machine,
        run_conversation_test,
    )
    from .diagnose import (
        PRESETS,
        BlindnessResult,
        HealthCheck,
        MeterConfig,
        MeterResult,
        RunConfig,
        RunResult,
        arun,
        measure,
        plan,
        run,
    )
    from .engine import EngineConfig, Price
    from .errors import (
        AgentCallError,
        AgentVerityError,
        BadInput,
        BudgetExhausted,
        EvidenceExhausted,
        Inconclusive,
        InvalidArgument,
        PropertyViolation,
        ReplayMiss,
    )
    from .observation import Observation, ToolCall, Usage, by_callable, by_key, by_regex
    from .property import AgentCheck, PropertyConfig, agent_property, counterexample_report
    from .relations import Relation, builtin_relations
    from .snapshot import CheckResult, SnapshotResult, compare_snapshot, create_snapshot
    from .strategies import (
        BoundaryConfig,
        BoundaryLocation,
        EnlargeConfig,
        EnlargeResult,
        enlarge,
        locate_boundary,
    )
