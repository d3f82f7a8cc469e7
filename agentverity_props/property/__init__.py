"""``@agent_property``: metamorphic relations as Hypothesis properties of a stochastic agent.

``_decorator`` holds the decorator and the ``check`` object; ``_records`` the per-test
records and minimal counterexamples (and their versioned JSON). Decisions are made by
:mod:`agentverity_props.relations`.
"""

from ._decorator import AGENT_SETTINGS_DEFAULTS, AgentCheck, agent_property
from ._records import (
    COUNTEREXAMPLE_SCHEMA,
    DEFAULT_PROPERTY_BUDGET,
    RECORDS,
    Counterexample,
    PropertyConfig,
    PropertyRecord,
    counterexample_report,
)

__all__ = [
    "AGENT_SETTINGS_DEFAULTS",
    "COUNTEREXAMPLE_SCHEMA",
    "DEFAULT_PROPERTY_BUDGET",
    "RECORDS",
    "AgentCheck",
    "Counterexample",
    "PropertyConfig",
    "PropertyRecord",
    "agent_property",
    "counterexample_report",
]
