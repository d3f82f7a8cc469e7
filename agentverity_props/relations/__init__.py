"""Metamorphic relations: definitions, transforms, built-ins, and the one procedure that
decides them.

The transforms are :class:`Perturbation` values (a family name and its parameters), the same
edits the Hypothesis strategies of :mod:`agentverity_props.strategies` draw: the ``typo`` of
``run`` is the mildest ``typo`` a property test's strategy shrinks to.

``run``, ``@agent_property`` and ``enlarge`` all decide a (relation, source, follow-up)
candidate with :class:`RelationDecider`; the sequential tests behind it live in
:mod:`agentverity_props.decide`.
"""

from ._builtins import BUILTIN_NAMES, builtin_perturbation, builtin_relations, select_builtins
from ._model import OUTCOME_STATUSES, RTYPES, Relation, RelationOutcome, RelationResult, RType
from ._pooled import (
    MAX_SCORES,
    SWEEP_MAX,
    EffectJob,
    PooledEffects,
    localise,
    prior_variance,
    quota,
    summarise,
    suspicion,
    two_sided,
)
from ._screen import SCREEN_SIZE, follow_ups_needed, screen, sensitivity
from ._procedure import DEFAULT_BETA, Candidate, RelationDecider, reference
from ._records import CandidateRecord
from ._transforms import (
    CASE_KINDS,
    KEY_SPAN,
    KEYBOARD_NEIGHBOURS,
    NORMALISATION_KINDS,
    PERTURBATION_NAMES,
    POSITION_SPAN,
    PUNCTUATION_KINDS,
    TYPO_KINDS,
    WHITESPACE_KINDS,
    Perturbation,
    negation_sites,
)

__all__ = [
    "BUILTIN_NAMES",
    "CASE_KINDS",
    "DEFAULT_BETA",
    "KEYBOARD_NEIGHBOURS",
    "KEY_SPAN",
    "MAX_SCORES",
    "NORMALISATION_KINDS",
    "OUTCOME_STATUSES",
    "PERTURBATION_NAMES",
    "POSITION_SPAN",
    "PUNCTUATION_KINDS",
    "RTYPES",
    "SWEEP_MAX",
    "TYPO_KINDS",
    "WHITESPACE_KINDS",
    "Candidate",
    "CandidateRecord",
    "EffectJob",
    "Perturbation",
    "PooledEffects",
    "RType",
    "Relation",
    "RelationDecider",
    "RelationOutcome",
    "RelationResult",
    "builtin_perturbation",
    "builtin_relations",
    "localise",
    "screen",
    "sensitivity",
    "follow_ups_needed",
    "SCREEN_SIZE",
    "negation_sites",
    "prior_variance",
    "quota",
    "reference",
    "select_builtins",
    "summarise",
    "suspicion",
    "two_sided",
]
