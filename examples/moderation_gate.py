"""Content-moderation gate: a real Strands agent running on an offline, rule-driven model.

The implementation ships inside the package (``agentverity_props.examples.moderation``) so
``agentverity-props demo`` works from an installed wheel; this file re-exports it so you can
copy it, change it, and give the CLI the reference ``examples/moderation_gate.py:agent`` with
the probes in ``examples/inputs/moderation.txt``.

References:
    make_agent        zero-argument factory -> a fresh strands.Agent (seed 1234, noise 0.15)
    agent             adapter over make_agent, verdict = structured output field "verdict"
    make_buggy_agent  factory with the planted bug (upper-case URGENT in a prompt > 40 chars)
    buggy_agent       adapter over make_buggy_agent
"""

from agentverity_props.examples.moderation import (
    ModerationVerdict,
    agent,
    buggy_agent,
    build_moderation_agent,
    make_agent,
    make_buggy_agent,
    moderation_adapter,
    moderation_factory,
)

__all__ = [
    "ModerationVerdict",
    "agent",
    "buggy_agent",
    "build_moderation_agent",
    "make_agent",
    "make_buggy_agent",
    "moderation_adapter",
    "moderation_factory",
]
