"""Hypothesis strategies for probing agents: probe texts, strategy packs and follow-ups.

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
from ._choose import PackChoice, choose_pack
from ._enlarge import BoundaryPair, EnlargeConfig, EnlargeResult, enlarge
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
from ._schema import Region, StrategyPack, pack_json_schema

__all__ = [
    "DEFAULT_DISTRACTORS",
    "DEFAULT_PARAPHRASES",
    "DEFAULT_POLITENESS",
    "KEYBOARD_NEIGHBOURS",
    "PERTURBATION_NAMES",
    "BoundaryPair",
    "EnlargeConfig",
    "EnlargeResult",
    "PackChoice",
    "Perturbation",
    "Region",
    "StrategyPack",
    "available_packs",
    "case_changes",
    "choose_pack",
    "distractors",
    "enlarge",
    "entity_swaps",
    "follow_ups",
    "formatting_changes",
    "from_pack",
    "injections",
    "load_pack",
    "negations",
    "normalisations",
    "obfuscations",
    "pack_json_schema",
    "pack_perturbations",
    "paraphrases",
    "politeness_prefixes",
    "prompts",
    "punctuation_changes",
    "tool_injections",
    "typos",
    "whitespace_changes",
]
