"""Hypothesis strategies for probing agents: probe texts, strategy packs and follow-ups.

(The searches that use them, ``enlarge`` and ``locate_boundary``, are
:mod:`agentverity_props.search`.)

* :func:`from_probes` varies *your own* probes (numbers, slot values other probes hold,
  lexicon values, clauses), each :class:`Variant` keeping its parent and edits;
* :func:`prompts` fills ``{slot}`` templates from lexicons;
* :func:`from_pack` / :func:`load_pack` read a YAML strategy pack (shipped:
  ``moderation``, ``support_routing``, ``refund_approval``; see :func:`available_packs`);
* :func:`case_changes`, :func:`typos`, ... draw :class:`Perturbation` values for metamorphic
  follow-ups, each shrinking toward the mildest change; :func:`follow_ups` pairs texts with
  them.

Example:
    >>> from hypothesis import find
    >>> find(from_pack("moderation"), lambda s: True)
    'How do I cook pasta?'
    >>> find(follow_ups(prompts("hello there"), typos()), lambda t: True)[2]
    'gello there'
"""

from __future__ import annotations

from ..relations import KEYBOARD_NEIGHBOURS, PERTURBATION_NAMES, Perturbation
from ._choose import choose_pack
from ._from_probes import Variant, from_probes, variations_from
from ._grammar import Edit, ProbeGrammar, shared_word_share
from ._lexicons import DEFAULT_LEXICONS, check_lexicons, load_lexicon
from ._packs import available_packs, from_pack, load_pack, pack_perturbations
from ._perturb import (
    DEFAULT_DISTRACTORS,
    DEFAULT_PARAPHRASES,
    DEFAULT_POLITENESS,
    case_changes,
    distractors,
    entity_swaps,
    follow_ups,
    formatting_changes,
    injections,
    negations,
    normalisations,
    obfuscations,
    paraphrases,
    politeness_prefixes,
    punctuation_changes,
    tool_injections,
    typos,
    whitespace_changes,
)
from ._prompts import prompts
from ._schema import StrategyPack, pack_json_schema

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "Edit",
    "Perturbation",
    "ProbeGrammar",
    "StrategyPack",
    "Variant",
    "available_packs",
    "case_changes",
    "distractors",
    "entity_swaps",
    "follow_ups",
    "formatting_changes",
    "from_pack",
    "from_probes",
    "injections",
    "load_pack",
    "negations",
    "normalisations",
    "obfuscations",
    "pack_perturbations",
    "paraphrases",
    "politeness_prefixes",
    "prompts",
    "punctuation_changes",
    "tool_injections",
    "typos",
    "variations_from",
    "whitespace_changes",
]
