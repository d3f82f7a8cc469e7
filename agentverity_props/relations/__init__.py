"""Metamorphic relations: definitions, transforms, built-ins, and the one procedure that
decides them.

The transforms are :class:`Perturbation` values (a family name and its parameters), the same
edits the Hypothesis strategies of :mod:`agentverity_props.strategies` draw: the ``typo`` of
``run`` is the mildest ``typo`` a property test's strategy shrinks to.

Two procedures decide relations. ``run`` decides each relation's pooled effect over the
probe set (:class:`PooledEffects`), screens every input (:func:`screen`) and tests the flagged
inputs one by one (:func:`localise`, on :class:`~agentverity_props.decide.LocalTest`);
``@agent_property`` decides its generated examples one by one with :class:`RelationDecider`
(:class:`~agentverity_props.decide.CandidateTest`), then their pooled effect with
:class:`PooledEffects`; ``enlarge`` and conversations use :class:`RelationDecider`. The
sequential tests behind both live in :mod:`agentverity_props.decide`.
"""

from ._builtins import (
    BUILTIN_NAMES,
    DEFAULT_BUILTIN_NAMES,
    LABELLED_BUILTIN_NAMES,
    builtin_perturbation,
    builtin_relations,
    injection_relation,
    obfuscation_relation,
    select_builtins,
)
from ._model import OUTCOME_STATUSES, RTYPES, Relation, RelationOutcome, RelationResult, RType
from ._pooled import (
    MAX_SCORES,
    SWEEP_MAX,
    EffectJob,
    PooledEffects,
    block_size,
    localise,
    prior_variance,
    summarise,
    suspicion,
    two_sided,
)
from ._procedure import DEFAULT_BETA, Candidate, RelationDecider, own_settled, reference
from ._records import CandidateRecord
from ._screen import SCREEN_SIZE, clearance_cost, quiet_clearance, screen, sensitivity
from ._transforms import (
    CASE_KINDS,
    FAMILIES_WITH_REQUIRED_OPTIONS,
    FORMAT_LABELS,
    FORMATTING_KINDS,
    HOMOGLYPHS,
    INJECTION_KINDS,
    INJECTION_PHRASINGS,
    INJECTION_WRAPPERS,
    KEY_SPAN,
    KEYBOARD_NEIGHBOURS,
    LEET,
    NORMALISATION_KINDS,
    OBFUSCATION_KINDS,
    PERTURBATION_NAMES,
    POSITION_SPAN,
    PUNCTUATION_KINDS,
    TYPO_KINDS,
    WHITESPACE_KINDS,
    Perturbation,
    injection_instruction,
    negation_sites,
)

__all__ = [
    "BUILTIN_NAMES",
    "CASE_KINDS",
    "DEFAULT_BETA",
    "DEFAULT_BUILTIN_NAMES",
    "FAMILIES_WITH_REQUIRED_OPTIONS",
    "FORMATTING_KINDS",
    "FORMAT_LABELS",
    "HOMOGLYPHS",
    "INJECTION_KINDS",
    "INJECTION_PHRASINGS",
    "INJECTION_WRAPPERS",
    "KEYBOARD_NEIGHBOURS",
    "KEY_SPAN",
    "LABELLED_BUILTIN_NAMES",
    "LEET",
    "MAX_SCORES",
    "NORMALISATION_KINDS",
    "OBFUSCATION_KINDS",
    "OUTCOME_STATUSES",
    "PERTURBATION_NAMES",
    "POSITION_SPAN",
    "PUNCTUATION_KINDS",
    "RTYPES",
    "SCREEN_SIZE",
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
    "block_size",
    "builtin_perturbation",
    "builtin_relations",
    "clearance_cost",
    "injection_instruction",
    "injection_relation",
    "localise",
    "negation_sites",
    "obfuscation_relation",
    "own_settled",
    "prior_variance",
    "quiet_clearance",
    "reference",
    "screen",
    "select_builtins",
    "sensitivity",
    "summarise",
    "suspicion",
    "two_sided",
]
