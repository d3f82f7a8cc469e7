"""Which follow-ups an input gets: one relation of one transform, a family of edit kinds,
or the pairs a user brings.

A family is the claim in a relation's name: ``whitespace`` is not "every space doubled" but
trailing and leading space, tabs, newlines, doubled and collapsed spaces. Testing every kind
on every input multiplies the cost by the family's size, so ``run`` (``auto``) gives

* **every input the family's first kind** (its *primary* edit: what earlier versions tested
  alone), so every guarantee stated for one edit per input holds for it as before; and
* **every other kind ``MIN_INPUTS_PER_KIND`` inputs** of its own (all of them on a smaller
  probe set), dealt round-robin over the inputs in an order drawn from the run's seed:
  a stratified assignment, fixed before any draw, so no kind is left untried by chance and
  a bug confined to one kind that moves most inputs is tested on several, each screened on
  its own.

The extra pairs number ``MIN_INPUTS_PER_KIND x (K - 1)`` per relation whatever the probe
set's size, so breadth adds a fixed cost, not a factor. ``all`` gives every kind to every
input (a bug on one input and one kind is then found as surely as the screen finds any);
a number ``k`` gives each input the primary kind and ``k - 1`` others, rotated.

The pooled effect's estimand stays a mean over the inputs: an input's follow-ups are scored
against the same source draws, and their scores are averaged into one score per input and
round (relations/_pooled.py), so the pooled test sees one bounded, conditionally centred
term per input and round whatever the number of follow-ups.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from ..errors import InvalidArgument
from ._model import Relation

#: The inputs every kind of a family is tried on at least (when the probe set allows).
MIN_INPUTS_PER_KIND = 3

#: ``edits_per_input`` spellings: a number, ``auto`` (default) or ``all``.
AUTO, ALL = "auto", "all"


def per_input(rel: Relation, n_inputs: int, setting: int | str | None = None) -> int:
    """The most follow-ups one input gets from a family of ``K`` kinds: ``auto`` (the primary
    kind, plus the others' ``MIN_INPUTS_PER_KIND`` inputs each spread over the probe set),
    ``all`` (``K``) or a number (capped at ``K``).

    >>> from agentverity_props.relations import builtin_relations
    >>> ws = builtin_relations("whitespace")[0]
    >>> per_input(ws, 30), per_input(ws, 10), per_input(ws, 10, "all"), per_input(ws, 10, 2)
    (2, 3, 7, 2)
    """
    k = len(rel.edits)
    if k == 0:
        return 1
    if setting is None or setting == AUTO:
        extra = MIN_INPUTS_PER_KIND * (k - 1)
        return min(k, 1 + math.ceil(extra / max(1, n_inputs)))
    if setting == ALL:
        return k
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 1:
        raise InvalidArgument(f"edits per input must be a positive integer, 'auto' or 'all', "
                              f"got {setting!r}")
    return min(k, setting)


def _order(rel: Relation, seed: int, n: int) -> list[int]:
    rng = random.Random(f"family:{seed}:{rel.name}")
    order = list(range(n))
    rng.shuffle(order)
    return order


def _checked(rel: Relation, kind: str, y: object) -> str:
    if not isinstance(y, str):
        raise InvalidArgument(f"relation {rel.name!r}, edit {kind!r}: transform returned "
                              f"{type(y).__name__}, expected str")
    return y


def follow_ups(rel: Relation, texts: Sequence[str], *, edits_per_input: int | str | None = None,
               seed: int = 0) -> list[list[tuple[str | None, str]]]:
    """Each input's follow-ups as ``(kind, text)``: for pairs the user brought, every one of
    the input's (kind ``pair N``); for a family, the primary kind and the others dealt as the
    module docstring says; else the one transform (kind None). A kind that leaves an input
    unchanged, or repeats one of its follow-ups, is passed over. An input left unchanged by
    every kind gets ``[(kind, text)]`` with the text itself (the caller records it as
    skipped).

    >>> from agentverity_props.relations import builtin_relations
    >>> p = builtin_relations("punctuation")[0]
    >>> [[k for k, _ in row] for row in follow_ups(p, ["Hi.", "Ok?"], edits_per_input=2)]
    [['toggle period', 'exclamation'], ['toggle period', 'repeat']]
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
    n = len(texts)
    primary = rel.edits[0]
    rows: list[list[tuple[str | None, str]]] = []
    for t in texts:
        y = _checked(rel, primary.kind, primary.transform(t))
        rows.append([(primary.kind, y)] if y != t else [])
    others = rel.edits[1:]
    if others and n:
        made: list[set[str]] = [{t, *(y for _, y in row)} for t, row in zip(texts, rows,
                                                                             strict=True)]
        order = _order(rel, seed, n)
        setting = AUTO if edits_per_input is None else edits_per_input
        if setting == AUTO:
            # each other kind on MIN_INPUTS_PER_KIND inputs, dealt round-robin in the
            # seeded order; a kind that cannot move an input is offered to the next one
            cursor = 0
            for e in others:
                got, tried = 0, 0
                while got < MIN_INPUTS_PER_KIND and tried < n:
                    i = order[(cursor + tried) % n]
                    tried += 1
                    y = _checked(rel, e.kind, e.transform(texts[i]))
                    if y in made[i]:
                        continue
                    made[i].add(y)
                    rows[i].append((e.kind, y))
                    got += 1
                cursor = (cursor + tried) % n
        else:
            k = per_input(rel, n, setting)
            for rank, i in enumerate(order):
                t = texts[i]
                start = (rank * (k - 1)) % len(others)
                for step in range(len(others)):
                    if len(rows[i]) >= k:
                        break
                    e = others[(start + step) % len(others)]
                    y = _checked(rel, e.kind, e.transform(t))
                    if y in made[i]:
                        continue
                    made[i].add(y)
                    rows[i].append((e.kind, y))
    return [row or [(primary.kind, t)] for t, row in zip(texts, rows, strict=True)]


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
