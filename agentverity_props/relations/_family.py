"""Which follow-ups an input gets: one relation of one transform, a family of edit kinds
rotated over the inputs, or the pairs a user brings.

A family is the claim in a relation's name: ``whitespace`` is not "every space doubled" but
trailing and leading space, tabs, newlines, doubled and collapsed spaces. Testing every kind
on every input multiplies the cost by the family's size, so ``run`` *rotates*: input ``i``
gets ``k`` kinds, starting at kind ``(i k + offset) mod K`` (the offset drawn from the run's
seed and the relation's name), a kind that would leave the input unchanged or repeat a
follow-up passed over for the next. Every kind is then tried on about ``k n / K`` of the
``n`` inputs — a stratified assignment, not a random one, so no kind is left untried by
chance — and ``k`` is raised on a small probe set until each kind gets
``MIN_INPUTS_PER_KIND`` inputs (or every input every kind). A bug confined to one kind that
flips most inputs is thus tested on several inputs, each screened on its own.

The pooled effect's estimand stays a mean over the inputs: an input's follow-ups are scored
against the same source draws, and their scores are averaged into one score per input and
round (relations/_pooled.py), so the pooled test sees one bounded, conditionally centred
term per input and round whatever the number of follow-ups.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

from ..errors import InvalidArgument
from ._model import Relation

#: The inputs every kind of a family is tried on at least (when the probe set allows).
MIN_INPUTS_PER_KIND = 3

#: ``edits_per_input`` spellings: a number, ``auto`` (default) or ``all``.
AUTO, ALL = "auto", "all"


def per_input(rel: Relation, n_inputs: int, setting: int | str | None = None) -> int:
    """How many follow-ups each input gets from a family of ``K`` kinds: ``auto`` (the
    fewest that give each kind ``MIN_INPUTS_PER_KIND`` inputs, at least one), ``all``
    (every kind on every input) or a number (capped at ``K``).

    >>> from agentverity_props.relations import builtin_relations
    >>> ws = builtin_relations("whitespace")[0]
    >>> per_input(ws, 30), per_input(ws, 10), per_input(ws, 10, "all"), per_input(ws, 10, 2)
    (1, 3, 7, 2)
    """
    k = len(rel.edits)
    if k == 0:
        return 1
    if setting is None or setting == AUTO:
        return min(k, max(1, math.ceil(MIN_INPUTS_PER_KIND * k / max(1, n_inputs))))
    if setting == ALL:
        return k
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 1:
        raise InvalidArgument(f"edits per input must be a positive integer, 'auto' or 'all', "
                              f"got {setting!r}")
    return min(k, setting)


def _offset(rel: Relation, seed: int) -> int:
    digest = hashlib.sha256(f"family:{seed}:{rel.name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % max(1, len(rel.edits))


def follow_ups(rel: Relation, texts: Sequence[str], *, edits_per_input: int | str | None = None,
               seed: int = 0) -> list[list[tuple[str | None, str]]]:
    """Each input's follow-ups as ``(kind, text)``: for pairs the user brought, every one of
    the input's (kind ``pair N``); for a family, its rotated kinds (module docstring); else
    the one transform (kind None). An input left unchanged by every kind gets
    ``[(kind, text)]`` with the text itself (the caller records it as skipped).

    >>> from agentverity_props.relations import builtin_relations
    >>> p = builtin_relations("punctuation")[0]
    >>> [[k for k, _ in row] for row in follow_ups(p, ["Hi.", "Ok?"], edits_per_input=2)]
    [['strip all', 'spaced'], ['toggle period', 'exclamation']]
    """
    if rel.pairs is not None:
        out: list[list[tuple[str | None, str]]] = []
        for t in texts:
            fus = list(dict.fromkeys(rel.pairs.get(t, ())))
            brought: list[tuple[str | None, str]] = [(f"pair {i + 1}", f)
                                                     for i, f in enumerate(fus)]
            out.append(brought or [(None, t)])
        return out
    if not rel.edits:
        return [[(None, rel.apply(t))] for t in texts]
    kinds, k = len(rel.edits), per_input(rel, len(texts), edits_per_input)
    offset = _offset(rel, seed)
    rows: list[list[tuple[str | None, str]]] = []
    for i, t in enumerate(texts):
        start = (i * k + offset) % kinds
        row: list[tuple[str | None, str]] = []
        seen = {t}
        for step in range(kinds):
            e = rel.edits[(start + step) % kinds]
            y = e.transform(t)
            if not isinstance(y, str):
                raise InvalidArgument(f"relation {rel.name!r}, edit {e.kind!r}: transform "
                                      f"returned {type(y).__name__}, expected str")
            if y in seen:
                continue
            seen.add(y)
            row.append((e.kind, y))
            if len(row) == k:
                break
        rows.append(row or [(rel.edits[start].kind, t)])
    return rows


def every_follow_up(rel: Relation, text: str) -> list[str]:
    """Every follow-up any run may make of ``text`` (each kind of the family, each pair
    brought, the transform), distinct, the text itself left out: what a recording of a run
    may hold for it."""
    made = [rel.apply(text), *(e.transform(text) for e in rel.edits),
            *((rel.pairs or {}).get(text, ()))]
    return [y for y in dict.fromkeys(made) if isinstance(y, str) and y != text]


def pairs_relation(name: str, pairs: Mapping[str, Sequence[str]], *,
                   rtype: str = "invariant", order: Sequence[str] | None = None,
                   decreasing: bool = False, expected: str | None = None,
                   layer: str = "verdict", description: str = "") -> Relation:
    """A relation made of follow-ups the user brings: ``pairs`` maps each source text to
    its follow-up texts (every one is tested, each text kept byte for byte), as in a
    CheckList INV or DIR test.

    >>> r = pairs_relation("names", {"I like Ann.": ["I like Bo.", "I like Cy."]})
    >>> follow_ups(r, ["I like Ann.", "Other"])
    [[('pair 1', 'I like Bo.'), ('pair 2', 'I like Cy.')], [(None, 'Other')]]
    """
    if not isinstance(pairs, Mapping) or not pairs:
        raise InvalidArgument(f"relation {name!r}: pairs must map each input text to a list "
                              "of follow-up texts, and hold at least one input")
    clean: dict[str, tuple[str, ...]] = {}
    for src, fus in pairs.items():
        if not isinstance(src, str) or isinstance(fus, str) or not isinstance(fus, Sequence) \
                or not all(isinstance(f, str) for f in fus):
            raise InvalidArgument(f"relation {name!r}: each input maps to a list of follow-up "
                                  f"texts (str), got {src!r}: {fus!r}")
        clean[src] = tuple(fus)

    def first(text: str) -> str:
        fus = clean.get(text, ())
        return fus[0] if fus else text

    n = sum(len(v) for v in clean.values())
    return Relation(name, rtype, first, layer=layer, order=order,  # type: ignore[arg-type]
                    decreasing=decreasing, expected=expected, pairs=clean,
                    description=description or f"{n} follow-up(s) brought for {len(clean)} "
                                               "input(s)")
