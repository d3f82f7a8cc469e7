"""Customer-support agent: routes requests to lookup_order / issue_refund /
escalate_to_human / search_faq (real Strands tools, offline rule-driven model).

CLI reference: ``examples/support_agent.py:agent``; probes: ``examples/inputs/support.txt``.

References:
    make_agent   zero-argument factory -> a fresh strands.Agent (seed 1234, ambiguity 0.2)
    agent        adapter over make_agent, verdict = the first tool the agent called
"""

from agentverity_props.examples.support import (
    SupportOutcome,
    agent,
    build_support_agent,
    make_agent,
    support_adapter,
    support_factory,
)

__all__ = [
    "SupportOutcome",
    "agent",
    "build_support_agent",
    "make_agent",
    "support_adapter",
    "support_factory",
]
