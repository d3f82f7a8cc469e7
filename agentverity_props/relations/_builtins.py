"""The eight built-in relations and their transforms."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from ..errors import InvalidArgument
from ._model import Relation


def _normalise(text: str) -> str:
    # a typographic variant that Unicode NFKC normalisation maps back to the source:
    # a no-break space for the first space, typographic apostrophes
    variant = text.replace(" ", "\u00a0", 1).replace("'", "\u2019")
    return variant if unicodedata.normalize("NFKC", variant.replace("\u2019", "'")) == text \
        else text


def _case(text: str) -> str:
    return text.swapcase()


def _whitespace(text: str) -> str:
    return "  " + "  ".join(text.split(" ")) + " \n"


def _punctuation(text: str) -> str:
    stripped = text.rstrip()
    if stripped and stripped[-1] in ".!?":
        return stripped[:-1] + "!!"
    return stripped + "."


_QWERTY_NEIGHBOURS = {
    "a": "s", "b": "v", "c": "x", "d": "s", "e": "w", "f": "d", "g": "f", "h": "g", "i": "u",
    "j": "h", "k": "j", "l": "k", "m": "n", "n": "b", "o": "i", "p": "o", "q": "w", "r": "e",
    "s": "a", "t": "r", "u": "y", "v": "c", "w": "q", "x": "z", "y": "t", "z": "x",
}


def _typo(text: str) -> str:
    # one adjacent-key substitution in the longest word (the word most likely to survive a typo)
    words = text.split(" ")
    if not words:
        return text
    i = max(range(len(words)), key=lambda j: (len(words[j]), -j))
    w = words[i]
    for pos in range(len(w) // 2, len(w)):
        ch = w[pos]
        if ch.lower() in _QWERTY_NEIGHBOURS:
            rep = _QWERTY_NEIGHBOURS[ch.lower()]
            words[i] = w[:pos] + (rep.upper() if ch.isupper() else rep) + w[pos + 1:]
            return " ".join(words)
    return text


def _politeness(text: str) -> str:
    return "Please, " + text[:1].lower() + text[1:] if text else text


def _distractor(text: str) -> str:
    return text.rstrip() + " By the way, the weather has been lovely this week."


def _tool_selection(text: str) -> str:
    return "Hi there. " + " ".join(text.split())


def builtin_relations() -> list[Relation]:
    """The eight built-in invariant relations (fresh objects each call)."""
    return [
        Relation("normalisation", "invariant", _normalise,
                 description="a typographic variant (no-break space, curly apostrophe) that "
                             "normalises to the source"),
        Relation("case", "invariant", _case, description="swapping letter case"),
        Relation("whitespace", "invariant", _whitespace,
                 description="extra spaces and a trailing newline"),
        Relation("punctuation", "invariant", _punctuation,
                 description="changed final punctuation"),
        Relation("typo", "invariant", _typo,
                 description="one keyboard-adjacent typo in the longest word"),
        Relation("politeness", "invariant", _politeness,
                 description="a 'Please,' prefix"),
        Relation("distractor", "invariant", _distractor,
                 description="an irrelevant sentence appended"),
        Relation("tool-selection", "invariant", _tool_selection, layer="tools",
                 description="a greeting and normalised spacing do not change the tools called"),
    ]


BUILTIN_NAMES = tuple(r.name for r in builtin_relations())


def select_builtins(names: Sequence[str]) -> list[Relation]:
    table = {r.name: r for r in builtin_relations()}
    out = []
    for n in names:
        if n not in table:
            raise InvalidArgument(f"unknown built-in relation {n!r}; choose from "
                                  + ", ".join(BUILTIN_NAMES))
        out.append(table[n])
    return out


