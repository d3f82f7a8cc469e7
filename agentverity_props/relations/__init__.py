"""Metamorphic relations: definitions, transforms, built-ins, and the one procedure that
decides them.

The transforms are :class:`Perturbation` values (a family name and its parameters), the same
edits the Hypothesis strategies of :mod:`agentverity_props.strategies` draw: the ``typo`` of
``run`` is the mildest ``typo`` a property test's strategy shrinks to.

One procedure decides relations, in one order (:func:`decide_in_order`, relations/_order.py):
the deterministic path, the per-input screen, the flagged inputs one by one, the pooled
effect. ``run`` takes it on a whole probe set (:class:`RunSteps`: :func:`screen`,
:func:`localise` on :class:`~agentverity_props.decide.LocalTest`, :class:`PooledEffects`);
``@agent_property`` on its generated examples, whose per-input step ran while Hypothesis
generated them, one at a time (:class:`RelationDecider`, on
:class:`~agentverity_props.decide.CandidateTest`: inputs that arrive one by one, as in
``enlarge``, ``boundary`` and conversations, cannot wait for a batch screen). One modal
verdict (:func:`~agentverity_props.decide.modal`) serves every step. The sequential tests
behind them live in :mod:`agentverity_props.decide`.
"""

from ._builtins import (
    BUILTIN_NAMES,
    DEFAULT_BUILTIN_NAMES,
    LABELLED_BUILTIN_NAMES,
    builtin_relations,
    injection_relation,
    obfuscation_relation,
    select_builtins,
)
from ._draws import EffectJob
from ._family import every_follow_up, follow_ups, pairs_relation, per_input
from ._model import Edit, Relation, RelationOutcome, RelationResult
from ._order import RunSteps, decide_in_order
from ._pairs_file import load_pairs
from ._pooled import (
    LATER_EPOCH,
    MAX_SCORES,
    SWEEP_MAX,
    PooledEffects,
    effect_jobs,
    end_pending,
    first_sample,
    summarise,
    suspicion,
    two_sided,
)
from ._procedure import Candidate, RelationDecider, own_settled, reference
from ._profiles import Profile, profile, register_profile, violation_threshold
from ._records import CandidateRecord
from ._screen import (
    SCREEN_MAX_DRAWS,
    SCREEN_SIZE,
    clearance_cost,
    flip_of,
)
from ._transforms import (
    CASE_KINDS,
    FAMILIES_WITH_REQUIRED_OPTIONS,
    FORMAT_LABELS,
    FORMATTING_KINDS,
    HOMOGLYPHS,
    INJECTION_KINDS,
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
)

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "Relation",
    "builtin_relations",
    "injection_relation",
    "obfuscation_relation",
    "pairs_relation",
    "register_profile",
]
