"""Metamorphic relations: definitions, built-ins, and the one procedure that decides them.

``run``, ``@agent_property`` and ``enlarge`` all decide a (relation, source, follow-up)
candidate with :class:`RelationDecider`; the sequential tests behind it live in
:mod:`agentverity_props.decide`.
"""

from ._builtins import BUILTIN_NAMES, builtin_relations, select_builtins
from ._model import OUTCOME_STATUSES, RTYPES, Relation, RelationOutcome, RelationResult, RType
from ._procedure import DEFAULT_BETA, Candidate, RelationDecider, reference

__all__ = [
    "BUILTIN_NAMES",
    "DEFAULT_BETA",
    "OUTCOME_STATUSES",
    "RTYPES",
    "Candidate",
    "RType",
    "Relation",
    "RelationDecider",
    "RelationOutcome",
    "RelationResult",
    "builtin_relations",
    "reference",
    "select_builtins",
]
