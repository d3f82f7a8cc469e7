"""The eight built-in relations: each is the mildest edit of one :class:`Perturbation`
family (what the strategies in :mod:`agentverity_props.strategies` shrink to), so the
``typo`` of ``run`` and the ``typo`` of a property test are the same edit."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidArgument
from ._model import Relation
from ._transforms import Perturbation

DISTRACTOR = "By the way, the weather has been lovely this week."

#: name -> (perturbation, layer, description)
_BUILTINS: dict[str, tuple[Perturbation, str, str]] = {
    "normalisation": (Perturbation("normalisation", {"kind": "nbsp_and_curly"}), "verdict",
                      "a typographic variant (no-break space, curly apostrophe) that "
                      "normalises to the source"),
    "case": (Perturbation("case", {"kind": "swapcase_all"}), "verdict",
             "swapping letter case"),
    "whitespace": (Perturbation("whitespace", {"kind": "double_all"}), "verdict",
                   "every space doubled"),
    "punctuation": (Perturbation("punctuation", {"kind": "toggle_period"}), "verdict",
                    "final punctuation removed, or a full stop added"),
    "typo": (Perturbation("typo", {"edits": [{"kind": "neighbour", "at": 500, "key": 0}]}),
             "verdict", "one keyboard-adjacent typo halfway through the text"),
    "politeness": (Perturbation("politeness", {"prefix": "Please, "}), "verdict",
                   "a 'Please, ' prefix"),
    "distractor": (Perturbation("distractor", {"sentence": DISTRACTOR, "position": "end"}),
                   "verdict", "an irrelevant sentence appended"),
    "tool-selection": (Perturbation("politeness", {"prefix": "Hi there. "}), "tools",
                       "a greeting does not change the tools called"),
}


def builtin_relations() -> list[Relation]:
    """The eight built-in invariant relations (fresh objects each call).

    >>> [r.name for r in builtin_relations()][:3]
    ['normalisation', 'case', 'whitespace']
    """
    return [Relation(name, "invariant", p.apply, layer=layer,
                     description=f"{desc} ({p.describe()})")
            for name, (p, layer, desc) in _BUILTINS.items()]


def builtin_perturbation(name: str) -> Perturbation:
    """The edit behind a built-in relation (e.g. to use it in a property test)."""
    if name not in _BUILTINS:
        raise InvalidArgument(f"unknown built-in relation {name!r}; choose from "
                              + ", ".join(BUILTIN_NAMES))
    return _BUILTINS[name][0]


BUILTIN_NAMES = tuple(_BUILTINS)


def select_builtins(names: Sequence[str]) -> list[Relation]:
    table = {r.name: r for r in builtin_relations()}
    out = []
    for n in names:
        if n not in table:
            raise InvalidArgument(f"unknown built-in relation {n!r}; choose from "
                                  + ", ".join(BUILTIN_NAMES))
        out.append(table[n])
    return out
