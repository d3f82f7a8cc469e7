"""``@agent_property``: metamorphic relations as Hypothesis properties of a stochastic agent.

``_decorator`` holds the decorator and the ``check`` object; ``_records`` the per-test
records and minimal counterexamples (and their versioned JSON). Decisions are made by
:mod:`agentverity_props.relations`.
"""

from ._decorator import AgentCheck, agent_property
from ._records import (
    COUNTEREXAMPLE_SCHEMA,
    RECORDS,
    Counterexample,
    PropertyConfig,
    PropertyRecord,
    counterexample_report,
    records,
)

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "AgentCheck",
    "Counterexample",
    "PropertyConfig",
    "PropertyRecord",
    "agent_property",
    "counterexample_report",
    "records",
]
